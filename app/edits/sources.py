"""Tensor values named by an op: JSON values or an uploaded .npy blob (by its digest).

The API hands apply_edits a reader for uploaded blobs; it is bound here for the duration of one
batch, so ops stay plain JSON (and the history records the digest, not the bytes).
"""

from __future__ import annotations

import contextvars
import io
import zipfile
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import StudioError
from ..onnx_io import narrow_types
from ..onnx_io.saved_values import NPY_LOCK
from ..onnx_io.typed_values import SPECIAL_FLOATS, misfit

_blob_reader: contextvars.ContextVar[Callable[[str], bytes] | None] = contextvars.ContextVar(
    "blob_reader", default=None
)


@dataclass(frozen=True)
class TensorFiles:
    """Where an op finds the tensors a model keeps outside its graph: `files` reads them
    (files.read(location, offset, length) -> bytes, files.path(location) -> the file: an
    onnx_io.external.ExternalFiles) and `scratch` is a folder on their file system, where they
    can be hard-linked. `put` stores a tensor's bytes (chunks) as a blob of the store and
    answers its digest — how a tool's result gets its weights in without holding them in
    memory — for tensors of `min_bytes` and more; `added` collects what it stored, for the
    revision to hold."""

    files: Any
    scratch: Path | None = None
    put: Callable[[Iterable[bytes]], str] | None = None
    min_bytes: int = 4096
    added: set[str] = field(default_factory=set)


_tensor_files: contextvars.ContextVar[TensorFiles | None] = contextvars.ContextVar("tensor_files", default=None)
MAX_NPY_ELEMENTS = 1 << 31


@contextmanager
def blob_reader(reader: Callable[[str], bytes] | None):
    token = _blob_reader.set(reader)
    try:
        yield
    finally:
        _blob_reader.reset(token)


@contextmanager
def tensor_source(source: TensorFiles | None):
    """Bind where ops read the tensors kept outside the graph (the store's tensor blobs and the
    model's external data files) for one batch."""
    token = _tensor_files.set(source)
    try:
        yield
    finally:
        _tensor_files.reset(token)


def tensor_files() -> TensorFiles | None:
    """What tensor_source bound, if anything (the headless replay keeps every tensor inside)."""
    return _tensor_files.get()


def inline_tensor(t: onnx.TensorProto, what: str) -> int:
    """Put the bytes of a tensor kept outside the graph into its raw_data (the external
    reference goes); the number of bytes read. A tensor already inside reads nothing."""
    if t.data_location != onnx.TensorProto.EXTERNAL:
        return 0
    source = _tensor_files.get()
    info = {e.key: e.value for e in t.external_data}
    if source is None or "location" not in info:
        raise StudioError("external_data_missing", f"{what}: its data outside the model can't be read here", 422)
    try:
        offset, length = int(info.get("offset", 0)), int(info["length"]) if "length" in info else None
    except ValueError:
        offset = -1
    if offset < 0 or (length is not None and length < 0):
        raise StudioError("bad_external_data", f"{what}: its external data offset/length are not byte counts", 422)
    t.raw_data = source.files.read(info["location"], offset, length)
    del t.external_data[:]
    t.data_location = onnx.TensorProto.DEFAULT
    return len(t.raw_data)


def read_blob(digest: str, what: str) -> bytes:
    """The bytes of a file uploaded with POST /api/blobs (an .npy, an .onnx), by its digest,
    through the reader bound for this batch."""
    reader = _blob_reader.get()
    if reader is None:
        raise StudioError("bad_value", f"{what}: uploaded files can't be read here")
    return reader(digest)


