"""Graph JSON: the nodes, inputs, outputs, initializers and value_info of one graph or function."""
from __future__ import annotations

import gc

import onnx

from google.protobuf.json_format import MessageToDict

from ..onnx_io.address import join, resolve_graph
from ..onnx_io.inference import inferred_value_info
from .scopes import ScopeTable, node_scope
from .values import (attribute_json, sparse_brief, tensor_brief, text, value_info_json)



def initializer_ref(graph_path: str, name: str) -> str:
    """Tensor ref of an initializer: its bare name in the main graph, else `@<path>:<name>`."""
    return name if graph_path == "" else f"@{graph_path}:{name}"


def graph_view(model: onnx.ModelProto, path: str = "", inferred: onnx.ModelProto | None = None) -> dict:
    """Graph JSON for the graph or function at `path`; `inferred` (the model after shape
    inference) supplies types the model itself doesn't record, as `inferred_value_info`."""
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


def _graph_view(model: onnx.ModelProto, path: str, inferred: onnx.ModelProto | None) -> dict:
    ref = resolve_graph(model, path)
    g = ref.container
    functions = {(f.domain, f.name, f.overload): f"fn[{k}]" for k, f in enumerate(model.functions)}
    scopes = ScopeTable()
    # only a graph held by a node attribute has an enclosing scope to read from; what the main
    # graph, a function body or a training graph reads and doesn't define is just dangling
    nested = "/" in path
    reads: set[str] | None = set() if nested else None
    nodes = _nodes_json(g.node, path, functions, scopes, reads)
    out = {
        "path": path,
        "kind": "function" if ref.is_function else "graph",
        "name": g.name,
        "doc_string": text(g.doc_string),
        "breadcrumb": ref.crumbs,
        "nodes": nodes,
        "scopes": scopes.scopes,
        "outer_scope": sorted(_unbound(g, reads)) if nested else [],
    }
    types: dict = {}
    if ref.is_function:
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
        out.update(
            inputs=[value_info_json(v, types) for v in g.input],
            outputs=[value_info_json(v, types) for v in g.output],
            initializers=[tensor_brief(t, initializer_ref(path, t.name)) for t in g.initializer]
            + [sparse_brief(s, initializer_ref(path, s.values.name)) for s in g.sparse_initializer],
            value_info=[value_info_json(v, types) for v in g.value_info],
            inferred_value_info=[value_info_json(v, types) for v in inferred_value_info(model, inferred, path)],
            metadata_props=[{"key": p.key, "value": p.value} for p in g.metadata_props],
            quantization_annotation=[{"tensor_name": a.tensor_name, "quant_parameter_tensor_names":
                                      [{"key": p.key, "value": p.value} for p in a.quant_parameter_tensor_names]}
                                     for a in g.quantization_annotation],
        )
    return out


def node_view(model: onnx.ModelProto, nid: str) -> dict:
    """One node's JSON in full: every metadata entry, scope as levels, doc_string uncut."""
    from ..onnx_io.address import resolve_node

    _, _, n = resolve_node(model, nid)
    functions = {(f.domain, f.name, f.overload): f"fn[{k}]" for k, f in enumerate(model.functions)}
    attributes = [attribute_json(a, nid) for a in n.attribute]
    out = {"id": nid, "name": n.name, "op_type": n.op_type, "domain": n.domain, "inputs": list(n.input),
           "outputs": list(n.output), "attributes": attributes, "subgraphs": _subgraph_paths(attributes)}
    if n.metadata_props:
        out["metadata_props"] = [{"key": p.key, "value": p.value} for p in n.metadata_props]
    scope = node_scope(n)
    if scope:
        out["scope"] = scope
    _add_rare_fields(n, out, functions)
    if n.doc_string:
        out["doc_string"] = text(n.doc_string, 1_000_000)
    return out


_EMPTY = ()  # one shared empty array for the nodes' JSON: only ever serialized, never changed


def _nodes_json(nodes, path: str, functions: dict, scopes: ScopeTable, reads: set | None) -> list[dict]:
    """The graph JSON's nodes. Hot path: 40k+ nodes on big models, where reading proto fields
    is most of the cost, so each field is read once and repeated values are built once.
    torch's exporter writes five metadata entries a node (stack trace, FX dump, scope strings:
    tens of MB on a 40k-node graph); a node here says how many it has and its scope, and
    GET .../node?id= gives them."""
    prefix = f"{path}/n" if path else "n"
    attr_cache: dict = {}
    of_node = scopes.of_node
    out = []
    append = out.append
    for i, n in enumerate(nodes):
        nid = prefix + str(i)
        attrs = n.attribute
        subgraphs = _EMPTY
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
                if reads is not None:
                    for sub in _subgraphs(attrs):
                        reads |= free_names(sub, 1)
        else:
            attributes = _EMPTY
        name = n.name
        inputs = n.input[:]  # slicing copies a repeated field faster than list()
        j = {"id": nid, "name": name, "op_type": n.op_type, "domain": n.domain, "inputs": inputs,
             "outputs": n.output[:], "attributes": attributes, "subgraphs": subgraphs}
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
        out["device_configurations"] = [MessageToDict(c) for c in n.device_configurations]
    if functions:
        fn = functions.get((n.domain, n.op_type, n.overload))
        if fn:
            out["function"] = fn


_NODE_BOUND = {onnx.AttributeProto.TENSOR, onnx.AttributeProto.SPARSE_TENSOR, onnx.AttributeProto.TENSORS,
               onnx.AttributeProto.SPARSE_TENSORS, onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS}


def _subgraphs(attrs):
    for a in attrs:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _unbound(g, reads: set[str]) -> set[str]:
    """Names read by a graph's nodes (and their subgraphs) that the graph does not define."""
    if isinstance(g, onnx.FunctionProto):
        defined = set(g.input)
    else:
        defined = {v.name for v in g.input} | {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
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


def free_names(g, depth: int = 0) -> set[str]:
    """Names the graph (and its nested subgraphs) read but do not define: outer-scope values."""
    if depth > 64:
        return set()
    used: set[str] = set()
    for n in g.node:
        used.update(n.input)
        for sub in _subgraphs(n.attribute):
            used |= free_names(sub, depth + 1)
    return _unbound(g, used)


def count_subgraphs(g, depth: int = 0) -> int:
    if depth > 64:
        return 0
    total = 0
    for n in g.node:
        for a in n.attribute:
            subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs) if a.type == onnx.AttributeProto.GRAPHS else []
            for sub in subs:
                total += 1 + count_subgraphs(sub, depth + 1)
    return total
