"""Walking a model's graphs at any depth, and the opset a node's place in them gives it.

The one walk: the main graph, graphs held by node attributes (If/Loop/Scan bodies, any GRAPH or
GRAPHS attribute), model-local functions and training graphs, down to MAX_GRAPH_DEPTH. Views
and edits reach nested graphs through here, never through their own attribute loops.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import onnx
from onnx import defs

from .address import GraphRef, body_crumb, node_id, resolve_graph, subgraph_path
from .limits import MAX_GRAPH_DEPTH

_GRAPH, _GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS
T = TypeVar("T")


def node_graphs(node: onnx.NodeProto) -> Iterator[tuple[str, int | None, onnx.GraphProto]]:
    """(attribute name, item, graph) for each graph a node holds: item None for a GRAPH
    attribute, k for item k of a GRAPHS attribute."""
    for a in node.attribute:
        if a.type == _GRAPH:
            yield a.name, None, a.g
        elif a.type == _GRAPHS:
            for k, g in enumerate(a.graphs):
                yield a.name, k, g


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    """The graphs a node holds, in attribute order."""
    for _, _, g in node_graphs(node):
        yield g


def graphs_within(g, descend: Callable[[onnx.GraphProto], bool] | None = None) -> Iterator:
    """g and every graph its nodes hold at any depth, depth first. descend(sub) false skips sub
    and all it holds (a subgraph that defines a name of its own shadows the outer one)."""
    stack = [(g, 0)]
    while stack:
        here, depth = stack.pop()
        yield here
        if depth >= MAX_GRAPH_DEPTH:
            continue
        subs = [sub for n in here.node for sub in subgraphs(n) if descend is None or descend(sub)]
        stack.extend((sub, depth + 1) for sub in reversed(subs))


def fed_inputs(graph: onnx.GraphProto) -> list[str]:
    """The graph's inputs a run feeds, in order: those without an initializer (an IR < 4 model
    lists its weights among its inputs)."""
    initialized = {t.name for t in graph.initializer}
    return [i.name for i in graph.input if i.name not in initialized]


def node_reads(node: onnx.NodeProto) -> list[str]:
    """The names a node reads: its inputs, and what the graphs it holds read (from outside them
    or not: an If needs what its branches use before it runs)."""
    names = list(node.input)
    for g in subgraphs(node):
        names.extend(name for sub in graphs_within(g) for n in sub.node for name in n.input)
    return names


def live_from(nodes: Sequence[onnx.NodeProto], needed: set[str]) -> list[bool]:
    """Which of `nodes` (in a topological order) what `needed` names depends on: one walk from the
    last node back, adding to `needed` every name a live node reads (its subgraphs' reads too)."""
    live = [False] * len(nodes)
    for i in reversed(range(len(nodes))):
        if any(o in needed for o in nodes[i].output):
            live[i] = True
            needed.update(x for x in node_reads(nodes[i]) if x)
    return live


def topological_order(nodes: Sequence[onnx.NodeProto], keys: Sequence[float] | None = None) -> list[int] | None:
    """The positions of `nodes` in an order where every node comes after the producers of what it
    reads (its subgraphs' reads included); among the nodes ready at each step, the one of the
    smallest key first (`keys`: by position when not given, so a node moves only when it must).
    None when nodes read each other in a cycle (a node reading its own output included)."""
    key = keys if keys is not None else range(len(nodes))
    producer = {x: i for i, n in enumerate(nodes) for x in n.output if x}
    after: list[list[int]] = [[] for _ in nodes]
    waiting = [0] * len(nodes)
    for i, n in enumerate(nodes):
        sources = {producer[x] for x in node_reads(n) if x in producer}
        if i in sources:
            return None
        for p in sources:
            after[p].append(i)
            waiting[i] += 1
    ready = [(key[i], i) for i, w in enumerate(waiting) if not w]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for j in after[i]:
            waiting[j] -= 1
            if not waiting[j]:
                heapq.heappush(ready, (key[j], j))
    return order if len(order) == len(nodes) else None


def fold(g, combine: Callable[[Any, list[T]], T], depth: int = 0) -> T:
    """combine(g, [fold of each graph g's nodes hold]): a value built bottom up, for what a
    graph's answer takes from its subgraphs' (the names they read from outside, say)."""
    inner = [] if depth >= MAX_GRAPH_DEPTH else [fold(sub, combine, depth + 1) for n in g.node for sub in subgraphs(n)]
    return combine(g, inner)


def walk_graphs(model: onnx.ModelProto) -> Iterator[GraphRef]:
    """Every graph and function with its path, as GraphRefs, depth first: the main graph and its
    subgraphs, then each model-local function and its subgraphs, then the training graphs. Each
    GraphRef's crumbs are resolve_graph's."""
    roots = [""] + [f"fn[{k}]" for k in range(len(model.functions))]
    for k, t in enumerate(model.training_info):
        if t.HasField("initialization"):
            roots.append(f"train[{k}].init")
        if t.HasField("algorithm"):
            roots.append(f"train[{k}].algo")
    stack = [(resolve_graph(model, p), 0) for p in reversed(roots)]
    while stack:
        ref, depth = stack.pop()
        yield ref
        if depth >= MAX_GRAPH_DEPTH:  # deeper paths are refused by resolve_graph: not addressable
            continue
        subs = []
        for i, n in enumerate(ref.container.node):
            for attr, item, g in node_graphs(n):
                path = subgraph_path(node_id(ref.path, i), attr, item)
                crumbs = [*ref.crumbs, body_crumb(path, n, i, attr, item)]
                subs.append((GraphRef(path, g, crumbs), depth + 1))
        stack.extend(reversed(subs))


def running_graphs(model: onnx.ModelProto) -> list:
    """The main graph and the graphs its nodes hold, as GraphRefs (each container a GraphProto):
    what runs when the model runs (model functions run where they are called; training graphs
    don't run at inference)."""
    return [ref for ref in walk_graphs(model) if ref.path == "" or ref.path.startswith("n")]


# ------------------------------------------------------------------ opsets


def tensors(model: onnx.ModelProto, main_initializers: bool = True) -> Iterator[onnx.TensorProto]:
    """Every TensorProto of every graph and function: initializers, sparse initializers' values
    and indices, and node attributes' tensors (the main graph's initializers left out on ask)."""
    for ref in walk_graphs(model):
        g = ref.container
        if isinstance(g, onnx.GraphProto):
            if ref.path or main_initializers:
                yield from g.initializer
            for s in g.sparse_initializer:
                yield from (s.values, s.indices)
        yield from attribute_tensors_of(g)


def attribute_tensors_of(g) -> Iterator[onnx.TensorProto]:
    """The tensors of the attributes of the nodes of one graph or function (not nested ones)."""
    for n in g.node:
        for a in n.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            for s in [a.sparse_tensor, *a.sparse_tensors] if a.HasField("sparse_tensor") else a.sparse_tensors:
                yield from (s.values, s.indices)


def constant_value(n: onnx.NodeProto) -> onnx.TensorProto | None:
    """The tensor a standard Constant node holds as its `value`, else None."""
    if n.op_type != "Constant" or standard_domain(n.domain) != "" or len(n.output) != 1:
        return None
    return next((a.t for a in n.attribute if a.name == "value" and a.HasField("t")), None)


def graph_constants(g: onnx.GraphProto, max_elements: int) -> dict[str, onnx.TensorProto]:
    """A graph's small constant tensors by name — its initializers and its Constant nodes'
    `value` — of at most `max_elements` elements each, holding their values (not in an external
    file): a Reshape's shape, a Loop's trip count."""
    found = [(t.name, t) for t in g.initializer]
    for n in g.node:
        value = constant_value(n)
        if value is not None:
            found.append((n.output[0], value))
    out = {}
    for name, t in found:
        size = 1
        for d in t.dims:
            size *= d
        if size <= max_elements and t.data_location != onnx.TensorProto.EXTERNAL:
            out[name] = t
    return out


def standard_domain(domain: str) -> str:
    """The default ONNX domain is spelled "" or "ai.onnx"; both are ""."""
    return "" if domain == "ai.onnx" else domain


def opset_imports(model: onnx.ModelProto, container=None) -> dict[str, int]:
    """domain ("" for ai.onnx) -> imported version, for nodes of `container`: a function imports
    its own opsets, every graph the model's."""
    imports = container.opset_import if isinstance(container, onnx.FunctionProto) else model.opset_import
    out: dict[str, int] = {}
    for o in imports:
        out.setdefault(standard_domain(o.domain), o.version)  # the first, should a model import one twice
    return out


def opset_version(model: onnx.ModelProto, container, domain: str) -> int | None:
    """The version of `domain` a node of `container` runs at, or None when none is imported."""
    return opset_imports(model, container).get(standard_domain(domain))


def op_schema(model: onnx.ModelProto, container, node: onnx.NodeProto) -> defs.OpSchema | None:
    """The operator schema of a node at its opset — onnx's, or onnxruntime's for its own domains
    (runtime_schemas.py) — or None (no import, or not an operator there)."""
    version = opset_version(model, container, node.domain)
    if version is None or not 0 <= version < 2**31:  # onnx's C++ takes an int: a hostile 2^40 is no opset
        return None
    domain = standard_domain(node.domain)
    try:
        return defs.get_schema(node.op_type, version, domain)
    except defs.SchemaError:
        pass
    from .runtime_schemas import runtime_schema  # onnxruntime's com.microsoft ops, read on first need

    return runtime_schema(node.op_type, domain, version)
