"""Lower precision for deployment, with onnxruntime's own tools: float16 (weights halved,
compute in half precision; onnxruntime.transformers.float16, which casts around operators
without float16 kernels and keeps the inputs' and outputs' types when asked), dynamic int8
quantization (onnxruntime.quantization.quantize_dynamic: weights of MatMul, Conv, Gather… to
int8, activations quantized as the model runs) and static int8 quantization calibrated on the
user's data (quantize_static: QDQ pairs or QLinear operators, what accelerators and onnxruntime's
fastest int8 kernels take). All run in the helper (model_tools.py)."""

from __future__ import annotations

from collections import Counter

import onnx

from ..errors import StudioError
from ..onnx_io.function_calls import without_functions
from ..onnx_io.inference import infer_isolated
from ..onnx_io.sizes import size_text
from ..onnx_io.traverse import (
    constant_value,
    graphs_within,
    node_reads,
    op_schema,
    opset_version,
    running_graphs,
    standard_domain,
    subgraphs,
    walk_graphs,
)
from ..words import plural
from .calibration import calibration_samples
from .field_types import BOOLEAN, NAME, NULL, TENSOR_VALUE
from .float16_bodies import halve_bodies
from .functions_left import QUANTIZED_BY_DEFAULT, left_in_functions
from .jsontypes import Array, Enum, Map, optional, required
from .model_tools import (
    FLOAT,
    FLOAT16,
    check_size,
    constants_to_initializers,
    data_size,
    in_helper,
    keep,
    reorder,
    weights,
)
from .names import rename_in_graph
from .registry import edit_op
from .tool_names import check_tool_names
from .whole_model import convert_opset

_OP_TYPES = Array(NAME, label="an array of operator types") | NULL
_NODE_NAMES = Array(NAME, label="an array of node names")


