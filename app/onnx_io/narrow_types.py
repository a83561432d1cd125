"""Tensor element types numpy has no type of its own for — bfloat16, the float8s, float4 and the
4- and 2-bit integers — in one table, with the three conversions a run needs:

- `widen`: values of such a type (as onnx's numpy_helper gives them, in ml_dtypes' types) as
  numpy values an .npy holds (float32, or int8/uint8): every value exactly, so narrowing them
  back gives the same bits;
- `ort_input`: any values, narrowed to the type, as the raw array onnxruntime's
  `OrtValue.ortvalue_from_numpy_with_onnx_type` takes (one uint16 or uint8 per element, and for
  sub-byte types the bytes packed as ONNX packs them, first value in the low bits);
- `from_ort_buffer`: an onnxruntime output's bytes of such a type, widened.

Numpy and ml_dtypes only: the onnxruntime worker (ort_worker.py, which imports no app module)
loads this file by its path.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Narrow(NamedTuple):
    onnx_name: str  # TensorProto.DataType name: "BFLOAT16"
    number: int  # TensorProto.DataType value
    kind: str  # ml_dtypes' type
    bits: int
    wide: str  # the numpy type its values widen to


# keyed by onnxruntime's name of the element type (its "tensor(NAME)")
NARROW = {
    "bfloat16": Narrow("BFLOAT16", 16, "bfloat16", 16, "float32"),
    "float8e4m3fn": Narrow("FLOAT8E4M3FN", 17, "float8_e4m3fn", 8, "float32"),
    "float8e4m3fnuz": Narrow("FLOAT8E4M3FNUZ", 18, "float8_e4m3fnuz", 8, "float32"),
    "float8e5m2": Narrow("FLOAT8E5M2", 19, "float8_e5m2", 8, "float32"),
    "float8e5m2fnuz": Narrow("FLOAT8E5M2FNUZ", 20, "float8_e5m2fnuz", 8, "float32"),
    "uint4": Narrow("UINT4", 21, "uint4", 4, "uint8"),
    "int4": Narrow("INT4", 22, "int4", 4, "int8"),
    "float4e2m1": Narrow("FLOAT4E2M1", 23, "float4_e2m1fn", 4, "float32"),
    "float8e8m0": Narrow("FLOAT8E8M0", 24, "float8_e8m0fnu", 8, "float32"),
    "uint2": Narrow("UINT2", 25, "uint2", 2, "uint8"),
    "int2": Narrow("INT2", 26, "int2", 2, "int8"),
}


def of_ort_type(type_name: str) -> Narrow | None:
    """The narrow type of an onnxruntime type string ("tensor(bfloat16)"), or None."""
    if type_name.startswith("tensor(") and type_name.endswith(")"):
        return NARROW.get(type_name[len("tensor(") : -1])
    return None


def of_number(number: int) -> Narrow | None:
    """The narrow type of a TensorProto data type number, or None."""
    return next((n for n in NARROW.values() if n.number == number), None)


def ml_type(n: Narrow) -> np.dtype:
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, n.kind))


def of_numpy(dtype: np.dtype) -> Narrow | None:
    """The narrow type of a numpy dtype (ml_dtypes' types), or None for numpy's own."""
    if dtype.kind not in "VfiuO" or dtype.names is not None:
        return None
    return next((n for n in NARROW.values() if ml_type(n) == dtype), None)


def widen(values: np.ndarray, n: Narrow) -> np.ndarray:
    """Values of the narrow type `n` (ml_dtypes') as the wider numpy type they all fit in."""
    return np.asarray(values).astype(ml_type(n)).astype(n.wide)


def _signed(n: Narrow) -> bool:
    return n.kind.startswith("int")


def _codes(values: np.ndarray, n: Narrow) -> np.ndarray:
    """The `n.bits`-bit code of each value (narrowed to `n`), one uint8 each, flat."""
    narrow = np.asarray(values).astype(ml_type(n)).reshape(-1)
    mask = (1 << n.bits) - 1
    if _signed(n):  # two's complement in n.bits
        return (narrow.astype(np.int16) & mask).astype(np.uint8)
    return narrow.view(np.uint8) & mask


def ort_input(values: np.ndarray, n: Narrow) -> np.ndarray:
    """`values` narrowed to `n`, as the raw array of the element shape that onnxruntime's
    `ortvalue_from_numpy_with_onnx_type(raw, n.number)` reads: for sub-byte types it reads the
    packed bytes from the start of the buffer."""
    values = np.asarray(values)
    if n.bits == 16:
        return values.astype(ml_type(n), order="C").view(np.uint16)  # (ascontiguousarray makes a 0-d array 1-d)
    if n.bits == 8:
        return values.astype(ml_type(n), order="C").view(np.uint8)
    per = 8 // n.bits
    codes = _codes(values, n)
    codes = np.concatenate([codes, np.zeros((-codes.size) % per, np.uint8)]).reshape(-1, per)
    packed = np.zeros(codes.shape[0], np.uint8)
    for k in range(per):
        packed |= (codes[:, k] << (k * n.bits)).astype(np.uint8)
    raw = np.zeros(values.shape, np.uint8)
    raw.reshape(-1)[: packed.size] = packed
    return raw


def from_ort_buffer(data: bytes, shape, n: Narrow) -> np.ndarray:
    """An onnxruntime tensor's bytes (its buffer, packed as ONNX packs sub-byte types) of the
    narrow type `n` and this shape, widened."""
    count = int(np.prod(shape)) if len(shape) else 1
    raw = np.frombuffer(data, np.uint8)
    if n.bits == 16:
        return raw.view(np.uint16)[:count].view(ml_type(n)).astype(n.wide).reshape(shape)
    if n.bits == 8:
        return raw[:count].view(ml_type(n)).astype(n.wide).reshape(shape)
    per, mask = 8 // n.bits, (1 << n.bits) - 1
    codes = np.stack([(raw >> (k * n.bits)) & mask for k in range(per)], axis=-1).reshape(-1)[:count]
    if _signed(n):
        return (
            np.where(codes >= 1 << (n.bits - 1), codes.astype(np.int16) - (1 << n.bits), codes)
            .astype(n.wide)
            .reshape(shape)
        )
    if n.kind.startswith("uint"):
        return codes.astype(n.wide).reshape(shape)
    return codes.view(ml_type(n)).astype(n.wide).reshape(shape)  # float4: its code in the low bits
