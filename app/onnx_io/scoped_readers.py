"""Who reads a value, the nodes inside If/Loop/Scan bodies included: a body reads the values of
the graphs around it by name (an Optimum merged decoder's branches look the token ids up in the
main graph's embedding table), unless it defines that name itself (an input of its own, an
initializer, a node's output), which then shadows the outer one for it and all it holds.
Names repeat across sibling bodies (both branches of a merged decoder name their nodes alike),
so a value is (its name, the scope it is one of)."""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx

from .address import node_id, subgraph_path
from .limits import MAX_GRAPH_DEPTH
from .traverse import node_graphs, subgraphs


@dataclass(eq=False)
class Scope:
    """A graph, where its values are read: name -> [(a node reading it, the scope that node is
    in)], and the initializers its nodes see (`table`)."""

    graph: onnx.GraphProto
    outer: Scope | None = None  # the scope around a body
    shadowed: set[str] = field(default_factory=set)  # names the body defines itself
    readers: dict[str, list[tuple[onnx.NodeProto, Scope]]] = field(default_factory=dict)
    own: dict[str, list[int]] = field(default_factory=dict)  # its initializers: name -> dims
    bodies: dict[int, Scope] = field(default_factory=dict)  # id(a Loop node of it) -> its body's scope

    def table(self, name: str) -> list[int] | None:
        """The dims of the initializer `name` means here (its own, or an enclosing graph's it
        doesn't shadow), or None."""
        if name in self.own:
            return self.own[name]
        if self.outer is None or name in self.shadowed:
            return None
        return self.outer.table(name)


def defined_names(g: onnx.GraphProto) -> set[str]:
    """The names g defines itself: what it holds shadows the outer values of those names."""
    names = {v.name for v in g.input} | {t.name for t in g.initializer}
    names |= {s.values.name for s in g.sparse_initializer}
    return names | {o for n in g.node for o in n.output}


def scope_of(graph: onnx.GraphProto, outer: Scope | None = None, depth: int = 0) -> Scope:
    """The scope of `graph` (a main graph: no `outer`), each name's readers found: the graph's
    nodes reading it, and the nodes of the bodies it holds (at any depth) reading it from the
    graph around them, each with the scope it is in."""
    scope = Scope(graph, outer, defined_names(graph) if outer is not None else set())
    scope.own = {t.name: list(t.dims) for t in graph.initializer}
    for n in graph.node:
        for x in dict.fromkeys(n.input):
            if x:
                scope.readers.setdefault(x, []).append((n, scope))
        if depth >= MAX_GRAPH_DEPTH:
            continue
        for sub in subgraphs(n):
            inner = scope_of(sub, scope, depth + 1)
            if n.op_type == "Loop":
                scope.bodies[id(n)] = inner
            for x, found in inner.readers.items():
                if x not in inner.shadowed:  # read from around the body: one of ours
                    scope.readers.setdefault(x, []).extend(found)
    return scope


def reading_nodes(graph, path: str, name: str, depth: int = 0) -> list[tuple[str, onnx.NodeProto]]:
    """(node id, node) of each node reading `name` in `graph` (at `path`) and in the bodies its
    nodes hold that don't define `name` themselves, at any depth, in graph order: where a value
    of that graph is used (QA31: a merged decoder's weights, read only inside its If's branches)."""
    found: list[tuple[str, onnx.NodeProto]] = []
    for i, n in enumerate(graph.node):
        nid = node_id(path, i)
        if name in n.input:
            found.append((nid, n))
        if depth >= MAX_GRAPH_DEPTH:
            continue
        for attr, item, sub in node_graphs(n):
            if name not in defined_names(sub):
                found.extend(reading_nodes(sub, subgraph_path(nid, attr, item), name, depth + 1))
    return found