@edit_op(
    "convert_float16",
    optional("keep_io_types", BOOLEAN, "keep float32 graph inputs and outputs (Cast nodes at the edges)", default=True),
    optional(
        "op_block_list",
        _OP_TYPES,
        "operators kept in float32, cast around (absent: onnxruntime's list of ops without float16 kernels)",
    ),
    optional("node_block_list", _NODE_NAMES, "nodes kept in float32", default=[]),
    rewrites_tensors=True,
)
def convert_float16(model: onnx.ModelProto, op: dict) -> str:
    """Convert float32 weights, values and computation to float16 with onnxruntime's converter:
    weights (values beyond float16's range clamped), Constant values, Cast targets and types;
    operators without float16 kernels (and those listed) stay float32 with Cast nodes around
    them. With keep_io_types the model's float32 inputs and outputs stay float32. The bodies of
    model-local functions, which the converter leaves alone, get float16 constants, Cast targets
    and dtypes (a constant taking a function attribute's value a Cast after it), unless a call is
    kept float32 (node_block_list, op_block_list), which keeps its function float32."""
    check_tool_names(model, op)
    floats = weights(model, FLOAT)
    io_floats = any(v.type.tensor_type.elem_type == FLOAT for v in [*model.graph.input, *model.graph.output])
    if not floats and not io_floats:
        raise StudioError("bad_value", "convert_float16: the model has no float32 tensors to convert")
    check_size(model, "convert_float16")
    containers = _float_containers_given_out(model)
    if containers:  # said plainly, before the converter's result fails the checks (QA35 #7)
        raise StudioError(
            "bad_value",
            f"convert_float16: the model gives out a sequence or optional of float32 ({', '.join(containers[:3])}),"
            " which onnxruntime's float16 converter can't convert nor keep float32",
        )
    size = sum(data_size(t) for t in floats)
    # weights a caller may feed (every one, in an IR < 4 export) the converter leaves float32
    fed = len({v.name for v in model.graph.input} & {t.name for t in model.graph.initializer if t.data_type == FLOAT})
    nodes = sum(len(ref.container.node) for ref in walk_graphs(model))
    options = {k: op.get(k) for k in ("keep_io_types", "op_block_list", "node_block_list")}
    no_half = float32_only(model)
    if set(no_half) - set(options["op_block_list"] or ORT_BLOCK_LIST):
        # the converter would make them read float16, which they don't take (a tree, TfIdfVectorizer's output)
        options["op_block_list"] = sorted({*(options["op_block_list"] or ORT_BLOCK_LIST), *no_half})
    computing, halves = half_compute(model), len(weights(model, FLOAT16))
    halved_before = sum(data_size(t) for t in weights(model, FLOAT16))  # not the conversion's
    # the converter gets the graphs alone: it trips over a body's references (`value_float =
    # @scale`: an AssertionError) and leaves the bodies as they are anyway; they come back after
    functions = [_copied(f) for f in model.functions]
    names = [{n.name for n in ref.container.node} for ref in running_graphs(model)]
    values = [{o for n in ref.container.node for o in n.output} for ref in running_graphs(model)]
    sent = without_functions(model)
    _type_float_outputs(sent)
    converted = in_helper(sent, "float16", options, "convert_float16: the converter failed")
    note = keep(model, converted)
    model.functions.extend(functions)
    reorder(model)
    kept = _kept_float32(model, names, op, no_half)
    _drop_round_trips(model, names, values)
    if half_compute(model) <= computing and len(weights(model, FLOAT16)) <= halves:
        if computing and not floats:  # converted before, its inputs and outputs kept float32
            raise StudioError(
                "bad_value",
                f"convert_float16: the model already computes in float16 ({plural(computing, 'node')}, "
                f"{plural(halves, 'float16 weight')}): nothing is left to convert",
            )
        what = _kept_words(kept) or "no operator of it takes float16"
        raise StudioError(
            "bad_value",
            f"convert_float16: nothing here computes in float16: {what}; the conversion would only round "
            "the inputs through float16",
        )
    if model.functions and not _calls_kept_float32(model, op):
        halved_nodes = halve_bodies(model)  # the converter leaves them: their calls now give float16
        if halved_nodes:
            note += f"; {halved_nodes} node(s) in the bodies of model-local functions made float16"
    _check_function_bodies_fit(model)  # on the nodes in order: the converter appends its Casts
    casts = sum(len(ref.container.node) for ref in walk_graphs(model)) - nodes
    halved = sum(data_size(t) for t in weights(model, FLOAT16)) - halved_before
    if fed:
        note += (
            f"; {fed} of the weights are graph inputs too (as an IR < 4 export lists them), which the converter "
            "keeps float32: Clean up with 'Weights listed as inputs' first makes them constants it converts"
        )
    if kept:
        note += f"; kept float32: {_kept_words(kept)}"
    version = opset_version(model, model.graph, "") or 0
    if version < 19 and {"QuantizeLinear", "DequantizeLinear"} & kept.keys():
        # below 19 QuantizeLinear/DequantizeLinear take float32 scales only: each quantized
        # operator is now cast around its pairs, which runtimes then can't fuse (QA24 #5)
        note += (
            f"; warning: the model is quantized (QuantizeLinear/DequantizeLinear) at opset {version}, where they take "
            "float32 only: the operators between them now compute in float16 between Casts, which stops runtimes "
            "fusing each pair into an int8 kernel (onnxruntime then runs them in float) — convert the opset to 19 "
            "or later first, or keep the model float32"
        )
    made = len(weights(model, FLOAT16)) - halves
    if not made:  # the weights stayed float32: what read them keeps float32 (a QDQ model's scales)
        return (
            f"converted to float16: its {len(floats)} float32 weight(s) ({size_text(size)}) stay float32, "
            f"{casts} Cast node(s) added{note}"
        )
    some = f"{made} of {len(floats)}" if made < len(floats) else f"{len(floats)}"
    return (
        f"converted to float16: {some} float32 weight(s) ({size_text(size)}) now "
        f"{size_text(halved)} of float16 weights, {casts} Cast node(s) added{note}"
    )


# onnxruntime.transformers.float16.DEFAULT_OP_BLOCK_LIST (onnxruntime 1.23): the server process
# doesn't import onnxruntime; tests/test_ml_precision.py holds this copy to it
ORT_BLOCK_LIST = (
    "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer", "FeatureVectorizer",
    "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor", "Normalizer", "OneHotEncoder",
    "RandomUniformLike", "SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsembleClassifier",
    "TreeEnsembleRegressor", "TreeEnsemble", "ZipMap", "NonMaxSuppression", "TopK", "RoiAlign", "Range",
    "CumSum", "Min", "Max", "Upsample",
)  # fmt: skip
_FLOAT, _HALF = "tensor(float)", "tensor(float16)"


def _takes_float16(schema) -> bool:
    """Whether an operator computes on float16 where it computes on float32: some input or
    output of it may be float16, or none may be float32 (a string or integer operator)."""
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    params = [allowed.get(p.type_str, {p.type_str}) for p in [*schema.inputs, *schema.outputs]]
    return any(_HALF in types for types in params) or not any(_FLOAT in types for types in params)


