"""Rewiring: point one input of a node at another tensor, add a node that reads tensors already
there. Both work in any graph (subgraphs and model functions too) and keep the node order a
topological one, moving as few nodes as needed."""

from __future__ import annotations

import bisect

import onnx
from onnx import defs

from ..errors import NotFound, StudioError
from ..onnx_io.address import GraphRef, node_id, resolve_graph
from ..onnx_io.traverse import op_schema
from ..onnx_io.traverse import topological_order as nodes_in_order
from .arity import check_input_count, count_range, node_signature
from .bodies import where
from .domains import import_domain, new_node
from .field_types import ATTRIBUTE_VALUE, GRAPH_PATH, NAME, NODE, STRING
from .jsontypes import Array, Integer, Map, optional, required
from .locate import find_node, node_words
from .names import all_names, fresh_name
from .registry import edit_op

Container = onnx.GraphProto | onnx.FunctionProto


def _defined_here(c: Container) -> set[str]:
    """The values a graph or function defines itself: its inputs, initializers, nodes' outputs."""
    if isinstance(c, onnx.FunctionProto):
        names = set(c.input)
    else:
        names = {v.name for v in c.input} | {t.name for t in c.initializer}
        names |= {s.values.name for s in c.sparse_initializer}
    names.update(x for n in c.node for x in n.output)
    names.discard("")
    return names


def _scopes(model: onnx.ModelProto, ref: GraphRef) -> list[Container]:
    """ref's graph, then each graph enclosing it out to the main graph (or function)."""
    return [ref.container, *(resolve_graph(model, c["path"]).container for c in reversed(ref.crumbs[:-1]))]


def _visible(model: onnx.ModelProto, ref: GraphRef) -> set[str]:
    """What a node of ref's graph may read: its own values and its enclosing graphs' (a subgraph
    reads the outer scope by name)."""
    return set().union(*(_defined_here(c) for c in _scopes(model, ref)))


def first_unknown(model: onnx.ModelProto, ref: GraphRef, names) -> str | None:
    """The first of `names` a node of ref's graph can't read (no value of it or a graph around
    it); "" (an input left out) is no name."""
    visible = _visible(model, ref)
    return next((x for x in names if x and x not in visible), None)


def _taken(model: onnx.ModelProto, ref: GraphRef) -> set[str]:
    """Names a new value of ref's graph must not take."""
    if isinstance(ref.container, onnx.FunctionProto):
        f = ref.container
        return set(f.input) | set(f.output) | {x for n in f.node for x in (*n.input, *n.output)}
    return all_names(model.graph)


def _where(model: onnx.ModelProto, ref: GraphRef) -> str:
    return "the main graph" if not ref.path else where(model, ref)  # nodes by name: while/body


def topological_order(c: Container) -> list[int] | None:
    """c's node positions in a topological order as close to the present one as can be
    (traverse.topological_order); None when the nodes read each other in a cycle."""
    return nodes_in_order(list(c.node))


def _reorder(c: Container, order: list[int]) -> int:
    """Put c's nodes in `order`; the number of nodes that moved (the fewest that, taken out and
    put back elsewhere, give that order: those off its longest run kept in the old order)."""
    if order == list(range(len(c.node))):
        return 0
    nodes = [onnx.NodeProto() for _ in order]
    for new, old in zip(nodes, order, strict=True):
        new.CopyFrom(c.node[old])
    del c.node[:]
    c.node.extend(nodes)
    tails: list[int] = []  # longest increasing subsequence, patience style
    for i in order:
        k = bisect.bisect_left(tails, i)
        tails[k : k + 1] = [i]
    return len(order) - len(tails)


def keep_topological_order(c: Container, cause: str = "the nodes read each other") -> int:
    """Put c's nodes back in a topological order (topological_order); the number moved. A cycle
    is refused, with `cause` as its first words."""
    order = topological_order(c)
    if order is None:
        raise StudioError("cycle", f"{cause}: reading it there makes a cycle")
    return _reorder(c, order)


def keep_order(model: onnx.ModelProto, ref: GraphRef, cause: str) -> int:
    """keep_topological_order for ref's graph and every graph around it (a subgraph's reads
    order the graph holding it), innermost first."""
    return sum(keep_topological_order(c, cause) for c in _scopes(model, ref))


def _input_param(schema: defs.OpSchema | None, index: int) -> tuple[str, bool] | None:
    """(formal name, optional?) of input `index` under the schema, None past its last input."""
    if schema is None:
        return None
    params = list(schema.inputs)
    if not params:
        return None
    param = params[min(index, len(params) - 1)]
    if index >= len(params) and param.option != defs.OpSchema.FormalParameterOption.Variadic:
        return None
    return param.name, param.option == defs.OpSchema.FormalParameterOption.Optional


