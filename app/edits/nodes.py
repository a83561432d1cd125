"""Deleting, inserting and changing the operator of nodes."""

from __future__ import annotations

import onnx

from ..errors import NotFound, StudioError
from ..onnx_io.address import node_id, resolve_graph
from .arity import check_input_count, count_range, node_signature
from .bodies import body_of, check_type_kept, defines, enclosing_defines, graph_at, where
from .domains import import_domain, new_node
from .field_types import ATTRIBUTE_VALUE, BODY_PATH, BOOLEAN, NAME, NODE, NULL, STRING
from .jsontypes import Array, Map, optional, required
from .locate import find_node, node_words
from .names import all_names, captures, fresh_name, rename_captures, rename_in_graph
from .registry import edit_op
from .unused import drop_initializers, left_unread, names_read
from .value_types import inferred_type, retype_output, value_type


@edit_op(
    "delete_node",
    required("node", NODE, "the node"),
    optional(
        "reconnect",
        BOOLEAN,
        "wire its first input that is no weight or constant to the readers of its first output",
        default=False,
    ),
    optional(
        "keep_initializers", BOOLEAN, "keep the initializers only it read (by default they go with it)", default=False
    ),
)
def delete_node(model: onnx.ModelProto, op: dict) -> str:
    """Delete a node. With reconnect=true its first input that is no weight or constant (an
    initializer, a Constant node's output: torch writes RMSNorm's scale as `Mul(weight, x)`), else
    its first input, takes the place of its first output everywhere that output was read (consumers, graph outputs) — where that input is the name
    insert_node gave a producer's output (`<output>_pre`) and nothing else reads it, the producer
    writes the output's name again, so deleting what insert_node added gives back the graph before
    it; a graph output keeps its name (its producer writes it) — so a pass-through
    node such as Identity, Dropout or Cast goes away cleanly; a graph output it wrote takes that
    input's type where its declared one no longer fits (deleting a classifier's ZipMap leaves
    its probabilities tensor as the output, not a sequence of maps). A body's output can't
    become a value of a graph around it (refused: change the node to an Identity). Without it, readers of
    its outputs are left dangling and the batch is refused if that breaks a model that passed the
    checker. The initializers (dense or sparse) only it read go with it unless keep_initializers:
    its weights, or the constant insert_node made for it, would stay behind unread (one that is
    also a graph input stays: it is part of the model's interface)."""
    ref, _, node, _ = find_node(model, op["node"])
    reads = list(node.input)
    desc = _delete_node(model, op)
    g = ref.container
    if op["keep_initializers"] or not isinstance(g, onnx.GraphProto):
        return desc
    gone = left_unread(model, g, reads)
    drop_initializers(g, set(gone))
    if not gone:
        return desc
    one = len(gone) == 1
    names = ", ".join(map(repr, gone))
    return (
        desc
        + f"; and {'its initializer' if one else 'the initializers'} {names} (nothing else read {'it' if one else 'them'})"
    )