def _float_containers_given_out(model: onnx.ModelProto) -> list[str]:
    """The outputs (of the main graph or a body that runs) that are sequences or optionals holding
    float32: onnxruntime's float16 converter halves the tensors in them but can't cast a sequence
    back, nor keep its makers float32 inside a body (it puts the Casts in the main graph)."""

    def floats_within(t: onnx.TypeProto) -> bool:
        kind = t.WhichOneof("value")
        if kind == "tensor_type":
            return t.tensor_type.elem_type == FLOAT
        return kind in ("sequence_type", "optional_type") and floats_within(getattr(t, kind).elem_type)

    return [
        f"{v.name!r}" + (f" of {ref.path}" if ref.path else "")
        for ref in running_graphs(model)
        for v in ref.container.output
        if v.type.WhichOneof("value") in ("sequence_type", "optional_type") and floats_within(v.type)
    ]


def float32_only(model: onnx.ModelProto) -> dict[str, str]:
    """op type -> why: the operators of the graphs that run whose schema (at the model's opset)
    takes float32 and never float16: ai.onnx.ml's trees, scalers, linear models, ZipMap;
    TfIdfVectorizer's float output. onnxruntime's converter, told of them or not, would feed them
    float16."""
    out: dict[str, str] = {}
    for ref in running_graphs(model):
        for n in ref.container.node:
            if n.op_type in out:
                continue
            schema = op_schema(model, ref.container, n)
            if schema is None or _takes_float16(schema):
                continue
            domain = standard_domain(n.domain)
            out[n.op_type] = (
                "ai.onnx.ml has no float16 version"
                if domain == "ai.onnx.ml"
                else (f"{domain or 'ONNX'} defines it for float32, not float16")
            )
    return out


def _type_float_outputs(model: onnx.ModelProto) -> None:
    """A value_info entry (float, no shape) for each output an operator's schema makes float32
    and onnx's inference leaves untyped (ai.onnx.ml's TreeEnsembleRegressor): onnxruntime's
    converter casts a kept operator's output to float16 for its readers only where it knows it
    is float ("B has inconsistent type tensor(float16)" at the Mul after a tree otherwise)."""
    for ref in running_graphs(model):
        g = ref.container
        known = {v.name for v in (*g.input, *g.output, *g.value_info)} | {t.name for t in g.initializer}
        for n in g.node:
            schema = op_schema(model, g, n)
            if schema is None:
                continue
            allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
            for k, formal in enumerate(schema.outputs[: len(n.output)]):
                name = n.output[k]
                if name and name not in known and allowed.get(formal.type_str, {formal.type_str}) == {_FLOAT}:
                    g.value_info.append(onnx.helper.make_tensor_value_info(name, FLOAT, None))
                    known.add(name)


def _half_values(model: onnx.ModelProto) -> set[str]:
    """The float16 values of the graphs that run: inputs, weights, Cast-to-float16 results."""
    out: set[str] = set()
    for ref in running_graphs(model):
        g = ref.container
        out |= {v.name for v in g.input if v.type.tensor_type.elem_type == FLOAT16}
        out |= {t.name for t in g.initializer if t.data_type == FLOAT16}
        for n in g.node:
            value = constant_value(n)
            if (value is not None and value.data_type == FLOAT16) or _cast_to(n) == FLOAT16:
                out.update(n.output)
    return out


def half_compute(model: onnx.ModelProto) -> int:
    """How many nodes (Casts aside) read a float16 value: compute in float16."""
    halves = _half_values(model)
    return sum(
        1
        for ref in running_graphs(model)
        for n in ref.container.node
        if n.op_type != "Cast" and any(x in halves for x in n.input)
    )


def _cast_to(n: onnx.NodeProto) -> int | None:
    if n.op_type != "Cast" or standard_domain(n.domain):
        return None
    return next((a.i for a in n.attribute if a.name == "to"), None)


