"""After an input's dims change: re-inferring value_info and outputs, and finding the nodes whose
constant inputs still hard-code an old dim (a Reshape to [1, -1] after the batch went dynamic)."""

from __future__ import annotations

import re

import onnx
from onnx import numpy_helper

from ..errors import StudioError
from ..onnx_io.address import node_words
from ..onnx_io.causes import graph_words
from ..onnx_io.dim_names import expression_names, expression_value
from ..onnx_io.inference import infer_isolated, input_dims
from ..onnx_io.kept_fields import keep_described
from ..onnx_io.traverse import graph_constants
from ..views.value_text import format_tensor
from ..views.values import shape_json
from ..words import plural, some_names
from .body_inputs import fit_body_inputs
from .carried_shapes import invariant_carried
from .stale_value_info import cleared_probe, graph_pairs, graphs_of, keep_dim_names, reshape_output

# ops whose shape-like input (index) holds dims as constant values
_SHAPE_INPUTS = {"Reshape": 1, "Expand": 1, "ConstantOfShape": 0, "Tile": 1, "Resize": 3}
_MAX_CONSTANT = 64  # elements: a shape, never a weight


def refresh_types(model: onnx.ModelProto, asked: str | None = None) -> str:
    """Re-infer the value_info of every graph (main and bodies at any depth), the main graph's
    outputs' shapes, and the bodies' outputs' and fed inputs' shapes, from the main graph's
    inputs (what they said before may hold the old dims): stale entries inference can't type
    are dropped. The main graph's dims are named as the Shape inference tool names them (N, not
    unk__0). An output whose shape was just `asked` keeps it; where inference still fixes a size
    the person made something else, the line says so and names the node whose constant
    hard-codes it."""
    inferred = _inferred_without_value_info(model)
    refits = 0
    for _ in range(_REFITS):  # a body's input re-declared changes what is inferred after it, nested bodies' too
        if not fit_body_inputs(model, inferred):
            break
        refits += 1
        inferred = _inferred_without_value_info(model)
    hints: dict[str, list] = {}
    for _ in range(_REFITS):  # a carried value typed types what follows it, nested Loops' too
        more = invariant_carried(model, inferred)
        if not more:
            break
        for path, typed in more.items():
            hints.setdefault(path, []).extend(typed)
        inferred = _inferred_without_value_info(model, hints)
    # a dim named by no input (the main graph's, or a body's a person declared: a carried
    # value's batch) is one inference made up
    names = set(input_dims(model)) | {
        d.dim_param
        for ref in graphs_of(model)
        for v in ref.container.input
        if v.type.HasField("tensor_type")
        for d in v.type.tensor_type.shape.dim
        if d.dim_param
    }
    entries = changed = 0
    bodies: list[str] = []
    updated, note = 0, ""
    for ref, theirs in graph_pairs(model, inferred):
        g = ref.container
        found = {v.name: v for v in theirs.value_info}
        kept = [_renamed(found[v.name], v, names) for v in g.value_info if v.name in found]
        entries += len(g.value_info)
        changed += sum(1 for v in g.value_info if v.name in found and found[v.name].type != v.type)
        del g.value_info[:]
        g.value_info.extend(kept)
        if ref.path:
            # positional outputs: their element types are the If/Loop/Scan contract, their shapes re-inferred
            moved = sum(reshape_output(o, new, inputs=names) for o, new in zip(g.output, theirs.output, strict=False))
            if moved:
                bodies.append(graph_words(model, ref.path))
            continue
        outs = {o.name: o for o in theirs.output}
        for o in g.output:
            new = outs.get(o.name)
            if o.name == asked and new is not None and new.type.tensor_type.HasField("shape"):
                note = _still_fixed(model, o, new)
            elif o.name != asked:
                updated += reshape_output(o, new, inputs=names)
    dropped = entries - sum(len(ref.container.value_info) for ref in graphs_of(model))
    # a model without value_info has none to re-infer: said only where there was some
    stored = f"value_info re-inferred ({changed} of {plural(entries, 'entry', 'entries')} changed, {dropped} dropped)"
    outputs = f"{plural(updated, 'output shape')} updated"
    said = f"{stored}, {outputs}" if entries else outputs
    if bodies or refits:
        said += f"; the bodies' shapes re-inferred too ({', '.join(bodies) or 'their inputs'})"
    return said + note


_REFITS = 3


