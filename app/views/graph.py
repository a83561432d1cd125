"""Graph JSON: the nodes, inputs, outputs, initializers and value_info of one graph or function."""

from __future__ import annotations

import gc
import struct

import onnx
import orjson

from ..onnx_io.address import join, named_address, node_id, resolve_graph, resolve_node, subgraph_path
from ..onnx_io.dim_names import dim_expressions
from ..onnx_io.inference import inferred_value_info
from ..onnx_io.traverse import fold, graphs_within, node_graphs, opset_version
from ..onnx_io.traverse import subgraphs as held_graphs
from . import forked
from .loop_roles import body_roles, holds_roles, node_roles
from .message_json import message_json
from .scopes import ScopeTable, initializer_names, scope_by_weights, scope_in_graph
from .values import attribute_json, few_values, sparse_brief, tensor_brief, text, value_info_json


def _initializer_json(t, ref: str) -> dict:
    """An initializer as the drawing lists it, with its values when they are few (a threshold,
    a shape): its readers' boxes show "= 0.45" as they show a Constant's value."""
    out = tensor_brief(t, ref)
    few = few_values(t)
    if few is not None:
        out["values"] = few
    return out


def initializer_ref(graph_path: str, name: str) -> str:
    """Tensor ref of an initializer: its bare name in the main graph, else `@<path>:<name>`."""
    return name if graph_path == "" else f"@{graph_path}:{name}"


def graph_view(model: onnx.ModelProto, path: str = "", inferred: onnx.ModelProto | None = None) -> dict:
    """Graph JSON for the graph or function at `path`; `inferred` (the model after shape
    inference) supplies types the model itself doesn't record, as `inferred_value_info`.
    For orjson.dumps: a big graph's first nodes and value_info are orjson.Fragments."""
    # builds hundreds of thousands of small containers at once on big graphs: the cyclic GC
    # would scan them again and again (40% of the time on a 44k-node graph), and none of them
    # can form a cycle
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        return _graph_view(model, path, inferred)
    finally:
        if gc_was_on:
            gc.enable()


SPLIT_NODES = 20_000  # a graph this big is built by two processes: this one and a forked child
CHILD_SHARE = (
    0.3  # of its nodes, built by the child (which builds value_info too; it runs ~1.4x slower, copying on write)
)


def _graph_view(model: onnx.ModelProto, path: str, inferred: onnx.ModelProto | None) -> dict:
    ref = resolve_graph(model, path)
    path, g = ref.path, ref.container  # asked for by name or position: answered by position
    functions = _function_refs(model)
    scopes = ScopeTable()
    # only a graph held by a node attribute has an enclosing scope to read from, and a training
    # graph the main graph's initializers; what the main graph or a function body reads and
    # doesn't define is just dangling
    nested = "/" in path
    training = path.startswith("train[")
    reads: set[str] | None = set() if nested or training else None
    count = len(g.node)
    opset = opset_version(model, g, "")  # a Scan's roles differ at opset 8
    child, stop = None, 0  # the child builds nodes [0, stop) and value_info, this process the rest
    if count >= SPLIT_NODES and not ref.is_function and not nested:
        stop = int(count * CHILD_SHARE)
        child = forked.start(lambda: _head_json(g, path, functions, stop, opset))
        if child is None:
            stop = 0
    try:
        nodes = _nodes_json(g.node[stop:] if stop else g.node, path, functions, scopes, reads, stop, opset)
        if not stop:  # (a graph built in two processes keeps its nodes' own scopes)
            scope_by_weights(nodes, g, scopes)
        out: dict = {
            "path": path,
            "address": named_address(model, path),
            "kind": "function" if ref.is_function else "graph",
            "name": g.name,
            "doc_string": text(g.doc_string),
            "breadcrumb": ref.crumbs,
            "nodes": nodes,
            "scopes": scopes.scopes,
            "outer_scope": sorted(_outer_scope(model, g, reads, training)) if reads is not None else [],
        }
        types: dict = {}
        out["outer_value_info"] = _outer_types(model, ref, inferred, out["outer_scope"], types)
        if isinstance(g, onnx.FunctionProto):  # ref.is_function, in a form mypy narrows g by
            out.update(
                domain=g.domain,
                overload=g.overload,
                inputs=[{"name": n, "dtype": None, "shape": None, "type": {"kind": "unknown"}} for n in g.input],
                outputs=[{"name": n, "dtype": None, "shape": None, "type": {"kind": "unknown"}} for n in g.output],
                initializers=[],
                value_info=[value_info_json(v) for v in g.value_info],
                attribute_names=list(g.attribute),
                attribute_defaults=[attribute_json(a, join(path, "default")) for a in g.attribute_proto],
                opset_import=[{"domain": o.domain, "version": o.version} for o in g.opset_import],
                metadata_props=[{"key": p.key, "value": p.value} for p in g.metadata_props],
            )
        else:
            inputs = [value_info_json(v, types) for v in g.input]
            outputs = [value_info_json(v, types) for v in g.output]
            if nested:
                _add_body_roles(model, path, inputs, outputs)
            out.update(
                inputs=inputs,
                outputs=outputs,
                initializers=[_initializer_json(t, initializer_ref(path, t.name)) for t in g.initializer]
                + [sparse_brief(s, initializer_ref(path, s.values.name)) for s in g.sparse_initializer],
                value_info=None if stop else [value_info_json(v, types) for v in g.value_info],  # else the child's
                inferred_value_info=[value_info_json(v, types) for v in inferred_value_info(model, inferred, path)],
                metadata_props=[{"key": p.key, "value": p.value} for p in g.metadata_props],
                # the inputs' dims that are sums of the others (a decoder's mask): Run asks for those
                dim_expressions=_dim_expressions(g, inputs) if not path else {},
                quantization_annotation=[
                    {
                        "tensor_name": a.tensor_name,
                        "quant_parameter_tensor_names": [
                            {"key": p.key, "value": p.value} for p in a.quant_parameter_tensor_names
                        ],
                    }
                    for a in g.quantization_annotation
                ],
            )
        if stop:  # last, so the child has had all of the above to finish in
            head = _Head.read((child and child.result()) or _head_json(g, path, functions, stop, opset))
            out["scopes"] = head.join(nodes, scopes.scopes)
            out["value_info"] = orjson.Fragment(head.value_info)
        return out
    finally:
        if child:
            child.close()  # a child whose result was not taken (this build failed) is stopped