def _kept_float32(model: onnx.ModelProto, had: list[set[str]], op: dict, no_half: dict[str, str]) -> dict[str, str]:
    """op type -> why, of the nodes that read what one of the converter's Casts made float32
    again: the operators it kept in float32."""
    users = set(op.get("op_block_list") or [])
    nodes = set(op.get("node_block_list") or [])
    out: dict[str, str] = {}
    for ref, names in zip(running_graphs(model), had, strict=False):
        back = {n.output[0] for n in ref.container.node if _cast_to(n) == FLOAT and n.name not in names}
        for n in ref.container.node:
            if n.op_type == "Cast" or n.op_type in out or not any(x in back for x in n.input):
                continue
            if n.name in nodes:
                out[n.op_type] = "node_block_list keeps it"
            elif n.op_type in users:
                out[n.op_type] = "op_block_list keeps it"
            elif n.op_type in no_half:
                out[n.op_type] = no_half[n.op_type]
            else:
                out[n.op_type] = "onnxruntime has no float16 kernel for it"
    for ref in running_graphs(model):  # and those reading no Cast: a LinearClassifier after a Scaler
        for n in ref.container.node:
            if n.op_type in no_half and n.op_type not in out:
                out[n.op_type] = no_half[n.op_type]
    return out


def _kept_words(kept: dict[str, str]) -> str:
    """ "TreeEnsembleRegressor keeps float32 (ai.onnx.ml has no float16 version)"."""
    by_reason: dict[str, list[str]] = {}
    for op_type, why in kept.items():
        by_reason.setdefault(why, []).append(op_type)
    return "; ".join(
        f"{', '.join(types)} {'keeps' if len(types) == 1 else 'keep'} float32 ({why})"
        for why, types in by_reason.items()
    )


def _drop_round_trips(model: onnx.ModelProto, had: list[set[str]], values: list[set[str]]) -> None:
    """Take out the converter's Cast pairs float32 -> float16 -> float32 (around an operator it
    keeps float32, between one kept operator and the next): the value read after them is the
    value before them rounded to float16, nothing more. The reader reads the float32 value
    itself; a graph output the pair wrote is written by the value's producer (or an Identity)."""
    for ref, names, own in zip(running_graphs(model), had, values, strict=False):
        g = ref.container
        made = {n.output[0]: n.input[0] for n in g.node if _cast_to(n) == FLOAT16 and n.name not in names}
        pairs = [
            (k, made[n.input[0]], n.output[0])
            for k, n in enumerate(g.node)
            if _cast_to(n) == FLOAT and n.name not in names and n.input[0] in made
        ]
        for k, _, _ in reversed(pairs):
            del g.node[k]
        outputs = {v.name for v in g.output}
        fixed = {v.name for v in g.input} | {t.name for t in g.initializer} | outputs
        alias: dict[str, str] = {}
        for _, source, result in pairs:
            source = alias.get(source, source)
            if result not in outputs:
                rename_in_graph(g, result, source)
            elif source not in fixed and any(source in p.output for p in g.node):
                rename_in_graph(g, source, result)  # its producer writes the graph output
                alias[source] = result
                fixed.add(result)
            else:
                g.node.append(onnx.helper.make_node("Identity", [source], [result], name=f"{result}_float32"))
        # what the graph's subgraphs read counts: an input's Cast read only inside an If's branches stays
        read = {x for n in g.node for x in node_reads(n)} | {v.name for sub in graphs_within(g) for v in sub.output}
        unread = [
            k
            for k, n in enumerate(g.node)
            if _cast_to(n) == FLOAT16 and n.name not in names and n.output[0] not in read
        ]
        for k in reversed(unread):
            source, name = alias.get(g.node[k].input[0], g.node[k].input[0]), g.node[k].output[0]
            del g.node[k]
            # the converter renamed the kept operator's output ('probabilities_cast_to_fp16'): its own name back
            if name in own and source not in fixed and any(source in p.output for p in g.node):
                rename_in_graph(g, source, name)
        live = {o for n in g.node for o in n.output} | {v.name for v in g.input} | {t.name for t in g.initializer}
        for i in reversed(range(len(g.value_info))):
            if g.value_info[i].name not in live:
                del g.value_info[i]
    reorder(model)


