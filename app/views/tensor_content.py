"""Whether two tensors hold the same thing: dtype, dims, values bit for bit, doc_string and
metadata — whatever field their values are written in (raw_data, float_data, int32_data, ...,
a blob of the store, an external data file). A difference of encoding alone is no difference:
a model saved with float_data, or re-read from its text form, holds the same weights.

Fast first: equal serialized bytes are equal tensors (the common case, and the store keeps a
big tensor as a reference to its content's digest, so two equal weights compare equal without
reading them). Values are decoded only when the bytes differ and the encodings differ, or when
an external data file has to be read to tell.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from ..errors import StudioError
from ..onnx_io.external import TENSOR_PREFIX
from .tensors import tensor_array
from .value_text import format_float32, format_number, js_number

_T = onnx.TensorProto
_DATA = ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
# what a tensor holds besides its values (dims and data_type are told apart first)
_OTHER = tuple(
    f.name
    for f in _T.DESCRIPTOR.fields
    if f.name not in {"name", "dims", "data_type", "external_data", "data_location", *_DATA}
)
# types whose raw_data is not numpy's bytes of their values: packed below a byte, or strings
_UNPACKED = {
    getattr(_T, n)
    for n in ("INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2", "STRING")
    if hasattr(_T, n)
}
HASH_BELOW = 1 << 20  # bytes: a smaller blob is told by its digest (opening it costs more)
FEW_VALUES = 8  # elements: a change of a tensor this small is said with its values
COMPARE_CHUNK = 1 << 24  # bytes compared at a time: no temporary as big as a weight of GBs


def encoding(t: onnx.TensorProto) -> str:
    """Where a tensor's values are written: "store" (a blob of ours), "file" (a user's external
    data file), a data field's name, or "none" (an empty tensor)."""
    if t.data_location == _T.EXTERNAL:
        location = next((e.value for e in t.external_data if e.key == "location"), "")
        return "store" if location.startswith(TENSOR_PREFIX) else "file"
    if t.HasField("raw_data"):
        return "raw_data"
    return next((f for f in _DATA[1:] if len(getattr(t, f))), "none")


def _type_words(t: onnx.TensorProto) -> str:
    return f"{_T.DataType.Name(t.data_type)} {list(t.dims)}"


def tensor_change(x: onnx.TensorProto, y: onnx.TensorProto, reads=(None, None)) -> str | None:
    """What differs from tensor `x` to `y` in words ("values changed", "values [1, 2048] →
    [-1, 2048]" for a few values, "FLOAT [2] → FLOAT [3]", "doc_string changed"), or None when they hold the same. Names are not compared (the
    caller matched them). reads: each side's reader of external data (external.ExternalFiles)."""
    if x.SerializeToString() == y.SerializeToString() and (encoding(x) != "file" or _same_file(x, y, reads)):
        return None  # (the same reference into another upload's data file may hold other bytes)
    if x.data_type != y.data_type or x.dims != y.dims:
        values = _few_values_words(x, y, reads)
        return f"{_type_words(x)} → {_type_words(y)}" + (f": {values}" if values else "")
    others = [f for f in _OTHER if getattr(x, f) != getattr(y, f)]
    try:
        same = same_values(x, y, reads, others_equal=not others and _same_frame(x, y))
    except StudioError as exc:  # data that can't be read (a file not uploaded): not known either way
        return f"values not compared: {exc.message}"
    if not same:
        values = _few_values_words(x, y, reads)
        return f"values {values}" if values else "values changed"
    return ", ".join(f"{f} changed" for f in others) or None


def _few_values_words(x: onnx.TensorProto, y: onnx.TensorProto, reads) -> str | None:
    """ "[1, 2048] → [-1, 2048]" when both tensors hold a few values (a Reshape's shape, a
    scalar scale): there the values are the change a person looks for. None for bigger ones,
    whose values are not read for it, for values that can't be read, and for values whose
    text is the same on both sides."""
    if max(_count(x), _count(y)) > FEW_VALUES:
        return None
    try:
        a, b = _values(x, reads[0]), _values(y, reads[1])
    except Exception:  # unreadable data: the caller's words stand alone
        return None
    before, after = _values_text(a), _values_text(b)
    # equal text: values whose difference the page's text can't show (NaN payloads, a reshape)
    return None if before == after else f"{before} → {after}"


def _count(t: onnx.TensorProto) -> int:
    return int(np.prod(t.dims, dtype=np.float64)) if t.dims else 1


def _values_text(a: np.ndarray) -> str:
    """Values as the page writes them: float32 at their shortest, a scalar bare, else a list."""
    words = [_value_text(v, a.dtype) for v in a.reshape(-1).tolist()]
    return words[0] if a.ndim == 0 else "[" + ", ".join(words) + "]"


