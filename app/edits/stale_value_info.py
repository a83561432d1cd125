"""value_info an edit made stale. Exports (and our own Shape inference tool) store the type of
every intermediate value; an edit that changes what a node produces (Conv strides 1 → 2, a
MaxPool's kernel with its pads, a weight of another shape) leaves those entries saying the old
shapes, and onnx's strict check then refuses the edited model over a hint, not over the graph:
"Inferred shape and existing shape differ in dimension 2: (16) vs (32)". The entries the graph
now contradicts are re-inferred; the rest stay as stored. Graph outputs are the model's
contract and are never changed here."""

from __future__ import annotations

import re
from collections.abc import Collection

import onnx

from ..errors import StudioError
from ..onnx_io.address import node_id, node_words, subgraph_path
from ..onnx_io.causes import graph_words
from ..onnx_io.dim_names import expression_names
from ..onnx_io.inference import infer_isolated
from ..onnx_io.input_elements import declared_dims
from ..onnx_io.traverse import node_graphs, walk_graphs
from ..onnx_io.type_rules import is_known, shapes_contradict
from ..words import plural, some_names

# onnx's words when a stored type disagrees with what inference finds for the same value
_STALE = re.compile(
    r"Inferred shape and existing shape differ|Inferred elem type differs from existing elem type"
    r"|existing shape differ in rank"
)


def says_stale(message: str) -> bool:
    """Whether a strict-check failure is a stored type disagreeing with inference."""
    return bool(_STALE.search(message or ""))


def reinfer_stale(model: onnx.ModelProto) -> str | None:
    """Replace the value_info entries of every graph (the main one and bodies at any depth) that
    inference, run without them, now contradicts, and the shapes of bodies' outputs it
    contradicts (their element types are the If/Loop/Scan contract and stay); a change line
    naming them and where, or None when none does (or inference fails)."""
    graphs = graphs_of(model)
    if len(graphs) == 1 and not len(model.graph.value_info):
        return None
    try:  # in the helper process (onnx's C++ on an untrusted model)
        inferred = infer_isolated(cleared_probe(model), check_type=False, strict_mode=False, data_prop=True)
    except ValueError:
        return None
    stale: list[str] = []  # "'u', 't' in branch/then_branch", one a graph
    outputs: list[str] = []
    count = 0
    declared = {ref.path: [_copy(o.type) for o in ref.container.output] for ref in graphs if ref.path}
    for ref, theirs in graph_pairs(model, inferred):
        at = f" in {graph_words(model, ref.path)}" if ref.path else ""
        found = {v.name: v.type for v in theirs.value_info}
        names = []
        for v in ref.container.value_info:
            new = found.get(v.name)
            if new is not None and _contradicts(v.type, new):
                keep_dim_names(new, v.type)
                v.type.CopyFrom(new)
                names.append(v.name)
        # a body's outputs are positional, their element types the holder's contract: shapes only
        pairs = zip(ref.container.output, theirs.output, strict=False) if ref.path else ()
        fixed = [o.name for o, new in pairs if reshape_output(o, new, _contradicts)]
        stale += [some_names(names) + at] if names else []
        outputs += [some_names(fixed) + at] if fixed else []
        count += len(names) + len(fixed)
    if not count:
        return None
    if outputs:
        clash = body_clash(model, declared)
        if clash:
            raise StudioError("invalid_result", clash, 422)
    parts = [f"stored value_info of {', '.join(stale)}"] if stale else []
    parts += [f"the output shapes of {', '.join(outputs)}"] if outputs else []
    return f"{' and '.join(parts)} re-inferred: the edit changed {_their(count)}"