@edit_op(
    "quantize_dynamic",
    optional("weight_type", Enum(("QInt8", "QUInt8")), "the weights' 8-bit type", default="QInt8"),
    optional(
        "op_types",
        _OP_TYPES,
        "the operators quantized (absent: every one onnxruntime can: MatMul, Conv, Gather, Attention, LSTM…)",
    ),
    optional("nodes_to_exclude", _NODE_NAMES, "nodes left in float", default=[]),
    optional("per_channel", BOOLEAN, "a scale per output channel rather than per tensor", default=False),
    optional("reduce_range", BOOLEAN, "7-bit weights (for CPUs without VNNI)", default=False),
    rewrites_tensors=True,
)
def quantize_dynamic(model: onnx.ModelProto, op: dict) -> str:
    """Quantize the model's weights to 8 bits with onnxruntime's dynamic quantization (activations
    are quantized as it runs: no calibration data needed). MatMul and Conv become MatMulInteger
    and ConvInteger behind DynamicQuantizeLinear, inside If/Loop bodies too (a merged decoder's
    branches, reading the main graph's weights). The model's fields, metadata and value_info
    stay as they were."""
    check_tool_names(model, op)
    check_size(model, "quantize_dynamic")
    size = sum(data_size(t) for t in weights(model))
    made = constants_to_initializers(model)
    _needs_float32(model)
    made += one_default_import(model, "quantize_dynamic")
    nodes, integer, in_bodies = _node_count(model), _integer_nodes(model), _integer_nodes(model, bodies_only=True)
    convs = _conv_integers(model)
    options = {k: op.get(k) for k in ("weight_type", "op_types", "nodes_to_exclude", "per_channel", "reduce_range")}
    handed_in = _gathers_read_in_bodies(model, op)
    options["nodes_to_exclude"] = [*op.get("nodes_to_exclude", []), *handed_in]
    note = made + keep(model, in_helper(model, "quantize", options, "quantize_dynamic: onnxruntime's quantizer failed"))
    if handed_in:
        note += (
            f"; kept float: Gather {', '.join(map(repr, handed_in[:3]))}{' …' if len(handed_in) > 3 else ''}, whose"
            " output an If/Loop body reads (onnxruntime's quantizer can't hand it on quantized)"
        )
    quantized = _integer_nodes(model) - integer
    inside = _integer_nodes(model, bodies_only=True) - in_bodies
    if quantized <= 0:
        raise StudioError(
            "bad_value",
            "quantize_dynamic: no node was quantized: none of the operators asked for reads a float "
            "weight straight from an initializer (simplify folds weights computed from constants; "
            "cleanup with initializer_inputs makes weights listed as graph inputs constants)"
            + left_in_functions(model, op.get("op_types")),
        )
    # its scales and zero points are initializers that aren't graph inputs, which IR < 4 forbids
    reorder(model)
    after = sum(data_size(t) for t in weights(model))
    where = f" ({inside} of them inside If/Loop bodies)" if inside else ""
    return (
        f"quantized to {op['weight_type']}: {quantized} MatMul/Conv node(s) now integer{where}, weights "
        f"{size_text(size)} -> {size_text(after)}, {_node_count(model) - nodes} node(s) added{note}"
        + left_in_functions(model, op.get("op_types"))
        + _convs_words(_conv_integers(model) - convs)
    )


def _conv_integers(model: onnx.ModelProto) -> int:
    return sum(1 for ref in walk_graphs(model) for n in ref.container.node if n.op_type == "ConvInteger")


def _convs_words(convs: int) -> str:
    """What a person quantizing a CNN dynamically should hear (QA43 #6: a detector ran 5.7× slower,
    and nothing said why): onnxruntime's own advice."""
    if not convs:
        return ""
    return (
        f"; {plural(convs, 'Conv')} now ConvInteger, its input quantized as the model runs: on CPU this often runs"
        " slower than float — onnxruntime recommends static quantization for convolutional models"
        " (Run → Compare with revision times both)"
    )


def _gathers_read_in_bodies(model: onnx.ModelProto, op: dict) -> list[str]:
    """The named Gather nodes onnxruntime's dynamic quantizer would quantize whose output a body
    held by their graph reads: it makes that output quantized and dequantizes it for readers in
    its own graph only, so a branch passing it on (an Identity) reads a tensor gone ("Invalid
    model with unknown initializers/tensors {'e'}", QA32 N5); left float, the quantizer runs."""
    if op.get("op_types") is not None and "Gather" not in op["op_types"]:
        return []
    out: list[str] = []
    for ref in running_graphs(model):
        g = ref.container
        in_bodies = {
            name
            for n in g.node
            for sub in subgraphs(n)
            for inner in graphs_within(sub)
            for name in [*(x for m in inner.node for x in m.input), *(v.name for v in inner.output)]
        }
        out += [
            n.name
            for n in g.node
            if n.op_type == "Gather" and standard_domain(n.domain) == "" and n.name and n.output[0] in in_bodies
        ]
    return [name for name in dict.fromkeys(out) if name not in op.get("nodes_to_exclude", [])]