def load_npy(data: bytes, what: str = "the .npy file") -> np.ndarray:
    """A numpy array from .npy bytes; pickled objects are refused."""
    if not data:
        raise StudioError("bad_npy", f"{what} is empty: no bytes were uploaded")
    if not data.startswith((b"\x93NUMPY", b"PK")):  # numpy would read other bytes as a pickle and call them that
        raise StudioError("bad_npy", f"{what} is not an .npy file: it does not start with numpy's header (\\x93NUMPY)")
    try:
        with NPY_LOCK:  # numpy's header parse is no thread-safe compile on CPython 3.11
            arr = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:
        raise StudioError("bad_npy", f"{what} is not a readable .npy array: {exc}") from None
    if not isinstance(arr, np.ndarray):
        raise StudioError("bad_npy", f"{what} holds several arrays (.npz); upload one .npy")
    if arr.size > MAX_NPY_ELEMENTS:
        raise StudioError("bad_npy", f"{what} has {arr.size} elements, more than we accept")
    if arr.dtype.kind in "OV":
        raise StudioError("bad_npy", f"{what} has dtype {arr.dtype}, which has no ONNX tensor type")
    return arr


def _npy_holds(dtype: np.dtype) -> bool:
    """Whether an .npy of this dtype reads back as it: ml_dtypes' float8 and int4 types call
    themselves floats and ints of one byte ('<f1'), which no .npy reader takes."""
    try:
        return np.lib.format.descr_to_dtype(np.lib.format.dtype_to_descr(dtype)) == dtype
    except (TypeError, ValueError):
        return False


def _as_unicode(arr: np.ndarray) -> np.ndarray:
    """A STRING tensor's bytes as fixed-width unicode, or as fixed-width bytes when they aren't
    UTF-8: both kinds an .npy holds without pickle and onnxruntime takes for a string input."""
    flat = arr.reshape(-1).tolist()
    try:
        return np.array([x.decode("utf-8") if isinstance(x, bytes) else str(x) for x in flat], dtype=str).reshape(
            arr.shape
        )
    except UnicodeDecodeError:
        return np.array(flat, dtype=bytes).reshape(arr.shape)


class TensorFile(NamedTuple):
    """A test data set file's values as an .npy holds them (a sequence's or map's: as an .npz,
    as saved_values writes a run's)."""

    npy: bytes
    name: str  # the tensor's
    array: np.ndarray | None  # None for a sequence or map
    converted_from: str | None  # a type numpy lacks ("BFLOAT16"), its values widened in `array`
    kind: str = "tensor"  # or "sequence", "map"
    entries: int | None = None  # a sequence's items, a map's entries


def npy_from_tensor_file(data: bytes, what: str) -> TensorFile:
    """A test data set's file (`input_0.pb`) as .npy bytes: a TensorProto's values with its name,
    those of a type numpy lacks (bfloat16, float8, 4-bit...) widened, exactly (a run narrows them
    back for an input of that type); a SequenceProto (of tensors or maps; an OptionalProto's bytes
    read the same) or MapProto as an .npz. Refused in one line when it is none of them, keeps its
    data outside, or has values no .npy can carry."""
    try:
        return _tensor_file(data, what)
    except StudioError:
        other = _sequence_or_map_file(data, what)
        if other is None:
            raise
        return other


def _sequence_or_map_file(data: bytes, what: str) -> TensorFile | None:
    """A SequenceProto or MapProto file as saved_values keeps a run's such values, or None when
    the bytes are neither."""
    from google.protobuf import unknown_fields

    from ..onnx_io import saved_values

    readers: list[tuple[Any, Any]] = [
        (onnx.SequenceProto, numpy_helper.to_list),
        (onnx.MapProto, numpy_helper.to_dict),
        (onnx.OptionalProto, _empty_optional),  # one with a value reads as a sequence of it, above
    ]
    for proto, read in readers:
        p = proto()
        try:
            p.ParseFromString(data)
            if len(unknown_fields.UnknownFieldSet(p)):
                continue  # another message's fields (a TensorProto's dims, its external data)
        except Exception:  # not this kind of proto
            continue
        if _holds_external_tensor(p):  # onnx would read it from a path relative to our folder
            raise StudioError("bad_npy", f"{what} keeps values in an external file: save them inside")
        try:
            value = read(p)
        except Exception:  # one onnx can't read
            continue
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
            value = value[0]  # an optional sequence (OptionalProto) reads as a sequence of one
        if value is None:  # an empty optional
            return TensorFile(saved_values.dump(None, np.asarray), p.name, None, None, "optional", 0)
        items = value if isinstance(value, list) else [value]
        arrays = [a for v in items for a in (v.values() if isinstance(v, dict) else [v])]
        if not all(isinstance(a, np.ndarray | np.generic | int | float | str) for a in arrays):
            continue  # a nested sequence or an optional inside: not fed from here
        if sum(np.size(a) for a in arrays) > MAX_NPY_ELEMENTS:
            raise StudioError("bad_npy", f"{what} has more elements than we accept")
        npz = saved_values.dump(value, lambda a: _storable_values(np.asarray(a)))
        kind = "sequence" if isinstance(value, list) else "map"
        return TensorFile(npz, p.name, None, None, kind, len(value))
    return None