def _value_text(v, dtype: np.dtype) -> str:
    if isinstance(v, bytes | str):
        return json.dumps(v.decode("utf-8", "replace") if isinstance(v, bytes) else v, ensure_ascii=False)
    if isinstance(v, bool | int):
        return format_number(v)
    if isinstance(v, complex):
        return f"{format_number(v.real)}{'+' if v.imag >= 0 else '-'}{format_number(abs(v.imag))}i"
    v = float(v)
    return format_float32(v) if dtype == np.float32 else format_number(v) if math.isfinite(v) else js_number(v)


def same_values(x: onnx.TensorProto, y: onnx.TensorProto, reads=(None, None), others_equal: bool = False) -> bool:
    """Whether two tensors of one dtype and dims hold the same values, bit for bit (a NaN equals
    itself, payload and all; StudioError: one side's data can't be read). others_equal: the caller knows their serialized bytes differ and
    every other field is written alike (_same_frame), so written in one field their values differ."""
    ex, ey = encoding(x), encoding(y)
    if ex == ey:
        if ex == "store":  # a blob's name is its content's digest
            return _refs(x) == _refs(y)
        if ex == "none":
            return True
        if ex == "raw_data":
            return x.raw_data == y.raw_data
        if ex != "file" and others_equal:
            return False
    if "store" in (ex, ey) and not {ex, ey} & {"file", "none"}:
        told = _blob_holds(x, y) if ex == "store" else _blob_holds(y, x)
        if told is not None:
            return told
    try:
        a, b = _values(x, reads[0]), _values(y, reads[1])
    except StudioError:
        raise  # data that can't be read: the caller says so
    except Exception:  # values that don't fit their dtype and dims, a segment: compared as written
        return False
    return same_bits(a, b)


def _same_file(x: onnx.TensorProto, y: onnx.TensorProto, reads) -> bool:
    """Whether two tensors naming one location read it from the very same stored file (one blob
    digest): then their bytes are the same without reading them."""
    location = _refs(x).get("location", "")
    if reads[0] is None or reads[1] is None:
        return True  # nothing to read them by: as written
    keys = reads[0].key(location), reads[1].key(location)
    if None in keys:
        return False
    a, b = reads[0].entries[keys[0]], reads[1].entries[keys[1]]
    return isinstance(a, str) and a == b


def _same_frame(x: onnx.TensorProto, y: onnx.TensorProto) -> bool:
    """Whether the fields around the values are written alike (name, data_location even when it
    says DEFAULT, external_data entries): then bytes that differ differ in the values."""
    return (
        x.name == y.name
        and x.HasField("data_location") == y.HasField("data_location")
        and x.data_location == y.data_location
        and x.external_data == y.external_data
    )


def _blob_holds(stored: onnx.TensorProto, inline: onnx.TensorProto) -> bool | None:
    """Whether the blob of the store a tensor names holds the values another tensor writes
    inside, told without reading the blob: its name is the sha256 of its bytes (store/blobs.py),
    and values of one dtype have one raw_data. None where that isn't so (packed 4-, 2- and 6-bit
    types, strings, a big-endian machine): then the blob is read."""
    refs = _refs(stored)
    if inline.data_type in _UNPACKED or sys.byteorder != "little" or refs.get("offset", "0") != "0":
        return None
    if not refs.get("length", "").isdigit() or int(refs["length"]) >= HASH_BELOW:
        return None  # big: a memory map compared is quicker than sha256 over it
    if inline.HasField("raw_data"):
        raw = inline.raw_data
    else:
        try:
            raw = np.ascontiguousarray(numpy_helper.to_array(inline)).tobytes()
        except Exception:  # values that don't fit their dtype and dims
            return False
    if int(refs["length"]) != len(raw):
        return False
    return hashlib.sha256(raw).hexdigest() == refs["location"][len(TENSOR_PREFIX) :]


def _refs(t: onnx.TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in t.external_data}


def _values(t: onnx.TensorProto, read) -> np.ndarray:
    """The tensor's values; external data through `read` (memory-mapped where numpy can), never
    from a path in the file (numpy_helper would open one)."""
    if t.data_location == _T.EXTERNAL:
        return tensor_array(t, read)
    return numpy_helper.to_array(t)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Two arrays equal in dtype, shape and every byte, a chunk at a time."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "OUS":  # STRING tensors
        return a.tolist() == b.tolist()
    x = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    y = np.ascontiguousarray(b).reshape(-1).view(np.uint8)
    return all(
        np.array_equal(x[k : k + COMPARE_CHUNK], y[k : k + COMPARE_CHUNK]) for k in range(0, x.size, COMPARE_CHUNK)
    )


def sparse_change(x: onnx.SparseTensorProto, y: onnx.SparseTensorProto, reads=(None, None)) -> bool:
    """Whether two sparse tensors differ: their dims, or what their values or indices hold."""
    if x.SerializeToString() == y.SerializeToString():
        return False
    return (
        x.dims != y.dims
        or tensor_change(x.values, y.values, reads) is not None
        or tensor_change(x.indices, y.indices, reads) is not None
    )