def _function_names(model: onnx.ModelProto) -> str:
    return ", ".join(dict.fromkeys(f.name for f in model.functions))


def _check_function_bodies_fit(model: onnx.ModelProto) -> None:
    """onnxruntime's float16 converter converts the graphs, not the bodies of model-local
    functions: a call then gets float16 values that a float32 constant in its body meets
    ("B has inconsistent type"). Said here in words, with the way out (keeping the calls in
    float32 with node_block_list runs, but leaves most of the model float32), rather than by the
    checks after the edit naming a body node the person never touched."""
    if not model.functions:
        return
    try:
        infer_isolated(model, check_type=True, strict_mode=True)
    except ValueError:
        # onnx's words here are a cascade of "expected to have type but instead is null" per node
        raise StudioError(
            "bad_value",
            f"convert_float16: the bodies of model-local functions ({_function_names(model)}) don't take the"
            " float16 values their calls now get, even with their constants made float16: simplify inlines"
            " the functions first, then they convert with the rest",
            422,
        ) from None


def _copied(f: onnx.FunctionProto) -> onnx.FunctionProto:
    out = onnx.FunctionProto()
    out.CopyFrom(f)
    return out


def _calls_kept_float32(model: onnx.ModelProto, op: dict) -> bool:
    """Whether a call of a model-local function is kept float32 (node_block_list, op_block_list):
    its body then stays float32 too, the converter's Casts around the call feeding it."""
    names = {f.name for f in model.functions}
    blocked_ops = set(op.get("op_block_list") or []) & names
    blocked_nodes = set(op.get("node_block_list") or [])
    return bool(blocked_ops) or any(
        n.name in blocked_nodes and n.op_type in names for ref in walk_graphs(model) for n in ref.container.node
    )


def _needs_float32(model: onnx.ModelProto) -> None:
    """onnxruntime's quantizers take float32 models: on float16 weights their quantizing nodes
    get float16 activations, which they don't take ("x_scale typestr: tensor(float), has
    unsupported type: tensor(float16)" from the check after). Said before, in the user's words."""
    halves = weights(model, FLOAT16)
    if halves:
        raise StudioError(
            "bad_value",
            f"onnxruntime's quantizers need float32 weights: {len(halves)} of this revision's weights are float16 (a float16 "
            "conversion); quantize the float32 revision before it (undo the conversion, or restore that revision)",
        )


def one_default_import(model: onnx.ModelProto, what: str) -> str:
    """onnxruntime's quantizers take a model importing ai.onnx exactly once ("Failed to find proper
    ai.onnx domain" otherwise). None: refused in words (an XGBoost export has only ai.onnx.ml
    operators); two of one version (skl2onnx writes ('', 17) twice): made one, and said; two
    versions: refused. The note for the edit's answer."""
    imports = [o.version for o in model.opset_import if standard_domain(o.domain) == ""]
    if not imports:
        ml = sorted({n.op_type for ref in running_graphs(model) for n in ref.container.node})
        only_ml = all(
            standard_domain(n.domain) == "ai.onnx.ml" for ref in running_graphs(model) for n in ref.container.node
        )
        raise StudioError(
            "bad_value",
            f"{what}: the model imports no ai.onnx opset: it has only ai.onnx.ml operators ({', '.join(ml)}), "
            "which onnxruntime's quantizer doesn't handle"
            if only_ml
            else f"{what}: the model imports no ai.onnx opset, which onnxruntime's quantizer needs",
        )
    if len(imports) == 1:
        return ""
    if len(set(imports)) > 1:
        raise StudioError(
            "bad_value",
            f"{what}: the model imports ai.onnx {len(imports)} times, at opsets {', '.join(map(str, imports))}: "
            "convert_opset to one version first",
        )
    kept = [
        o for k, o in enumerate(model.opset_import) if standard_domain(o.domain) != "" or k == _first_default(model)
    ]
    del model.opset_import[:]
    model.opset_import.extend(kept)
    return f"; the model's {len(imports)} imports of ai.onnx {imports[0]} made one"


def _first_default(model: onnx.ModelProto) -> int:
    return next(k for k, o in enumerate(model.opset_import) if standard_domain(o.domain) == "")


