"""A node's name scope, for grouping big graphs: from torch's node metadata when present
(`pkg.torch.onnx.name_scopes`, `namespace`), else from a path-like node name
(`/model/layers.3/self_attn/q_proj/MatMul`).

A scope is the list of its nested levels, each a full path, outermost first:
["/model", "/model/layers.3", "/model/layers.3/self_attn"] or ["layers.0", "layers.0.lin"].
"""
from __future__ import annotations

import re

import onnx

MAX_DEPTH = 32


_ITEM = re.compile(r"'([^'\\]*)'")


def _from_name_scopes(value: str) -> list[str] | None:
    """torch writes a Python list of plain strings: "['', 'model', 'model.layers.0', 'linear']".
    Parsed by pattern (ast.literal_eval costs 100 us a node, seconds on a 40k-node graph)."""
    if not (value.startswith("[") and value.endswith("]")):
        return None
    scopes = _ITEM.findall(value)
    levels = [s for s in scopes[:-1] if s]  # drop the root '' and the op itself
    return levels[:MAX_DEPTH]


def _from_namespace(value: str) -> list[str]:
    parts = [p.split(":", 1)[0].strip() for p in value.split("/")]
    return [p for p in parts[1:-1] if p][:MAX_DEPTH]


def _from_name(name: str) -> list[str]:
    if not name.startswith("/") or name.count("/") < 2:
        return []
    parts = name.split("/")[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(min(len(parts), MAX_DEPTH))]


def node_scope(node: onnx.NodeProto) -> list[str]:
    for p in node.metadata_props:
        if p.key == "pkg.torch.onnx.name_scopes":
            levels = _from_name_scopes(p.value)
            if levels is not None:
                return levels
    for p in node.metadata_props:
        if p.key == "namespace":
            return _from_namespace(p.value)
    return _from_name(node.name)
