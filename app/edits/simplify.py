"""Simplifying a graph with onnxruntime's basic optimizations (in the helper: model_tools.py)."""

from __future__ import annotations

import json
import re
from collections import Counter

import onnx

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.function_ops_kept import REPORT_KEY, left_to_onnxruntime
from ..onnx_io.light import light_copy
from ..onnx_io.offload_jobs import INSERTED_CAST
from ..onnx_io.schema_defaults import at_default, default_of
from ..onnx_io.sizes import size_text
from ..onnx_io.traverse import constant_value, op_schema, running_graphs, walk_graphs
from ..words import plural
from .model_tools import check_size, data_size, in_helper, keep, reorder, weights
from .names import rename_in_graph
from .registry import edit_op
from .unused import drop_dead_nodes, initializer_names, names_read


@edit_op("simplify", rewrites_tensors=True)
def simplify(model: onnx.ModelProto, op: dict) -> str:
    """Simplify the graph with onnxruntime's basic optimizations, which keep to standard ONNX
    operators: constant folding (Constant nodes and what only depends on constants become
    initializers), redundant nodes removed (Identity, Dropout, no-op Slice, Unsqueeze, Cast…) and
    fusions (Conv with a following BatchNormalization, Add or Mul; Relu into Clip; a 2-D MatMul
    and Add into Gemm, not one of more dims, which it would wrap in Reshapes…), its passes
    repeated while they find more, and the main graph's nodes nothing reads dropped. Fix the
    inputs' symbolic dims first (set_io_shape) to fold the shape computations an export leaves.
    onnxruntime inlines calls to model-local functions (their definitions go). Standard operators
    its CPU provider has no kernel for at the model's opset and input types, whose schema defines
    a function body (with onnxruntime 1.32: GroupNormalization-18/21, Mish-18, HardSwish-14), it
    would write out as that body (~28 unnamed primitive nodes for each GroupNormalization): in
    the main graph they are kept as they are, with their names, and the change says which; inside
    If/Loop bodies and model-local functions they are left to it, and the change says what it
    wrote out (and why the node count grew). An If on a constant condition gives way to the
    branch it takes. Where the weights grow (a weight every branch transposes is folded once in
    each), the change says by how much and which. The model's fields, opset imports, metadata (the model's, the graph's, each remaining node's) and value_info stay;
    attributes onnxruntime writes at their defaults on the model's own nodes (MatMulNBits'
    weight_prepacked, which onnxruntime 1.20 refuses) are left out; a model with nothing to
    simplify stays as it is."""
    check_size(model, "simplify")
    before = onnx.ModelProto()
    before.CopyFrom(model)  # the graph (weights are references here): kept for a model already simple
    nodes = sum(len(ref.container.node) for ref in walk_graphs(model))
    ops_before = Counter(n.op_type for ref in walk_graphs(model) for n in ref.container.node)
    opsets = {o.domain: o.version for o in model.opset_import}
    functions = [f.name for f in model.functions]
    in_bodies, in_functions = left_to_onnxruntime(model)
    result = in_helper(model, "simplify", {}, "simplify: onnxruntime can't optimize this model")
    kept, untyped = _kept_report(result)
    note = keep(model, result)
    used = {n.domain for ref in walk_graphs(model) for n in ref.container.node}
    # onnxruntime imports every domain it knows: the model keeps its own, and those now used
    found = {o.domain: o.version for o in model.opset_import}
    del model.opset_import[:]
    for domain, version in {**opsets, **{d: found[d] for d in used if d not in opsets and d in found}}.items():
        model.opset_import.add(domain=domain, version=version)
    note += _drop_added_defaults(before, model)
    dropped = _drop_inserted_casts(model)
    if dropped:
        _check_float16_kept(model, dropped)
        note += f"; {dropped} float32 Cast(s) of onnxruntime's CPU provider left out"
    inlined = sorted(set(functions) - {f.name for f in model.functions})
    if inlined:
        note += f"; model-local function(s) inlined: {', '.join(inlined)}"
    reorder(model)
    dead = drop_dead_nodes(model, model.graph)
    if dead:
        note += f"; {plural(dead, 'node')} nothing read dropped"
    twins = _inputs_of_folded_weights(before, model)
    if twins:
        note += f"; {plural(twins, 'graph input')} that only repeated a weight it folded away dropped"
    after = sum(len(ref.container.node) for ref in walk_graphs(model))
    if after == nodes and Counter(n.op_type for ref in walk_graphs(model) for n in ref.container.node) == ops_before:
        # nothing to do is no failure (a recipe replayed on an export already simple goes on):
        # the model stays byte for byte, so a batch of this op alone changes nothing
        model.CopyFrom(before)
        return "simplify: onnxruntime's basic optimizations find nothing to simplify here" + _kept_note(kept)
    ops_after = Counter(n.op_type for ref in walk_graphs(model) for n in ref.container.node)
    gone = ops_before - ops_after
    came = ops_after - ops_before  # a duplicated DequantizeLinear (one per reader), a fusion's Gemm
    # the operators with a function body it wrote out: said on their own, not among those folded
    written = _written_out(before, model, gone, set(in_bodies + in_functions + untyped))
    gone -= written  # the rest went otherwise: with the branch an If on a constant condition doesn't take
    detail = ", ".join(f"{op} ×{k}" for op, k in gone.most_common(5))
    # what came of a body written out or a function inlined is said as such, not op by op
    more = "" if written or inlined else ", ".join(f"{op} ×{k}" for op, k in came.most_common(5))
    # inlined, a body counted once before is counted at each call after: more nodes, not more work
    counted = " (a function's body counted once before, at each of its calls after)" if inlined else ""
    return (
        f"simplified with onnxruntime's basic optimizations: {nodes} -> {after} nodes{counted}"
        + _counts_words(detail, more)
        + _renamed_words(before, model)
        + _kept_note(kept)
        + _written_note(written, in_bodies, in_functions)
        + (_growth_note(after - nodes, bool(inlined)) if after > nodes and written else "")
        + _branches_note(ops_before["If"] - ops_after["If"])
        + _weights_growth(before, model)
        + note
    )