def _add_body_roles(model: onnx.ModelProto, path: str, inputs: list[dict], outputs: list[dict]) -> None:
    """Each input and output of a Loop's or Scan's body, an If's branch, gets its `role`
    (loop_roles.py): the iteration number, the condition, a carried value and what it pairs
    with, a scanned input, a scan output."""
    nid = path.rpartition("/")[0]
    around, _, holder = resolve_node(model, nid)
    if not holds_roles(holder):
        return
    attr = next((a for a, item, _ in node_graphs(holder) if subgraph_path(nid, a, item) == path), None)
    roles = body_roles(holder, attr, opset_version(model, around.container, holder.domain)) if attr else None
    if roles is None:
        return
    for values, said in ((inputs, roles["inputs"]), (outputs, roles["outputs"])):
        for v, role in zip(values, said, strict=False):
            if role is not None:
                v["role"] = role


def _head_json(g, path: str, functions: dict, stop: int, opset: int | None = None) -> bytes:
    """The forked child's share of a big graph's JSON: its first `stop` nodes (with their own
    scope table) and its value_info, framed for _Head.read."""
    scopes = ScopeTable()
    nodes = orjson.dumps(_nodes_json(g.node[:stop], path, functions, scopes, None, 0, opset))
    types: dict = {}
    infos = orjson.dumps([value_info_json(v, types) for v in g.value_info])
    table = orjson.dumps(scopes.scopes)
    return b"".join([struct.pack("<QQ", len(table), len(nodes)), table, nodes, infos])


class _Head:
    """The child's share, as JSON not parsed again but spliced into the graph JSON."""

    def __init__(self, scopes: list, nodes: bytes, value_info: bytes):
        self.scopes, self.nodes, self.value_info = scopes, nodes, value_info

    @classmethod
    def read(cls, data: bytes) -> _Head:
        a, b = struct.unpack_from("<QQ", data)
        at = struct.calcsize("<QQ")
        return cls(orjson.loads(data[at : at + a]), data[at + a : at + a + b], data[at + a + b :])

    def join(self, nodes: list, own_scopes: list) -> list:
        """Put the head's nodes before `nodes` and renumber `nodes`' scopes (indices into
        `own_scopes`) into the head's table, extended by the scopes it lacks: the numbering a
        single pass in node order gives. Returns the joined table."""
        table = list(self.scopes)
        known = {tuple(s): k for k, s in enumerate(table)}
        renumber = []
        for levels in own_scopes:
            k = known.setdefault(tuple(levels), len(table))
            if k == len(table):
                table.append(levels)
            renumber.append(k)
        if renumber != list(range(len(renumber))):
            for j in nodes:
                k = j.get("scope")
                if k is not None:
                    j["scope"] = renumber[k]
        if self.nodes != b"[]":  # its items, written into the array as they are
            nodes.insert(0, orjson.Fragment(self.nodes[1:-1]))
        return table


