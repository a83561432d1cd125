"""Graph JSON: the nodes, inputs, outputs, initializers and value_info of one graph or function."""
from __future__ import annotations

import onnx

from google.protobuf.json_format import MessageToDict

from ..onnx_io.address import join, node_id, resolve_graph, subgraph_path
from ..onnx_io.inference import inferred_value_info
from .scopes import node_scope
from .values import (attribute_json, sparse_brief, tensor_brief, text, value_info_json)

META_CHARS = 160
BULKY_METADATA = {"pkg.torch.onnx.stack_trace", "pkg.torch.onnx.fx_node", "pkg.torch.onnx.class_hierarchy",
                  "pkg.torch.onnx.name_scopes", "namespace"}


def initializer_ref(graph_path: str, name: str) -> str:
    """Tensor ref of an initializer: its bare name in the main graph, else `@<path>:<name>`."""
    return name if graph_path == "" else f"@{graph_path}:{name}"


def graph_view(model: onnx.ModelProto, path: str = "", inferred: onnx.ModelProto | None = None) -> dict:
    """Graph JSON for the graph or function at `path`; `inferred` (the model after shape
    inference) supplies types the model itself doesn't record, as `inferred_value_info`."""
    ref = resolve_graph(model, path)
    g = ref.container
    functions = {(f.domain, f.name, f.overload): f"fn[{k}]" for k, f in enumerate(model.functions)}
    nodes = [_node_json(n, node_id(path, i), functions) for i, n in enumerate(g.node)]
    out = {
        "path": path,
        "kind": "function" if ref.is_function else "graph",
        "name": g.name,
        "doc_string": text(g.doc_string),
        "breadcrumb": ref.crumbs,
        "nodes": nodes,
        "outer_scope": sorted(free_names(g)),
    }
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
            inputs=[value_info_json(v) for v in g.input],
            outputs=[value_info_json(v) for v in g.output],
            initializers=[tensor_brief(t, initializer_ref(path, t.name)) for t in g.initializer]
            + [sparse_brief(s, initializer_ref(path, s.values.name)) for s in g.sparse_initializer],
            value_info=[value_info_json(v) for v in g.value_info],
            inferred_value_info=[value_info_json(v) for v in inferred_value_info(model, inferred, path)],
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
    if n.metadata_props:
        out["metadata_props"] = [{"key": p.key, "value": p.value} for p in n.metadata_props]
    return out


def _node_json(n: onnx.NodeProto, nid: str, functions: dict) -> dict:
    # hot path: runs once per node (40k+ on big models), so each proto field is read once
    attrs = n.attribute
    out = {
        "id": nid,
        "name": n.name,
        "op_type": n.op_type,
        "domain": n.domain,
        "inputs": list(n.input),
        "outputs": list(n.output),
        "attributes": [attribute_json(a, nid) for a in attrs] if attrs else [],
        "subgraphs": _subgraph_paths(attrs, nid) if attrs else [],
    }
    if n.doc_string:
        out["doc_string"] = text(n.doc_string)
    if n.overload:
        out["overload"] = n.overload
    meta = n.metadata_props
    if meta:
        # torch's exporter puts stack traces, FX dumps and scope strings here: tens of MB on a
        # 40k-node graph. The graph JSON cuts long values and leaves out the bulky keys (the
        # scope comes as "scope"); GET .../node?id= gives them all, whole
        out["metadata_props"] = [{"key": p.key, "value": text(p.value, META_CHARS)} for p in meta
                                 if p.key not in BULKY_METADATA]
        out["metadata_count"] = len(meta)
    scope = node_scope(n)
    if scope:
        out["scope"] = scope
    if n.device_configurations:
        out["device_configurations"] = [MessageToDict(c) for c in n.device_configurations]
    if functions:
        fn = functions.get((n.domain, n.op_type, n.overload))
        if fn:
            out["function"] = fn
    return out


def _subgraph_paths(attrs, nid: str) -> list[str]:
    paths = []
    for a in attrs:
        if a.type == onnx.AttributeProto.GRAPH:
            paths.append(subgraph_path(nid, a.name))
        elif a.type == onnx.AttributeProto.GRAPHS:
            paths.extend(subgraph_path(nid, a.name, k) for k in range(len(a.graphs)))
    return paths


def free_names(g, depth: int = 0) -> set[str]:
    """Names the graph (and its nested subgraphs) read but do not define: outer-scope values."""
    if depth > 64:
        return set()
    if isinstance(g, onnx.FunctionProto):
        defined = set(g.input)
    else:
        defined = {v.name for v in g.input} | {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
    used: set[str] = set()
    for n in g.node:
        used.update(n.input)
        defined.update(n.output)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                used |= free_names(a.g, depth + 1)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    used |= free_names(sub, depth + 1)
    used.discard("")
    return used - defined


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