def _holds_external_tensor(message) -> bool:
    """Whether any TensorProto inside `message` (at any depth: a sequence's items, a map's
    values, an optional's value, a sparse tensor's parts) points at an external file."""
    if isinstance(message, onnx.TensorProto) and (
        message.data_location == onnx.TensorProto.EXTERNAL or len(message.external_data)
    ):
        return True
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        items = value if descriptor.is_repeated else [value]
        if any(_holds_external_tensor(item) for item in items):
            return True
    return False


def _empty_optional(p: onnx.OptionalProto) -> None:
    """None for a named OptionalProto without a value; an error for anything else."""
    if not p.name or numpy_helper.to_optional(p) is not None:
        raise ValueError("not an empty optional")
    return None


def _storable_values(arr: np.ndarray) -> np.ndarray:
    """Values as an .npy holds them: STRING's bytes as unicode (an .npy holds no objects), types
    numpy lacks widened."""
    if arr.dtype.kind == "O":
        return _as_unicode(arr)
    narrow = narrow_types.of_numpy(arr.dtype)
    return narrow_types.widen(arr, narrow) if narrow is not None else arr


def _tensor_file(data: bytes, what: str) -> TensorFile:
    from google.protobuf.message import DecodeError

    t = onnx.TensorProto()
    try:
        t.ParseFromString(data)
    except (DecodeError, RecursionError) as exc:
        raise StudioError(
            "bad_npy", f"{what} is not a readable TensorProto (nor SequenceProto, OptionalProto or MapProto): {exc}"
        ) from None
    if t.data_type == onnx.TensorProto.UNDEFINED or t.data_type not in onnx.TensorProto.DataType.values():
        raise StudioError(
            "bad_npy",
            f"{what} is not a TensorProto with a known data type (nor SequenceProto, OptionalProto or MapProto)",
        )
    if t.data_location == onnx.TensorProto.EXTERNAL:
        raise StudioError("bad_npy", f"{what} keeps its values in an external file: save the tensor with them inside")
    n = int(np.prod(t.dims, dtype=np.float64)) if t.dims else 1
    if n > MAX_NPY_ELEMENTS:
        raise StudioError("bad_npy", f"{what} has {n} elements, more than we accept")
    try:
        arr = numpy_helper.to_array(t)
    except Exception as exc:
        raise StudioError("bad_npy", f"{what}: its values don't match its type and dims ({exc})") from None
    narrow = narrow_types.of_numpy(arr.dtype)
    arr = _storable_values(arr)
    if arr.dtype.kind in "OV" or not _npy_holds(arr.dtype):
        kind = onnx.TensorProto.DataType.Name(t.data_type)
        raise StudioError(
            "bad_npy", f"{what} holds {kind} values, which no .npy can carry (runs here are fed from .npy files)"
        )
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return TensorFile(buf.getvalue(), t.name, arr, narrow.onnx_name if narrow else None)