def _delete_node(model: onnx.ModelProto, op: dict) -> str:
    """The node deleted, its readers rewired on ask (delete_node)."""
    ref, idx, node, nid = find_node(model, op["node"])
    reconnect = op["reconnect"]
    g = ref.container
    desc = f"deleted {node_words(node, nid)}"
    if reconnect:
        src = _passed_on(g, node)
        dst = node.output[0] if node.output else ""
        if src is None or not dst:
            raise StudioError(
                "cannot_reconnect", f"delete_node: {node_words(node, nid)} has no input to reconnect its consumers to"
            )
        output_names = {v.name for v in g.output} if isinstance(g, onnx.GraphProto) else set()
        # a graph output the node wrote is now src: it takes src's type where the two differ
        # (deleting a ZipMap leaves a tensor, not a sequence of maps)
        src_type = value_type(model, ref.path, src) if dst in output_names else None
        del g.node[idx]
        if isinstance(g, onnx.FunctionProto):
            _rename_in_function(g, dst, src)
            return desc + f"; readers of {dst!r} now read {src!r}"
        if dst in output_names and not defines(g, src) and body_of(model, ref) is not None:
            raise StudioError(
                "cannot_reconnect",
                f"delete_node: {dst!r}, an output of {where(model, ref)}, would become {src!r} of the enclosing"
                " graph, which a body can't give as its output; change the node's operator to Identity instead",
            )
        made_by_node = any(src in n.output for n in g.node)
        if dst in output_names and made_by_node and src not in output_names:
            # keep the graph output's name: src's producer now writes dst directly
            _drop_value_info(g, src)
            rename_in_graph(g, src, dst)
            return desc + f"; {src!r} is now written as {dst!r}" + _retyped(model, ref, dst, src_type)
        if made_by_node and src not in output_names and _inserted_before(src, dst) and src not in names_read(g):
            # insert_node renamed the producer's output (dst -> dst_pre): its producer writes dst
            # again and every reader keeps its name (what insert_node did is undone to the byte).
            # Any other src keeps its own name: the upstream tensor is not named after a node
            # that is gone (deleting a torch Dropout leaves LayerNorm's Add writing its own)
            _drop_value_info(g, dst)
            rename_in_graph(g, src, dst)
            return desc + f"; {src!r} is now written as {dst!r}"
        _drop_value_info(g, dst)
        rename_in_graph(g, dst, src)
        return desc + f"; readers of {dst!r} now read {src!r}" + _retyped(model, ref, src, src_type)
    if isinstance(g, onnx.FunctionProto):
        # said here: the checks after the edit would name a node of another function, the
        # first to call this one, whose input no longer has a type
        outputs = [x for x in node.output if x and x in g.output]
        if outputs:
            raise StudioError(
                "bad_value",
                f"delete_node: {node_words(node, nid)} writes {', '.join(map(repr, outputs))}, an output of function"
                f" {g.name}: nothing would compute it (reconnect gives it the node's first input instead)",
            )
    del g.node[idx]
    return desc


def _passed_on(g, node: onnx.NodeProto) -> str | None:
    """The input a reconnect passes on: the first that is no weight or constant, else the first."""
    given = [x for x in node.input if x]
    fixed = {t.name for t in getattr(g, "initializer", ())}
    fixed |= {x for n in g.node if n.op_type == "Constant" and not n.domain for x in n.output}
    return next((x for x in given if x not in fixed), given[0] if given else None)


def _retyped(model: onnx.ModelProto, ref, name: str, now: onnx.TypeProto | None) -> str:
    """retype_output where src's type is known (unknown: the output's declaration stays), and
    for a body's output, the holder's outputs standing for it."""
    if now is None:
        return ""
    said = retype_output(ref.container, name, now, main=not ref.path)
    body = body_of(model, ref) if said else None
    if body is not None:
        said += _holder_outputs_retyped(model, body, [k for k, v in enumerate(body.graph.output) if v.name == name])
    return said


def _inserted_before(src: str, dst: str) -> bool:
    """Is `src` the name insert_node gave the output it took `dst` from (`dst_pre`, `dst_pre_2`)?"""
    return src == f"{dst}_pre" or (src.startswith(f"{dst}_pre_") and src[len(dst) + 5 :].isdigit())


def _drop_value_info(g: onnx.GraphProto, name: str) -> None:
    for i in reversed(range(len(g.value_info))):
        if g.value_info[i].name == name:
            del g.value_info[i]


def _rename_in_function(f: onnx.FunctionProto, old: str, new: str) -> None:
    for n in f.node:
        for i, x in enumerate(n.input):
            if x == old:
                n.input[i] = new
    for i, x in enumerate(f.output):
        if x == old:
            f.output[i] = new


