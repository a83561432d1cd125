"""Whole-model edits: store inferred shapes, clean up, extract a subgraph, convert the opset."""

from __future__ import annotations

from collections import Counter

import onnx

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.causes import causes_of
from ..onnx_io.function_calls import drop_uncalled_functions, without_functions
from ..onnx_io.inference import infer_isolated, with_inferred_value_info
from ..onnx_io.ir_needs import needed_ir_version
from ..onnx_io.kept_fields import restore_graph_fields
from ..onnx_io.light import light_copy
from ..onnx_io.traverse import (
    graphs_within,
    node_reads,
    opset_imports,
    opset_version,
    standard_domain,
    subgraphs,
    walk_graphs,
)
from ..views.graph import free_names
from ..words import closest, plural, some_names
from .converted_bodies import (
    convert_functions,
    convert_training_graphs,
    first_opset,
    plain_reason,
    restore_dropped,
)
from .domain_opset import convert_domain
from .field_types import BOOLEAN, NAME
from .jsontypes import Array, Integer, String, optional, required
from .opset_defaults import drop_unknown_defaults, dropped_words, merged
from .opset_down import carry_down, missing_at, put_back
from .registry import edit_op
from .unused import drop_initializers, initializer_names, live_nodes, names_read, read_elsewhere, unread_inputs


@edit_op("infer_shapes")
def infer_shapes(model: onnx.ModelProto, op: dict) -> str:
    """Run onnx shape inference and store what it finds as value_info in every graph (main and
    subgraphs), the main graph's dims it can't name named in terms of the inputs' where
    onnxruntime's symbolic inference can (batch×sequence×768, not unk__7×unk__8×768). Existing
    value_info, inputs and outputs are left as they are."""
    try:  # in the helper process, on the weightless stand-in (onnx's C++ on an untrusted model)
        inferred = infer_isolated(model, check_type=False, strict_mode=False, data_prop=True, name_dims=True)
    except ValueError as exc:
        raise StudioError("inference_failed", f"infer_shapes: shape inference failed: {exc}", 422) from None
    added = 0
    for ours, theirs in zip(walk_graphs(model), walk_graphs(inferred), strict=True):
        g, h = ours.container, theirs.container
        if isinstance(g, onnx.FunctionProto):
            continue
        known = {v.name for v in g.value_info} | {v.name for v in g.input} | {v.name for v in g.output}
        new = [v for v in h.value_info if v.name not in known]
        g.value_info.extend(new)
        added += len(new)
    return f"stored {added} inferred value_info entries"


