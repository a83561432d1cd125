"""What is wrong with a QuantizeLinear's or DequantizeLinear's scale, in one line with its
numbers ("block_size 32 along axis 0 (64 values) needs 2 scales there; 'w_scale' has 4"), where
onnxruntime's refusal quotes its C++ assertion (`scale.Shape()[i] == (input_shape[i] +
quant_block_size - 1) / quant_block_size was false`) and onnx's full check lets the edit pass
(QA24 #12). Read off the graph's initializers: a weight's pair, whose shapes are known."""

from __future__ import annotations

import math

import onnx

from ..onnx_io.address import GraphRef

QUANTIZERS = ("QuantizeLinear", "DequantizeLinear")


def _attr(node: onnx.NodeProto, name: str, default: int) -> int:
    return next((a.i for a in node.attribute if a.name == name and a.type == onnx.AttributeProto.INT), default)


def quantization_fault(ref: GraphRef, node: onnx.NodeProto) -> str | None:
    """The fault of `node`'s scale (and zero point) against its input's shape and its axis and
    block_size, in words; None when they fit, or when the shapes aren't initializers' here."""
    g = ref.container
    if node.op_type not in QUANTIZERS or len(node.input) < 2 or not isinstance(g, onnx.GraphProto):
        return None
    dims = {t.name: list(t.dims) for t in g.initializer}
    x, scale = dims.get(node.input[0]), dims.get(node.input[1])
    zero_name = node.input[2] if len(node.input) > 2 else ""
    if x is None or scale is None:
        return None
    axis, block = _attr(node, "axis", 1), _attr(node, "block_size", 0)
    s_name = node.input[1]
    fault = _scale_fault(x, scale, s_name, axis, block)
    if fault is None and zero_name in dims and dims[zero_name] != scale:
        fault = f"its zero point {zero_name!r} is {dims[zero_name]}, its scale {s_name!r} {scale}: they must be alike"
    return fault


def _scale_fault(x: list[int], scale: list[int], s_name: str, axis: int, block: int) -> str | None:
    if block == 0 and math.prod(scale) == 1 and len(scale) <= 1:
        return None  # per tensor
    if not -len(x) <= axis < len(x):
        return f"axis {axis} is beyond its input's rank {len(x)} ({x})"
    at = axis % len(x)
    if block == 0:
        if len(scale) == 1 and scale[0] == x[at]:
            return None
        return (
            f"per-axis quantization along axis {axis} ({x[at]} values of {x}) needs a scale each; {s_name!r} is {scale}"
        )
    want = [*x[:at], -(-x[at] // block), *x[at + 1 :]]
    if scale == want:
        return None
    return (
        f"block_size {block} along axis {axis} ({x[at]} values of {x}) needs {want[at]} scales there: "
        f"{s_name!r} should be {want}, it is {scale}"
    )
