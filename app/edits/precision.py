"""Lower precision for deployment, with onnxruntime's own tools: float16 (weights halved,
compute in half precision; onnxruntime.transformers.float16, which casts around operators
without float16 kernels and keeps the inputs' and outputs' types when asked) and dynamic int8
quantization (onnxruntime.quantization.quantize_dynamic: weights of MatMul, Conv, Gather… to
int8, activations quantized as the model runs). Both run in the helper (model_tools.py)."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io.sizes import size_text
from ..onnx_io.traverse import walk_graphs
from .field_types import BOOLEAN, NAME, NULL
from .jsontypes import Array, Enum, optional
from .model_tools import FLOAT, FLOAT16, check_size, data_size, in_helper, keep, reorder, weights
from .registry import edit_op


@edit_op(
    "convert_float16",
    optional("keep_io_types", BOOLEAN, "keep float32 graph inputs and outputs (Cast nodes at the edges)", default=True),
    optional(
        "op_block_list",
        Array(NAME, label="an array of operator types") | NULL,
        "operators kept in float32, cast around (absent: onnxruntime's list of ops without float16 kernels)",
    ),
    optional("node_block_list", Array(NAME, label="an array of node names"), "nodes kept in float32", default=[]),
    rewrites_tensors=True,
)
def convert_float16(model: onnx.ModelProto, op: dict) -> str:
    """Convert float32 weights, values and computation to float16 with onnxruntime's converter:
    weights (values beyond float16's range clamped), Constant values, Cast targets and types;
    operators without float16 kernels (and those listed) stay float32 with Cast nodes around
    them. With keep_io_types the model's float32 inputs and outputs stay float32."""
    floats = weights(model, FLOAT)
    io_floats = any(v.type.tensor_type.elem_type == FLOAT for v in [*model.graph.input, *model.graph.output])
    if not floats and not io_floats:
        raise StudioError("bad_value", "convert_float16: the model has no float32 tensors to convert")
    check_size(model, "convert_float16")
    size = sum(data_size(t) for t in floats)
    nodes = sum(len(ref.container.node) for ref in walk_graphs(model))
    options = {k: op.get(k) for k in ("keep_io_types", "op_block_list", "node_block_list")}
    note = keep(model, in_helper(model, "float16", options, "convert_float16: the converter failed"))
    reorder(model)
    casts = sum(len(ref.container.node) for ref in walk_graphs(model)) - nodes
    halved = sum(data_size(t) for t in weights(model, FLOAT16))
    return (
        f"converted to float16: {len(floats)} float32 weight(s) ({size_text(size)}) now "
        f"{size_text(halved)} of float16 weights, {casts} Cast node(s) added{note}"
    )


@edit_op(
    "quantize_dynamic",
    optional("weight_type", Enum(("QInt8", "QUInt8")), "the weights' 8-bit type", default="QInt8"),
    optional(
        "op_types",
        Array(NAME, label="an array of operator types") | NULL,
        "the operators quantized (absent: every one onnxruntime can: MatMul, Conv, Gather, Attention, LSTM…)",
    ),
    optional("nodes_to_exclude", Array(NAME, label="an array of node names"), "nodes left in float", default=[]),
    optional("per_channel", BOOLEAN, "a scale per output channel rather than per tensor", default=False),
    optional("reduce_range", BOOLEAN, "7-bit weights (for CPUs without VNNI)", default=False),
    rewrites_tensors=True,
)
def quantize_dynamic(model: onnx.ModelProto, op: dict) -> str:
    """Quantize the model's weights to 8 bits with onnxruntime's dynamic quantization (activations
    are quantized as it runs: no calibration data needed). MatMul and Conv become MatMulInteger
    and ConvInteger behind DynamicQuantizeLinear. The model's fields, metadata and value_info
    stay as they were."""
    check_size(model, "quantize_dynamic")
    nodes, integer = len(model.graph.node), _integer_nodes(model)
    size = sum(data_size(t) for t in weights(model))
    options = {k: op.get(k) for k in ("weight_type", "op_types", "nodes_to_exclude", "per_channel", "reduce_range")}
    note = keep(model, in_helper(model, "quantize", options, "quantize_dynamic: onnxruntime's quantizer failed"))
    quantized = _integer_nodes(model) - integer
    if quantized <= 0:
        raise StudioError(
            "bad_value",
            "quantize_dynamic: no node was quantized: none of the operators asked for reads a float "
            "weight straight from an initializer (simplify folds weights computed from constants; "
            "cleanup with initializer_inputs makes weights listed as graph inputs constants)",
        )
    # its scales and zero points are initializers that aren't graph inputs, which IR < 4 forbids
    reorder(model)
    after = sum(data_size(t) for t in weights(model))
    return (
        f"quantized to {op['weight_type']}: {quantized} MatMul/Conv node(s) now integer, weights "
        f"{size_text(size)} -> {size_text(after)}, {len(model.graph.node) - nodes} node(s) added{note}"
    )


def _integer_nodes(model: onnx.ModelProto) -> int:
    """Nodes computing on quantized weights (what dynamic quantization makes of MatMul, Conv)."""
    integer = ("MatMulInteger", "ConvInteger", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM", "QAttention")
    return sum(1 for ref in walk_graphs(model) for n in ref.container.node if n.op_type in integer)