@edit_op(
    "cleanup",
    optional("nodes", BOOLEAN, "remove dead nodes", default=True),
    optional("initializers", BOOLEAN, "remove unused initializers", default=True),
    optional("value_info", BOOLEAN, "remove value_info of values no longer there", default=True),
    optional("functions", BOOLEAN, "remove model-local functions no node calls", default=True),
    optional(
        "initializer_inputs",
        BOOLEAN,
        "remove the graph inputs that only repeat an initializer (IR < 4 exports list every weight as one), "
        "making those weights constants",
        default=False,
    ),
    optional(
        "unread_inputs",
        BOOLEAN,
        "remove the graph inputs nothing reads once the dead nodes are gone (an input a freeze and"
        " simplify left unread): callers stop feeding them",
        default=False,
    ),
)
def cleanup(model: onnx.ModelProto, op: dict) -> str:
    """Remove from the main graph what no graph output (nor training graph) depends on: dead
    nodes (in its If/Loop/Scan bodies too, what no output of their body needs; an If's outputs
    nothing reads, with each branch's output in their place), unused initializers, dense or sparse (with their graph-input twins), and value_info of values no longer present;
    and the model-local functions no node calls (once the dead nodes are gone; a function only
    an uncalled function calls goes too). Each part can be switched off (nodes/initializers/
    value_info/functions: false). With
    initializer_inputs, the graph inputs that repeat an initializer go too: the weights become
    constants (what quantization and constant folding need), the IR raised to 4 if lower. With
    unread_inputs, the graph inputs nothing reads go (kept, they are named)."""
    g = model.graph
    flags = {k: op[k] for k in ("nodes", "initializers", "value_info")}
    if_outputs = _drop_unread_if_outputs(model) if flags["nodes"] else 0
    in_bodies = _clean_bodies(model) if flags["nodes"] else 0
    live, needed = live_nodes(model, g)  # from its outputs, and what training graphs read or set
    if not flags["nodes"]:
        needed |= names_read(g)  # every node stays, and what it reads
    dead = [i for i, ok in enumerate(live) if not ok] if flags["nodes"] else []
    for i in reversed(dead):
        del g.node[i]
    unused_inits: set[str] = set()
    if flags["initializers"]:
        inits = initializer_names(g)
        real_inputs = {v.name for v in g.input} - inits
        unused_inits = inits - needed - real_inputs  # sparse ones too
        drop_initializers(g, unused_inits)
    dropped_vi = 0
    if flags["value_info"]:
        present = {x for n in g.node for x in list(n.input) + list(n.output)} | needed
        for i in reversed(range(len(g.value_info))):
            if g.value_info[i].name not in present:
                del g.value_info[i]
                dropped_vi += 1
    bodies = f" (and {in_bodies} in If/Loop/Scan bodies)" if in_bodies else ""
    out = (
        f"removed {plural(len(dead), 'dead node')}{bodies}, {plural(len(unused_inits), 'unused initializer')}, "
        f"{dropped_vi} stale value_info"
    )
    if if_outputs:
        out += f", {plural(if_outputs, 'If output')} nothing read (with what both branches computed for it)"
    removed = bool(dead or in_bodies or unused_inits or dropped_vi or if_outputs)
    if op["functions"]:
        gone_fns = drop_uncalled_functions(model)
        removed |= bool(gone_fns)
        if gone_fns:
            out += f", {plural(len(gone_fns), 'uncalled function')} ({', '.join(gone_fns)})"
    if op["initializer_inputs"]:
        weights = {t.name for t in g.initializer}
        repeated = [i for i, v in enumerate(g.input) if v.name in weights]
        for i in reversed(repeated):
            del g.input[i]
        removed |= bool(repeated)
        out += f", {len(repeated)} graph input(s) repeating an initializer"
        if repeated and model.ir_version < 4:  # initializers that aren't inputs need IR 4
            out += f" (ir_version {model.ir_version} -> 4)"
            model.ir_version = 4
    unread = unread_inputs(model)
    if unread and op["unread_inputs"]:
        for i in reversed([i for i, v in enumerate(g.input) if v.name in set(unread)]):
            del g.input[i]
        out += f", {plural(len(unread), 'graph input')} nothing read ({some_names(unread, 4)})"
    elif unread:  # kept: a caller may feed them still, but say so
        kept = f"{plural(len(unread), 'graph input')} nothing reads kept ({some_names(unread, 4)}): unread_inputs removes them"
        # a clean-up that removed nothing answers "nothing changed": this line, its op named, goes with it
        out = f"{out}; {kept}" if removed else f"cleanup: {kept}"
    return out


def _drop_unread_if_outputs(model: onnx.ModelProto) -> int:
    """Remove the outputs of If nodes that nothing reads (a graph output removed since: QA32 —
    both branches of a merged decoder still computed the present key/value dropped), and each
    branch's output in that place; what computed them is then dead in the branches
    (_clean_bodies). An If keeps at least one output. The outputs removed."""
    removed = 0
    for ref in walk_graphs(model):
        g = ref.container
        if not isinstance(g, onnx.GraphProto) or not (ref.path == "" or ref.path[:1] == "n"):
            continue
        read = names_read(g) | read_elsewhere(model, g)
        for node in g.node:
            if node.op_type != "If" or node.domain not in ("", "ai.onnx"):
                continue
            branches = [a.g for a in node.attribute if a.name in ("then_branch", "else_branch")]
            if len(branches) != 2 or any(len(b.output) != len(node.output) for b in branches):
                continue
            unread = [k for k, name in enumerate(node.output) if not name or name not in read]
            for k in reversed(unread[: len(node.output) - 1] if len(unread) == len(node.output) else unread):
                del node.output[k]
                for b in branches:
                    del b.output[k]
                removed += 1
    return removed