@edit_op(
    "insert_node",
    required("tensor", NAME, "a tensor of the graph, or one it reads from an enclosing graph"),
    required("op_type", NAME, "the new node's operator"),
    optional("domain", STRING, 'its domain ("" is ai.onnx)', default=""),
    optional("name", STRING, "the new node's name", default=""),
    optional(
        "attributes",
        Map(ATTRIBUTE_VALUE, label="an object: attribute name -> value"),
        "the new node's attributes, typed from the operator schema",
        default={},
    ),
    optional(
        "inputs",
        Array(STRING, label="an array of tensor names"),
        'more inputs after `tensor` ("" skips an optional input)',
        default=[],
    ),
    optional("output", STRING | NULL, "the new node's output name (a fresh one if absent, null or empty)"),
    optional(
        "consumers",
        Array(NODE, min_items=1, label="a non-empty array of node ids") | NULL,
        "only these readers of `tensor` read the new output (null or absent: all of them)",
    ),
    optional("graph", BODY_PATH, 'the graph it goes in: the main graph, or a body ("n3/body")', default=""),
)
def insert_node(model: onnx.ModelProto, op: dict) -> str:
    """Insert a node of any operator onto the edge carrying `tensor` in the main graph or, with
    `graph`, in a body (an If branch, a Loop or Scan body). The new node reads `tensor` (then the
    extra `inputs`, e.g. initializer names) and its output replaces `tensor` for all its readers in
    that graph — the nodes reading it and the bodies of If/Loop/Scan nodes there that read it from
    around them, at any depth (not where a body has its own value of that name) — or only for the
    node ids listed in `consumers` (a node holding such bodies: those bodies' reads). For all
    readers of a tensor the graph computes, the node making it writes `<tensor>_pre` and the new
    node writes `tensor`, so readers, graph outputs and bodies reading it keep the name (an
    `output` naming anything else is refused); a graph output it is takes the
    type and shape the new node gives it (an ArgMax or a Cast after a model's output), said in
    the change, or, where nothing can infer them, keeps its element type (a body's output then
    of unknown shape; the main graph's keeps its declaration, the checker wanting a shape
    there); a body's output must keep the element type its If or Loop needs. For `consumers`,
    or a tensor the graph reads (an input, an initializer, a value of an enclosing graph), the
    new node writes `output` (a fresh name) and those read it. A tensor nothing reads is
    accepted (a later op of the batch may wire the new output), said in the change. An extra
    input must be a value of the graph or one around it, not one the body's own holder computes;
    nodes move where it is computed later. `attributes` maps names to
    values, typed from the operator schema. A domain the model doesn't import yet is imported
    with it (onnx's domains at the version of the operator's newest schema, others at 1), the
    ir_version raised only if that import needs it."""
    from .attributes import new_attribute
    from .wiring import first_unknown  # wiring's ops register after this module's (docs/api.md's order)

    tensor, op_type, domain = op["tensor"], op["op_type"], op["domain"]
    extra, attrs = op["inputs"], op["attributes"]
    ref = graph_at(model, op["graph"], "insert_node")
    g: onnx.GraphProto = ref.container  # type: ignore[assignment]  # graph_at refuses functions
    here = where(model, ref)
    producer = next((i for i, n in enumerate(g.node) if tensor in n.output), None)
    around = " or around it" if ref.path else ""
    if producer is None and not defines(g, tensor) and not enclosing_defines(model, ref, tensor):
        raise NotFound("unknown_tensor", f"insert_node: no tensor {tensor!r} in {here}{around}")
    unknown = first_unknown(model, ref, extra)
    if unknown is not None:
        raise NotFound("unknown_tensor", f"insert_node: no tensor {unknown!r} in {here}{around}")
    for name in [tensor, *extra]:
        holder = _holder_computing(model, ref, name)
        if holder is not None:
            raise StudioError("cycle", f"insert_node: {here} can't read {name!r}: {holder.holder_words} computes it")
    node = new_node(op_type, domain, op["name"])
    if node.name and any(n.name == node.name for n in g.node):
        raise StudioError("duplicate_name", f"insert_node: {here} already has a node named {node.name!r}")
    imported = import_domain(model, g, node)  # before its attributes: they are typed from its schema
    for attr_name, value in attrs.items():
        node.attribute.append(new_attribute(model, g, node, attr_name, value, None))
    node.input.extend([tensor, *extra])  # the count checked here; which name it reads is set below
    check_input_count(model, g, node, "insert_node")
    del node.input[:]
    consumers = op.get("consumers")
    in_body = f" in {here}" if ref.path else ""
    if consumers is None and producer is not None:
        asked = op.get("output")
        if asked and asked != tensor:
            raise StudioError(
                "bad_value",
                f"insert_node: the new node can't write {asked!r}: for all readers of {tensor!r}, which {here}"
                f" computes, it writes {tensor!r} itself; leave output out, or list the readers in consumers",
            )
        holders = [(i, n) for i, n in enumerate(g.node) if captures(n, tensor)]
        unread = tensor not in names_read(g) and all(v.name != tensor for v in g.output)
        # the producer now writes a fresh name; the new node writes `tensor` for every reader
        fresh = fresh_name(model, f"{tensor}_pre")
        out = g.node[producer].output
        out[list(out).index(tensor)] = fresh
        for v in g.value_info:
            if v.name == tensor:
                v.name = fresh
        node.input.extend([fresh, *extra])
        node.output.append(tensor)
        g.node.insert(producer + 1, node)
        bodies = f", and {_bodies_words(ref, holders, producer)}" if holders else ""
        said = f"inserted {op_type} after {tensor!r} (all readers{bodies}){in_body}"
        said += _unused(tensor, here, tensor) if unread else ""
        said += _output_retyped(model, ref, tensor) + _reordered(model, ref, op_type, tensor, extra)
        return _with(said, imported)
    output = op.get("output") or fresh_name(model, f"{tensor}_{op_type.lower()}")
    if output in all_names(model.graph):  # a body's name too: it may not shadow one around it
        raise StudioError("name_taken", f"insert_node: {output!r} is already used")
    node.input.extend([tensor, *extra])
    node.output.append(output)
    if consumers is not None:
        chosen = _consumer_nodes(model, ref, consumers, tensor)
    else:
        chosen = [(i, n) for i, n in enumerate(g.node) if tensor in n.input or captures(n, tensor)]
    targets = [n for _, n in chosen if tensor in n.input]
    holders = [(i, n) for i, n in chosen if rename_captures(n, tensor, output)]
    for n in targets:
        for k, x in enumerate(n.input):
            if x == tensor:
                n.input[k] = output
    at = 0 if producer is None else producer + 1
    g.node.insert(at, node)
    bodies = f" and {_bodies_words(ref, holders, at - 1)}" if holders else ""
    said = f"inserted {op_type} on {tensor!r} for {len(targets)} reader(s){bodies}{in_body}, writing {output!r}"
    said += _unused(tensor, here, output) if not chosen else ""
    return _with(said + _reordered(model, ref, op_type, tensor, extra), imported)


