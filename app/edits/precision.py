"""Lower precision for deployment, with onnxruntime's own tools: float16 (weights halved, compute
in half precision; onnxruntime.transformers.float16, which casts around operators without float16
kernels and keeps the inputs' and outputs' types when asked) and dynamic int8 quantization
(onnxruntime.quantization.quantize_dynamic: weights of MatMul, Conv, Gather… to int8, activations
quantized as the model runs)."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.inference import infer_isolated
from ..onnx_io.sizes import size_text
from ..onnx_io.traverse import tensors as all_tensors
from ..onnx_io.traverse import walk_graphs
from .field_types import BOOLEAN, NAME, NULL
from .jsontypes import Array, Enum, optional
from .registry import edit_op
from .sources import inline_tensor
from .wiring import keep_topological_order

# the float32 bytes read into memory to convert: past this the converted model would not fit
# a protobuf message (2 GiB) or the server's memory comfortably
MAX_FLOAT_BYTES = 3 << 30

_FLOAT, _FLOAT16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16


def _converted_graphs(model: onnx.ModelProto):
    """The graphs the converter walks: the main graph and the graphs its nodes hold (not model
    functions or training graphs)."""
    return [ref for ref in walk_graphs(model) if ref.path == "" or ref.path.startswith("n")]


def _float_tensors(model: onnx.ModelProto):
    """(what, tensor) for every float32 initializer and attribute tensor the converter converts."""
    for ref in _converted_graphs(model):
        c = ref.container
        if not isinstance(c, onnx.FunctionProto):
            for t in c.initializer:
                if t.data_type == _FLOAT:
                    yield f"initializer {t.name!r}", t
        for n in c.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == _FLOAT:
                    yield f"attribute {a.name!r} of node {n.name or n.op_type!r}", a.t


@edit_op(
    "convert_float16",
    optional("keep_io_types", BOOLEAN, "keep float32 graph inputs and outputs (Cast nodes at the edges)", default=True),
    optional(
        "op_block_list",
        Array(NAME, label="an array of operator types") | NULL,
        "operators kept in float32, cast around (absent: onnxruntime's list of ops without float16 kernels)",
    ),
    optional("node_block_list", Array(NAME, label="an array of node names"), "nodes kept in float32", default=[]),
)
def convert_float16(model: onnx.ModelProto, op: dict) -> str:
    """Convert float32 weights, values and computation to float16 with onnxruntime's converter:
    weights (values beyond float16's range clamped), Constant values, Cast targets and types;
    operators without float16 kernels (and those listed) stay float32 with Cast nodes around
    them. With keep_io_types the model's float32 inputs and outputs stay float32."""
    from onnxruntime.transformers.float16 import DEFAULT_OP_BLOCK_LIST, convert_float_to_float16

    tensors = list(_float_tensors(model))
    if not tensors and not _has_float_values(model):
        raise StudioError("bad_value", "convert_float16: the model has no float32 tensors to convert")
    size = sum(_data_size(t) for _, t in tensors)
    if size > MAX_FLOAT_BYTES:
        raise StudioError(
            "too_big",
            f"convert_float16: the model's float32 weights take {size_text(size)}, more than the "
            f"{size_text(MAX_FLOAT_BYTES)} converted here",
            422,
        )
    # the converter places its casts by the types of every value: give it inference's
    kept_value_info = [{v.name for v in ref.container.value_info} for ref in walk_graphs(model) if _is_graph(ref)]
    try:
        typed = infer_isolated(model, check_type=False, strict_mode=False, data_prop=True)
    except ValueError as exc:
        raise StudioError("inference_failed", f"convert_float16: shape inference failed: {exc}", 422) from None
    for ours, theirs in zip(walk_graphs(model), walk_graphs(typed), strict=True):
        if _is_graph(ours):
            known = {v.name for v in ours.container.value_info}
            ours.container.value_info.extend(v for v in theirs.container.value_info if v.name not in known)
    for what, t in tensors:  # the converter reads float32 bytes: bring in those kept outside
        inline_tensor(t, what)
    before = sum(len(n.node) for n in _graphs(model))
    blocked = op.get("op_block_list")
    try:
        converted = convert_float_to_float16(
            model,
            keep_io_types=op["keep_io_types"],
            disable_shape_infer=True,
            op_block_list=DEFAULT_OP_BLOCK_LIST if blocked is None else blocked,
            node_block_list=op["node_block_list"],
        )
    except Exception as exc:  # its assertions and numpy's errors on a model it can't handle
        raise StudioError("conversion_failed", f"convert_float16: the converter failed: {exc}", 422) from None
    if converted is not model:
        model.CopyFrom(converted)
    # only the value_info the model had stays (converted to their new types)
    for ref, had in zip((r for r in walk_graphs(model) if _is_graph(r)), kept_value_info, strict=True):
        vi = ref.container.value_info
        for i in reversed(range(len(vi))):
            if vi[i].name not in had:
                del vi[i]
    moved = sum(keep_topological_order(ref.container) for ref in walk_graphs(model))  # casts go last
    casts = sum(len(g.node) for g in _graphs(model)) - before
    halved = sum(
        _data_size(t) for ref in _converted_graphs(model) for t in _initializers(ref) if t.data_type == _FLOAT16
    )
    note = f"; {moved} node(s) reordered" if moved else ""
    return (
        f"converted to float16: {len(tensors)} float32 tensor(s) ({size_text(size)}) now "
        f"{size_text(halved)} of float16 weights, {casts} Cast node(s) added{note}"
    )


def _is_graph(ref) -> bool:
    return not isinstance(ref.container, onnx.FunctionProto)


def _graphs(model: onnx.ModelProto):
    return [ref.container for ref in walk_graphs(model)]


def _initializers(ref):
    return ref.container.initializer if _is_graph(ref) else []


def _has_float_values(model: onnx.ModelProto) -> bool:
    """Whether any graph input or output is float32 (a model without float weights may still compute in float)."""
    return any(v.type.tensor_type.elem_type == _FLOAT for v in [*model.graph.input, *model.graph.output])


def _data_size(t: onnx.TensorProto) -> int:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in t.external_data}
        return int(info["length"]) if info.get("length", "").isdigit() else 0
    return len(t.raw_data) or 4 * len(t.float_data) or 2 * len(t.int32_data)