def _clean_bodies(model: onnx.ModelProto) -> int:
    """Remove the nodes of the main graph's If/Loop/Scan bodies that no output of their body
    needs (what a replaced body output left behind), innermost bodies first: what they read
    from around them may then go from the outer graphs too. The nodes removed."""
    bodies = [  # not functions', not training graphs'
        r.container for r in walk_graphs(model) if r.path[:1] == "n" and isinstance(r.container, onnx.GraphProto)
    ]
    removed = 0
    for body in reversed(bodies):  # walk_graphs goes depth first: reversed, inner bodies come first
        live, _ = live_nodes(model, body)
        for i in reversed([i for i, ok in enumerate(live) if not ok]):
            del body.node[i]
            removed += 1
    return removed


@edit_op(
    "extract_subgraph",
    required("inputs", Array(NAME, label="an array of tensor names"), "the tensors the part starts from"),
    required("outputs", Array(NAME, min_items=1, label="a non-empty array of tensor names"), "the tensors it computes"),
)
def extract_subgraph(model: onnx.ModelProto, op: dict) -> str:
    """Keep only the part of the main graph that computes `outputs` from `inputs` (tensor names),
    as onnx.utils.extract_model does, with what the kept nodes' If/Loop bodies read from the main
    graph (its nodes and initializers: a merged decoder's weights). Model fields, metadata and
    the graph's name stay."""
    inputs, outputs = op["inputs"], op["outputs"]
    known = (
        {v.name for v in model.graph.input}
        | {t.name for t in model.graph.initializer}
        | {o for n in model.graph.node for o in n.output}
    )
    missing = [x for x in inputs + outputs if x not in known]
    if missing:
        raise StudioError(
            "unknown_tensor",
            f"extract_subgraph: no tensor named {', '.join(map(repr, missing))}{closest(missing[0], known)}",
            404,
        )
    needed = inputs_needed(model.graph, inputs, outputs)
    if needed:
        raise StudioError(
            "bad_value",
            f"extract_subgraph: {', '.join(map(repr, outputs))} can't be computed from {', '.join(map(repr, inputs)) or 'no inputs'}"
            f" alone: {'it needs' if len(outputs) == 1 else 'they need'} the graph input {', '.join(map(repr, needed))} too"
            " (add it to the inputs)",
        )
    try:
        # the Extractor types new inputs/outputs from value_info, so infer on a copy first
        typed = with_inferred_value_info(model, data_prop=True)
        # onnx's Extractor refuses a graph with quantization annotations ("len_quantization_annotation
        # is 1, it must be 0"): they go back on after, for the tensors kept
        del typed.graph.quantization_annotation[:]
        extracted = _BodiesRead(typed).extract_model(inputs, outputs)
    except StudioError:
        raise
    except Exception as exc:
        raise StudioError("extract_failed", f"extract_subgraph: {exc}", 422) from None
    g = extracted.graph
    had = {v.name for v in model.graph.value_info}
    for i in reversed(range(len(g.value_info))):  # keep only value_info the model itself recorded
        if g.value_info[i].name not in had:
            del g.value_info[i]
    g.name = model.graph.name
    restore_graph_fields(model.graph, g)  # doc strings, metadata, annotations of what is kept
    before = len(model.graph.node)
    model.graph.CopyFrom(g)
    del model.functions[:]  # only the local functions the kept nodes still call
    model.functions.extend(extracted.functions)
    note = _unbind_training(model)
    # IR < 4 lists every weight as a graph input; the part keeps its weights, not those inputs
    needed_ir = needed_ir_version(model)
    if needed_ir > model.ir_version:
        note = f"; ir_version {model.ir_version} -> {needed_ir}"
        model.ir_version = needed_ir
    return f"extracted {len(g.node)} of {before} nodes between {inputs} and {outputs}{note}"


def _unbind_training(model: onnx.ModelProto) -> str:
    """Drop the training bindings naming weights the extracted graph no longer holds, and a
    training graph left binding none (QA39: a split's part 1 kept the binding of a weight only
    part 2 has — a model onnxruntime's trainer refuses, that passes the checker); say which."""
    held = initializer_names(model.graph)
    dropped: list[str] = []
    for i in reversed(range(len(model.training_info))):
        t = model.training_info[i]
        for bindings in (t.initialization_binding, t.update_binding):
            for j in reversed(range(len(bindings))):
                if bindings[j].key not in held:
                    dropped.append(bindings[j].key)
                    del bindings[j]
        if not len(t.initialization_binding) and not len(t.update_binding):
            del model.training_info[i]
    if not dropped:
        return ""
    names = some_names(sorted(set(dropped)), 3)
    return f"; training bindings of {names} dropped (weights left out)"


