"""Addresses of graphs and nodes inside a ModelProto: building, parsing, resolving.

  graph path  ""                 the main graph
              "n3/body"          the GRAPH attribute `body` of node 3
              "n3/branches[1]"   item 1 of a GRAPHS attribute
              "fn[0]"            model.functions[0]
              "train[0].init"    model.training_info[0].initialization (".algo": algorithm)
  node id     "<graph path>/n<i>" ("n<i>" in the main graph)
A node segment is a position, `n<i>`, or a name, `@<name>`: the node of that graph with that
name, which must be unique there ("@conv1", "@if_0/then_branch/@add"); or `><value>`, the node
writing that value (recorded edits name unnamed nodes so). Positions are what the
server answers with: valid whatever the names, but only within one revision. Names survive
edits elsewhere in the graph, so links use them (named_address), and carry() follows an address
from one revision to another. Attribute and node names are percent-encoded when they hold '/',
'[', ']', ':', '#' or '%'.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

import onnx

from ..errors import NotFound
from ..words import a_or_an, quoted
from .limits import MAX_GRAPH_DEPTH
from .text_fields import shown

# positions in ASCII digits, no leading zeros, no more than an index can hold ("n٠", "n00" and a
# 5,000-digit "n9…9" name no node: int() would take the first two and choke on the last)
_INDEX = r"(0|[1-9][0-9]{0,17})"
_ROOT_FN = re.compile(rf"^fn\[{_INDEX}\]$")
_ROOT_TRAIN = re.compile(rf"^train\[{_INDEX}\]\.(init|algo)$")
_NODE = re.compile(rf"^n{_INDEX}$")
_ATTR = re.compile(rf"^(.+?)(?:\[{_INDEX}\])?$")


@functools.lru_cache(maxsize=4096)  # a model has few distinct attribute names, used 10^4+ times
def encode_attr(name: str) -> str:
    return quote(name, safe="!$&'()*+,;=@-._~ ")


def named_segment(name: str) -> str:
    """The node segment naming a node by its name."""
    return "@" + encode_attr(name)


def join(parent: str, segment: str) -> str:
    return f"{parent}/{segment}" if parent else segment


def node_id(graph_path: str, index: int) -> str:
    return join(graph_path, f"n{index}")


def subgraph_path(node_path: str, attr_name: str, item: int | None = None) -> str:
    return join(node_path, _attr_segment(attr_name, item))


def _attr_segment(attr_name: str, item: int | None) -> str:
    return encode_attr(attr_name) + (f"[{item}]" if item is not None else "")


def body_crumb(path: str, node: onnx.NodeProto, index: int, attr_name: str, item: int | None) -> dict:
    """A body's step of the breadcrumb: its path, its label, and what holds it (op_type: the
    page offers a Loop's or Scan's scan outputs)."""
    return {"path": path, "label": crumb_label(node, index, attr_name, item), "op_type": node.op_type}


def crumb_label(node: onnx.NodeProto, index: int, attr_name: str, item: int | None) -> str:
    """The breadcrumb label of a subgraph: "If If_0 · then_branch", "Scan n3 · body", "X n1 · branches[1]"."""
    return f"{node.op_type} {node.name or f'n{index}'} · {attr_name}" + (f"[{item}]" if item is not None else "")


@dataclass
class GraphRef:
    """A resolved graph path: the GraphProto or FunctionProto and how we got there."""

    path: str  # positional, whatever form it was asked for in
    container: onnx.GraphProto | onnx.FunctionProto
    crumbs: list  # [{"path", "label"}] from the main graph to here

    @property
    def is_function(self) -> bool:
        return isinstance(self.container, onnx.FunctionProto)


@dataclass
class _Hop:
    """One node segment of an address, resolved."""

    container: onnx.GraphProto | onnx.FunctionProto
    index: int
    # the graph attribute followed next (name, item, graph); None: the address ends at this node
    into: tuple[str, int | None, onnx.GraphProto] | None

    @property
    def node(self) -> onnx.NodeProto:
        return self.container.node[self.index]


@dataclass
class _Trace:
    root: str  # "", "fn[k]" or "train[k].init|algo"
    container: onnx.GraphProto | onnx.FunctionProto  # the root's
    hops: list[_Hop]


def _trace(model: onnx.ModelProto, address: str) -> _Trace:
    """`address` resolved segment by segment (either form); NotFound names the first that fails."""
    segs = address.split("/") if address else []
    if len(segs) > 2 * MAX_GRAPH_DEPTH + 1:
        raise NotFound("bad_path", f"graph path nests deeper than {MAX_GRAPH_DEPTH} levels")
    root, container = _root(model, segs[0]) if segs else ("", model.graph)
    start = container
    hops: list[_Hop] = []
    rest = segs[1:] if root else segs
    for k in range(0, len(rest), 2):
        last = k + 1 == len(rest)
        index = _node_index(container, rest[k], address, "unknown_node" if last else "unknown_graph")
        if last:
            hops.append(_Hop(container, index, None))
            break
        attr_name, item = _parse_attr(rest[k + 1], address)
        sub = _attr_graph(container.node[index], attr_name, item, address)
        hops.append(_Hop(container, index, (attr_name, item, sub)))
        container = sub
    return _Trace(root, start, hops)


def _root(model: onnx.ModelProto, seg: str) -> tuple[str, onnx.GraphProto | onnx.FunctionProto]:
    """("fn[k]" / "train[k].x", its graph) when seg names a root other than the main graph, else ("", main graph)."""
    m_fn, m_tr = _ROOT_FN.match(seg), _ROOT_TRAIN.match(seg)
    if m_fn:
        k = int(m_fn.group(1))
        if k >= len(model.functions):
            raise NotFound("unknown_graph", f"the model has no function #{k}")
        return f"fn[{k}]", model.functions[k]
    if m_tr:
        k, which = int(m_tr.group(1)), m_tr.group(2)
        if k >= len(model.training_info):
            raise NotFound("unknown_graph", f"the model has no training_info #{k}")
        field = "initialization" if which == "init" else "algorithm"
        if not model.training_info[k].HasField(field):
            raise NotFound("unknown_graph", f"training_info #{k} has no {field} graph")
        return f"train[{k}].{which}", getattr(model.training_info[k], field)
    return "", model.graph


def _node_index(container, seg: str, address: str, code: str) -> int:
    if seg.startswith(">"):  # the node writing that value (recorded_address: unnamed nodes in recipes)
        value = unquote(seg[1:])
        hits = [i for i, n in enumerate(container.node) if value and value in n.output]
        if hits:
            return hits[0]  # a value has one writer in a graph
        raise NotFound(code, f"{quoted(address)}: no node of that graph writes {quoted(value)}")
    if seg.startswith("@"):
        name = unquote(seg[1:])
        hits = [i for i, n in enumerate(container.node) if n.name == name] if name else []
        if len(hits) > 1:
            raise NotFound(
                "ambiguous_node", f"{quoted(address)}: {len(hits)} nodes of that graph are named {quoted(name)}"
            )
        if hits:
            return hits[0]
        raise NotFound(code, f"{quoted(address)}: that graph has no node named {quoted(name)}")
    m = _NODE.match(seg)
    if not m:
        what = "a node id" if code == "unknown_node" else "a graph path"
        raise NotFound(code, f"{quoted(address)} is not {what}: {quoted(seg)} is not a node of that graph")
    if int(m.group(1)) >= len(container.node):
        raise NotFound(
            code, f"{quoted(address)}: {quoted(seg)} is not a node of that graph (it has {len(container.node)} nodes)"
        )
    return int(m.group(1))


def _root_crumbs(model: onnx.ModelProto, root: str, container) -> list[dict]:
    crumbs = [{"path": "", "label": model.graph.name or "main graph"}]
    if root.startswith("fn["):
        crumbs.append({"path": root, "label": f"function {container.domain}:{container.name}".replace(" :", " ")})
    elif root:
        k, which = _ROOT_TRAIN.match(root).groups()  # type: ignore[union-attr]  # _root matched it
        crumbs.append({"path": root, "label": f"training {k} {'initialization' if which == 'init' else 'algorithm'}"})
    return crumbs


def _graph_ref(model: onnx.ModelProto, t: _Trace, hops: list[_Hop]) -> GraphRef:
    """The graph `hops` (all following a graph attribute) lead to from t's root, positionally."""
    crumbs = _root_crumbs(model, t.root, t.container)
    path, container = t.root, t.container
    for hop in hops:
        assert hop.into is not None
        attr_name, item, container = hop.into
        path = subgraph_path(node_id(path, hop.index), attr_name, item)
        crumbs.append(body_crumb(path, hop.node, hop.index, attr_name, item))
    return GraphRef(path, container, crumbs)