# what the helper is sent: the model with every tensor inside, as one protobuf message
MAX_QUANTIZE_BYTES = (2 << 30) - (64 << 20)


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
)
def quantize_dynamic(model: onnx.ModelProto, op: dict) -> str:
    """Quantize the model's weights to 8 bits with onnxruntime's dynamic quantization (activations
    are quantized as it runs: no calibration data needed). MatMul and Conv become MatMulInteger
    and ConvInteger behind DynamicQuantizeLinear. The model's fields, metadata and value_info
    stay as they were."""
    fields = ("producer_name", "producer_version", "domain", "model_version", "doc_string")
    kept = {f: getattr(model, f) for f in fields}
    metadata = list(model.metadata_props)
    graph_doc, graph_metadata = model.graph.doc_string, list(model.graph.metadata_props)
    had_value_info = {v.name for v in model.graph.value_info}
    nodes_before, integer_before = len(model.graph.node), _integer_nodes(model)
    for t in all_tensors(model):  # the quantizer reads a file: every tensor goes inside it
        inline_tensor(t, f"tensor {t.name!r}")
    size_before = sum(len(t.raw_data) for ref in walk_graphs(model) for t in _initializers(ref))
    size = model.ByteSize()
    if size > MAX_QUANTIZE_BYTES:
        raise StudioError(
            "too_big",
            f"quantize_dynamic: the model takes {size_text(size)} with its weights, more than the "
            f"{size_text(MAX_QUANTIZE_BYTES)} quantized here (one protobuf message)",
            422,
        )
    options = {k: op.get(k) for k in ("weight_type", "op_types", "nodes_to_exclude", "per_channel", "reduce_range")}
    try:
        out = onnx.ModelProto.FromString(offload.quantize(model.SerializeToString(), options))
    except ValueError as exc:
        raise StudioError(
            "quantization_failed", f"quantize_dynamic: onnxruntime's quantizer failed: {exc}", 422
        ) from None
    model.CopyFrom(out)
    for f, v in kept.items():  # the quantizer signs the model as its producer and drops metadata
        setattr(model, f, v)
    del model.metadata_props[:]
    model.metadata_props.extend(metadata)
    model.graph.doc_string = graph_doc
    del model.graph.metadata_props[:]
    model.graph.metadata_props.extend(graph_metadata)
    vi = model.graph.value_info  # it stores what shape inference found: only the model's own stay
    for i in reversed(range(len(vi))):
        if vi[i].name not in had_value_info:
            del vi[i]
    moved = sum(keep_topological_order(ref.container) for ref in walk_graphs(model))
    # its scales and zero points are initializers that aren't graph inputs, which IR < 4 forbids
    if model.ir_version < 4:
        note = f"; ir_version {model.ir_version} -> 4"
        model.ir_version = 4
    else:
        note = ""
    quantized = _integer_nodes(model) - integer_before
    if quantized <= 0:
        raise StudioError(
            "bad_value",
            "quantize_dynamic: no node was quantized: none of the operators asked for reads a constant "
            "float weight (an initializer that isn't also a graph input)",
        )
    size_after = sum(len(t.raw_data) for ref in walk_graphs(model) for t in _initializers(ref))
    note += f"; {moved} node(s) reordered" if moved else ""
    return (
        f"quantized to {op['weight_type']}: {quantized} MatMul/Conv node(s) now integer, weights "
        f"{size_text(size_before)} -> {size_text(size_after)}, "
        f"{len(model.graph.node) - nodes_before} node(s) added{note}"
    )


def _integer_nodes(model: onnx.ModelProto) -> int:
    """Nodes computing on quantized weights (what dynamic quantization makes of MatMul, Conv)."""
    integer = ("MatMulInteger", "ConvInteger", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM", "QAttention")
    return sum(1 for ref in walk_graphs(model) for n in ref.container.node if n.op_type in integer)
