"""JSON values -> AttributeProto fields, checked against the attribute's type."""

from __future__ import annotations

import numpy as np
from onnx import AttributeProto

from ..errors import StudioError
from ..onnx_io.typed_values import misfit
from .sources import SPECIAL_FLOATS as _SPECIAL
from .sources import tensor_from_source

INT64 = (-(2**63), 2**63 - 1)
# the attribute types a JSON value can set (set_attribute_value below handles each)
SETTABLE_TYPES = ("FLOAT", "INT", "STRING", "TENSOR", "FLOATS", "INTS", "STRINGS", "TENSORS")


def _float(v, what: str) -> float:
    if isinstance(v, str) and v in _SPECIAL:
        return _SPECIAL[v]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise StudioError("bad_value", f"{what} must be a number, got {_shown(v)}")
    # an attribute's floats are float32: a number that would become inf or 0 there is refused,
    # not stored as something else than what the change says
    f = float(v)
    problem = misfit(np.array([f]), np.dtype(np.float32), "FLOAT")
    if problem:
        raise StudioError("bad_value", f"{what}: {problem}")
    if f != 0 and np.float32(f) == 0:
        tiny = float(np.finfo(np.float32).smallest_subnormal)
        raise StudioError("bad_value", f"{what}: {f:g} is nearer 0 than a FLOAT holds ({tiny:g}): it would be 0")
    return f


def _int(v, what: str) -> int:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise StudioError("bad_value", f"{what} must be an integer, got {_shown(v)}")
    if not INT64[0] <= v <= INT64[1]:
        raise StudioError("bad_value", f"{what} does not fit in a 64-bit integer")
    return v


def _str(v, what: str) -> bytes:
    if not isinstance(v, str):
        raise StudioError("bad_value", f"{what} must be a string, got {_shown(v)}")
    return v.encode("utf-8")


def _list(v, what: str) -> list:
    if not isinstance(v, list):
        raise StudioError("bad_value", f"{what} must be a list, got {_shown(v)}")
    return v


def _shown(v) -> str:
    """A JSON value as the person would recognise it, cut short."""
    text = repr(v)
    return text if len(text) <= 40 else text[:39] + "…"


def item_value(list_type: int, value, what: str) -> float | int | bytes:
    """One item of a FLOATS, INTS or STRINGS list, from JSON (checked as the list's items are)."""
    if list_type == AttributeProto.FLOATS:
        return _float(value, what)
    if list_type == AttributeProto.INTS:
        return _int(value, what)
    return _str(value, what)


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
        floats = [_float(x, f"{what}: item {k}") for k, x in enumerate(_list(value, what))]
        del attr.floats[:]
        attr.floats.extend(floats)
    elif t == A.INTS:
        ints = [_int(x, f"{what}: item {k}") for k, x in enumerate(_list(value, what))]
        del attr.ints[:]
        attr.ints.extend(ints)
    elif t == A.STRINGS:
        strings = [_str(x, f"{what}: item {k}") for k, x in enumerate(_list(value, what))]
        del attr.strings[:]
        attr.strings.extend(strings)
    elif t == A.TENSOR:
        attr.t.CopyFrom(tensor_from_source(value, what, attr.t.name))
    elif t == A.TENSORS:
        tensors = [tensor_from_source(x, f"{what} items") for x in _list(value, what)]
        del attr.tensors[:]
        attr.tensors.extend(tensors)
    else:
        kind = AttributeProto.AttributeType.Name(t) if t in AttributeProto.AttributeType.values() else str(t)
        raise StudioError("unsupported_attribute_type", f"{what} is of type {kind}, which can't be set from JSON")
