"""The values a DequantizeLinear of constants gives: (q − zero point) × scale, per tensor, per
channel along `axis`, or by blocks of `block_size` along it (opset 21) — what the operator
reading a quantized weight multiplies by, which the model holds nowhere as such (QA24 #4: its
int8 values, scales and zero points were three tensors four clicks apart, never combined).

Read as tensors by the name of the DequantizeLinear's output (`w_dq`, `@<graph path>:w_dq`), as
an initializer is: previewed, summarised, saved as .npy. Likewise a MatMulNBits' packed weights
(`<its B>#dequantized`): N×K values of 4 (or 2…8) bits two to a byte, by blocks along K, each
block's scale and zero point (default 2^(bits−1)) — N rows of K, as onnxruntime holds them (the
transpose of the MatMul's K×N). Float32 values (the scale's float16 or bfloat16 widened), at
most MAX_ELEMENTS of them.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import numpy_helper

from ..errors import StudioError
from ..onnx_io.address import resolve_graph
from ..onnx_io.traverse import standard_domain
from .tensors import tensor_array

MAX_ELEMENTS = 1 << 24  # 64 MiB of float32: a 4096×4096 weight


def dequantize(q: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, axis: int, block: int) -> np.ndarray:
    """DequantizeLinear's arithmetic in float32 (per tensor: a scalar scale; per axis: one scale
    per index along `axis`; blocked: one per `block` indices along it)."""
    values = q.astype(np.float32)
    s = scale.astype(np.float32)
    z = zero.astype(np.float32) if zero is not None else np.zeros_like(s)
    if s.size == 1 and s.ndim <= 1 and block == 0:
        return (values - z.reshape(())) * s.reshape(())
    axis = axis % q.ndim
    if block > 0:
        s = np.repeat(s, block, axis=axis).take(range(q.shape[axis]), axis=axis)
        z = np.repeat(z, block, axis=axis).take(range(q.shape[axis]), axis=axis)
    else:
        along = [1] * q.ndim
        along[axis] = -1
        s, z = s.reshape(along), z.reshape(along)
    return (values - z) * s


def _attribute(node: onnx.NodeProto, name: str, default: int) -> int:
    return next((a.i for a in node.attribute if a.name == name and a.type == onnx.AttributeProto.INT), default)


UNPACKED = "#dequantized"  # after a MatMulNBits' B: its weights unpacked and dequantized


def _bits(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """The first `count` values of `bits` bits packed into the bytes of each row of `packed`,
    the lowest bits first (onnxruntime's order)."""
    rows = packed.reshape(packed.shape[0], -1).astype(np.uint8)
    per = 8 // bits
    shifts = np.arange(per, dtype=np.uint8) * bits
    values = (rows[:, :, None] >> shifts) & ((1 << bits) - 1)
    return values.reshape(rows.shape[0], -1)[:, :count]


def unpack_nbits(b: np.ndarray, scales: np.ndarray, zeros: np.ndarray | None, n: int, k: int, bits: int, block: int):
    """A MatMulNBits' B ([N, blocks, block·bits/8] bytes) as N×K floats: (q − zero point) × scale
    of each value's block; zero points packed like B ([N, ⌈blocks·bits/8⌉] bytes), else 2^(bits−1)."""
    blocks = -(-k // block)
    q = _bits(b.reshape(n, -1), bits, blocks * block).reshape(n, blocks, block).astype(np.float32)
    s = scales.astype(np.float32).reshape(n, blocks)
    z = np.full((n, blocks), float(1 << (bits - 1)), np.float32)
    if zeros is not None:
        z = _bits(zeros.reshape(n, -1), bits, blocks).astype(np.float32)
    return ((q - z[:, :, None]) * s[:, :, None]).reshape(n, blocks * block)[:, :k]


def _nbits_tensor(g: onnx.GraphProto, name: str, reader) -> onnx.TensorProto | None:
    """The weights of the MatMulNBits whose B is `name`, unpacked; None for no such node."""
    node = next(
        (n for n in g.node if n.op_type == "MatMulNBits" and n.domain == "com.microsoft" and n.input[1:2] == [name]),
        None,
    )
    if node is None:
        return None
    n, k = _attribute(node, "N", 0), _attribute(node, "K", 0)
    bits, block = _attribute(node, "bits", 4), _attribute(node, "block_size", 0)
    weights = {t.name: t for t in g.initializer}
    zero_name = node.input[3] if len(node.input) > 3 else ""
    if not (n > 0 and k > 0 and block > 0 and bits in (1, 2, 4, 8)) or name not in weights:
        return None
    if node.input[2] not in weights or (zero_name and zero_name not in weights):
        return None
    if n * k > MAX_ELEMENTS:
        raise StudioError(
            "too_big", f"{name!r} unpacked would be {n * k:,} float values: at most {MAX_ELEMENTS:,}", 422
        )
    zeros = tensor_array(weights[zero_name], reader) if zero_name else None
    if zeros is not None and zeros.dtype != np.uint8:
        return None  # a float zero point: onnxruntime's other formula, not shown here
    try:
        values = unpack_nbits(
            tensor_array(weights[name], reader), tensor_array(weights[node.input[2]], reader), zeros, n, k, bits, block
        )
    except ValueError as exc:
        raise StudioError("bad_quantization", f"{name!r} can't be unpacked: {exc}", 422) from None
    return numpy_helper.from_array(values, name + UNPACKED)


def dequantized_tensor(model: onnx.ModelProto, ref: str, reader=None) -> onnx.TensorProto | None:
    """The float32 values the DequantizeLinear writing `ref` gives (a main-graph name, or
    `@<graph path>:<name>`), when what it reads are initializers of its graph; else None."""
    path, name = ("", ref)
    if ref.startswith("@") and ":" in ref:
        path, _, name = ref[1:].partition(":")
    try:
        g = resolve_graph(model, path).container
    except StudioError:
        return None
    if not isinstance(g, onnx.GraphProto):
        return None
    if name.endswith(UNPACKED):
        return _nbits_tensor(g, name[: -len(UNPACKED)], reader)
    node = next(
        (
            n
            for n in g.node
            if n.op_type == "DequantizeLinear" and standard_domain(n.domain) == "" and n.output and n.output[0] == name
        ),
        None,
    )
    if node is None or len(node.input) < 2:
        return None
    weights = {t.name: t for t in g.initializer}
    inputs = [*node.input, ""][:3]
    if inputs[0] not in weights or inputs[1] not in weights or (inputs[2] and inputs[2] not in weights):
        return None
    q = weights[inputs[0]]
    if math.prod(q.dims) > MAX_ELEMENTS:
        raise StudioError(
            "too_big",
            f"{name!r} would be {math.prod(q.dims):,} float values: the page dequantizes at most {MAX_ELEMENTS:,}",
            422,
        )
    values = tensor_array(q, reader)
    scale = tensor_array(weights[inputs[1]], reader)
    zero = tensor_array(weights[inputs[2]], reader) if inputs[2] else None
    try:
        out = dequantize(values, scale, zero, _attribute(node, "axis", 1), _attribute(node, "block_size", 0))
    except (ValueError, IndexError) as exc:  # scales that fit no axis: what onnxruntime refuses too
        raise StudioError("bad_quantization", f"{name!r} can't be dequantized: {exc}", 422) from None
    return numpy_helper.from_array(out, name)