def _holder_computing(model: onnx.ModelProto, ref, name: str):
    """The Body whose holder itself writes `name`, a value its graph (ref's, or one ref is inside)
    would read from around it: reading it makes a cycle. None if a graph on the way defines it."""
    for crumb in reversed(ref.crumbs):
        inner = resolve_graph(model, crumb["path"])
        if defines(inner.container, name):
            return None
        body = body_of(model, inner)
        if body is None:
            return None
        if name in body.holder.output:
            return body
    return None


def _bodies_words(ref, holders: list, before: int) -> str:
    """'the bodies of node "branch" (If)': the holders whose bodies now read the new output, by
    their ids once the new node is in (those after position `before` moved one down)."""
    return "the bodies of " + ", ".join(
        node_words(n, node_id(ref.path, i + 1 if i > before else i)) for i, n in holders
    )


def _unused(tensor: str, here: str, output: str) -> str:
    return f"; nothing reads {tensor!r} in {here}, so {output!r} goes unused"


def _reordered(model: onnx.ModelProto, ref, op_type: str, tensor: str, extra: list) -> str:
    """The graph (and those around it) put back in an order where each node follows what it reads:
    an extra input computed later, or a value around a body computed after its holder."""
    from .wiring import keep_order

    if not extra and not ref.path:
        return ""
    reads = ", ".join(repr(x) for x in extra if x) or repr(tensor)
    moved = keep_order(model, ref, f"insert_node: {reads} is computed from what the new {op_type} feeds")
    return f"; {moved} node(s) moved to keep the order" if moved else ""


def _output_retyped(model: onnx.ModelProto, ref, tensor: str) -> str:
    """When `tensor`, now written by a new node, is an output of ref's graph: that output
    re-declared as the node now types it (refused where a body's contract fixes another)."""
    g = ref.container
    ks = [k for k, v in enumerate(g.output) if v.name == tensor]
    if not ks:
        return ""
    now = inferred_type(model, ref.path, tensor, forget=True)
    body = body_of(model, ref)
    if body is not None:
        for k in ks:
            check_type_kept(body, k, now, "insert_node", tensor)
    said = retype_output(g, tensor, now, main=not ref.path)
    if said and body is not None:
        said += _holder_outputs_retyped(model, body, ks)
    return said


def _holder_outputs_retyped(model: onnx.ModelProto, body, ks: list[int]) -> str:
    """A body output newly typed: the holder's outputs standing for it (a Loop's or Scan's
    stacked scan output, an If's output) re-declared where the graph around declares them as its
    outputs, on up through the bodies around (their value_info is re-inferred at batch end)."""
    around = body.around(model)
    return "".join(
        _output_retyped(model, around, name) for name in dict.fromkeys(body.outer_output(k) for k in ks) if name
    )


def _with(change: str, imported: str) -> str:
    return f"{change}; {imported}" if imported else change


