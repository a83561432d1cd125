"""Model fields and metadata_props (on the model, a graph, a node or a function)."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io.address import resolve_graph
from ..onnx_io.causes import graph_words
from .field_types import NAME, NULL, STRING
from .jsontypes import Enum, Integer, kind_of, optional, required
from .locate import find_node, node_words
from .registry import edit_op

MODEL_FIELDS = {"doc_string": str, "producer_name": str, "producer_version": str, "domain": str, "model_version": int}


def _metadata_owner(model: onnx.ModelProto, target):
    """The message whose metadata_props an op edits, and a word for it."""
    if target is None or target == "model":
        return model, "model"
    if target == "" or target == "graph":
        return model.graph, "main graph"
    try:
        _, _, node, nid = find_node(model, target)
        return node, node_words(node, nid)
    except StudioError:
        pass
    ref = resolve_graph(model, target)
    words = graph_words(model, ref.path)  # "function GELU", "branch/then_branch"
    return ref.container, words if ref.is_function else f"graph {words}"


@edit_op(
    "set_metadata",
    required("key", NAME, "the entry's key"),
    required("value", STRING | NULL, "its new value; null deletes the entry"),
    optional(
        "target",
        STRING | NULL,
        'whose metadata: "model" (or null), "graph" (or "") for the main graph, a node id or name, '
        "or a graph or function path",
    ),
)
def set_metadata(model: onnx.ModelProto, op: dict) -> str:
    """Add, change (value a string) or delete (value null) one metadata_props entry on the model, or
    on the graph, node or function named by `target`. Other entries keep their order."""
    key, value = op["key"], op["value"]
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


@edit_op(
    "set_model_field",
    required("field", Enum(tuple(MODEL_FIELDS)), "the model field"),
    required("value", STRING | Integer(), "its new value: an integer for model_version, else a string"),
)
def set_model_field(model: onnx.ModelProto, op: dict) -> str:
    """Set one model field: doc_string, producer_name, producer_version, domain (strings) or
    model_version (an integer)."""
    field, value = op["field"], op["value"]
    kind = MODEL_FIELDS[field]
    if not isinstance(value, kind):  # which of the two the field takes
        words = "an integer" if kind is int else "a string"
        raise StudioError(
            "bad_field", f'set_model_field: field "value" must be {words} for {field}, got {kind_of(value)}'
        )
    old = getattr(model, field)
    setattr(model, field, value)
    return f"{field}: {old!r} -> {value!r}"