class _BodiesRead(onnx.utils.Extractor):
    """onnx's Extractor, counting what the kept nodes' If/Loop bodies read from the main graph
    (it follows node inputs only): the nodes computing it, the initializers (a merged decoder's
    branches read every weight from the main graph), their value_info and the local functions
    called inside the bodies are kept too."""

    def _dfs_search_reachable_nodes(self, node_output_name: str, graph_input_names: set[str], reachable: set[int]):
        stack = [node_output_name]
        while stack:
            name = stack.pop()
            index = self.outmap.get(name)
            if name in graph_input_names or index is None or index in reachable:
                continue
            reachable.add(index)
            stack += [x for x in _outer_reads(self.graph.node[index]) if x]

    def _collect_reachable_tensors(self, nodes):
        # a stand-in node reading what each node's bodies read: the Extractor keeps what nodes read
        reading = [onnx.NodeProto(input=sorted(_outer_reads(n))) for n in nodes if any(True for _ in subgraphs(n))]
        return super()._collect_reachable_tensors([*nodes, *reading])

    def _collect_referred_local_functions(self, nodes):
        inside = [x for n in nodes for g in subgraphs(n) for sub in graphs_within(g) for x in sub.node]
        return super()._collect_referred_local_functions([*nodes, *inside])


def _outer_reads(node: onnx.NodeProto) -> set[str]:
    """What a node reads from its graph: its inputs and what its bodies read from around them."""
    return set(node.input).union(*(free_names(g) for g in subgraphs(node)))


