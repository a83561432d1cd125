"""Renaming nodes and tensors."""

from __future__ import annotations

import json
from collections.abc import Iterator

import onnx

from ..errors import NotFound, StudioError
from ..onnx_io.address import resolve_graph
from ..onnx_io.causes import graph_words
from ..onnx_io.traverse import graphs_within, subgraphs, walk_graphs
from .bodies import defines, graph_at, where
from .field_types import BODY_PATH, NAME, NODE, STRING
from .jsontypes import optional, required
from .locate import find_node, node_words
from .registry import edit_op


@edit_op("rename_node", required("node", NODE, "the node"), required("name", STRING, 'its new name ("" clears it)'))
def rename_node(model: onnx.ModelProto, op: dict) -> str:
    """Change a node's name. Tensor names and everything else stay."""
    ref, idx, node, nid = find_node(model, op["node"])
    name = op["name"]
    old = node.name
    # node names are unique within a graph (empty names excepted): a second "conv1" would make
    # every link, error and history entry naming it ambiguous
    if name and name != old and any(n.name == name for i, n in enumerate(ref.container.node) if i != idx):
        raise StudioError("duplicate_name", f"this graph already has a node named {name!r}; choose another name")
    was = node_words(node, nid)
    node.name = name
    return f"{was} renamed to {json.dumps(name, ensure_ascii=False)}"


def rename_in_graph(g: onnx.GraphProto, old: str, new: str) -> int:
    """Rename `old` to `new` in g and in subgraphs that read it from the outer scope. Counts uses."""
    return sum(_rename_here(h, old, new) for h in _scope_of(g, old))


def rename_captures(node: onnx.NodeProto, old: str, new: str) -> int:
    """Rename `old` to `new` where the bodies of `node` read it from the graph around them, at any
    depth (a body defining its own `old` keeps it). Counts uses."""
    return sum(_rename_here(h, old, new) for h in _captured_scope(node, old))


def captures(node: onnx.NodeProto, name: str) -> bool:
    """Does a body of `node` read `name` from the graph around it (at any depth, shadowing kept)?"""
    return any(
        any(name in n.input for n in h.node) or any(v.name == name for v in h.output)
        for h in _captured_scope(node, name)
    )


def _scope_of(g: onnx.GraphProto, name: str) -> Iterator[onnx.GraphProto]:
    """g and the graphs inside it where `name` is g's value: a subgraph defining its own `name`
    shadows ours, and it and what it holds keep theirs."""
    return graphs_within(g, descend=lambda sub: not defines(sub, name))


def _captured_scope(node: onnx.NodeProto, name: str) -> Iterator[onnx.GraphProto]:
    """The graphs held by `node` (at any depth) where `name` is the value of node's own graph."""
    for sub in subgraphs(node):
        if not defines(sub, name):
            yield from _scope_of(sub, name)


def _rename_here(g: onnx.GraphProto, old: str, new: str) -> int:
    hits = 0
    for coll in (g.input, g.output, g.value_info):
        for v in coll:
            if v.name == old:
                v.name = new
                hits += 1
    for t in g.initializer:
        if t.name == old:
            t.name = new
            hits += 1
    for s in g.sparse_initializer:
        if s.values.name == old:
            s.values.name = new
            hits += 1
    for ann in g.quantization_annotation:
        if ann.tensor_name == old:
            ann.tensor_name = new
            hits += 1
    for n in g.node:
        for field in (n.input, n.output):
            for i, x in enumerate(field):
                if x == old:
                    field[i] = new
                    hits += 1
        for config in n.device_configurations:  # a node's sharding names the tensors it shards
            for spec in config.sharding_spec:
                if spec.tensor_name == old:
                    spec.tensor_name = new
                    hits += 1
    return hits


def all_names(g: onnx.GraphProto) -> set[str]:
    """Every value name of g and the graphs it holds."""
    names: set[str] = set()
    for h in graphs_within(g):
        names |= {v.name for v in h.input} | {v.name for v in h.output} | {v.name for v in h.value_info}
        names |= {t.name for t in h.initializer} | {s.values.name for s in h.sparse_initializer}
        for n in h.node:
            names.update(n.input)
            names.update(n.output)
    return names


def fresh_name(model: onnx.ModelProto, base: str, taken: set[str] | None = None) -> str:
    """`base`, or `base_1`, `base_2`… : the first not in `taken` (by default every value name of
    the model's main graph and the graphs it holds)."""
    taken = all_names(model.graph) if taken is None else taken
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


@edit_op(
    "rename_tensor",
    required("from", NAME, "the tensor's name"),
    required("to", NAME, "a name no tensor has yet"),
    optional("graph", BODY_PATH, 'the graph it is a value of: the main graph, or a body ("n3/body")', default=""),
)
def rename_tensor(model: onnx.ModelProto, op: dict) -> str:
    """Rename a tensor (value) of the main graph, or with `graph` of a body (an If branch, a Loop
    or Scan body), everywhere it appears: producer, consumers, graph inputs/outputs, value_info,
    initializers, quantization annotations, nodes' sharding specs, and the bodies inside it that
    read it from the outer scope; values of the same name in other graphs stay. A body's inputs
    and outputs may be renamed (its If or Loop matches them by position). Refused when the new
    name is already used anywhere in the model, and for a value a body reads from a graph around
    it (renamed there)."""
    old, new = op["from"], op["to"]
    ref = graph_at(model, op["graph"], "rename_tensor")
    g: onnx.GraphProto = ref.container  # type: ignore[assignment]  # graph_at refuses functions
    if old == new:
        raise StudioError("bad_value", "rename_tensor: from and to are the same name")
    if new in all_names(model.graph):
        holder = next(
            (r.path for r in walk_graphs(model) if r.path[:1] in ("", "n") and defines(r.container, new)), None
        )
        there = f" in {graph_words(model, holder)}" if holder is not None else ""
        raise StudioError(
            "name_taken", f"rename_tensor: a tensor named {new!r} already exists{there} (names are unique in the model)"
        )
    if not defines(g, old):
        outer = next(
            (c["path"] for c in reversed(ref.crumbs[:-1]) if defines(resolve_graph(model, c["path"]).container, old)),
            None,
        )
        if outer is not None:
            raise StudioError(
                "bad_value",
                f"rename_tensor: {old!r} is a value of {graph_words(model, outer)}, which {where(model, ref)} reads;"
                f' rename it there (graph: "{outer}")',
            )
        if not any(v.name == old for v in g.output):
            raise NotFound("unknown_tensor", f"rename_tensor: {where(model, ref)} has no tensor {old!r}")
    hits = rename_in_graph(g, old, new)
    if not ref.path:
        for info in model.training_info:  # binding keys name main-graph initializers
            for b in list(info.initialization_binding) + list(info.update_binding):
                if b.key == old:
                    b.key = new
                    hits += 1
    in_body = f" in {where(model, ref)}" if ref.path else ""
    return f"tensor {old!r} renamed to {new!r}{in_body} ({hits} places)"
