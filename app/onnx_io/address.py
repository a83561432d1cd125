"""Stable addresses for graphs and nodes inside a ModelProto.

ONNX names may be empty or repeated, so we address by position:
  graph path  ""                 the main graph
              "n3/body"          the GRAPH attribute `body` of node 3
              "n3/branches[1]"   item 1 of a GRAPHS attribute
              "fn[0]"            model.functions[0]
              "train[0].init"    model.training_info[0].initialization (".algo": algorithm)
  node id     "<graph path>/n<i>" ("n<i>" in the main graph)
Attribute names are percent-encoded when they hold '/', '[', ']', ':', '#' or '%'.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

import onnx

from ..errors import NotFound

MAX_DEPTH = 64  # subgraph nesting we follow; deeper paths are refused
_ROOT_FN = re.compile(r"^fn\[(\d+)\]$")
_ROOT_TRAIN = re.compile(r"^train\[(\d+)\]\.(init|algo)$")
_NODE = re.compile(r"^n(\d+)$")
_ATTR = re.compile(r"^(.+?)(?:\[(\d+)\])?$")


@functools.lru_cache(maxsize=4096)  # a model has few distinct attribute names, used 10^4+ times
def encode_attr(name: str) -> str:
    return quote(name, safe="!$&'()*+,;=@-._~ ")


def join(parent: str, segment: str) -> str:
    return f"{parent}/{segment}" if parent else segment


def node_id(graph_path: str, index: int) -> str:
    return join(graph_path, f"n{index}")


def subgraph_path(node_path: str, attr_name: str, item: int | None = None) -> str:
    seg = encode_attr(attr_name) + (f"[{item}]" if item is not None else "")
    return join(node_path, seg)


@dataclass
class GraphRef:
    """A resolved graph path: the GraphProto or FunctionProto and how we got there."""

    path: str
    container: onnx.GraphProto | onnx.FunctionProto
    crumbs: list  # [{"path", "label"}] from the main graph to here

    @property
    def is_function(self) -> bool:
        return isinstance(self.container, onnx.FunctionProto)


def _segments(path: str) -> list[str]:
    segs = path.split("/") if path else []
    if len(segs) > 2 * MAX_DEPTH + 1:
        raise NotFound("bad_path", f"graph path nests deeper than {MAX_DEPTH} levels")
    return segs


def resolve_graph(model: onnx.ModelProto, path: str) -> GraphRef:
    segs = _segments(path)
    crumbs = [{"path": "", "label": model.graph.name or "main graph"}]
    container: onnx.GraphProto | onnx.FunctionProto = model.graph
    start = 0
    if segs:
        m_fn, m_tr = _ROOT_FN.match(segs[0]), _ROOT_TRAIN.match(segs[0])
        if m_fn:
            k = int(m_fn.group(1))
            if k >= len(model.functions):
                raise NotFound("unknown_graph", f"the model has no function #{k}")
            container = model.functions[k]
            crumbs.append(
                {"path": segs[0], "label": f"function {container.domain}:{container.name}".replace(" :", " ")}
            )
            start = 1
        elif m_tr:
            k, which = int(m_tr.group(1)), m_tr.group(2)
            if k >= len(model.training_info):
                raise NotFound("unknown_graph", f"the model has no training_info #{k}")
            info = model.training_info[k]
            field = "initialization" if which == "init" else "algorithm"
            if not info.HasField(field):
                raise NotFound("unknown_graph", f"training_info #{k} has no {field} graph")
            container = getattr(info, field)
            crumbs.append({"path": segs[0], "label": f"training {k} {field}"})
            start = 1
    here = segs[0] if start else ""
    i = start
    while i < len(segs):
        node = _node_at(container, segs[i], path)
        if i + 1 >= len(segs):
            raise NotFound("bad_path", f"graph path {path!r} ends at a node, not a graph")
        attr_name, item = _parse_attr(segs[i + 1], path)
        sub = _attr_graph(node, attr_name, item, path)
        here = join(join(here, segs[i]), segs[i + 1])
        crumbs.append({"path": here, "label": _crumb_label(node, segs[i], attr_name, item)})
        container = sub
        i += 2
    return GraphRef(path, container, crumbs)


def _crumb_label(node: onnx.NodeProto, node_seg: str, attr_name: str, item: int | None) -> str:
    """The breadcrumb label of a subgraph: "If If_0 · then_branch", "Scan n3 · body", "X n1 · branches[1]"."""
    return f"{node.op_type} {node.name or node_seg} · {attr_name}" + (f"[{item}]" if item is not None else "")


def walk_graphs(model: onnx.ModelProto):
    """Every graph and function with its path, as GraphRefs, depth first: the main graph and its
    subgraphs (If/Loop/Scan bodies, any GRAPH or GRAPHS attribute, at any depth up to MAX_DEPTH),
    then each model-local function and its subgraphs, then the training graphs. The one walk over
    a model's graphs (search and edits use it); each GraphRef's crumbs are resolve_graph's."""
    roots = [""] + [f"fn[{k}]" for k in range(len(model.functions))]
    for k, t in enumerate(model.training_info):
        if t.HasField("initialization"):
            roots.append(f"train[{k}].init")
        if t.HasField("algorithm"):
            roots.append(f"train[{k}].algo")
    stack = [(resolve_graph(model, p), 0) for p in reversed(roots)]
    graph_types = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    while stack:
        ref, depth = stack.pop()
        yield ref
        if depth >= MAX_DEPTH:  # deeper paths are refused by resolve_graph: not addressable
            continue
        subs = []
        for i, n in enumerate(ref.container.node):
            for a in n.attribute:
                if a.type not in graph_types:
                    continue
                nid = node_id(ref.path, i)
                node_seg = f"n{i}"
                graphs: list[tuple[int | None, onnx.GraphProto]] = (
                    [(None, a.g)] if a.type == onnx.AttributeProto.GRAPH else list(enumerate(a.graphs))
                )
                for item, g in graphs:
                    path = subgraph_path(nid, a.name, item)
                    crumbs = [*ref.crumbs, {"path": path, "label": _crumb_label(n, node_seg, a.name, item)}]
                    subs.append((GraphRef(path, g, crumbs), depth + 1))
        stack.extend(reversed(subs))