def _dim_expressions(g: onnx.GraphProto, inputs: list[dict]) -> dict[str, list[str]]:
    """dim_names.dim_expressions of the inputs a caller feeds (not initializers)."""
    weights = initializer_names(g)
    return dim_expressions(v["shape"] for v in inputs if v["name"] not in weights and v["type"]["kind"] == "tensor")


def _function_refs(model: onnx.ModelProto) -> dict:
    """(domain, name, overload) -> ref of each model-local function, for the nodes calling one."""
    refs: dict = {}
    for k, f in enumerate(model.functions):  # of two with one key, the first (function_calls.functions_by_key)
        refs.setdefault((f.domain, f.name, f.overload), f"fn[{k}]")
    return refs


def node_view(model: onnx.ModelProto, nid: str) -> dict:
    """One node's JSON in full: every metadata entry, scope as levels, doc_string uncut."""
    ref, index, n = resolve_node(model, nid)
    nid = node_id(ref.path, index)  # asked for by name or position: answered by position
    functions = _function_refs(model)
    attributes = [attribute_json(a, nid) for a in n.attribute]
    out: dict = {
        "id": nid,
        "address": named_address(model, nid),
        "name": n.name,
        "op_type": n.op_type,
        "domain": n.domain,
        "inputs": list(n.input),
        "outputs": list(n.output),
        "attributes": attributes,
        "subgraphs": _subgraph_paths(attributes),
    }
    if n.metadata_props:
        out["metadata_props"] = [{"key": p.key, "value": p.value} for p in n.metadata_props]
    if holds_roles(n):
        out["roles"] = node_roles(n, opset_version(model, ref.container, ""))
    scope = scope_in_graph(ref.container, index)
    if scope:
        out["scope"] = scope
    _add_rare_fields(n, out, functions)
    if n.doc_string:
        out["doc_string"] = text(n.doc_string, 1_000_000)
    return out


_EMPTY = ()  # one shared empty array for the nodes' JSON: only ever serialized, never changed


def _nodes_json(
    nodes, path: str, functions: dict, scopes: ScopeTable, reads: set | None, start: int = 0, opset: int | None = None
) -> list[dict]:
    """The graph JSON of `nodes`, the graph's from index `start` on. Hot path: 40k+ nodes on big
    models, where reading proto fields is most of the cost, so each field is read once and
    repeated values are built once.
    torch's exporter writes five metadata entries a node (stack trace, FX dump, scope strings:
    tens of MB on a 40k-node graph); a node here says how many it has and its scope, and
    GET .../node?id= gives them."""
    prefix = f"{path}/n" if path else "n"
    attr_cache: dict = {}
    of_node = scopes.of_node
    out: list[dict] = []
    append = out.append
    for i, n in enumerate(nodes, start):
        nid = prefix + str(i)
        attrs = n.attribute
        subgraphs: list[str] | tuple[()] = _EMPTY
        captures: list[str] | None = None
        attributes: list[dict] | tuple[()]
        if attrs:
            attributes = []
            bound = False
            for a in attrs:
                if a.type in _NODE_BOUND:  # tensors and graphs name their node: never shared
                    attributes.append(attribute_json(a, nid))
                    bound = True
                else:  # a 40k-node graph repeats a few hundred axis/perm/keepdims values
                    key = a.SerializeToString()
                    j = attr_cache.get(key)
                    if j is None:
                        j = attr_cache[key] = attribute_json(a, nid)
                    attributes.append(j)
            if bound:
                subgraphs = _subgraph_paths(attributes)
                captured: set[str] = set()
                for sub in held_graphs(n):
                    captured |= free_names(sub)
                if reads is not None:
                    reads |= captured
                captured.difference_update(n.input)
                if captured:  # what its branches or body read from this graph: drawn as edges too
                    captures = sorted(captured)
        else:
            attributes = _EMPTY
        name = n.name
        inputs = n.input[:]  # slicing copies a repeated field faster than list()
        j = {
            "id": nid,
            "name": name,
            "op_type": n.op_type,
            "domain": n.domain,
            "inputs": inputs,
            "outputs": n.output[:],
            "attributes": attributes,
            "subgraphs": subgraphs,
        }
        if captures:
            j["captures"] = captures
        if subgraphs and holds_roles(n):  # a Loop's, Scan's or If's inputs and outputs: what each is
            j["roles"] = node_roles(n, opset)
        if reads is not None:
            reads.update(inputs)
        meta = n.metadata_props
        if meta:
            j["metadata_count"] = len(meta)
        k = of_node(n, meta)
        if k is not None:
            j["scope"] = k
        if n.doc_string:
            j["doc_string"] = text(n.doc_string)
        _add_rare_fields(n, j, functions)
        append(j)
    return out