def resolve_graph(model: onnx.ModelProto, path: str) -> GraphRef:
    try:
        t = _trace(model, path)
    except NotFound as exc:
        if exc.code != "unknown_node":
            raise
        # a path's last segment is read as a node's: for a graph asked, no such graph (QA33 #2)
        raise NotFound(
            "unknown_graph", f'no graph {quoted(path)} in this model: "" is the main graph, a body <node>/<attribute>'
        ) from None
    if t.hops and t.hops[-1].into is None:
        raise NotFound("bad_path", f"graph path {quoted(path)} ends at a node, not a graph")
    return _graph_ref(model, t, t.hops)


def resolve_node(model: onnx.ModelProto, nid: str) -> tuple[GraphRef, int, onnx.NodeProto]:
    """(the node's graph, its index there, the node) for a node id in either form."""
    t = _trace(model, nid)
    if not t.hops or t.hops[-1].into is not None:
        raise NotFound("unknown_node", f"{quoted(nid)} is not a node id")
    last = t.hops[-1]
    return _graph_ref(model, t, t.hops[:-1]), last.index, last.node


def _node_segment(container, index: int) -> str:
    name = container.node[index].name
    if name and sum(1 for n in container.node if n.name == name) == 1:
        return named_segment(name)
    return f"n{index}"