@edit_op(
    "set_node_input",
    required("node", NODE, "the node"),
    required("index", Integer(minimum=0), "which of its inputs (0 the first; its input count adds one)"),
    required("tensor", STRING, 'the tensor it reads there ("" leaves an optional input out)'),
)
def set_node_input(model: onnx.ModelProto, op: dict) -> str:
    """Make one input of a node read another tensor: any value its graph (or an enclosing one)
    has — a graph input, an initializer, another node's output. The index one past its last input
    adds an optional input; "" leaves an optional input out. The nodes are put back in an order
    where each comes after what it reads, moving only those that must; a tensor computed from this
    node's own outputs would make a cycle and is refused."""
    ref, _, node, nid = find_node(model, op["node"])
    index, tensor = op["index"], op["tensor"]
    who = node_words(node, nid)
    if index > len(node.input):
        raise StudioError(
            "bad_value", f"set_node_input: {who} has {len(node.input)} input(s); index {index} is past the next one"
        )
    schema = op_schema(model, ref.container, node)
    param = _input_param(schema, index)
    if schema is not None and param is None:
        raise StudioError("schema_mismatch", f"set_node_input: {node.op_type} has no input {index}")
    called = node_signature(model, ref.container, node) if schema is None else None
    if called is not None and index >= called.max_input:  # a call: its function's inputs
        takes = count_range(0, called.max_input, "input")
        raise StudioError(
            "schema_mismatch", f"set_node_input: function {node.op_type} takes {takes}: it has no input {index}"
        )
    if tensor and tensor in node.output:
        raise StudioError("cycle", f"set_node_input: {who} can't read its own output {tensor!r}")
    if tensor and tensor not in _visible(model, ref):
        raise NotFound("unknown_tensor", f"set_node_input: no tensor {tensor!r} in {_where(model, ref)} or around it")
    if not tensor and param is not None and not param[1]:
        raise StudioError(
            "schema_mismatch", f"set_node_input: input {index} ({param[0]}) of {node.op_type} is required"
        )
    was = node.input[index] if index < len(node.input) else ""
    if tensor == was:
        return f"{who} input {index} already reads {tensor!r}"
    if index == len(node.input):
        node.input.append(tensor)
    else:
        node.input[index] = tensor
    while node.input and not node.input[-1]:  # trailing empty inputs are just left out
        node.input.pop()
    moved = keep_order(model, ref, f"set_node_input: {tensor!r} is computed from {who}'s outputs")
    what = f"now reads {tensor!r}" if tensor else "is left out"
    out = f"{who} input {index} {what}" + (f" (was {was!r})" if was else "")
    return out + (f"; {moved} node(s) moved to keep the order" if moved else "")


@edit_op(
    "add_node",
    required("op_type", NAME, "the new node's operator"),
    optional("domain", STRING, 'its domain ("" is ai.onnx)', default=""),
    optional("name", STRING, "its name (unique in its graph)", default=""),
    optional(
        "inputs", Array(STRING, label="an array of tensor names"), 'the tensors it reads ("" skips one)', default=[]
    ),
    optional(
        "outputs",
        Array(NAME, label="an array of new tensor names"),
        "the names it writes (fresh ones, as many as the operator's schema needs, if absent)",
    ),
    optional(
        "attributes",
        Map(ATTRIBUTE_VALUE, label="an object: attribute name -> value"),
        "its attributes, typed from the operator schema",
        default={},
    ),
    optional("graph", GRAPH_PATH, "the graph it goes in", default=""),
)
def add_node(model: onnx.ModelProto, op: dict) -> str:
    """Add a node of any operator reading tensors the graph already has and writing new ones;
    nothing else is rewired (connect its outputs with set_node_input or add_output). It goes at
    the end of its graph, so every other node there keeps its place and id (a graph around it is
    reordered only when the node reads what that graph computes after its holder). Its domain is
    imported as insert_node's is, by its function too when it goes in one."""
    from .attributes import new_attribute

    ref = resolve_graph(model, op["graph"])
    c = ref.container
    node = new_node(op["op_type"], op["domain"], op["name"])
    if node.name and any(n.name == node.name for n in c.node):
        raise StudioError("duplicate_name", f"add_node: {_where(model, ref)} already has a node named {node.name!r}")
    unknown = first_unknown(model, ref, op["inputs"])
    if unknown is not None:
        raise NotFound("unknown_tensor", f"add_node: no tensor {unknown!r} in {_where(model, ref)} or around it")
    node.input.extend(op["inputs"])
    imported = import_domain(model, c, node)  # before its attributes: they are typed from its schema
    check_input_count(model, c, node, "add_node")
    for attr_name, value in op["attributes"].items():
        node.attribute.append(new_attribute(model, c, node, attr_name, value, None))
    taken = _taken(model, ref)
    outputs = op.get("outputs")
    if outputs is None:
        schema = op_schema(model, c, node)
        count = max(1, schema.min_output) if schema is not None else 1
        base = node.name or op["op_type"].lower()
        outputs = []
        for k in range(count):
            outputs.append(fresh_name(model, f"{base}_out" if count == 1 else f"{base}_out{k}", taken))
            taken.add(outputs[-1])
    else:
        schema = op_schema(model, c, node)
        if schema is not None and not schema.min_output <= len(outputs) <= schema.max_output:
            # said before the names are looked at: 100,000 outputs once took minutes to refuse
            takes = count_range(schema.min_output, schema.max_output, "output")
            raise StudioError("schema_mismatch", f"add_node: {node.op_type} takes {takes}; got {len(outputs)}")
        seen: set[str] = set()
        for x in outputs:  # a set, not outputs.count per name: quadratic on a long list
            if x in taken or x in seen:
                raise StudioError("name_taken", f"add_node: {x!r} is already used")
            seen.add(x)
    node.output.extend(outputs)
    c.node.append(node)
    # its own graph's order holds (it comes last); one around it may not, when it reads from there
    moved = keep_order(model, ref, f"add_node: {node.op_type} reads what its graph's holder computes")
    nid = node_id(ref.path, len(c.node) - 1)
    reads = ", ".join(map(repr, filter(None, op["inputs"]))) or "nothing"
    writes = ", ".join(map(repr, outputs))
    out = f"added {node_words(node, nid)} in {_where(model, ref)}, reading {reads}, writing {writes}"
    out += f"; {imported}" if imported else ""
    return out + (f"; {moved} node(s) moved to keep the order" if moved else "")