def resolve_node(model: onnx.ModelProto, nid: str) -> tuple[GraphRef, int, onnx.NodeProto]:
    graph_path, _, last = nid.rpartition("/")
    ref = resolve_graph(model, graph_path)
    m = _NODE.match(last)
    if not m:
        raise NotFound("unknown_node", f"{nid!r} is not a node id")
    idx = int(m.group(1))
    if idx >= len(ref.container.node):
        raise NotFound("unknown_node", f"no node {nid!r}: that graph has {len(ref.container.node)} nodes")
    return ref, idx, ref.container.node[idx]


def _node_at(container, seg: str, path: str) -> onnx.NodeProto:
    m = _NODE.match(seg)
    if not m or int(m.group(1)) >= len(container.node):
        raise NotFound("unknown_graph", f"graph path {path!r}: {seg!r} is not a node of that graph")
    return container.node[int(m.group(1))]


def _parse_attr(seg: str, path: str) -> tuple[str, int | None]:
    m = _ATTR.match(seg)
    if not m:
        raise NotFound("bad_path", f"graph path {path!r}: bad segment {seg!r}")
    return unquote(m.group(1)), (int(m.group(2)) if m.group(2) is not None else None)


def _attr_graph(node: onnx.NodeProto, name: str, item: int | None, path: str) -> onnx.GraphProto:
    for attr in node.attribute:
        if attr.name != name:
            continue
        if item is None and attr.type == onnx.AttributeProto.GRAPH:
            return attr.g
        if item is not None and attr.type == onnx.AttributeProto.GRAPHS and item < len(attr.graphs):
            return attr.graphs[item]
    raise NotFound(
        "unknown_graph",
        f"graph path {path!r}: node has no graph attribute {name!r}" + (f"[{item}]" if item is not None else ""),
    )


def resolve_tensor(model: onnx.ModelProto, ref: str) -> onnx.TensorProto | onnx.SparseTensorProto:
    """A tensor by ref: a main-graph initializer name, `@<graph path>:<name>` (an initializer of
    another graph) or `@<node id>#<attr>[k]` (a TENSOR/TENSORS/SPARSE_TENSOR(S) attribute)."""
    found = _initializer(model.graph, ref)
    if found is not None:
        return found
    if ref.startswith("@"):
        body = ref[1:]
        if "#" in body:
            nid, _, attr_seg = body.rpartition("#")
            _, _, node = resolve_node(model, nid)
            name, item = _parse_attr(attr_seg, ref)
            for attr in node.attribute:
                if attr.name != name:
                    continue
                if item is None and attr.type == onnx.AttributeProto.TENSOR:
                    return attr.t
                if item is None and attr.type == onnx.AttributeProto.SPARSE_TENSOR:
                    return attr.sparse_tensor
                if item is not None and attr.type == onnx.AttributeProto.TENSORS and item < len(attr.tensors):
                    return attr.tensors[item]
                if (
                    item is not None
                    and attr.type == onnx.AttributeProto.SPARSE_TENSORS
                    and item < len(attr.sparse_tensors)
                ):
                    return attr.sparse_tensors[item]
            raise NotFound("unknown_tensor", f"node {nid!r} has no tensor attribute {attr_seg!r}")
        if ":" in body:
            path, _, name = body.partition(":")
            g = resolve_graph(model, path).container
            found = _initializer(g, name) if isinstance(g, onnx.GraphProto) else None
            if found is not None:
                return found
    raise NotFound("unknown_tensor", f"no tensor {ref!r} in this model")


def _initializer(g: onnx.GraphProto, name: str):
    for t in g.initializer:
        if t.name == name:
            return t
    for s in g.sparse_initializer:
        if s.values.name == name:
            return s
    return None
