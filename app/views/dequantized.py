"""The values a DequantizeLinear of constants gives: (q − zero point) × scale, per tensor, per
channel along `axis`, or by blocks of `block_size` along it (opset 21) — what the operator
reading a quantized weight multiplies by, which the model holds nowhere as such (QA24 #4: its
int8 values, scales and zero points were three tensors four clicks apart, never combined).

Read as tensors by the name of the DequantizeLinear's output (`w_dq`, `@<graph path>:w_dq`), as
an initializer is: previewed, summarised, saved as .npy. Float32 values (the scale's float16 or
bfloat16 widened), at most MAX_ELEMENTS of them.
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