def body_clash(model: onnx.ModelProto, before: dict[str, list[onnx.TypeProto]]) -> str | None:
    """Why the bodies' outputs as they are now can't run where they did as `before` (graph path
    -> each output's type) says: an If's branches giving one output in shapes whose fixed dims
    differ (the If's next node takes one of them), or a Loop's body (a Scan's) giving a carried
    value (its state) back in another shape than it took it (the next iteration fails on it);
    one line naming both sides, or None. Only clashes `before` did not have: a model's own
    branches of two shapes are its business."""
    for ref in graphs_of(model):
        for index, node in enumerate(ref.container.node):
            bodies = {attr: g for attr, item, g in node_graphs(node) if item is None}
            where = f"{node_words(node.name, node.op_type, node_id(ref.path, index))} in {graph_words(model, ref.path)}"
            paths = {attr: subgraph_path(node_id(ref.path, index), attr) for attr in bodies}
            if node.op_type == "If" and {"then_branch", "else_branch"} <= set(bodies):
                then, other = bodies["then_branch"], bodies["else_branch"]
                for k, (a, b) in enumerate(zip(then.output, other.output, strict=False)):
                    was_a = _was(before, paths["then_branch"], k, a.type)
                    was_b = _was(before, paths["else_branch"], k, b.type)
                    if _contradicts(a.type, b.type) and not _contradicts(was_a, was_b):
                        changed, kept = (("then_branch", a), ("else_branch", b))
                        if _same(was_a, a.type):
                            changed, kept = kept, changed
                        return (
                            f"the edit would make the branches of {where} disagree: {changed[0]}'s output "
                            f"{changed[1].name!r} would be {_dims(changed[1].type)}, {kept[0]}'s "
                            f"{kept[1].name!r} is {_dims(kept[1].type)}"
                        )
            for k_in, k_out in _carried(node, bodies.get("body")):
                body = bodies["body"]
                took, gave = body.input[k_in], body.output[k_out]
                if _contradicts(took.type, gave.type) and not _contradicts(
                    took.type, _was(before, paths["body"], k_out, gave.type)
                ):
                    what = "carried value" if node.op_type == "Loop" else "state"
                    return (
                        f"the edit would make {where} give a {what} back in another shape than it took it: "
                        f"its body's output {gave.name!r} would be {_dims(gave.type)}, its input "
                        f"{took.name!r} is {_dims(took.type)}"
                    )
    return None


def _carried(node: onnx.NodeProto, body: onnx.GraphProto | None) -> list[tuple[int, int]]:
    """(body input, body output) of each value a Loop carries or a Scan keeps as its state."""
    if body is None:
        return []
    if node.op_type == "Loop":
        n = min(len(node.input) - 2, len(body.input) - 2, len(body.output) - 1)
        return [(k + 2, k + 1) for k in range(max(n, 0))]
    if node.op_type == "Scan":
        scans = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        n = min(len(node.input) - scans, len(body.input), len(body.output))
        return [(k, k) for k in range(max(n, 0))]
    return []


def _was(before: dict[str, list[onnx.TypeProto]], path: str, k: int, now: onnx.TypeProto) -> onnx.TypeProto:
    """Output k of the body at `path` as it was declared before the re-inference (as now when
    that is not known)."""
    types = before.get(path) or []
    return types[k] if k < len(types) else now


def _same(a: onnx.TypeProto, b: onnx.TypeProto) -> bool:
    return a.SerializeToString() == b.SerializeToString()


def _copy(t: onnx.TypeProto) -> onnx.TypeProto:
    out = onnx.TypeProto()
    out.CopyFrom(t)
    return out


def _dims(t: onnx.TypeProto) -> str:
    """A tensor type's shape as a person reads it: [1, 32], [batch, 16], ? for an unknown dim."""
    if not (t.HasField("tensor_type") and t.tensor_type.HasField("shape")):
        return "of unknown shape"
    dims = declared_dims(t.tensor_type.shape)
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def graphs_of(model: onnx.ModelProto) -> list:
    """The model's graphs (main and bodies at any depth, not functions) as GraphRefs."""
    return [ref for ref in walk_graphs(model) if isinstance(ref.container, onnx.GraphProto)]