# the values onnxruntime names from a function body it writes out in a node's place:
# _inlfunc_GroupNormalization_ScaleT, the next one in that graph _inlfunc_GroupNormalization_token_0_…
# (after an If inlined, with its prefix: _if_then_branch__inlfunc_…); inlined_… once put_back renamed them
_WRITTEN_OUT = re.compile(r"(?:_inlfunc_|inlined_)([A-Za-z0-9]+)_(?:token_\d+_)?")


def _written_out(before: onnx.ModelProto, model: onnx.ModelProto, gone: Counter, ops: set[str]) -> Counter:
    """op type (of `ops`) -> the nodes onnxruntime wrote out as their function bodies: each leaves
    values named after its operator, new in the result (nodes gone alone aren't: the branch an If
    on a constant condition doesn't take goes whole, its LayerNormalizations with it — QA31)."""
    had = {x for ref in walk_graphs(before) for n in ref.container.node for x in n.output}
    found: Counter = Counter()
    for ref in walk_graphs(model):
        bodies = {}  # one per node written out: the prefix its values share
        for x in (x for n in ref.container.node for x in n.output if x not in had):
            m = _WRITTEN_OUT.search(x)
            if m and m.group(1) in ops:
                bodies[x[: m.end()]] = m.group(1)
        found.update(bodies.values())
    return Counter({op: min(k, gone[op]) for op, k in found.items() if gone[op]})


def _branches_note(folded: int) -> str:
    if folded <= 0:
        return ""
    return f"; {plural(folded, 'If node')} gone, each replaced by the branch its constant condition takes"


def _copies(held: list[tuple[str, int]]) -> str:
    """ " in each of 2 If/Loop bodies": where a folded initializer is held more than once."""
    if len(held) < 2:
        return ""
    return f" in each of {len(held)} {'If/Loop bodies' if all(path for path, _ in held) else 'graphs'}"