def sized_declarations(model: onnx.ModelProto, sizes: dict[str, int], reinferred: bool, write: bool = True) -> str:
    """Write `sizes` (dims given a size that no input names any more: batch fixed to 1) into the
    main graph's outputs and value_info that still name them — within one model a dim's name is
    one size — where re-inference, if it ran, left them (onnx types no shape for opset-23
    Attention's present_key: QA29 F2 kept [batch, 4, total_seq, 16] after batch = 1). An
    expression of them alone ("2*batch") takes its value. "; 6 outputs (...) declared with batch
    now say 1", else "". Not `write` (update_types false: declarations kept as they are): what
    still names them, and that update_types writes the sizes there."""
    if not sizes:
        return ""
    g = model.graph
    used: set[str] = set()
    outputs = [v.name for v in g.output if _sized(v.type, sizes, used, write)]
    entries = sum(_sized(v.type, sizes, used, write) for v in g.value_info)
    if not used:
        return ""
    what = [f"{plural(len(outputs), 'output')} ({some_names(outputs)})"] if outputs else []
    what += [plural(entries, "value_info entry", "value_info entries")] if entries else []
    one = len(outputs) + entries == 1
    dims = [d for d in sizes if d in used]
    if not write:
        said = ", ".join(dims)
        return (
            f"; {' and '.join(what)} still {'declares' if one else 'declare'} {said}, which no input names now"
            f" (update_types writes {'its size' if len(dims) == 1 else 'their sizes'} there)"
        )
    verb = "says" if one else "say"
    if len(dims) == 1:
        now = f"declared with {dims[0]} now {verb} {sizes[dims[0]]}"
    else:
        now = f"declared with {', '.join(dims)} now {verb} {', '.join(f'{d} = {sizes[d]}' for d in dims)}"
    why = " (shape inference could not re-type them)" if reinferred else ""
    return f"; {' and '.join(what)} {now}{why}"


def _sized(t: onnx.TypeProto, sizes: dict[str, int], used: set[str], write: bool) -> bool:
    """Whether a tensor type has dims that name one of `sizes` (or are an expression of them
    alone), noted in `used`; given their sizes when `write`."""
    if not t.HasField("tensor_type"):
        return False
    hit = False
    for d in t.tensor_type.shape.dim:
        size = _size_of(d.dim_param, sizes) if d.HasField("dim_param") else None
        if size is not None:
            used.update(n for n in sizes if n == d.dim_param or n in (expression_names(d.dim_param, sizes) or []))
            if write:
                d.dim_value = size  # the denotation stays
            hit = True
    return hit


def _size_of(text: str, sizes: dict[str, int]) -> int | None:
    if text in sizes:
        return sizes[text]
    if expression_names(text, sizes.keys()) is None:
        return None
    value = expression_value(text, sizes)
    return value if value is not None and value >= 0 else None


def _renamed(new: onnx.ValueInfoProto, old: onnx.ValueInfoProto, inputs: set[str]) -> onnx.ValueInfoProto:
    """The inferred entry, with the dim names it only invents taken from the old one, and its
    doc string and metadata (inference makes neither)."""
    keep_dim_names(new.type, old.type, inputs)
    return keep_described(new, old)


_STALE_VALUE_INFO = re.compile(
    r"(?P<alone>; )?[\d,]+ stored value_info entr(?:y|ies) still give the sizes before(?P<more> and )?"
    r"(?(alone)(?(more)| \(update_types re-infers them\)))"
)


def without_value_info_hint(line: str) -> str:
    """A change line without stale_hint's words on value_info: said of an edit whose stale
    value_info the gate then re-inferred (edits/stale_value_info.py), they no longer hold."""

    def cut(m: re.Match) -> str:
        return "; " if m.group("alone") and m.group("more") else ""

    return _STALE_VALUE_INFO.sub(cut, line)


def stale_hint(model: onnx.ModelProto) -> str:
    """ "; 37 stored value_info entries still give the sizes before ..." when an input's new
    dims leave value_info (of any graph) that inference, run afresh, types otherwise, and the
    main graph's outputs still declaring a fixed size inference now gives otherwise; else ""."""
    try:
        inferred = infer_isolated(
            cleared_probe(model, main_outputs=True), check_type=False, strict_mode=False, data_prop=True
        )
    except ValueError:
        return ""
    stale = 0
    for ref, theirs in graph_pairs(model, inferred):
        found = {v.name: v.type for v in theirs.value_info}
        stale += sum(1 for v in ref.container.value_info if v.name in found and v.type != found[v.name])
    now = {o.name: o for o in inferred.graph.output}
    outputs = [o.name for o in model.graph.output if o.name in now and _fixed_size_moved(o, now[o.name])]
    said = []
    if stale:
        said.append(
            f"{plural(stale, 'stored value_info entry', 'stored value_info entries')} still give the sizes before"
        )
    if outputs:
        names = ", ".join(map(repr, outputs))
        said.append(
            f"output{'s' if len(outputs) > 1 else ''} {names} still declare{'' if len(outputs) > 1 else 's'} the size before"
        )
    return f"; {' and '.join(said)} (update_types re-infers them)" if said else ""