def cleared_probe(model: onnx.ModelProto, main_outputs: bool = False) -> onnx.ModelProto:
    """A copy without value_info in any graph and without the shapes of bodies' outputs (and of
    the main graph's too when `main_outputs`): what inference makes of the graph itself."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for ref in graphs_of(probe):
        g = ref.container
        del g.value_info[:]
        if ref.path or main_outputs:
            for o in g.output:
                if o.type.HasField("tensor_type"):
                    o.type.tensor_type.ClearField("shape")
    return probe


def graph_pairs(model: onnx.ModelProto, inferred: onnx.ModelProto) -> list[tuple]:
    """(the model's GraphRef, the inferred model's graph at the same path) for every graph."""
    theirs = {ref.path: ref.container for ref in graphs_of(inferred)}
    return [(ref, theirs[ref.path]) for ref in graphs_of(model) if ref.path in theirs]


def reshape_output(
    output: onnx.ValueInfoProto, inferred: onnx.ValueInfoProto | None, when=None, inputs: Collection[str] | None = None
) -> bool:
    """Give a declared output the shape inference found for it (only where when(declared type,
    inferred type) holds, when given), its element type and the names inference only invents
    kept (keep_dim_names); whether its shape changed."""
    if inferred is None or not output.type.HasField("tensor_type") or not inferred.type.HasField("tensor_type"):
        return False
    if not inferred.type.tensor_type.HasField("shape") or (when and not when(output.type, inferred.type)):
        return False
    new = onnx.TypeProto()
    new.CopyFrom(inferred.type)
    keep_dim_names(new, output.type, inputs)
    if inputs is not None:
        # a name inference made up (unk__0, a Loop's Loop_2_o0__d0) is no name of the model's:
        # a declared output says that dim is unknown rather than carry it (QA20 F9); one the
        # model declared there itself (num_boxes) stays
        own = {d.dim_param for d in output.type.tensor_type.shape.dim if d.HasField("dim_param")}
        for d in new.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param not in own and invented(d.dim_param, inputs):
                d.ClearField("dim_param")
    if output.type.tensor_type.HasField("shape") and output.type.tensor_type.shape == new.tensor_type.shape:
        return False
    output.type.tensor_type.shape.CopyFrom(new.tensor_type.shape)
    return True


def keep_dim_names(new: onnx.TypeProto, old: onnx.TypeProto, inputs: Collection[str] | None = None) -> None:
    """Where inference only invents a dim's name (unk__1: it can't carry "sequence" through a
    Range) and the old type named it, the old name stays. Given `inputs` (the dims the main
    graph's inputs name), a name in terms of none of them is invented too: onnxruntime's
    symbolic inference names a NonZero's count NonZero_0_o0__d1 where the model said "count"."""
    if not (new.HasField("tensor_type") and old.HasField("tensor_type")):
        return
    dims, before = new.tensor_type.shape.dim, old.tensor_type.shape.dim
    if len(dims) != len(before):
        return
    for d, o in zip(dims, before, strict=True):
        if (
            is_known(o.dim_param)
            and not d.HasField("dim_value")
            and (invented(d.dim_param, inputs) or _named_its_sum(o.dim_param, d.dim_param, inputs))
        ):
            d.dim_param = o.dim_param


def _named_its_sum(old: str, new: str, inputs: Collection[str] | None) -> bool:
    """Whether the model's own name for a dim (a decoder's total_seq on its present outputs)
    meets inference's expression of the inputs' dims for it (past_seq + seq): the name stays,
    one the person wrote; an input's dim renamed (seq → sequence_length) is taken."""
    return (
        inputs is not None
        and old not in inputs
        and expression_names(old, inputs) is None
        and expression_names(new, inputs) is not None
    )


def invented(name: str, inputs: Collection[str] | None) -> bool:
    """A dim name only inference gave (unk__3, onnxruntime's Loop_0_o0__d0): none of the inputs' dims
    (`inputs`) or an expression of them."""
    if not is_known(name):
        return True
    return inputs is not None and name not in inputs and expression_names(name, inputs) is None


def _contradicts(stored: onnx.TypeProto, inferred: onnx.TypeProto) -> bool:
    """Whether two tensor types can't both hold: other element types, ranks or fixed sizes."""
    if not (stored.HasField("tensor_type") and inferred.HasField("tensor_type")):
        return False
    a, b = stored.tensor_type, inferred.tensor_type
    if a.elem_type and b.elem_type and a.elem_type != b.elem_type:
        return True
    return shapes_contradict(a, b)


def _their(n: int) -> str:
    return "its shape" if n == 1 else f"their shapes ({plural(n, 'value')})"
