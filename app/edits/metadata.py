"""Model fields and metadata_props (on the model, a graph, a node or a function)."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io.address import resolve_graph
from .locate import check_kind, find_node, require
from .registry import edit_op

MODEL_FIELDS = {"doc_string": str, "producer_name": str, "producer_version": str, "domain": str, "model_version": int}


def _metadata_owner(model: onnx.ModelProto, target):
    """The message whose metadata_props an op edits, and a word for it."""
    if target is None or target == "model":
        return model, "model"
    check_kind({"op": "set_metadata"}, "target", target, str)
    if target == "" or target == "graph":
        return model.graph, "main graph"
    try:
        _, _, node, nid = find_node(model, target)
        return node, f"node {nid}"
    except StudioError:
        pass
    ref = resolve_graph(model, target)
    return ref.container, ("function " if ref.is_function else "graph ") + target


@edit_op("set_metadata", required=("key", "value"), optional=("target",))
def set_metadata(model: onnx.ModelProto, op: dict) -> str:
    """Add, change (value a string) or delete (value null) one metadata_props entry on the model, or
    on the graph, node or function named by `target`. Other entries keep their order."""
    key = require(op, "key")
    value = require(op, "value", (str, type(None)))
    if not key:
        raise StudioError("bad_field", "set_metadata: key must not be empty")
    owner, where = _metadata_owner(model, op.get("target"))
    props = owner.metadata_props
    hits = [i for i, p in enumerate(props) if p.key == key]
    if value is None:
        if not hits:
            raise StudioError(
                "unknown_metadata", f"set_metadata: the {where} has no metadata key {key!r} to delete", 404
            )
        for i in reversed(hits):
            del props[i]
        return f"deleted metadata {key!r} from the {where}"
    if hits:
        old = props[hits[0]].value
        props[hits[0]].value = value
        for i in reversed(hits[1:]):
            del props[i]
        return f"metadata {key!r} on the {where}: {old!r} -> {value!r}"
    props.add(key=key, value=value)
    return f"added metadata {key!r} = {value!r} to the {where}"


@edit_op("set_model_field", required=("field", "value"))
def set_model_field(model: onnx.ModelProto, op: dict) -> str:
    """Set one model field: doc_string, producer_name, producer_version, domain (strings) or
    model_version (an integer)."""
    field = require(op, "field")
    if field not in MODEL_FIELDS:
        raise StudioError(
            "bad_field", f"set_model_field: {field!r} is not an editable model field (one of {', '.join(MODEL_FIELDS)})"
        )
    value = require(op, "value", MODEL_FIELDS[field])
    if field == "model_version" and not -(2**63) <= value < 2**63:
        raise StudioError("bad_value", "set_model_field: model_version must fit in a 64-bit integer")
    old = getattr(model, field)
    setattr(model, field, value)
    return f"{field}: {old!r} -> {value!r}"
