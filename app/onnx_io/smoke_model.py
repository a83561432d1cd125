"""The stand-in onnxruntime smoke-runs: the model with its big weights read from a sparse file
of zeros.

A run needs every weight's shape but hardly its values, and copying a 1 GiB model's weights
costs more than the run. Small tensors keep their values (they may be shapes, axes, indices,
scales); integer tensors up to 1 MiB too (shapes and indices; a zero is a valid index for
bigger ones). Every other tensor becomes external data at offset 0 of one file that
ftruncate makes as long as the biggest of them: a hole on disk, zeros to read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import onnx
from onnx import TensorProto as T

from .light import graph_shell
from .sizes import INTEGER_TYPES, data_bytes
from .traverse import tensors

SMALL_BYTES = 64 * 1024
SMALL_INT_BYTES = 1 << 20
ZEROS = "zeros.bin"
_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")

Reader = Callable[[str, int, "int | None"], bytes]


def _nbytes(t: T) -> int | None:
    """The tensor's data size as raw bytes, or None for types without a fixed size."""
    n = 1
    for d in t.dims:
        n *= d
    return data_bytes(t.data_type, n)


def _keeps_values(t: T, nbytes: int) -> bool:
    return nbytes <= (SMALL_INT_BYTES if t.data_type in INTEGER_TYPES else SMALL_BYTES)


def _holds_no_data(t: T) -> bool:
    """A tensor of the graph's own that holds no value at all (2^30 floats declared in a 65-byte
    file): the file's own defect, which onnxruntime refuses; kept as it is, never backed by
    zeros of the size it claims (QA34 #1: 10 GB of RAM, and a "runs" badge)."""
    return (
        t.data_location != T.EXTERNAL
        and not t.HasField("raw_data")
        and not any(len(getattr(t, field)) for field in _DATA_FIELDS if field != "raw_data")
    )


def _declared_length(t: T, nbytes: int) -> int:
    """The bytes an external tensor says it takes: its `length`, which onnxruntime holds to its
    shape (a length shorter than the shape refuses the model there too), else its shape's."""
    length = next((e.value for e in t.external_data if e.key == "length"), "")
    return int(length) if length.isdigit() else nbytes


def _zero_backed(t: T, nbytes: int) -> T:
    """A copy of t's name, type and shape whose bytes are the zero file's first nbytes."""
    out = T(name=t.name, data_type=t.data_type, dims=t.dims, data_location=T.EXTERNAL)
    _point_at_zeros(out, nbytes)
    return out


def _point_at_zeros(t: T, nbytes: int) -> None:
    for field in _DATA_FIELDS:
        t.ClearField(field)
    del t.external_data[:]
    t.data_location = T.EXTERNAL
    for key, value in (("location", ZEROS), ("offset", "0"), ("length", str(nbytes))):
        t.external_data.add(key=key, value=value)


def _fix_in_place(t: T, read: Reader | None) -> int:
    """Make t (already a copy) runnable from the stand-in's folder; the zero bytes it needs."""
    nbytes = _nbytes(t)
    if nbytes is None:
        return 0
    if t.data_location == T.EXTERNAL:
        info = {e.key: e.value for e in t.external_data}
        if info.get("location") == ZEROS:
            return nbytes
        nbytes = _declared_length(t, nbytes)
        if read is not None and _keeps_values(t, nbytes):
            try:
                t.raw_data = read(info.get("location", ""), int(info.get("offset") or 0), nbytes)
                del t.external_data[:]
                t.ClearField("data_location")
                return 0
            except Exception:  # missing or short: zeros fail the base the same way
                pass
        _point_at_zeros(t, nbytes)
        return nbytes
    if not _keeps_values(t, nbytes) and not _holds_no_data(t):
        _point_at_zeros(t, nbytes)
        return nbytes
    return 0


def stand_in(model: onnx.ModelProto, read: Reader | None = None) -> tuple[onnx.ModelProto, list[int]]:
    """(the stand-in, the size of each tensor it reads from the zero file). `read(location,
    offset, length)` gives external data of the model's own files, for small tensors kept whole."""
    out = graph_shell(model)
    g, og = model.graph, out.graph
    zeros = []
    # the main graph's weights: big ones never copied, nor ByteSize()d (upb walks all their bytes)
    for t in g.initializer:
        nbytes = _nbytes(t)
        if (
            nbytes is not None
            and t.data_location != T.EXTERNAL
            and not _keeps_values(t, nbytes)
            and not _holds_no_data(t)
        ):
            og.initializer.append(_zero_backed(t, nbytes))
            zeros.append(nbytes)
        else:
            og.initializer.append(t)
            zeros.append(_fix_in_place(og.initializer[-1], read))
    for t in list(tensors(out, main_initializers=False)):  # subgraphs, attributes, functions
        zeros.append(_fix_in_place(t, read))
    return out, [n for n in zeros if n]


def write_stand_in(
    model: onnx.ModelProto, folder: Path, read: Reader | None = None, outputs: list[str] | None = None
) -> tuple[Path, int]:
    """(folder/model.onnx, the bytes of zeros it reads in all): the stand-in written with
    folder/zeros.bin beside it; `outputs`: values of the main graph it gives as outputs too."""
    light, zeros = stand_in(model, read)
    declared = {o.name for o in light.graph.output}
    for name in outputs or []:
        if name not in declared:
            light.graph.output.add(name=name)  # onnxruntime infers its type
    path = Path(folder) / "model.onnx"
    path.write_bytes(light.SerializeToString())
    with open(Path(folder) / ZEROS, "wb") as f:
        os.ftruncate(f.fileno(), max(zeros, default=0))  # a hole: no disk blocks, no bytes written
    return path, sum(zeros)