def inputs_needed(graph: onnx.GraphProto, inputs: list[str], outputs: list[str]) -> list[str]:
    """The graph inputs (not in `inputs`) that `outputs` are computed from: what the part would
    read and not have (onnx's Extractor made such a part, which the checker then refused as
    "Graph output 'x' is not an output of any node")."""
    producer = {o: n for n in graph.node for o in n.output if o}
    weights = {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    stop = set(inputs) | weights
    fed = {v.name for v in graph.input}
    needed: dict[str, None] = {}
    seen: set[str] = set()
    todo = list(outputs)
    while todo:
        name = todo.pop()
        if not name or name in seen or name in stop:
            continue
        seen.add(name)
        node = producer.get(name)
        if node is not None:
            todo.extend(node_reads(node))
        elif name in fed:  # (not a subgraph's own name node_reads also gives)
            needed[name] = None
    return list(needed)


@edit_op(
    "convert_opset",
    required("version", Integer(minimum=1), "the opset version to convert to"),
    optional(
        "domain",
        String(),
        'the domain whose import changes: "ai.onnx" (the default; onnx\'s version converter) or another'
        " onnx defines (ai.onnx.ml: moved where its nodes fit the new definitions)",
        "ai.onnx",
    ),
)
def convert_opset(model: onnx.ModelProto, op: dict) -> str:
    """Convert the model to another ai.onnx opset version with onnx.version_converter: the main
    graph, its subgraphs, each model-local function's body (functions import the new version
    too) and the training graphs. What is no operator's (metadata, doc strings, quantization
    annotations, device configurations, the types the model declares) stays as it was. Refused, with the converter's reason, when an operator can't be converted. An
    attribute the converter keeps that the new opset's operator doesn't define (ReduceMean's
    noop_with_empty_axes, from 18 down to 17) is dropped when it holds the default the old opset
    gives it (the change line says so), refused by name at another value. Model fields, node
    metadata and references to function attributes stay."""
    version = op["version"]
    if standard_domain(op.get("domain", "ai.onnx")) != "":
        return convert_domain(model, op["domain"], version)
    latest = onnx.defs.onnx_opset_version()
    if not 1 <= version <= latest:
        raise StudioError("bad_value", f"convert_opset: version must be between 1 and {latest}")
    twice = _one_ai_onnx_import(model)
    current = opset_version(model, model.graph, "")
    if current is None:
        raise StudioError("bad_value", "convert_opset: the model imports no ai.onnx opset")
    if current == version:
        raise StudioError("bad_value", f"convert_opset: the model is already at opset {version}")
    before = _node_bytes(model)
    sent = without_functions(model)
    # going down: nodes that mean the same at the older opset pass the converter untouched
    carried = carry_down(sent, current, version) if version < current else None
    try:
        converted = offload.convert(sent, version)  # C++: in the helper process
    except ValueError as exc:
        raise StudioError(
            "conversion_failed",
            f"convert_opset: opset {current} -> {version} is not possible: "
            + plain_reason(exc, (n for g in graphs_within(model.graph) for n in g.node))
            + _lacking_words(model, version),
            422,
        ) from None
    if carried is not None:
        put_back(converted, carried)
    if carried is not None and carried.counts:
        _check_carried(converted, current, version)
    # what the converter keeps that the new opset doesn't define: dropped at its default, else refused
    dropped = drop_unknown_defaults(converted.graph, current, version)
    sources = [opset_imports(model, f).get("") for f in model.functions]
    bodies = convert_functions(model, version)  # the converter leaves them as they were
    trained = convert_training_graphs(model, version)  # and the training graphs
    for f, source in zip(model.functions, sources, strict=True):
        if source is not None and source != version:  # the bodies convert_functions converted
            dropped = merged(dropped, drop_unknown_defaults(f, source, version, f" in function {f.name}"))
    if current < 7 <= version:
        _reshape_prelu_slopes(converted)
    restore_dropped(model.graph.node, converted.graph.node)
    # metadata, doc strings, annotations are not the converter's; nor are the shapes its inference
    # found (value_info, bodies' outputs): what the model declared is kept as it was
    restore_graph_fields(model.graph, converted.graph, declared=True)
    model.graph.CopyFrom(converted.graph)
    del model.opset_import[:]
    model.opset_import.extend(converted.opset_import)
    _one_ai_onnx_import(model)  # the converter wrote the new one beside what it was given
    note = twice
    # the converter adds initializers that aren't graph inputs, which IR < 4 forbids
    needed_ir = max(converted.ir_version, needed_ir_version(model))
    if needed_ir > model.ir_version:
        note = f"; ir_version {model.ir_version} -> {needed_ir}"
        model.ir_version = needed_ir
    weights = {t.name for t in model.graph.initializer}
    listed = sum(v.name in weights for v in model.graph.input)
    if listed and model.ir_version >= 4:  # what IR 3 needed, kept: onnxruntime folds none of them
        note += (
            f"; {plural(listed, 'weight')} still listed among the graph inputs (overridable, so never folded):"
            " Clean up’s “Weights listed as inputs” makes them constants"
        )
    if bodies:
        note += f"; {plural(len(bodies), 'model function')} converted too ({', '.join(bodies)})"
    if trained:
        note += f"; {plural(trained, 'training graph')} converted too"
    note += dropped_words(dropped, version)
    if carried is not None and carried.counts:
        counts = carried.counts
        kinds = ", ".join(f"{op} ×{k}" for op, k in counts.most_common(6)) + (", …" if len(counts) > 6 else "")
        note += (
            f"; {plural(sum(counts.values()), 'node')} valid at opset {version} as they are, kept so where onnx's"
            f" converter has no adapter ({kinds})"
        )
        if carried.given_empty:
            note += (
                f"; {plural(carried.given_empty, 'input')} opset {version} requires and the model leaves out"
                " (a Resize's roi or scales) given as an empty tensor, as it reads one"
            )
    # how much the conversion touched: often only the import (QA37 #7: "converted" read as if
    # its 99 nodes had changed, where none had)
    rewritten = sum((before - _node_bytes(model)).values())
    done = f"{plural(rewritten, 'node')} rewritten" if rewritten else "no node needed rewriting, only the opset import"
    return f"converted from opset {current} to {version}: {done}{note}"


def _node_bytes(model: onnx.ModelProto) -> Counter:
    """Every node of the model's graphs and functions, serialized: what a conversion rewrote is
    what the model held before and doesn't after."""
    return Counter(n.SerializeToString(deterministic=True) for ref in walk_graphs(model) for n in ref.container.node)


def _lacking_words(model: onnx.ModelProto, version: int) -> str:
    """ "; every operator opset 13 lacks: HardSwish ×6 (from 14), LayerNormalization ×4 (from
    17)": all of them at once, where the converter names the first it stops at."""
    lacking = missing_at(model, version)
    if len(lacking) < 2:
        return ""  # none, or the one the converter's words name
    words = ", ".join(f"{op} ×{k} (from {first_opset(op)})" for op, k in lacking.most_common())
    return f"; every operator opset {version} lacks: {words}"


def _check_carried(converted: onnx.ModelProto, current: int, version: int) -> None:
    """The nodes carried as they are take, at the older opset, the types their inputs have: the
    full check (strict shape inference, in the helper) holds them to that version's constraints
    (Mul-13 takes no int8)."""
    verdict = offload.checker_verdict(light_copy(converted), full=True)
    if not verdict["ok"]:
        raise StudioError(
            "conversion_failed",
            f"convert_opset: opset {current} -> {version} is not possible: a node kept as it is doesn't hold at "
            f"opset {version}: {causes_of(verdict['message'], converted).line()}",
            422,
        )


def _one_ai_onnx_import(model: onnx.ModelProto) -> str:
    """One import of ai.onnx ("" and "ai.onnx" are one domain): some skl2onnx exports import it
    twice, and the conversion wrote [('', 21), ('', 17)] while saying "from 17 to 21" (QA21 F2).
    At one version the repeats go (said); at two, which one the nodes follow is unclear: refused."""
    ours = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if len(ours) < 2:
        return ""
    versions = sorted({o.version for o in ours})
    if len(versions) > 1:
        raise StudioError(
            "bad_value",
            f"convert_opset: the model imports ai.onnx {len(ours)} times, at opsets {', '.join(map(str, versions))}:"
            " which one its operators follow is unclear; remove the imports it doesn't mean first",
        )
    first = ours[0]
    kept = [
        onnx.OperatorSetIdProto(domain="" if o is first else o.domain, version=o.version)
        for o in model.opset_import
        if o.domain not in ("", "ai.onnx") or o is first
    ]
    del model.opset_import[:]
    model.opset_import.extend(kept)
    return f"; ai.onnx was imported {len(ours)} times (at opset {versions[0]}): one import kept"


def _reshape_prelu_slopes(model: onnx.ModelProto) -> None:
    """PRelu before opset 7 applied a [C] slope per channel (axis 1); from 7 on it broadcasts
    numpy-style, so the slope must be [C, 1, ..., 1]. onnx.version_converter leaves it as is,
    which makes onnxruntime refuse (or misapply) the model; we reshape initializer slopes."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    try:
        typed = with_inferred_value_info(model)
    except Exception as exc:
        raise StudioError(
            "conversion_failed", f"convert_opset: can't type PRelu inputs to adapt their slopes: {exc}", 422
        ) from None
    ranks = {
        v.name: len(v.type.tensor_type.shape.dim)
        for v in list(typed.graph.value_info) + list(typed.graph.input)
        if v.type.tensor_type.HasField("shape")
    }
    readers: dict[str, list] = {}
    for n in g.node:
        for x in n.input:
            readers.setdefault(x, []).append(n)
    reshaped: set[str] = set()
    for n in g.node:
        if n.op_type != "PRelu" or standard_domain(n.domain) or len(n.input) < 2 or n.input[1] in reshaped:
            continue
        slope, rank = inits.get(n.input[1]), ranks.get(n.input[0])
        if slope is None or len(slope.dims) != 1 or slope.dims[0] == 1 or rank is None or rank <= 2:
            continue
        if any(r.op_type != "PRelu" for r in readers.get(slope.name, [])):
            raise StudioError(
                "conversion_failed",
                f"convert_opset: PRelu slope {slope.name!r} is shared with other "
                "operators, so it can't be reshaped for opset 7 broadcasting",
                422,
            )
        slope.dims.extend([1] * (rank - 2))
        reshaped.add(slope.name)
        for vi in list(g.input) + list(g.value_info):
            if vi.name == slope.name and vi.type.tensor_type.HasField("shape"):
                vi.type.tensor_type.shape.dim.extend([onnx.TensorShapeProto.Dimension(dim_value=1)] * (rank - 2))
