"""Writing a revision out in another layout: external data inlined, or weights moved out."""

from __future__ import annotations

import zipfile

import onnx
from onnx.external_data_helper import _get_all_tensors

from ..errors import StudioError
from .limits import PROTOBUF_LIMIT
from .load import parse_model
from .zip_writing import member

EXTERNAL_THRESHOLD = 1024  # bytes; smaller tensors stay inside the .onnx


def _inline(model: onnx.ModelProto, read, size: int) -> None:
    """External data read into the tensors, refused as soon as the whole would pass protobuf's
    limit (`size`: the bytes so far): a 2.1 GiB model read whole first took 6.2 GB and then
    failed in ByteSize itself, a 500 (QA40 #2)."""
    for t in _get_all_tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        length = int(info["length"]) if info.get("length") else None
        t.raw_data = read(info.get("location", ""), int(info.get("offset", 0) or 0), length)
        size += len(t.raw_data)
        if size >= PROTOBUF_LIMIT:
            raise _too_large()
        del t.external_data[:]
        t.ClearField("data_location")  # as if it had never been external


def _too_large() -> StudioError:
    return StudioError(
        "too_large",
        "the model with its weights inlined is over protobuf's 2 GiB limit; download it with external data",
        422,
    )


def external_bytes(model: onnx.ModelProto) -> int:
    """The bytes its external tensors declare (their `length`s): what inlining them adds."""
    total = 0
    for t in _get_all_tensors(model):
        if t.data_location == onnx.TensorProto.EXTERNAL:
            length = next((e.value for e in t.external_data if e.key == "length"), "")
            total += int(length) if length.isdigit() else 0
    return total


def embedded(data: bytes, read) -> bytes:
    """The model as one file: external data read (via `read(location, offset, length)`) and inlined;
    422 too_large, before reading the weights where their lengths say so, past 2 GiB."""
    model = parse_model(data)
    if len(data) + external_bytes(model) >= PROTOBUF_LIMIT:
        raise _too_large()
    _inline(model, read, len(data))
    try:
        return model.SerializeToString()
    except Exception:  # protobuf's EncodeError: over the limit after all
        raise _too_large() from None


CHUNK = 1 << 22


def move_weights_out(model: onnx.ModelProto, location: str, files) -> tuple[list[tuple[bytes | str, int, int]], int]:
    """Point every tensor over 1 KiB at `location`, one after another (offsets recorded as onnx's
    convert_model_to_external_data does), in place: the model as the `.onnx` of an external
    layout. Answers where each tensor's bytes are now — (inline bytes, or the location of the
    external file holding them, offset, length), in order — and the .data file's size. Only a
    tensor whose external entry has no length asks `files.path` for its file's size."""
    pieces: list[tuple[bytes | str, int, int]] = []
    offset = 0
    for t in _get_all_tensors(model):
        if t.data_location == onnx.TensorProto.EXTERNAL:
            info = {e.key: e.value for e in t.external_data}
            start = int(info.get("offset") or 0)
            where = info.get("location", "")
            length = int(info["length"]) if info.get("length") else files.path(where).stat().st_size - start
            pieces.append((where, start, length))
        elif t.HasField("raw_data") and len(t.raw_data) > EXTERNAL_THRESHOLD:
            length = len(t.raw_data)
            pieces.append((t.raw_data, 0, length))
        else:
            continue
        del t.external_data[:]
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
            t.external_data.add(key=key, value=value)
        offset += length
    return pieces, offset


def data_file_name(name: str) -> str:
    """The .data file beside `name` in an external layout: resnet50.onnx -> resnet50.data."""
    return f"{name[:-5] if name.endswith('.onnx') else name}.data"


def external_zip(model: onnx.ModelProto, files, name: str, out) -> None:
    """Write to the file `out` a .zip holding `name` and `<stem>.data`, with every tensor over
    1 KiB moved out of the .onnx into the .data file (move_weights_out). Streamed: each tensor's
    bytes are copied from where they are (the model, or the file `files.path(location)` names:
    external.ExternalFiles), never held whole. `model` is changed."""
    location = data_file_name(name)
    moved, offset = move_weights_out(model, location, files)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        z.writestr(member(z, name), model.SerializeToString())
        if not moved:
            return  # no tensor over 1 KiB: the .onnx alone
        with z.open(member(z, location), "w", force_zip64=offset >= 1 << 31) as w:
            copy_weights(moved, files, w)


def copy_weights(moved: list[tuple[bytes | str, int, int]], files, w) -> None:
    """Write to `w`, one after another, the bytes move_weights_out says each tensor's are: a
    piece of the model, or `length` bytes at `offset` of the file `files.path(location)`."""
    for source, start, length in moved:
        if isinstance(source, bytes):
            w.write(source)
            continue
        path = files.path(source)
        with open(path, "rb") as f:
            f.seek(start)
            left = length
            while left > 0:
                block = f.read(min(CHUNK, left))
                if not block:
                    raise StudioError("external_data_short", f"{path.name} holds fewer bytes than a tensor needs", 422)
                w.write(block)
                left -= len(block)
