"""JSON values -> AttributeProto fields, checked against the attribute's type."""
from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import AttributeProto, helper, numpy_helper

from ..errors import StudioError

INT64 = (-(2**63), 2**63 - 1)
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _float(v, what: str) -> float:
    if isinstance(v, str) and v in _SPECIAL:
        return _SPECIAL[v]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise StudioError("bad_value", f"{what} must be a number")
    return float(v)


def _int(v, what: str) -> int:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise StudioError("bad_value", f"{what} must be an integer")
    if not INT64[0] <= v <= INT64[1]:
        raise StudioError("bad_value", f"{what} does not fit in a 64-bit integer")
    return v


def _str(v, what: str) -> bytes:
    if not isinstance(v, str):
        raise StudioError("bad_value", f"{what} must be a string")
    return v.encode("utf-8")


def _list(v, what: str) -> list:
    if not isinstance(v, list):
        raise StudioError("bad_value", f"{what} must be a list")
    return v


def tensor_from_json(v, what: str, name: str = "") -> onnx.TensorProto:
    """{"dtype": "FLOAT", "shape": [2, 2], "values": [...]} -> TensorProto."""
    if not isinstance(v, dict) or "dtype" not in v or "values" not in v:
        raise StudioError("bad_value", f"{what} must be an object {{\"dtype\", \"shape\", \"values\"}}")
    try:
        elem = onnx.TensorProto.DataType.Value(v["dtype"])
    except (ValueError, TypeError):
        raise StudioError("bad_value", f"{what}: unknown dtype {v['dtype']!r}") from None
    np_dtype = helper.tensor_dtype_to_np_dtype(elem)
    values = v["values"]
    shape = v.get("shape", [len(values)] if isinstance(values, list) else [])
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise StudioError("bad_value", f"{what}: shape must be a list of non-negative integers")
    try:
        flat = [_SPECIAL.get(x, x) if isinstance(x, str) and elem != onnx.TensorProto.STRING else x
                for x in (values if isinstance(values, list) else [values])]
        arr = np.array(flat, dtype=object if elem == onnx.TensorProto.STRING else np_dtype)
        arr = arr.reshape(shape)
    except (ValueError, TypeError, OverflowError) as exc:
        raise StudioError("bad_value", f"{what}: values don't fit dtype {v['dtype']} and shape {shape}: {exc}") from None
    return numpy_helper.from_array(arr, name)


def set_attribute_value(attr: AttributeProto, value, what: str) -> None:
    """Replace attr's value with `value` (JSON), keeping attr.type."""
    t = attr.type
    A = AttributeProto
    if t == A.FLOAT:
        attr.f = _float(value, what)
    elif t == A.INT:
        attr.i = _int(value, what)
    elif t == A.STRING:
        attr.s = _str(value, what)
    elif t == A.FLOATS:
        items = [_float(x, f"{what} items") for x in _list(value, what)]
        del attr.floats[:]
        attr.floats.extend(items)
    elif t == A.INTS:
        items = [_int(x, f"{what} items") for x in _list(value, what)]
        del attr.ints[:]
        attr.ints.extend(items)
    elif t == A.STRINGS:
        items = [_str(x, f"{what} items") for x in _list(value, what)]
        del attr.strings[:]
        attr.strings.extend(items)
    elif t == A.TENSOR:
        attr.t.CopyFrom(tensor_from_json(value, what, attr.t.name))
    elif t == A.TENSORS:
        items = [tensor_from_json(x, f"{what} items") for x in _list(value, what)]
        del attr.tensors[:]
        attr.tensors.extend(items)
    else:
        kind = AttributeProto.AttributeType.Name(t) if t in AttributeProto.AttributeType.values() else str(t)
        raise StudioError("unsupported_attribute_type", f"{what} is of type {kind}, which can't be set from JSON")