_GREW = 1024  # less is a few scalars folded (an int64 Constant's int64_data counted as raw bytes after)


def _weights_growth(before: onnx.ModelProto, model: onnx.ModelProto) -> str:
    """ "; the weights grew by 12.5 KiB (38.7 KiB -> 51.2 KiB) with the initializers onnxruntime
    folded from constants: '/proj_out/Transpose_output_0' 6.2 KiB in each of 2 graphs", or "" when
    they didn't grow. A weight every If branch transposes (a tied lm_head) is folded once in each
    branch: a copy of the table per branch (QA31)."""
    was, now = (sum(data_size(t) for t in weights(m)) for m in (before, model))
    if now - was < _GREW:
        return ""
    # a Constant made an initializer is no new weight
    old = {t.name for ref in running_graphs(before) for t in ref.container.initializer}
    old |= {n.output[0] for ref in running_graphs(before) for n in ref.container.node if constant_value(n) is not None}
    new: dict[str, list[tuple[str, int]]] = {}  # name -> (graph path, size) of each graph holding it
    for ref in running_graphs(model):
        for t in ref.container.initializer:
            if t.name not in old:
                new.setdefault(t.name, []).append((ref.path, data_size(t)))
    biggest = sorted(new.items(), key=lambda e: -sum(size for _, size in e[1]))[:3]
    named = ", ".join(f"{name!r} {size_text(max(size for _, size in held))}{_copies(held)}" for name, held in biggest)
    return f"; the weights grew by {size_text(now - was)} ({size_text(was)} -> {size_text(now)})" + (
        f" with the initializers onnxruntime folded from constants: {named}" if named else ""
    )


def _counts_words(fewer: str, more: str) -> str:
    """ " (fewer Identity ×2; more DequantizeLinear ×1)": what went and what came."""
    parts = [f"fewer {fewer}"] * bool(fewer) + [f"more {more}"] * bool(more)
    return f" ({'; '.join(parts)})" if parts else ""


def _renamed_words(before: onnx.ModelProto, model: onnx.ModelProto) -> str:
    """The nodes onnxruntime's fusions renamed (fc -> fc/MatMulAddFusion): a nodes_to_exclude
    list or a link naming them no longer finds them."""
    old = {n.name for ref in walk_graphs(before) for n in ref.container.node if n.name}
    new = {n.name for ref in walk_graphs(model) for n in ref.container.node if n.name}
    renamed = sorted(
        (name.split("/", 1)[0], name) for name in new - old if "/" in name and name.split("/", 1)[0] in old - new
    )
    if not renamed:
        return ""
    shown = ", ".join(f"{a} -> {b}" for a, b in renamed[:5])
    return f"; nodes renamed by its fusions: {shown}{', …' if len(renamed) > 5 else ''}"


def _drop_added_defaults(before: onnx.ModelProto, model: onnx.ModelProto) -> str:
    """Take out the attributes onnxruntime wrote at their defaults on nodes the model had (by
    name, op and domain) without them — MatMulNBits' weight_prepacked = 0 from onnxruntime 1.21
    on, which 1.20 refuses to load; Conv's auto_pad and group: a simplified model loads where the
    original did, and differs from it only where simplified. The change's words for any it set
    to another value, which stay."""
    had = {
        n.name: (n.op_type, n.domain, {a.name for a in n.attribute})
        for ref in walk_graphs(before)
        for n in ref.container.node
        if n.name
    }
    set_: Counter = Counter()
    for ref in walk_graphs(model):
        for n in ref.container.node:
            was = had.get(n.name)
            if was is None or was[:2] != (n.op_type, n.domain):
                continue
            schema = op_schema(model, ref.container, n)
            for i in reversed(range(len(n.attribute))):
                a = n.attribute[i]
                if a.name in was[2]:
                    continue
                if at_default(a, default_of(schema, a.name)):
                    del n.attribute[i]
                else:
                    set_[f"{n.op_type}.{a.name}"] += 1
    return f"; onnxruntime set attributes the nodes did not have: {_ops(set_)}" if set_ else ""