def recorded_address(model: onnx.ModelProto, address: str) -> str:
    """The form an edit is recorded with (a recipe replays it on the next export): each node by
    its name where that is unique in its graph, else by the first value it writes (">y": a node
    inserted above it doesn't move that, as it moves a position), else by position."""
    t = _trace(model, address)
    path = t.root
    for hop in t.hops:
        seg = _node_segment(hop.container, hop.index)
        written = next((x for x in hop.container.node[hop.index].output if x), None)
        if not seg.startswith("@") and written:
            seg = ">" + encode_attr(written)
        path = join(path, seg)
        if hop.into is not None:
            path = join(path, _attr_segment(hop.into[0], hop.into[1]))
    return path


def named_address(model: onnx.ModelProto, address: str) -> str:
    """The name form of a graph path or node id: each node by its name where that is unique in
    its graph, else by position."""
    t = _trace(model, address)
    path = t.root
    for hop in t.hops:
        path = join(path, _node_segment(hop.container, hop.index))
        if hop.into is not None:
            path = join(path, _attr_segment(hop.into[0], hop.into[1]))
    return path


def carry(old: onnx.ModelProto, new: onnx.ModelProto, address: str) -> str | None:
    """The positional address in `new` (another revision) of what `address` names in `old`, or
    None when it is gone. Each node along it is followed by the name it had in `old` where that
    was unique (renamed since: by its operator and outputs, under a name `old` didn't have), else
    by its operator and outputs (tensor names are unique in a graph), or where
    those were renamed (a node inserted after it) by its operator and inputs: never to a node
    that merely took its position."""
    t = _trace(old, address)
    try:
        path, container = _root(new, t.root) if t.root else ("", new.graph)
    except NotFound:
        return None
    for hop in t.hops:
        index = _same_node(hop, container)
        if index is None:
            return None
        path = join(path, f"n{index}")
        if hop.into is not None:
            attr_name, item, _ = hop.into
            try:
                container = _attr_graph(container.node[index], attr_name, item, address)
            except NotFound:
                return None
            path = join(path, _attr_segment(attr_name, item))
    return path


def _same_node(hop: _Hop, container) -> int | None:
    """The index in `container` (the graph in another revision) of the node `hop` reached."""
    node = hop.node
    if _node_segment(hop.container, hop.index) != f"n{hop.index}":  # named, uniquely
        hits = [i for i, n in enumerate(container.node) if n.name == node.name]
        if not hits:
            hits = _renamed(hop, container)
    else:
        key = _identity(node)
        if hop.index < len(container.node) and _identity(container.node[hop.index]) == key:
            return hop.index
        hits = [i for i, n in enumerate(container.node) if _identity(n) == key]
        if not hits:  # its outputs renamed (a node inserted after it): by what it reads, writing only new names
            written = {o for n in hop.container.node for o in n.output}
            key = _reader(node)
            hits = [i for i, n in enumerate(container.node) if _reader(n) == key and not written & set(n.output)]
        if not hits:  # an unnamed node named since (QA33 #4), or one of a repeated name renamed
            hits = _renamed(hop, container)
    return hits[0] if len(hits) == 1 else None


def _renamed(hop: _Hop, container) -> list[int]:
    """A node renamed since: the same operator writing the same tensors, under a name the old
    graph didn't have (never one that merely took over another's outputs and name)."""
    node = hop.node
    had = {n.name for n in hop.container.node}
    key = (node.op_type, node.domain, tuple(node.output))
    return [
        i for i, n in enumerate(container.node) if (n.op_type, n.domain, tuple(n.output)) == key and n.name not in had
    ]


def _identity(node: onnx.NodeProto) -> tuple:
    return node.op_type, node.domain, node.name, tuple(node.output)


def _reader(node: onnx.NodeProto) -> tuple:
    """A node by what it reads: insert_node renames the output of the node it follows."""
    return node.op_type, node.domain, node.name, tuple(node.input)


def _parse_attr(seg: str, path: str) -> tuple[str, int | None]:
    m = _ATTR.match(seg)
    if not m:
        raise NotFound("bad_path", f"graph path {quoted(path)}: bad segment {quoted(seg)}")
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
        f"graph path {quoted(path)}: node has no graph attribute {quoted(name)}"
        + (f"[{item}]" if item is not None else ""),
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
            raise NotFound("unknown_tensor", f"node {quoted(nid)} has no tensor attribute {attr_seg!r}")
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


def node_words(name: str, op_type: str, nid: str | None = None) -> str:
    """How people are told about a node (history, errors, hints): by name and operator,
    `node "conv1" (Conv)`; by id without a name, `node n213 (Conv)`; else `a Conv node`."""
    name, op_type = shown(name), shown(op_type)
    if name:
        return f"node {json.dumps(name, ensure_ascii=False)} ({op_type})"
    return f"node {nid} ({op_type})" if nid else f"{a_or_an(op_type)} node"