def _add_rare_fields(n: onnx.NodeProto, out: dict, functions: dict) -> None:
    if n.overload:
        out["overload"] = n.overload
    if n.device_configurations:
        out["device_configurations"] = [message_json(c) for c in n.device_configurations]
    if functions:
        fn = functions.get((n.domain, n.op_type, n.overload))
        if fn:
            out["function"] = fn


_NODE_BOUND = {
    onnx.AttributeProto.TENSOR,
    onnx.AttributeProto.SPARSE_TENSOR,
    onnx.AttributeProto.TENSORS,
    onnx.AttributeProto.SPARSE_TENSORS,
    onnx.AttributeProto.GRAPH,
    onnx.AttributeProto.GRAPHS,
}


def _outer_scope(model: onnx.ModelProto, g, reads: set[str], training: bool) -> set[str]:
    """What a graph reads from outside it: a nested graph, any name it doesn't define (its
    enclosing graphs do, or nothing does); a training graph, the main graph's initializers."""
    unbound = _unbound(g, reads)
    if not training:
        return unbound
    main = model.graph
    return unbound & ({t.name for t in main.initializer} | {s.values.name for s in main.sparse_initializer})


def _outer_types(model: onnx.ModelProto, ref, inferred: onnx.ModelProto | None, names: list[str], types: dict) -> list:
    """The types of the names a graph reads from outside it, from the graphs enclosing it
    (innermost first; a training graph's: the main graph), as value_info JSON with `from`, the
    path of the graph that defines it: declared types first, then inference's, then an
    initializer's own."""
    left = set(names)
    out = []
    enclosing = [c["path"] for c in reversed(ref.crumbs[:-1])] if "/" in ref.path else [""]
    for path in enclosing:
        if not left:
            break
        g = resolve_graph(model, path).container
        if isinstance(g, onnx.FunctionProto):
            continue
        found: dict[str, onnx.ValueInfoProto] = {}
        typed = [(t.name, t.data_type, list(t.dims)) for t in g.initializer]
        typed += [(s.values.name, s.values.data_type, list(s.dims)) for s in g.sparse_initializer]
        for name, dtype, dims in typed:
            if name in left:
                found[name] = onnx.helper.make_tensor_value_info(name, dtype, dims)
        # a weight (an initializer no input of its graph overrides): its readers' boxes list it,
        # as they list the graph's own (QA31: a merged decoder's branch drew 50 weight boxes)
        overridable = {v.name for v in g.input}
        weights = {
            t.name: _initializer_json(t, initializer_ref(path, t.name))
            for t in g.initializer
            if t.name in left and t.name not in overridable
        }
        for v in [*inferred_value_info(model, inferred, path), *g.value_info, *g.output, *g.input]:
            if v.name in left and v.HasField("type"):
                found[v.name] = v  # the later lists, what the graph declares, win
        for name in sorted(found):
            entry = {**value_info_json(found[name], types), "from": path}
            if name in weights:
                entry["initializer"] = weights[name]
            out.append(entry)
        left -= set(found)
    return out


def _unbound(g, reads: set[str]) -> set[str]:
    """Names read by a graph's nodes (and their subgraphs) that the graph does not define."""
    if isinstance(g, onnx.FunctionProto):
        defined = set(g.input)
    else:
        defined = (
            {v.name for v in g.input} | {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
        )
    for n in g.node:
        defined.update(n.output)
    reads.discard("")
    return reads - defined


def _subgraph_paths(attributes: list[dict]) -> list[str]:
    """Paths of a node's subgraphs, from its attributes' JSON."""
    paths = []
    for a in attributes:
        kind = a["type"]
        if kind == "GRAPH":
            paths.append(a["value"]["path"])
        elif kind == "GRAPHS":
            paths.extend(v["path"] for v in a["value"])
    return paths


def free_names(g) -> set[str]:
    """Names the graph (and its nested subgraphs) read but do not define: outer-scope values."""
    return fold(g, lambda h, inner: _unbound(h, set().union(*inner, *(n.input for n in h.node))))


def count_subgraphs(g) -> int:
    """How many graphs g's nodes hold, at any depth."""
    return sum(1 for _ in graphs_within(g)) - 1
