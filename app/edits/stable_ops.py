"""An edit op as it is recorded: the nodes and graphs it names by name rather than by position.

The page sends node ids ("n24", "n0/then_branch/n1"): positions, valid in the revision they were
read from only. Recorded as sent, a recipe replayed on the next export of a model (one node more
at its top) would edit whichever node took that position. Each op is recorded with its
addresses in the name form (address.recorded_address: "@ffn_act", "@loop/body/@add"), read
from the model as it stands just before the op runs, which resolves to the same node there; a
node without a name unique in its graph by the first value it writes (">/model/Relu_output_0"),
one without outputs by its position."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io.address import recorded_address
from .field_types import BODY_PATH, GRAPH_PATH, NODE
from .jsontypes import Array, JsonType, OneOf
from .locate import find_node
from .registry import EditOp

_WHOLE = (None, "", "model", "graph")  # set_metadata's targets that name no node or body


def stable_op(entry: EditOp, model: onnx.ModelProto, op: dict) -> dict:
    """`op` (as sent) with each node and graph address it holds in the name form."""
    out = dict(op)
    for f in entry.fields:
        value = op.get(f.name)
        if value is None:
            continue
        if (f.type is GRAPH_PATH or f.type is BODY_PATH) and isinstance(value, str) and value:
            out[f.name] = _graph(model, value)
        elif _is_node(f.type) and isinstance(value, str):
            out[f.name] = _node(model, value)
        elif _holds_nodes(f.type) and isinstance(value, list):
            out[f.name] = [_node(model, v) if isinstance(v, str) else v for v in value]
    if entry.name == "set_metadata" and op.get("target") not in _WHOLE and isinstance(op.get("target"), str):
        out["target"] = _target(model, op["target"])
    return out


def node_fields(entry: EditOp, op: dict) -> list[tuple[str, int | None]]:
    """Where `op` names nodes: (field, None) for a field holding one address, (field, k) for
    item k of a list of them; set_metadata's target where it names no whole graph or model."""
    out: list[tuple[str, int | None]] = []
    for f in entry.fields:
        value = op.get(f.name)
        if _is_node(f.type) and isinstance(value, str):
            out.append((f.name, None))
        elif _holds_nodes(f.type) and isinstance(value, list):
            out.extend((f.name, k) for k, v in enumerate(value) if isinstance(v, str))
    if entry.name == "set_metadata" and op.get("target") not in _WHOLE and isinstance(op.get("target"), str):
        out.append(("target", None))
    return out


def _is_node(t: JsonType) -> bool:
    return t is NODE


def _holds_nodes(t: JsonType) -> bool:
    """An array of node ids, or one of several types such an array is among (consumers)."""
    if isinstance(t, Array):
        return _is_node(t.items)
    return isinstance(t, OneOf) and any(_holds_nodes(o) for o in t.options)


def _node(model: onnx.ModelProto, key: str) -> str:
    """A node's address by name; as sent where it names no node (the op says so itself)."""
    try:
        return recorded_address(model, find_node(model, key)[3])
    except StudioError:
        return key


def _graph(model: onnx.ModelProto, path: str) -> str:
    try:
        return recorded_address(model, path)
    except StudioError:
        return path


def _target(model: onnx.ModelProto, target: str) -> str:
    """set_metadata's target: a node (as set_metadata tries first), else a graph or function path."""
    try:
        return recorded_address(model, find_node(model, target)[3])
    except StudioError:
        return _graph(model, target)