def _kept_report(result: onnx.ModelProto) -> tuple[Counter, Counter]:
    """(op type -> nodes the helper kept whole through onnxruntime, op type -> nodes it left to it
    for want of their types), read from the result's metadata and taken out of it."""
    props = result.metadata_props
    for i in range(len(props)):
        if props[i].key == REPORT_KEY:
            report = json.loads(props[i].value)
            del props[i]
            return Counter(report.get("kept", {})), Counter(report.get("untyped", {}))
    return Counter(), Counter()


def _ops(counts: Counter | dict) -> str:
    return ", ".join(f"{op} ×{k}" for op, k in sorted(counts.items(), key=lambda e: (-e[1], e[0])))


def _kept_note(kept: Counter) -> str:
    if not kept:
        return ""
    return f"; kept {_ops(kept)} as they are: onnxruntime would write out their function bodies"


def _written_note(written: dict[str, int], in_bodies: Counter, in_functions: Counter) -> str:
    """What onnxruntime wrote out as function bodies, and why simplify left those to it."""
    if not written:
        return ""
    where = []
    if any(in_bodies[op] for op in written):
        where.append("those inside If/Loop bodies")
    if any(in_functions[op] for op in written):
        where.append("those inside model-local functions" if not where else "model-local functions")
    if any(k > in_bodies[op] + in_functions[op] for op, k in written.items()):
        where.append("those whose types shape inference can't tell")
    return f"; onnxruntime wrote out {_ops(written)} as their function bodies: {' and '.join(where)}, which simplify leaves to it"


def _growth_note(more: int, inlined: bool) -> str:
    """Why the graph grew where onnxruntime wrote out function bodies."""
    why = "model-local functions inlined at each call and " if inlined else ""
    return f"; {plural(more, 'node')} more than before: {why}operators written out as their function bodies"


def _check_float16_kept(model: onnx.ModelProto, dropped: int) -> None:
    """Refuse a result whose float16 parts onnxruntime's optimizer folded into its float32 Casts
    (a float16 input Cast merged away beside an inserted one): its types no longer fit together,
    which the batch's full check would say in onnx's words of some Add far from the cause."""
    verdict = offload.checker_verdict(light_copy(model), full=True)
    if not verdict["ok"]:
        raise StudioError(
            "simplify_failed",
            "simplify: onnxruntime's CPU provider runs this model's FLOAT16 operators in float32"
            f" ({plural(dropped, 'Cast')} it inserted), and its optimizer merged those with the model's own Casts:"
            " the result no longer types; simplify before converting to float16",
            422,
        )


def _inputs_of_folded_weights(before: onnx.ModelProto, model: onnx.ModelProto) -> int:
    """Remove the graph inputs that repeated a weight (IR < 4 lists every initializer as one)
    whose weight onnxruntime folded away: left, each became an input the model requires and
    nothing reads (QA38: a light ResNet-50 asked for 212 of them, onnxruntime refused to run it).
    How many went."""
    g = model.graph
    twins = {v.name for v in before.graph.input} & initializer_names(before.graph)
    left = initializer_names(g) | names_read(g) | {o.name for o in g.output}
    gone = [i for i, v in enumerate(g.input) if v.name in twins and v.name not in left]
    for i in reversed(gone):
        del g.input[i]
    return len(gone)


def _drop_inserted_casts(model: onnx.ModelProto) -> int:
    """Remove the Casts onnxruntime's CPU provider inserted, each reader of a cast's output reading
    its input again; how many."""
    dropped = 0
    for ref in walk_graphs(model):
        g = ref.container
        if isinstance(g, onnx.FunctionProto):
            continue
        outputs = {v.name for v in g.output}
        for i in reversed(range(len(g.node))):
            n = g.node[i]
            if n.op_type != "Cast" or not n.name.startswith(INSERTED_CAST) or n.output[0] in outputs:
                continue
            src, dst = n.input[0], n.output[0]
            del g.node[i]
            rename_in_graph(g, dst, src)
            dropped += 1
    return dropped
