"""How many bytes `count` elements of an ONNX data type take stored raw: the one home of the
packed sub-byte types (int4, uint4, float4e2m1: 2 per byte; int2, uint2: 4 per byte)."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T

# the whole-byte integer types (a count, an index, a flag cast to a number can be one)
INTEGER_TYPES = frozenset({T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32, T.UINT64})
UNSIGNED_TYPES = frozenset({T.UINT8, T.UINT16, T.UINT32, T.UINT64})
PACKED_BITS: dict[int, int] = {T.INT4: 4, T.UINT4: 4, T.FLOAT4E2M1: 4, T.INT2: 2, T.UINT2: 2}


def data_bytes(data_type: int, count: int) -> int | None:
    """Raw bytes of `count` elements, or None for types without a fixed size (strings, unknown)."""
    if data_type in PACKED_BITS:
        return (count * PACKED_BITS[data_type] + 7) // 8
    if data_type in (T.STRING, T.UNDEFINED) or data_type not in T.DataType.values():
        return None
    try:
        return count * onnx.helper.tensor_dtype_to_np_dtype(data_type).itemsize
    except Exception:  # FLOAT6..., types numpy has no storage for
        return None


def size_text(n: int) -> str:
    """A byte count for people: "812 B", "36.0 KiB", "207.5 MiB", "1.30 GiB"."""
    if n < 1024:
        return f"{n} B"
    if n < 1 << 20:
        return f"{n / 1024:.1f} KiB"
    if n < 1 << 30:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n / (1 << 30):.2f} GiB"
