"""Finding what an op names: nodes by id or unique name, graphs by path."""

from __future__ import annotations

import json
from collections.abc import MutableSequence
from urllib.parse import unquote

import onnx

from ..errors import NotFound, StudioError
from ..onnx_io.address import GraphRef, node_id, resolve_node
from ..onnx_io.address import node_words as address_words
from ..onnx_io.traverse import walk_graphs
from ..words import quoted


def find_node(model: onnx.ModelProto, key) -> tuple[GraphRef, int, onnx.NodeProto, str]:
    """A node by id, by position or by name ("n3", "n3/body/n0", "@conv1", "@loop/body/@add"),
    or by a name that is unique in the model; with its positional id."""
    if not isinstance(key, str) or not key:
        raise StudioError("bad_field", "node must be a node id or a node name (a non-empty string)")
    try:
        ref, idx, node = resolve_node(model, key)
        return ref, idx, node, node_id(ref.path, idx)
    except NotFound as exc:
        if exc.code == "ambiguous_node":
            raise
    matches = [
        (ref, i, n, node_id(ref.path, i))
        for ref in walk_graphs(model)
        for i, n in enumerate(ref.container.node)
        if n.name == key
    ]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise StudioError(
            "ambiguous_node",
            f"{len(matches)} nodes are named {key!r}; name one by its id ({matches[0][3]}, {matches[1][3]}, ...)",
        )
    raise NotFound("unknown_node", f"no node {quoted(key)}{_named(key)} in this model")


def _named(key: str) -> str:
    """' (a node named "/model/h.1/MatMul")': the name an address's last `@` segment stands
    for, when it is spelled encoded (a recipe's addresses, a name holding "/")."""
    last = key.rsplit("/", 1)[-1]
    if not last.startswith("@") or "%" not in last:
        return ""
    try:
        name = unquote(last[1:], errors="strict")
    except UnicodeDecodeError:
        return ""
    return f" (a node named {json.dumps(name, ensure_ascii=False)})"


def node_words(node: onnx.NodeProto, nid: str) -> str:
    """`node "conv1" (Conv)`, or `node n213 (Conv)` without a name (address.node_words)."""
    return address_words(node.name, node.op_type, nid)


def main_graph_value(model: onnx.ModelProto, name: str, where: str) -> tuple[MutableSequence[onnx.ValueInfoProto], int]:
    """(repeated field, index) of a main-graph input or output by name."""
    field = model.graph.input if where == "input" else model.graph.output
    for i, v in enumerate(field):
        if v.name == name:
            return field, i
    raise NotFound(f"unknown_{where}", f"the graph has no {where} named {name!r}")
