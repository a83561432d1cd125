"""Whether values a person typed (JSON numbers, strings, booleans, read by numpy as it reads
them) fit a tensor element type, before they are cast to it: a cast would make 1.7 an INT64 1,
1e6 a FLOAT16 inf and 2 a BOOL true without a word. One check for every place values are typed
in: initializers, attribute and input values of edits (edits/sources.py) and a run's inputs
(the onnxruntime worker, which imports no app module, loads this file by its path).

Numpy and ml_dtypes only.
"""

from __future__ import annotations

import math

import numpy as np

# JSON has no literal for these: typed as strings, read as the floats they name
SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def with_special_floats(values):
    """`values` (a value or nested lists) with "NaN", "Infinity" and "-Infinity" as floats."""
    if isinstance(values, list):
        return [with_special_floats(v) for v in values]
    return SPECIAL_FLOATS.get(values, values) if isinstance(values, str) else values


def _integer_range(dtype: np.dtype) -> tuple[int, int] | None:
    """(min, max) of an integer type, numpy's or ml_dtypes' (int4, uint2…); None for others."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    if dtype.kind == "V":  # ml_dtypes' types: integers have an iinfo, floats a finfo
        import ml_dtypes

        try:
            small = ml_dtypes.iinfo(dtype)
        except (ValueError, TypeError):
            return None
        return int(small.min), int(small.max)
    return None


def misfit(values: np.ndarray, dtype: np.dtype, type_name: str) -> str | None:
    """Why `values` (numpy's reading of what was typed) can't be `type_name` held as numpy
    `dtype` without changing a value beyond a float's rounding; None when they can."""
    kind = values.dtype.kind if values.size else ""  # an empty list is numbers and strings alike
    if dtype.kind == "O":
        return None if kind in ("U", "") else "strings are typed in quotes"
    if dtype.kind == "b":
        if kind in ("b", ""):
            return None
        if kind in "iuf" and np.isin(values, (0, 1)).all():
            return None  # 0 and 1 read as false and true
        return "booleans are typed true or false (or 0 and 1)"
    whole = _integer_range(dtype)
    if kind == "O" and whole is not None and all(isinstance(v, int) for v in values.flat):
        return _out_of_range(values, whole, type_name)  # beyond int64: numpy keeps Python ints
    if kind not in ("i", "u", "f", "") or (whole is not None and kind == "f"):
        if whole is not None and kind == "f":
            bad = values[np.isfinite(values) & (values != np.round(values))] if values.size else values
            if not bad.size:  # 2.0 is the whole number 2
                return _out_of_range(values, whole, type_name)
            return f"{type_name} holds whole numbers: {bad.flat[0].item()!r} is not one"
        return f"{type_name} holds {'whole numbers' if whole is not None else 'numbers'}"
    if whole is not None:
        return _out_of_range(values, whole, type_name)
    if kind == "" or dtype.kind == "c":
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        cast = values.astype(dtype).astype(np.float64)
    source = values.astype(np.float64)
    lost = np.isfinite(source) & ~np.isfinite(cast)
    top = _largest(dtype)
    if lost.any():
        v = source[lost].flat[0]
        if abs(v) <= top:  # FLOAT8E8M0: powers of two only, no zero, no sign
            return f"{v:g} is no value a {type_name} holds (it holds powers of two only, with no zero and no sign)"
        return f"{v:g} is beyond the largest {type_name} ({top:g})"
    # a type without infinity or NaN saturates instead (FLOAT4E2M1: 1000.5 is 6, NaN -0): a value
    # past its largest by more than rounding, and NaN or ±Infinity, would be another value
    gone = ~np.isfinite(source) & np.isfinite(cast)
    if gone.any():
        return f"{type_name} holds no NaN or infinity: {source[gone].flat[0]} would be {cast[gone].flat[0]:g}"
    with np.errstate(invalid="ignore"):
        below = float(np.nextafter(np.array(top, dtype), np.array(0, dtype)))
    if np.isfinite(below):
        past = np.isfinite(source) & (np.abs(source) >= top + (top - below) / 2)
        if past.any():
            return f"{source[past].flat[0]:g} is beyond the largest {type_name} ({top:g})"
    if kind in "iu":
        # a whole number the float can't hold exactly changes (16777217 is 16777216 as a FLOAT):
        # a float's rounding is expected of a typed 0.1, not of a count or an id
        with np.errstate(over="ignore", invalid="ignore"):
            changed = values.astype(dtype).astype(values.dtype) != values
        if changed.any():
            v = values[changed].flat[0]
            return f"{v.item()} is not a {type_name} exactly (it would be {int(v.astype(dtype).item())})"
    return None


def _out_of_range(values: np.ndarray, whole: tuple[int, int], type_name: str) -> str | None:
    if not values.size:
        return None
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        return f"{type_name} holds whole numbers: NaN and infinity are not"
    low, high = whole
    if values.min() < low or values.max() > high:
        return f"a value is outside {type_name}'s range {low}…{high}"
    return None


def _largest(dtype: np.dtype) -> float:
    if dtype.kind == "f":
        return float(np.finfo(dtype).max)
    import ml_dtypes

    return float(ml_dtypes.finfo(dtype).max)