def _integer_nodes(model: onnx.ModelProto, bodies_only: bool = False) -> int:
    """Nodes computing on quantized weights (what dynamic quantization makes of MatMul, Conv), in
    every graph or only inside If/Loop bodies."""
    integer = ("MatMulInteger", "ConvInteger", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM", "QAttention")
    graphs = [ref for ref in running_graphs(model) if ref.path] if bodies_only else walk_graphs(model)
    return sum(1 for ref in graphs for n in ref.container.node if n.op_type in integer)


def _node_count(model: onnx.ModelProto) -> int:
    return sum(len(ref.container.node) for ref in walk_graphs(model))


# what onnxruntime's static quantization leaves alone: it quantizes the main graph only (its
# EnableSubgraph option is for dynamic quantization: QDQ ignores it, QOperator fails on it)
_STATIC_LEAVES_BODIES = (
    "which onnxruntime's static quantization doesn't enter: weights read only inside If/Loop branches "
    "aren't quantized statically by onnxruntime"
)


def _left_in_bodies(model: onnx.ModelProto, op: dict) -> Counter:
    """op type -> the nodes inside If/Loop bodies of the operators asked for (absent: MatMul,
    Gemm, Conv), not left out: what static quantization would quantize but for where they are."""
    wanted = set(op.get("op_types") or QUANTIZED_BY_DEFAULT)
    left_out = set(op.get("nodes_to_exclude") or [])
    return Counter(
        n.op_type
        for ref in running_graphs(model)
        if ref.path
        for n in ref.container.node
        if n.op_type in wanted and standard_domain(n.domain) == "" and n.name not in left_out
    )


def _counted(counts: Counter) -> str:
    """ "14 MatMul, 2 Conv node(s)"."""
    return ", ".join(f"{k} {op}" for op, k in counts.most_common()) + " node(s)"


_FORMATS = {"QDQ": "QuantizeLinear/DequantizeLinear pairs", "QOperator": "QLinear operators"}


@edit_op(
    "quantize_static",
    required(
        "calibration",
        Map(TENSOR_VALUE, label='an object: graph input name -> {"npy": blob} or {"dtype", "shape", "values"}'),
        "each graph input's calibration values: one sample of the input's shape, samples along one more "
        "leading axis, or for an input whose first dim is a fixed 1, a sample per row",
    ),
    optional(
        "quant_format", Enum(tuple(_FORMATS)), "QDQ pairs around float operators, or QLinear operators", default="QDQ"
    ),
    optional(
        "activation_type",
        Enum(("QUInt8", "QInt8", "QUInt16", "QInt16")),
        "the activations' type (16 bits: A16W8 for NPUs such as QNN's, QDQ only; a model below opset 21 is "
        "converted to it first)",
        default="QUInt8",
    ),
    optional(
        "weight_type",
        Enum(("QInt8", "QUInt8", "QInt16", "QUInt16", "QInt4", "QUInt4")),
        "the weights' type (4 and 16 bits: QDQ only; a model below opset 21 is converted to it first)",
        default="QInt8",
    ),
    optional(
        "calibrate_method",
        Enum(("MinMax", "Entropy", "Percentile")),
        "how an activation's range is chosen from the values seen",
        default="MinMax",
    ),
    optional(
        "op_types",
        _OP_TYPES,
        "the operators quantized (absent: every one onnxruntime can: Conv, MatMul, Gemm, Add, pooling…)",
    ),
    optional(
        "nodes_to_exclude",
        _NODE_NAMES,
        "nodes left in float: on float weights, reading float values where the tensors they read are "
        "quantized for other nodes (QDQ; a Relu or Clip the quantizer folded into a range is put back for them)",
        default=[],
    ),
    optional("per_channel", BOOLEAN, "a weight scale per output channel rather than per tensor", default=False),
    optional("reduce_range", BOOLEAN, "7-bit weights (for CPUs without VNNI)", default=False),
    rewrites_tensors=True,
)
def quantize_static(model: onnx.ModelProto, op: dict) -> str:
    """Quantize weights and activations (8 bits; or 16-bit activations, 4- or 16-bit weights)
    with onnxruntime's static quantization: the model first runs on the calibration samples to
    measure each activation's range, then scales and zero points are fixed from them. QDQ puts
    QuantizeLinear/DequantizeLinear pairs around the operators (what TensorRT, QNN and
    onnxruntime's int8 kernels take); QOperator uses QLinearConv, QLinearMatMul… (8 bits only).
    onnxruntime quantizes the main graph only: nodes inside If/Loop bodies stay float, and the
    change says how many. The model's fields, metadata and value_info stay as they were."""
    narrow = ("QInt8", "QUInt8")
    eight_bits = op["activation_type"] in narrow and op["weight_type"] in narrow
    if op["quant_format"] == "QOperator" and not eight_bits:
        raise StudioError("bad_value", "quantize_static: QLinear operators (QOperator) take 8-bit types only: use QDQ")
    converted = ""
    if not eight_bits and (opset_version(model, model.graph, "") or 0) < 21:
        # below 21 onnxruntime writes its own com.microsoft QuantizeLinear/DequantizeLinear, which
        # only it runs (QA24 #6): onnx's take 4 and 16 bits from 21
        converted = (
            "4- and 16-bit QuantizeLinear/DequantizeLinear are onnx's from opset 21, so first "
            + convert_opset(model, {"op": "convert_opset", "version": 21, "domain": "ai.onnx"})
            + "; then "
        )
    check_tool_names(model, op)
    size = check_size(model, "quantize_static")
    samples, count = calibration_samples(model, op["calibration"])
    made = constants_to_initializers(model)
    _needs_float32(model)
    made += one_default_import(model, "quantize_static")
    files = {name: f"calibration{k}" for k, name in enumerate(sorted(samples))}
    keys = ("quant_format", "activation_type", "weight_type", "calibrate_method", "op_types", "nodes_to_exclude")
    options = {k: op.get(k) for k in (*keys, "per_channel", "reduce_range", "calibration")}
    options["calibration_files"] = files
    before = _quantized_operators(model)
    in_bodies = _left_in_bodies(model, op)
    what = "quantize_static: onnxruntime's quantizer failed"
    if before:  # its errors on a quantized model say nothing of that ("'NoneType' object has no…")
        what += f" (the model already has {before} quantized operator(s): quantize the float model it came from)"
    result = in_helper(model, "quantize_static", options, what, {files[name]: arr for name, arr in samples.items()})
    note = made + keep(model, result)
    quantized = _quantized_operators(model) - before
    if quantized <= 0 and in_bodies:
        raise StudioError(
            "bad_value",
            f"quantize_static: no node was quantized: the {_counted(in_bodies)} it would quantize are inside "
            f"If/Loop bodies, {_STATIC_LEAVES_BODIES} (quantize_dynamic and quantize_weights quantize them)",
        )
    if quantized <= 0:
        raise StudioError(
            "bad_value",
            "quantize_static: no node was quantized: none of the operators asked for is one onnxruntime "
            "quantizes statically (Conv, MatMul, Gemm, Add, Mul, pooling, Relu…) with float values"
            + left_in_functions(model, op.get("op_types")),
        )
    if in_bodies:
        note += f"; left in float: {_counted(in_bodies)} inside If/Loop bodies, {_STATIC_LEAVES_BODIES}"
    reorder(model)
    after = sum(data_size(t) for t in weights(model))
    before_size = size_text(size)
    # an array of the input's own rank with a symbolic first dim is one sample, a batch of rows
    rows = min((a.shape[1] if a.ndim > 1 else 1) for a in samples.values())
    # (QA30: "1 sample(s), each a batch of 8" read as one sample used)
    on = f"{count * rows} rows ({plural(count, 'batch', 'batches')} of {rows})" if rows > 1 else f"{count} sample(s)"
    return converted + (
        f"quantized statically ({_FORMATS[op['quant_format']]}, activations {op['activation_type']}, weights "
        f"{op['weight_type']}): {quantized} operator(s) now on quantized values, calibrated on {on} "
        f"({op['calibrate_method']}); weights {before_size} -> {size_text(after)}{note}"
        + left_in_functions(model, op.get("op_types"))
    )


_QDQ = ("QuantizeLinear", "DequantizeLinear")


def _quantized_operators(model: onnx.ModelProto) -> int:
    """Operators computing on quantized values: QLinear… operators, and in QDQ form every other node
    reading a DequantizeLinear's output."""
    count = 0
    for ref in walk_graphs(model):
        dequantized = {o for n in ref.container.node if n.op_type == "DequantizeLinear" for o in n.output}
        for n in ref.container.node:
            qlinear = n.op_type.startswith("QLinear") or n.op_type in ("QGemm", "QAttention")
            if qlinear or (n.op_type not in _QDQ and any(i in dequantized for i in n.input)):
                count += 1
    return count
