"""Lower precision for deployment, with onnxruntime's own tools: float16 (weights halved, compute
in half precision; onnxruntime.transformers.float16, which casts around operators without float16
kernels and keeps the inputs' and outputs' types when asked) and dynamic int8 quantization
(onnxruntime.quantization.quantize_dynamic: weights of MatMul, Conv, Gather… to int8, activations
quantized as the model runs).

Both run in the helper process (onnx's shape inference runs inside them, and a big model's
conversion takes gigabytes: the helper's memory limit bounds it, the server's memory is not
spent): the model is written to a scratch folder with the tensors kept outside its graph
hard-linked beside it, the tool writes its result there, and the server reads that back."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import onnx

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.sizes import size_text
from ..onnx_io.traverse import tensors as all_tensors
from ..onnx_io.traverse import walk_graphs
from .field_types import BOOLEAN, NAME, NULL
from .jsontypes import Array, Enum, optional
from .registry import edit_op
from .sources import inline_tensor, tensor_files
from .wiring import keep_topological_order

# the weights a conversion takes on: the helper holds them a few times over (its memory limit is
# 8 GiB), and the float16 result (half of them, inside one .onnx) must fit a protobuf message
MAX_WEIGHT_BYTES = 3 << 30

_FLOAT, _FLOAT16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16


def _converted_graphs(model: onnx.ModelProto):
    """The graphs the tools walk: the main graph and the graphs its nodes hold (not model
    functions or training graphs)."""
    return [ref for ref in walk_graphs(model) if ref.path == "" or ref.path.startswith("n")]


def _initializers(ref):
    return [] if isinstance(ref.container, onnx.FunctionProto) else ref.container.initializer


def _data_size(t: onnx.TensorProto) -> int:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in t.external_data}
        return int(info["length"]) if info.get("length", "").isdigit() else 0
    return len(t.raw_data) or 4 * len(t.float_data) or 2 * len(t.int32_data)


def _weights(model: onnx.ModelProto, dtype: int | None = None) -> list[onnx.TensorProto]:
    """The initializers (of `dtype`) of the graphs the tools walk."""
    return [t for ref in _converted_graphs(model) for t in _initializers(ref) if dtype is None or t.data_type == dtype]


def _check_size(model: onnx.ModelProto, what: str) -> int:
    size = sum(_data_size(t) for t in all_tensors(model))
    if size > MAX_WEIGHT_BYTES:
        raise StudioError(
            "too_big",
            f"{what}: the model's tensors take {size_text(size)}, more than the {size_text(MAX_WEIGHT_BYTES)} converted here",
            422,
        )
    return size


def _write_beside(model: onnx.ModelProto, folder: Path) -> Path:
    """`model` as folder/model.onnx: each file its tensors are kept in outside the graph (the
    store's tensor blobs, external data files) hard-linked beside it and named there; a tensor
    whose file can't be linked (another file system) is read into the graph instead."""
    bound = tensor_files()
    files = bound.files if bound is not None else None
    links: dict[str, str | None] = {}
    for t in all_tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        entry = next((e for e in t.external_data if e.key == "location"), None)
        if entry is None or files is None:
            inline_tensor(t, f"tensor {t.name!r}")
            continue
        if entry.value not in links:
            target = folder / f"weights{len(links)}.bin"
            try:
                os.link(files.path(entry.value), target)
                links[entry.value] = target.name
            except OSError:
                links[entry.value] = None
        linked = links[entry.value]
        if linked is None:
            inline_tensor(t, f"tensor {t.name!r}")
        else:
            entry.value = linked
    path = folder / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _in_helper(model: onnx.ModelProto, job: str, options: dict, what: str) -> onnx.ModelProto:
    """offload_jobs.<job>(model file, result file, options) on `model`; the result, parsed."""
    bound = tensor_files()
    # what a failure is remembered under: the graph (its tensors named by their blobs' digests)
    key = f"{offload.content_key(model.SerializeToString())}:{sorted(options.items())}"
    with tempfile.TemporaryDirectory(prefix=f"studio-{job}-", dir=bound.scratch if bound else None) as tmp:
        src = _write_beside(model, Path(tmp))
        dst = Path(tmp) / "result.onnx"
        try:
            offload.run(job, key, str(src), str(dst), options)
        except ValueError as exc:
            raise StudioError("conversion_failed", f"{what}: {exc}", 422) from None
        return onnx.ModelProto.FromString(dst.read_bytes())


def _keep(model: onnx.ModelProto, result: onnx.ModelProto) -> None:
    """Put `result` in `model`'s place, with the model's own fields, metadata and value_info (the
    tools sign the model as theirs, drop metadata and store the types inference found)."""
    fields = ("ir_version", "producer_name", "producer_version", "domain", "model_version", "doc_string")
    kept = {f: getattr(model, f) for f in fields}
    metadata = list(model.metadata_props)
    graph_doc, graph_metadata = model.graph.doc_string, list(model.graph.metadata_props)
    had = [{v.name for v in ref.container.value_info} for ref in _converted_graphs(model)]
    model.CopyFrom(result)
    for f, v in kept.items():
        setattr(model, f, max(v, model.ir_version) if f == "ir_version" else v)
    del model.metadata_props[:]
    model.metadata_props.extend(metadata)
    model.graph.doc_string = graph_doc
    del model.graph.metadata_props[:]
    model.graph.metadata_props.extend(graph_metadata)
    for ref, names in zip(_converted_graphs(model), had, strict=False):
        vi = ref.container.value_info
        for i in reversed(range(len(vi))):
            if vi[i].name not in names:
                del vi[i]


def _reorder(model: onnx.ModelProto) -> None:
    """The tools append their Cast and quantizing nodes to a graph: each put where it is read."""
    for ref in walk_graphs(model):
        keep_topological_order(ref.container)


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
    floats = _weights(model, _FLOAT)
    io_floats = any(v.type.tensor_type.elem_type == _FLOAT for v in [*model.graph.input, *model.graph.output])
    if not floats and not io_floats:
        raise StudioError("bad_value", "convert_float16: the model has no float32 tensors to convert")
    _check_size(model, "convert_float16")
    size = sum(_data_size(t) for t in floats)
    nodes = sum(len(ref.container.node) for ref in walk_graphs(model))
    options = {k: op.get(k) for k in ("keep_io_types", "op_block_list", "node_block_list")}
    _keep(model, _in_helper(model, "float16", options, "convert_float16: the converter failed"))
    _reorder(model)
    casts = sum(len(ref.container.node) for ref in walk_graphs(model)) - nodes
    halved = sum(_data_size(t) for t in _weights(model, _FLOAT16))
    return (
        f"converted to float16: {len(floats)} float32 weight(s) ({size_text(size)}) now "
        f"{size_text(halved)} of float16 weights, {casts} Cast node(s) added"
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
)
def quantize_dynamic(model: onnx.ModelProto, op: dict) -> str:
    """Quantize the model's weights to 8 bits with onnxruntime's dynamic quantization (activations
    are quantized as it runs: no calibration data needed). MatMul and Conv become MatMulInteger
    and ConvInteger behind DynamicQuantizeLinear. The model's fields, metadata and value_info
    stay as they were."""
    _check_size(model, "quantize_dynamic")
    nodes, integer = len(model.graph.node), _integer_nodes(model)
    size = sum(_data_size(t) for t in _weights(model))
    ir = model.ir_version
    options = {k: op.get(k) for k in ("weight_type", "op_types", "nodes_to_exclude", "per_channel", "reduce_range")}
    _keep(model, _in_helper(model, "quantize", options, "quantize_dynamic: onnxruntime's quantizer failed"))
    quantized = _integer_nodes(model) - integer
    if quantized <= 0:
        raise StudioError(
            "bad_value",
            "quantize_dynamic: no node was quantized: none of the operators asked for reads a constant "
            "float weight (an initializer that isn't also a graph input)",
        )
    # its scales and zero points are initializers that aren't graph inputs, which IR < 4 forbids
    note = ""
    if model.ir_version < 4:
        model.ir_version = 4
    if model.ir_version != ir:
        note = f"; ir_version {ir} -> {model.ir_version}"
    _reorder(model)
    after = sum(_data_size(t) for t in _weights(model))
    return (
        f"quantized to {op['weight_type']}: {quantized} MatMul/Conv node(s) now integer, weights "
        f"{size_text(size)} -> {size_text(after)}, {len(model.graph.node) - nodes} node(s) added{note}"
    )


def _integer_nodes(model: onnx.ModelProto) -> int:
    """Nodes computing on quantized weights (what dynamic quantization makes of MatMul, Conv)."""
    integer = ("MatMulInteger", "ConvInteger", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM", "QAttention")
    return sum(1 for ref in walk_graphs(model) for n in ref.container.node if n.op_type in integer)
