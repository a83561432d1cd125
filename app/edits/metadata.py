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
    optional(
        "tensor",
        NAME | NULL,
        "a value of the graph `target` names (the main graph when left out): its input, output, value_info"
        " and initializer entries of that name",
    ),
)
def set_metadata(model: onnx.ModelProto, op: dict) -> str:
    """Add, change (value a string) or delete (value null) one metadata_props entry on the model, or
    on the graph, node or function named by `target`; with `tensor`, on a value of that graph —
    each of its entries (a graph input, output, value_info, initializer) of that name, as its panel
    shows them together. Other entries keep their order."""
    if op.get("tensor") is not None:
        return _set_value_metadata(model, op)
    key, value = op["key"], op["value"]
    owner, where = _metadata_owner(model, op.get("target"))
    return _set_entry(owner.metadata_props, key, value, where)


def _set_value_metadata(model: onnx.ModelProto, op: dict) -> str:
    name, key, value = op["tensor"], op["key"], op["value"]
    target = op.get("target")
    ref = resolve_graph(model, "" if target in (None, "graph", "model") else target)
    g = ref.container
    if not isinstance(g, onnx.GraphProto):
        raise StudioError(
            "bad_value", "set_metadata: a function's values have no metadata (their names are all it has)"
        )
    owners: list[onnx.ValueInfoProto | onnx.TensorProto] = [
        v for v in [*g.input, *g.output, *g.value_info] if v.name == name
    ]
    owners += [t for t in g.initializer if t.name == name]
    where = f"value {name!r}" + (f" of {graph_words(model, ref.path)}" if ref.path else "")
    if not owners:
        raise StudioError(
            "unknown_tensor",
            f"set_metadata: the graph declares no value {name!r} (an input, output,"
            " value_info entry or initializer): declare its type first (infer_shapes)",
            404,
        )
    if value is None and not any(p.key == key for o in owners for p in o.metadata_props):
        raise StudioError("unknown_metadata", f"set_metadata: the {where} has no metadata key {key!r} to delete", 404)
    said = ""
    for o in owners:
        if value is None and not any(p.key == key for p in o.metadata_props):
            continue
        said = _set_entry(o.metadata_props, key, value, where)
    return said


def _set_entry(props, key: str, value: str | None, where: str) -> str:
    """Set, change or delete (value None) `key` in one metadata_props list."""
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
