"""Types of every value in every graph, from the model's own value_info or onnx shape inference
run on a copy (the stored model is never changed)."""

from __future__ import annotations

import contextlib
import signal
import tempfile
import threading

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .address import resolve_graph
from .dim_names import UNNAMED, axis_dim, expression_names, expression_value, plain_dims
from .light import light_copy
from .limits import PROTOBUF_LIMIT
from .runtime_schemas import ONNX_DOMAINS
from .sizes import data_bytes
from .traverse import standard_domain, tensors, walk_graphs

# data propagation carries a 1-D tensor's values through Add/Mul/...: ~140 bytes an element, in
# C++ holding the GIL (x: float[2^40] grew a server to 17.5 GB); shape tensors are far smaller
MAX_PROPAGATED = 1 << 16


def data_propagation_is_bounded(model: onnx.ModelProto) -> bool:
    """False when a 1-D tensor the main graph declares (input, output, value_info) is longer
    than MAX_PROPAGATED, or of unknown length: inference then runs without data propagation."""
    g = model.graph
    for v in (*g.input, *g.output, *g.value_info):
        t = v.type.tensor_type
        if v.type.HasField("tensor_type") and t.HasField("shape") and len(t.shape.dim) == 1:
            d = t.shape.dim[0]
            if d.HasField("dim_value") and d.dim_value > MAX_PROPAGATED:
                return False
    return True