def _consumer_nodes(model, graph, consumers, tensor) -> list:
    """(position, node) of each node `consumers` names: one reading `tensor` in graph's graph, or
    holding bodies that read it from there."""
    out: list[tuple[int, onnx.NodeProto]] = []
    for key in consumers:
        ref, idx, n, nid = find_node(model, key)
        if ref.path != graph.path or (tensor not in n.input and not captures(n, tensor)):
            raise StudioError(
                "bad_value", f"insert_node: {node_words(n, nid)} does not read {tensor!r} in {where(model, graph)}"
            )
        if all(i != idx for i, _ in out):
            out.append((idx, n))
    return out


@edit_op(
    "set_node_op",
    required("node", NODE, "the node"),
    required("op_type", NAME, "the new operator"),
    optional("domain", STRING, 'its domain ("" is ai.onnx; the node\'s own by default)'),
    optional(
        "attributes",
        Map(ATTRIBUTE_VALUE | NULL, label="an object: attribute name -> value or null"),
        "attributes to set on it, typed from the new operator's schema (one it requires, say); null removes one",
        default={},
    ),
    optional(
        "drop_attributes",
        BOOLEAN,
        "drop the node's attributes the new operator has none of (refused otherwise)",
        default=False,
    ),
)
def set_node_op(model: onnx.ModelProto, op: dict) -> str:
    """Change a node's operator (op_type, and domain) when the new operator's schema at the model's
    opset fits the node: its input/output counts and its attributes. A model-local function's
    domain and name make the node a call of it (its declared attributes are the schema). `attributes` sets some on
    the way (Relu -> Cast needs `to`), null removing one (the new operator's default then
    applies); with drop_attributes, those the new operator lacks go
    (LeakyRelu -> Relu drops `alpha`), each named in the change."""
    from .attributes import new_attribute

    ref, _, node, nid = find_node(model, op["node"])
    op_type = op["op_type"]
    domain = op.get("domain", node.domain)
    trial = onnx.NodeProto()
    trial.CopyFrom(node)
    trial.op_type, trial.domain = op_type, domain
    imported = import_domain(model, ref.container, trial)  # a refusal below drops it with the batch
    schema = node_signature(model, ref.container, trial)
    if schema is None:
        raise StudioError(
            "no_schema",
            f"set_node_op: {domain or 'ai.onnx'}::{op_type} has no schema at this model's opset and is no function of the model",
        )
    n_in, n_out = len(node.input), len(node.output)
    if not schema.min_input <= n_in <= schema.max_input or not schema.min_output <= n_out <= schema.max_output:
        raise StudioError(
            "schema_mismatch",
            f"set_node_op: {op_type} takes {count_range(schema.min_input, schema.max_input, 'input')} and "
            f"{count_range(schema.min_output, schema.max_output, 'output')}; {node_words(node, nid)} has {n_in} and {n_out}",
        )
    given = op["attributes"]
    unknown = [a.name for a in trial.attribute if a.name not in schema.attributes and a.name not in given]
    for i in reversed(range(len(trial.attribute))):
        if trial.attribute[i].name in unknown or trial.attribute[i].name in given:
            del trial.attribute[i]
    for name, value in given.items():
        if value is not None:
            what = f"attribute {name!r} of {op_type}"
            trial.attribute.append(new_attribute(model, ref.container, trial, name, value, None, what))
    missing = [k for k in schema.required if k not in {x.name for x in trial.attribute}]
    problems = [] if op["drop_attributes"] or not unknown else [f"has no attribute {', '.join(map(repr, unknown))}"]
    if missing:
        problems.append(f"requires attribute(s) {', '.join(map(repr, missing))}")
    if problems:
        # both said at once: dropping one and then hearing of the other is two round trips
        raise StudioError("schema_mismatch", f"set_node_op: {op_type} {' and '.join(problems)}")
    was = node_words(node, nid)
    set_ = [k for k, v in given.items() if v is not None]
    removed = [a.name for a in node.attribute if given.get(a.name, 0) is None]
    node.CopyFrom(trial)
    dropped = f"; dropped its {', '.join(map(repr, unknown))}" if unknown else ""
    said = (f"; set {', '.join(map(repr, set_))}" if set_ else "") + (
        f"; removed {', '.join(map(repr, removed))}" if removed else ""
    )
    return _with(f"{was} is now {domain or 'ai.onnx'}::{op_type}{dropped}{said}", imported)