def _fixed_size_moved(declared: onnx.ValueInfoProto, inferred: onnx.ValueInfoProto) -> bool:
    """Whether an output declares a fixed size where inference now finds another or a name."""
    if not (declared.type.HasField("tensor_type") and inferred.type.HasField("tensor_type")):
        return False
    a, b = declared.type.tensor_type, inferred.type.tensor_type
    if not (a.HasField("shape") and b.HasField("shape")) or len(a.shape.dim) != len(b.shape.dim):
        return False
    return any(
        d.HasField("dim_value")
        and (e.HasField("dim_param") or (e.HasField("dim_value") and e.dim_value != d.dim_value))
        for d, e in zip(a.shape.dim, b.shape.dim, strict=True)
    )


def _inferred_without_value_info(model: onnx.ModelProto, hints: dict[str, list] | None = None) -> onnx.ModelProto:
    """The model as shape inference types it from its inputs alone (no value_info in any graph,
    outputs' shapes cleared), its main graph's dims named as the Shape inference tool names them;
    `hints`: value_info to say in graphs (by path) first (carried_shapes.py)."""
    probe = cleared_probe(model, main_outputs=True)
    for ref in graphs_of(probe):
        g = ref.container
        for hint in (hints or {}).get(ref.path, []):
            out = next((o for o in g.output if o.name == hint.name), None)
            if out is not None:
                out.type.CopyFrom(hint.type)  # a graph output's type is said where it is declared
            else:
                g.value_info.append(hint)
    try:  # in the helper process (onnx's C++ on an untrusted model)
        return infer_isolated(probe, check_type=False, strict_mode=False, data_prop=True, name_dims=True)
    except ValueError as exc:
        raise StudioError("inference_failed", f"set_io_shape: shape inference failed: {exc}", 422) from None


def _still_fixed(model: onnx.ModelProto, output: onnx.ValueInfoProto, inferred: onnx.ValueInfoProto) -> str:
    """Where inference gives a fixed size for a dim of the output the person set otherwise."""
    asked = shape_json(output.type.tensor_type.shape)
    got = shape_json(inferred.type.tensor_type.shape)
    if len(asked) != len(got) or not any(isinstance(g, int) and g != a for a, g in zip(asked, got, strict=True)):
        return ""
    elem = onnx.TensorProto.DataType.Name(output.type.tensor_type.elem_type)
    hint = hard_coded_hint(model, got, asked) or "; a node before it fixes that size"
    return f"; inference still gives {output.name!r} as {format_tensor(elem, got)}{hint}"


def _constants(g: onnx.GraphProto) -> dict[str, list[int]]:
    """Small integer constants of a graph (initializers and Constant nodes) by name."""
    return {
        name: [int(x) for x in numpy_helper.to_array(t).reshape(-1)]
        for name, t in graph_constants(g, _MAX_CONSTANT).items()
        if t.data_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32) and len(t.dims) <= 1
    }


def hard_coded_hint(model: onnx.ModelProto, before: list, after: list) -> str:
    """ "; still hard-coded: ..." naming main-graph nodes whose constant shape input holds, at a
    dim's position, the number that dim had before it was made something else; else ""."""
    changed = [
        (i, old)
        for i, old in enumerate(before)
        if isinstance(old, int) and old > 0 and (i >= len(after) or after[i] != old)
    ]
    if not changed:
        return ""
    g = model.graph
    consts = _constants(g)
    named = []
    for n in g.node:
        k = _SHAPE_INPUTS.get(n.op_type)
        if k is None or k >= len(n.input) or n.input[k] not in consts:
            continue
        values = consts[n.input[k]]
        if any(i < len(values) and values[i] == old for i, old in changed):
            named.append(node_words(n.name, n.op_type))
    if not named:
        return ""
    more = f" and {len(named) - 5} more" if len(named) > 5 else ""
    dims = ", ".join(f"dim {i} = {old}" for i, old in changed)
    return f"; still hard-coded ({dims}) in the constant input of {', '.join(named[:5])}{more}"
