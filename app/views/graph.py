"""Graph JSON: the nodes, inputs, outputs, initializers and value_info of one graph or function."""
from __future__ import annotations

import gc

import onnx

from google.protobuf.json_format import MessageToDict

from ..onnx_io.address import join, node_id, resolve_graph, subgraph_path
from ..onnx_io.inference import inferred_value_info
from .scopes import NAME_SCOPES, NAMESPACE, ScopeTable, node_scope
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
    attr_cache: dict = {}
    nodes = [_node_json(n, node_id(path, i), functions, scopes, reads, attr_cache) for i, n in enumerate(g.node)]
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
    """One node's JSON in full: metadata and doc_string uncut."""
    from ..onnx_io.address import resolve_node

    _, _, n = resolve_node(model, nid)
    functions = {(f.domain, f.name, f.overload): f"fn[{k}]" for k, f in enumerate(model.functions)}
    out = _node_json(n, nid, functions)
    if n.doc_string:
        out["doc_string"] = text(n.doc_string, 1_000_000)
    return out


def _node_json(n: onnx.NodeProto, nid: str, functions: dict, scopes: ScopeTable | None = None,
               reads: set | None = None, attr_cache: dict | None = None) -> dict:
    # hot path: runs once per node (40k+ on big models), so each proto field is read once
    attrs = n.attribute
    inputs = list(n.input)
    name = n.name
    if not attrs:
        attributes = []
    elif attr_cache is None:
        attributes = [attribute_json(a, nid) for a in attrs]
    else:
        attributes = [_shared_attribute_json(a, nid, attr_cache) for a in attrs]
    out = {
        "id": nid,
        "name": name,
        "op_type": n.op_type,
        "domain": n.domain,
        "inputs": inputs,
        "outputs": list(n.output),
        "attributes": attributes,
        "subgraphs": _subgraph_paths(attributes) if attributes else [],
    }
    if reads is not None:
        reads.update(inputs)
        if attrs:
            for sub in _subgraphs(attrs):
                reads |= free_names(sub, 1)
    if n.doc_string:
        out["doc_string"] = text(n.doc_string)
    if n.overload:
        out["overload"] = n.overload
    meta = n.metadata_props
    if scopes is None:  # one node, asked for whole: every metadata entry, scope as levels
        if meta:
            out["metadata_props"] = [{"key": p.key, "value": p.value} for p in meta]
        scope = node_scope(n)
        if scope:
            out["scope"] = scope
    else:
        # torch's exporter writes five entries a node (stack trace, FX dump, scope strings: tens
        # of MB on a 40k-node graph); the graph JSON says how many there are and the node's scope,
        # and GET .../node?id= gives them
        if meta:
            out["metadata_count"] = len(meta)
            k = scopes.index(name, *_scope_values(meta, scopes))
        else:
            k = scopes.index(name, None, None)
        if k is not None:
            out["scope"] = k
    if n.device_configurations:
        out["device_configurations"] = [MessageToDict(c) for c in n.device_configurations]
    if functions:
        fn = functions.get((n.domain, n.op_type, n.overload))
        if fn:
            out["function"] = fn
    return out


_NODE_BOUND = {onnx.AttributeProto.TENSOR, onnx.AttributeProto.SPARSE_TENSOR, onnx.AttributeProto.TENSORS,
               onnx.AttributeProto.SPARSE_TENSORS, onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS}


def _shared_attribute_json(a: onnx.AttributeProto, nid: str, cache: dict) -> dict:
    """One JSON object per distinct attribute of a graph (a 40k-node graph repeats a few hundred
    axis/perm/keepdims values); tensor and graph attributes name their node, so are never shared."""
    if a.type in _NODE_BOUND:
        return attribute_json(a, nid)
    key = a.SerializeToString()
    out = cache.get(key)
    if out is None:
        out = cache[key] = attribute_json(a, nid)
    return out


def _scope_values(meta, scopes: ScopeTable) -> tuple[str | None, str | None]:
    """(name_scopes, namespace) metadata values of a node. Exporters write the keys in the same
    order on every node, so the position of the last hit is tried first (a node listing the key
    twice, which no exporter does, may get its scope from either entry)."""
    at = scopes.hint
    if at < len(meta):
        p = meta[at]
        if p.key == NAME_SCOPES:
            value = p.value
            if value.startswith("[") and value.endswith("]"):
                return value, None  # well formed: namespace would not be read
    name_scopes = namespace = None
    for k, p in enumerate(meta):
        key = p.key
        if key == NAME_SCOPES and name_scopes is None:
            name_scopes = p.value
            scopes.hint = k
        elif key == NAMESPACE and namespace is None:
            namespace = p.value
    return name_scopes, namespace


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