def npz_arrays(data: bytes, what: str, budget) -> list[tuple[str, bytes, np.ndarray]]:
    """The arrays of an .npz (numpy.savez: a zip of .npy files), each as (its name, its .npy
    bytes, the array): read with the zip's members counted against `budget` (a
    zip_reading.ZipBudget: an .npz is an upload like any zip), pickles refused."""
    from ..onnx_io.external import MAX_ZIP_MEMBERS
    from ..onnx_io.zip_reading import BoundedMember

    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in z.infolist() if not m.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise StudioError("bad_npy", f"{what} is not a readable .npz: {exc}") from None
    if not members or len(members) > MAX_ZIP_MEMBERS:
        raise StudioError("bad_npy", f"{what} holds {len(members)} files: an .npz holds one .npy per array")
    stray = next((m.filename for m in members if not m.filename.endswith(".npy")), None)
    if stray is not None:
        raise StudioError("bad_npy", f"{what}: {stray!r} is not an .npy: an .npz holds one per array")
    out = []
    for m in members:
        member = BoundedMember(z, m, budget)
        try:
            raw = member.read_all(budget.max_total)
        finally:
            member.close()
        name = m.filename.removesuffix(".npy")
        out.append((name, raw, load_npy(raw, f"{what}: {name!r}")))
    return out


def _cast(arr: np.ndarray, dtype_name: str | None, what: str) -> np.ndarray:
    if dtype_name is None:
        return arr
    try:
        elem = onnx.TensorProto.DataType.Value(dtype_name)
        np_dtype = helper.tensor_dtype_to_np_dtype(elem)
    except (ValueError, KeyError, TypeError):
        raise StudioError("bad_value", f"{what}: {dtype_name!r} is not a tensor element type") from None
    if (
        arr.dtype != np_dtype and arr.dtype.kind != "b"
    ):  # (a mask's booleans are 0 and 1 anywhere) 1e40 in a float64 .npy became a FLOAT inf, 2.5 an INT64 2, without a word
        flat = arr.reshape(-1)
        for start in range(0, flat.size, CAST_CHECK_CHUNK):  # a bounded temporary for a big array
            problem = misfit(flat[start : start + CAST_CHECK_CHUNK], np.dtype(np_dtype), dtype_name)
            if problem:
                raise StudioError(
                    "bad_value", f"{what}: the .npy's {arr.dtype} values can't be {dtype_name}: {problem}"
                )
    try:
        return arr.astype(np_dtype)
    except (ValueError, TypeError) as exc:
        raise StudioError("bad_value", f"{what}: can't convert {arr.dtype} to {dtype_name}: {exc}") from None


CAST_CHECK_CHUNK = 1 << 20  # elements of an .npy checked at a time before a cast


def nonfinite_counts(arr: np.ndarray) -> tuple[int, int]:
    """(NaN, ±Inf) counts of an array's values; (0, 0) for types that hold neither. A chunk at a
    time, and a chunk all finite (the usual one) costs one pass: no temporary the size of a
    big weight. Narrow floats numpy lacks (bfloat16, float8: ml_dtypes) are read as float32."""
    kind = arr.dtype.kind
    narrow = kind == "V" and arr.dtype.name.startswith(("float", "bfloat"))
    if kind not in "fc" and not narrow:
        return 0, 0
    flat = arr.reshape(-1)
    nan = inf = 0
    for start in range(0, flat.size, CAST_CHECK_CHUNK):
        chunk = flat[start : start + CAST_CHECK_CHUNK]
        if narrow:
            chunk = chunk.astype(np.float32)
        finite = np.isfinite(chunk)
        if finite.all():
            continue
        nans = int(np.count_nonzero(np.isnan(chunk)))
        nan += nans
        inf += chunk.size - int(np.count_nonzero(finite)) - nans
    return nan, inf


def array_from_source(value, what: str) -> np.ndarray:
    """The array of {"npy": digest} (as uploaded) or {"dtype", "shape", "values"}."""
    if isinstance(value, dict) and "npy" in value:
        return _npy_array(value, value.get("dtype"), what)[1]
    return numpy_helper.to_array(tensor_from_json(value, what))