def inferred_model(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """The model with shape inference's value_info added, or None when inference can't run."""
    try:
        # never ByteSize() the model itself: upb walks every weight for it (seconds on 1 GiB)
        light = light_copy(model)
        if light.ByteSize() >= PROTOBUF_LIMIT:
            return None
        if light is model:  # nothing heavy to leave out: light_copy handed the model itself back
            light = onnx.ModelProto()
            light.CopyFrom(model)
        name_unnamed_input_dims(light)
        inferred = onnx.shape_inference.infer_shapes(
            light, check_type=False, strict_mode=False, data_prop=data_propagation_is_bounded(light)
        )
    except Exception:
        return None
    with contextlib.suppress(Exception):  # names are a nicety: onnx's inference stands without them
        name_unknown_dims(light, inferred)
    return inferred


def name_unnamed_input_dims(light: onnx.ModelProto) -> None:
    """Name each dim of the main graph's fed inputs that has neither a size nor a name by its
    input and axis ("X[0]", what a person gives its size by), in place on the stand-in: onnx's
    inference carries a name through the graph where it would invent one per node (a k-means'
    tensors read X[0]×3, not unk__0×1, unk__1×3, unk__2×3 for the same batch), so the drawing
    says which input's dim a size is and costs are formulas in it. The model's own inputs stay
    as declared."""
    weights = {t.name for t in light.graph.initializer}
    for v in light.graph.input:
        if v.name in weights or not v.type.HasField("tensor_type") or not v.type.tensor_type.HasField("shape"):
            continue
        for axis, d in enumerate(v.type.tensor_type.shape.dim):
            if unnamed_dim(d):
                d.dim_param = axis_dim(v.name, axis)  # dim_value and dim_param are one field: a -1 goes


NAMING_SECONDS = 3.0  # a nicety, on the way to a small graph's first view (a PaddleOCR detector took 9 s): past this, onnx's names stand
AT_SIZES_SECONDS = 120.0  # costs a person asked for: a 30k-node graph takes ~2 s


def _has_unknown(v: onnx.ValueInfoProto) -> bool:
    # a dim_param of invalid UTF-8 comes back from upb as bytes: never one of onnx's unk__N
    return v.type.HasField("tensor_type") and any(
        isinstance(d.dim_param, str) and d.dim_param.startswith("unk__") for d in v.type.tensor_type.shape.dim
    )


def symbolic_shapes(light: onnx.ModelProto, seconds: float) -> onnx.ModelProto | None:
    """onnxruntime's symbolic shape inference on a copy of the stand-in `light`: it follows
    shapes through Shape -> Slice -> ConstantOfShape -> Expand -> Where chains, where onnx's data
    propagation stops. None when it can't run on it (an outside tensor left, it raises on the
    model, as on some GPT-2 exports) or takes over `seconds` (an alarm: in a main thread only,
    the helper's)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    stand_in = onnx.ModelProto()
    stand_in.CopyFrom(light)
    if not _outside_constants_as_shapes(stand_in):
        return None
    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        # where it falls short it saves what it got as sym_shape_infer_temp.onnx (and its data)
        # in the working directory: a scratch one, not the server's or the person's
        with (
            tempfile.TemporaryDirectory(prefix="studio-shapes-") as scratch,
            contextlib.chdir(scratch),
            _alarm(seconds),
        ):
            return SymbolicShapeInference.infer_shapes(stand_in, auto_merge=True)
    except Exception:  # anything it raises, the alarm's TimeoutError included
        return None


def name_unknown_dims(light: onnx.ModelProto, inferred: onnx.ModelProto) -> None:
    """Give the dims onnx's inference could only call unk__N the names symbolic_shapes finds for
    them, in terms of the inputs' dims: a torch BERT's tensors read batch×sequence×768 instead
    of unk__7×unk__8×768 (on its drawing, in its panels), its outputs too, and in the bodies its
    nodes hold (a merged decoder's branches read ?×?×256: QA45 #6). In place; nothing changes
    when it can't run. Values onnx can't type at all because onnxruntime's
    own operators (com.microsoft's Attention, SkipLayerNormalization, …) compute them — onnx has
    no inference for those — take the types it finds, so an optimized transformer's drawing,
    panels and add_output know them too; what it can't type either (a QOperator quantization's
    QLinear operators stop it) runtime_types.py types by their rules, and what ai.onnx.ml's
    classical-ML operators make ml_types.py's (onnx types those partly: no batch dim)."""
    from .type_rules import fill_rule_types

    unnamed = [
        (path, v) for path, g in _running(inferred).items() for v in [*g.value_info, *g.output] if _has_unknown(v)
    ]
    untyped = _runtime_op_values(inferred)
    named = symbolic_shapes(light, NAMING_SECONDS) if unnamed or untyped else None
    if named is not None:
        _take_names(named, inferred, unnamed, untyped)
    # what neither inference types well: onnxruntime's quantized operators, ai.onnx.ml's, and after them
    fill_rule_types(inferred)


def _running(model: onnx.ModelProto) -> dict[str, onnx.GraphProto]:
    """The main graph and the bodies its nodes hold, by path (those the symbolic inference
    follows too: an If's branches, a Loop's body; a merged decoder's every node is in them)."""
    return {
        ref.path: ref.container
        for ref in walk_graphs(model)
        if isinstance(ref.container, onnx.GraphProto) and not ref.path.startswith(("fn[", "train["))
    }


def _take_names(
    named: onnx.ModelProto, inferred: onnx.ModelProto, unnamed: list[tuple[str, onnx.ValueInfoProto]], untyped: list
) -> None:
    # by graph and name: a merged decoder's two branches may name their values alike
    graphs = _running(named)
    found = {path: {v.name: v for v in [*g.value_info, *g.output]} for path, g in graphs.items()}
    for name in untyped:
        theirs = found[""].get(name)
        if theirs is not None and theirs.type.HasField("tensor_type") and theirs.type.tensor_type.elem_type:
            inferred.graph.value_info.append(theirs)
    for path, v in unnamed:
        theirs = found.get(path, {}).get(v.name)
        if theirs is None or not theirs.type.HasField("tensor_type") or _has_unknown(theirs):
            continue
        mine, their = v.type.tensor_type, theirs.type.tensor_type
        dims = their.shape.dim
        if (
            their.elem_type == mine.elem_type
            and len(dims) == len(mine.shape.dim)
            and all(d.HasField("dim_value") or d.dim_param for d in dims)
        ):
            mine.shape.CopyFrom(their.shape)


def _runtime_op_values(inferred: onnx.ModelProto) -> list[str]:
    """The main graph's values nothing types, in a graph with nodes of onnxruntime's own domains
    (and only then: symbolic inference costs seconds on a big graph and can't help with a
    custom operator nobody defines)."""
    g = inferred.graph
    if not any(standard_domain(n.domain) not in ONNX_DOMAINS for n in g.node):
        return []
    typed = {v.name for v in [*g.value_info, *g.input, *g.output] if v.type.WhichOneof("value")}
    typed.update(t.name for t in g.initializer)
    return [x for n in g.node for x in n.output if x and x not in typed]


@contextlib.contextmanager
def _alarm(seconds: float):
    def expired(_signum, _frame):
        raise TimeoutError("onnxruntime's symbolic shape inference took too long")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def input_dims(model: onnx.ModelProto) -> list[str]:
    """The dims of the main graph's inputs a caller feeds (not initializers) that have no size,
    in order: the sizes a person gives to count costs or run the model — symbolic ones by name
    ("batch", "sequence"), unnamed ones by input and axis ("x[0]": dim_names.py). A dim that is
    an expression of the others ("past_sequence + sequence") is asked as the dims it is made of."""
    found: dict[str, None] = {}
    plain = plain_dims([_declared_dims(v) for v in _fed_inputs(model)])
    for v in _fed_inputs(model):
        for axis, d in enumerate(v.type.tensor_type.shape.dim):
            if unnamed_dim(d):
                found[axis_dim(v.name, axis)] = None
            elif d.dim_param:
                found.update(dict.fromkeys(expression_names(d.dim_param, plain) or [d.dim_param]))
    return list(found)


def _fed_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The main graph's inputs a caller feeds (not initializers) that declare a tensor shape."""
    weights = {t.name for t in model.graph.initializer}
    return [
        v
        for v in model.graph.input
        if v.name not in weights and v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")
    ]


def _declared_dims(v: onnx.ValueInfoProto) -> list:
    return [d.dim_param if d.HasField("dim_param") else None for d in v.type.tensor_type.shape.dim]


def output_only_dims(model: onnx.ModelProto) -> list[str]:
    """The symbolic dims the main graph's outputs declare that no fed input has: a decoder's
    present.N.key says `total_sequence` where it is past_sequence + sequence. Inference takes the
    declared name back into the graph (the Concat making it, the attention after), where no
    formula in the inputs' dims can use it."""
    known = set(input_dims(model))
    return list(
        dict.fromkeys(
            d.dim_param
            for v in model.graph.output
            if v.type.HasField("tensor_type")
            for d in v.type.tensor_type.shape.dim
            if d.dim_param and d.dim_param not in known and not expression_names(d.dim_param, known)
        )
    )


def inferred_from_inputs(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """inferred_model of a copy whose outputs' output_only_dims are left unknown: every shape is
    then what the inputs' dims make it (past_sequence + sequence, not total_sequence), for the
    cost formulas (views/costs.py model_formula)."""
    light = onnx.ModelProto()
    light.CopyFrom(light_copy(model))
    only = set(output_only_dims(light))
    for v in light.graph.output:
        if v.type.HasField("tensor_type"):
            for d in v.type.tensor_type.shape.dim:
                if d.dim_param in only:
                    d.ClearField("dim_param")
    return inferred_model(light)


def fix_dims(model: onnx.ModelProto, dims: dict[str, int]) -> None:
    """Give the dims named in `dims` their sizes in the main graph's declared types (inputs,
    outputs, value_info; an input's unnamed dims by input and axis; a dim that is an expression of
    them, its value), in place: inference then works with numbers from the inputs on."""
    g = model.graph
    for v in (*g.input, *g.output, *g.value_info):
        if v.type.HasField("tensor_type"):
            for d in v.type.tensor_type.shape.dim:
                if not d.HasField("dim_param") or unnamed_dim(d):
                    continue
                size = dims.get(d.dim_param)
                if expression_names(d.dim_param, dims.keys() - {d.dim_param}):  # past_sequence + sequence
                    size = expression_value(d.dim_param, dims)
                if size is not None and size >= 0:
                    d.dim_value = size
    for v in g.input:
        if v.type.HasField("tensor_type"):
            for axis, d in enumerate(v.type.tensor_type.shape.dim):
                if unnamed_dim(d) and axis_dim(v.name, axis) in dims:
                    d.dim_value = dims[axis_dim(v.name, axis)]


def unnamed_dim(d: onnx.TensorShapeProto.Dimension) -> bool:
    """A dim with neither a size nor a name (or PaddlePaddle's -1 or "?" for one)."""
    if d.HasField("dim_param"):
        return d.dim_param in UNNAMED
    return not (d.HasField("dim_value") and d.dim_value >= 0)


def shapes_at_dims(model: onnx.ModelProto, dims: dict[str, int]) -> onnx.ModelProto:
    """The stand-in of `model` with the input dims fixed, after shape inference (in the helper):
    symbolic_shapes first (a torch BERT-base at batch=1, sequence=128: every node's shape, where
    onnx's left 315 nodes unknown), onnx's own inference where it can't run."""
    light = light_copy(model)
    if light is model:  # nothing heavy to leave out: light_copy hands the model itself back
        light = onnx.ModelProto()
        light.CopyFrom(model)
    fix_dims(light, dims)
    name_unnamed_input_dims(light)  # those not given a size
    from .type_rules import fill_rule_types

    found = symbolic_shapes(light, AT_SIZES_SECONDS)
    if found is None:
        found = onnx.shape_inference.infer_shapes(
            light, check_type=False, strict_mode=False, data_prop=data_propagation_is_bounded(light)
        )
    fill_rule_types(found)  # the sizes through operators neither inference types well
    return found


def _outside_constants_as_shapes(light: onnx.ModelProto) -> bool:
    """Make the stand-in hold no tensor whose data lives outside it, for onnxruntime's inference
    (it reads every Constant's values, and would open external data files relative to the working
    directory: never ours to read). A Constant whose value is outside (the store takes big ones
    out of the graph) becomes ConstantOfShape of the same type and shape. False when an outside
    tensor is left elsewhere (a string Constant, another node's tensor attribute)."""
    outside = onnx.TensorProto.EXTERNAL
    for ref in list(walk_graphs(light)):
        nodes = ref.container.node
        if not any(
            n.op_type == "Constant" and n.attribute and n.attribute[0].t.data_location == outside for n in nodes
        ):
            continue
        rebuilt: list[onnx.NodeProto] = []
        for n in nodes:
            t = n.attribute[0].t if n.op_type == "Constant" and len(n.attribute) == 1 else None
            if t is None or t.data_location != outside or t.data_type == onnx.TensorProto.STRING or not n.output:
                rebuilt.append(onnx.NodeProto())
                rebuilt[-1].CopyFrom(n)
                continue
            shape = f"{n.output[0]}::studio_shape"
            fill = onnx.TensorProto(data_type=t.data_type, dims=[1], raw_data=bytes(data_bytes(t.data_type, 1) or 1))
            rebuilt.append(
                helper.make_node("Constant", [], [shape], value=numpy_helper.from_array(np.array(t.dims, np.int64)))
            )
            rebuilt.append(helper.make_node("ConstantOfShape", [shape], list(n.output), value=fill))
        del nodes[:]
        nodes.extend(rebuilt)
    return not any(t.data_location == outside for t in tensors(light))


def inferred_value_info(model: onnx.ModelProto, inferred: onnx.ModelProto | None, path: str) -> list:
    """ValueInfoProtos shape inference adds for the graph at `path` (not already in value_info)."""
    if inferred is None:
        return []
    try:
        ours = resolve_graph(model, path).container
        theirs = resolve_graph(inferred, path).container
    except Exception:
        return []
    if isinstance(ours, onnx.FunctionProto) or isinstance(theirs, onnx.FunctionProto):
        return []
    # A subgraph's inputs and outputs are often declared without a type (a Scan or Loop body, an
    # If branch of an expanded function): inference types them, so they are reported here too.
    known = {v.name for v in ours.value_info} | {v.name for v in [*ours.input, *ours.output] if v.HasField("type")}
    found = [v for v in theirs.value_info if v.name not in known]
    known |= {v.name for v in found}  # one set, made once: a graph may have 20,000 inputs
    found += [v for v in [*theirs.input, *theirs.output] if v.HasField("type") and v.name not in known]
    return found


def infer_isolated(model: onnx.ModelProto, **options) -> onnx.ModelProto:
    """Shape inference on the weightless stand-in of an untrusted model, in the helper process
    (offload.py), data propagation only where it is bounded. ValueError: onnx's words."""
    from . import offload

    light = light_copy(model)
    if options.get("data_prop") and not data_propagation_is_bounded(light):
        options["data_prop"] = False
    return offload.infer(light, **options)


def with_inferred_value_info(model: onnx.ModelProto, **options) -> onnx.ModelProto:
    """A copy of `model` whose main graph also holds what inference found (infer_isolated)."""
    inferred = infer_isolated(model, **options)
    typed = onnx.ModelProto()
    typed.CopyFrom(model)
    known = {v.name for v in model.graph.value_info}
    typed.graph.value_info.extend(v for v in inferred.graph.value_info if v.name not in known)
    return typed