def _npy_array(value: dict, dtype: str | None, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(the uploaded .npy's array, it cast to `dtype`) of {"npy": digest}."""
    digest = value["npy"]
    if not isinstance(digest, str):
        raise StudioError("bad_value", f'{what}: "npy" must name an uploaded blob (POST /api/blobs)')
    loaded = load_npy(read_blob(digest, what), f"blob {digest[:12]}")
    return loaded, _cast(loaded, dtype, what)


def tensor_from_source(value, what: str, name: str = "", dtype: str | None = None) -> onnx.TensorProto:
    """TensorProto from {"npy": digest} or {"dtype", "shape", "values"}; `dtype` casts an .npy."""
    return sourced_tensor(value, what, name, dtype)[0]


def sourced_tensor(value, what: str, name: str = "", dtype: str | None = None) -> tuple[onnx.TensorProto, str | None]:
    """tensor_from_source, and the .npy's own dtype ("int64") when it was cast to another."""
    if isinstance(value, dict) and "npy" in value:
        loaded, arr = _npy_array(value, dtype or value.get("dtype"), what)
        try:
            return numpy_helper.from_array(arr, name), (str(loaded.dtype) if arr.dtype != loaded.dtype else None)
        except Exception as exc:
            raise StudioError("bad_value", f"{what}: {exc}") from None
    return tensor_from_json(value, what, name), None


_COMPLEX = (onnx.TensorProto.COMPLEX64, onnx.TensorProto.COMPLEX128)


def _complex_pairs(values, shape: list[int]) -> np.ndarray | None:
    """Complex values written as [real, imaginary] pairs (as the tensor view shows them; QA22 m5:
    the page's own prefill was refused): one more axis of 2 than `shape`, twice its elements. None
    when they are no such pairs (real values: their imaginary parts 0)."""
    try:
        a = np.array(values, dtype=np.float64)
    except (ValueError, TypeError):
        return None
    if a.ndim < 1 or a.shape[-1] != 2 or a.size != 2 * int(np.prod(shape)):
        return None
    return (a[..., 0] + 1j * a[..., 1]).reshape(shape)


def tensor_from_json(v, what: str, name: str = "") -> onnx.TensorProto:
    """{"dtype": "FLOAT", "shape": [2, 2], "values": [...]} -> TensorProto."""
    if not isinstance(v, dict) or "dtype" not in v or "values" not in v:
        raise StudioError("bad_value", f'{what} must be an object {{"dtype", "shape", "values"}}')
    try:
        elem = onnx.TensorProto.DataType.Value(v["dtype"])
    except (ValueError, TypeError):
        raise StudioError("bad_value", f"{what}: unknown dtype {v['dtype']!r}") from None
    np_dtype = helper.tensor_dtype_to_np_dtype(elem)
    values = v["values"]
    shape = v.get("shape", [len(values)] if isinstance(values, list) else [])
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise StudioError("bad_value", f"{what}: shape must be a list of non-negative integers")
    pairs = _complex_pairs(values, shape) if elem in _COMPLEX else None
    if pairs is not None:
        return numpy_helper.from_array(pairs.astype(np_dtype), name)
    try:
        flat = [
            SPECIAL_FLOATS.get(x, x) if isinstance(x, str) and elem != onnx.TensorProto.STRING else x
            for x in (values if isinstance(values, list) else [values])
        ]
        target = np.dtype(object) if elem == onnx.TensorProto.STRING else np.dtype(np_dtype)
        problem = misfit(np.array(flat), target, v["dtype"])
        if problem:
            raise StudioError("bad_value", f"{what}: {problem}")
        arr = np.array(flat, dtype=target)
        # one value (not a list) fills the shape: "values": 0.25 with "shape": [8]
        arr = np.full(shape, arr[0], dtype=target) if not isinstance(values, list) else arr.reshape(shape)
    except (ValueError, TypeError, OverflowError) as exc:
        raise StudioError(
            "bad_value", f"{what}: values don't fit dtype {v['dtype']} and shape {shape}: {exc}"
        ) from None
    return numpy_helper.from_array(arr, name)
