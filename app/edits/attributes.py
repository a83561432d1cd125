"""Node attributes: set a value (keeping the type), add a new one, delete one."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import onnx
from onnx import AttributeProto

from ..errors import StudioError
from ..onnx_io.dtype_attributes import dtype_attributes
from ..onnx_io.function_calls import called_function, declared_attributes, functions_by_key
from ..onnx_io.traverse import op_schema, standard_domain
from ..views.trees import is_ensemble
from .attr_values import SETTABLE_TYPES, item_value, set_attribute_value
from .attribute_rules import check_attribute
from .batch_end import LateLine
from .field_types import ATTRIBUTE_VALUE, NAME, NODE, NUMBER, STRING
from .jsontypes import Array, Enum, Integer, Object, OneOf, optional, required
from .locate import find_node, node_words
from .ml_labels import zipmap_words
from .registry import edit_op


@edit_op(
    "set_attribute",
    required("node", NODE, "the node"),
    required("name", NAME, "the attribute's name"),
    required("value", ATTRIBUTE_VALUE, "the new value"),
    optional(
        "type",
        Enum(SETTABLE_TYPES),
        "the attribute type of a new attribute of an operator without a schema (an existing one must match)",
    ),
)
def set_attribute(model: onnx.ModelProto, op: dict) -> str | LateLine:
    """Set a node attribute's value. An existing attribute keeps its type (a value of another type
    is refused). A new attribute takes its type from the operator schema — for a call of a
    model-local function, from the function (an attribute it doesn't declare is refused) — or
    from `type` (an AttributeProto type name) where neither says. Graph attributes can't be set."""
    ref, _, node, nid = find_node(model, op["node"])
    name = op["name"]
    existing = [a for a in node.attribute if a.name == name]
    what = f"attribute {name!r} of {node_words(node, nid)}"
    value = dtype_by_name(node, name, op["value"], what)
    if existing:
        attr = existing[0]
        if attr.ref_attr_name:
            raise StudioError(
                "bad_value",
                f"{what} takes the value of the function's attribute {attr.ref_attr_name!r}, which each call"
                " sets (or leaves to the function's default): set it on the calls",
            )
        if "type" in op and op["type"] != AttributeProto.AttributeType.Name(attr.type):
            raise StudioError(
                "bad_value", f"{what} is of type {AttributeProto.AttributeType.Name(attr.type)}, not {op['type']}"
            )
        scratch = AttributeProto()
        scratch.CopyFrom(attr)
        set_attribute_value(scratch, value, what)  # validate before touching the model
        if scratch == attr:  # said so: History read "set to [1, 1, 1, 1]" of pads that were (QA35 #8)
            return f"{what} is already {value!r}: unchanged"
        was = _floats_of(attr)
        attr.CopyFrom(scratch)
        check_attribute(ref.container, node, nid, name)
        now = _floats_of(attr)
        bad = np.flatnonzero(~np.isfinite(now))  # a million thresholds: numpy, not a loop
        newly = [(k, float(now[k])) for k in bad.tolist() if k >= len(was) or np.isfinite(was[k])]
        said = f"{what} set to {value!r}{_nonfinite_items(node, name, newly)}"
        # judged when the batch is done: its next op may rename the ZipMap's labels too
        return LateLine(lambda: said + zipmap_words(ref.container, ref.path, node, name))
    node.attribute.append(new_attribute(model, ref.container, node, name, value, op.get("type"), what))
    check_attribute(ref.container, node, nid, name)
    return f"added {what} = {value!r}"


def _floats_of(attr: AttributeProto) -> np.ndarray:
    if attr.type == AttributeProto.FLOAT:
        return np.array([attr.f], np.float64)
    return np.array(attr.floats if attr.type == AttributeProto.FLOATS else [], np.float64)


MAX_ITEMS_SET = 100_000  # items one op sets: a whole list is set_attribute's
ITEM = Object(
    (
        required("index", Integer(minimum=0), "the item's position in the list, 0 for the first"),
        required("value", OneOf((NUMBER, STRING)), "its new value, of the list's type"),
    )
)


@edit_op(
    "set_attribute_items",
    required("node", NODE, "the node"),
    required("name", NAME, "the attribute's name: a FLOATS, INTS or STRINGS list"),
    required("items", Array(ITEM, min_items=1, max_items=MAX_ITEMS_SET), "the items to set"),
)
def set_attribute_items(model: onnx.ModelProto, op: dict) -> str:
    """Set some items of a list attribute by position, the rest left as they are: one threshold of
    a tree ensemble's 500,000 `nodes_values`, one weight of a linear model's `coefficients`,
    without sending the whole list back. Floats may be "NaN", "Infinity", "-Infinity"."""
    ref, _, node, nid = find_node(model, op["node"])
    name = op["name"]
    what = f"attribute {name!r} of {node_words(node, nid)}"
    attr = next((a for a in node.attribute if a.name == name), None)
    if attr is None:
        raise StudioError("unknown_attribute", f"{node_words(node, nid)} has no attribute {name!r}")
    field = {AttributeProto.FLOATS: "floats", AttributeProto.INTS: "ints", AttributeProto.STRINGS: "strings"}.get(
        attr.type
    )
    if field is None:
        kind = (
            AttributeProto.AttributeType.Name(attr.type)
            if attr.type in AttributeProto.AttributeType.values()
            else attr.type
        )
        raise StudioError(
            "bad_value", f"{what} is of type {kind}: only FLOATS, INTS and STRINGS lists have items to set"
        )
    values = getattr(attr, field)
    found = []
    for item in op["items"]:  # all checked before any is set
        k = item["index"]
        if k >= len(values):
            raise StudioError("bad_value", f"{what} has {len(values)} items: there is no item {k}")
        found.append((k, item_value(attr.type, item["value"], f"{what} item {k}")))
    was = {k: values[k] for k, _ in found}
    for k, v in found:
        values[k] = v
    check_attribute(ref.container, node, nid, name)
    shown = ", ".join(f"[{k}] = {_item_words(v)}" for k, v in found[:5])
    shown += f", … ({len(found)} in all)" if len(found) > 5 else ""
    return f"{what}: {shown}{_nonfinite_items(node, name, [(k, v) for k, v in found if _finite(was[k])])}"


def _item_words(v) -> str:
    """An item as the person wrote it: text for a string (not Python's b'…'), NaN as NaN."""
    if isinstance(v, bytes):
        return repr(v.decode("utf-8", "replace"))
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return repr(v)


def _finite(v) -> bool:
    return not isinstance(v, float) or math.isfinite(v)


# a tree ensemble's split values: a NaN there makes a test that never holds
_SPLIT_VALUES = frozenset({"nodes_values", "nodes_splits"})


def _nonfinite_items(node: onnx.NodeProto, name: str, items: Sequence[tuple[int, object]]) -> str:
    """The change line's warning for items now NaN or ±Inf that were finite ("; warning: [0] is
    now NaN: …"), else "". Stored, as set_initializer stores such weights, but said (QA21 F13)."""
    bad = [(k, v) for k, v in items if not _finite(v)]
    if not bad:
        return ""
    at = ", ".join(f"[{k}]" for k, _ in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    kinds = " or ".join(sorted({_item_words(v).lstrip("-") for _, v in bad}))
    line = f"; warning: {at} {'is' if len(bad) == 1 else 'are'} now {kinds}"
    if is_ensemble(node) and name in _SPLIT_VALUES and any(math.isnan(float(v)) for _, v in bad):  # type: ignore[arg-type]
        line += ": a comparison with a NaN threshold never holds, so such a split always takes its false branch"
    return line


def new_attribute(
    model, container, node, name: str, value, type_name: str | None, what: str | None = None
) -> AttributeProto:
    """A new AttributeProto for `node`, typed from the operator schema (or `type_name`)."""
    what = what or f"attribute {name!r} of the new {node.op_type} node"
    value = dtype_by_name(node, name, value, what)
    # the stubs type the enum field as their AttributeType class; at run time (and from Value()) it is an int
    attr = AttributeProto(name=name, type=_new_attribute_type(model, container, node, name, type_name, what))  # type: ignore[arg-type]
    set_attribute_value(attr, value, what)
    return attr


def dtype_by_name(node: onnx.NodeProto, name: str, value, what: str):
    """A data type attribute (Cast's `to`) given by name ("FLOAT16") as the number it stores;
    any other value as it is."""
    if not isinstance(value, str) or (standard_domain(node.domain), node.op_type, name) not in dtype_attributes():
        return value
    try:
        return onnx.TensorProto.DataType.Value(value.strip().upper())
    except ValueError:
        raise StudioError(
            "bad_value", f"{what} is a data type: a name such as FLOAT, FLOAT16, INT64 or its number, not {value!r}"
        ) from None


def _new_attribute_type(model, container, node, name, type_name, what) -> int:
    f = called_function(functions_by_key(model), node)
    if f is not None:
        return _function_attribute_type(f, node, name, type_name, what)
    schema = op_schema(model, container, node)
    if schema is not None and name in schema.attributes:
        return int(schema.attributes[name].type)  # type: ignore[call-overload]  # stub: AttrType has no __int__
    if schema is not None and type_name is None:
        known = ", ".join(sorted(schema.attributes)) or "none"
        raise StudioError("unknown_attribute", f"{node.op_type} has no attribute {name!r} (its attributes: {known})")
    if type_name is None:
        raise StudioError("missing_field", f'{what} is new and {node.op_type} has no schema here: give its "type"')
    return AttributeProto.AttributeType.Value(type_name)  # one of SETTABLE_TYPES: the contract checked it


def _function_attribute_type(f: onnx.FunctionProto, node, name: str, type_name: str | None, what: str) -> int:
    """The type of a call's new attribute: the one the function declares (by its default, or by
    the references to it in its body). An attribute it doesn't declare is refused."""
    declared = {a["name"]: a for a in declared_attributes(f)}
    if name not in declared:
        known = ", ".join(declared) or "none"
        raise StudioError(
            "unknown_attribute", f"function {f.name} declares no attribute {name!r} (its attributes: {known})"
        )
    kind = declared[name]["type"]
    if kind is None:
        if type_name is None:
            raise StudioError(
                "missing_field", f'{what} is new and function {f.name} says nothing of its type: give its "type"'
            )
        return AttributeProto.AttributeType.Value(type_name)
    if type_name is not None and AttributeProto.AttributeType.Value(type_name) != kind:
        raise StudioError(
            "bad_value", f"{what} is of type {AttributeProto.AttributeType.Name(kind)} in {f.name}, not {type_name}"
        )
    return int(kind)


@edit_op("delete_attribute", required("node", NODE, "the node"), required("name", NAME, "the attribute's name"))
def delete_attribute(model: onnx.ModelProto, op: dict) -> str:
    """Remove one attribute from a node (the operator's default then applies)."""
    ref, _, node, nid = find_node(model, op["node"])
    name = op["name"]
    for i, a in enumerate(node.attribute):
        if a.name == name:
            del node.attribute[i]
            check_attribute(ref.container, node, nid, "auto_pad")  # what may be left alone now
            return f"deleted attribute {name!r} of {node_words(node, nid)}{_left_unset(model, node, name)}"
    raise StudioError("unknown_attribute", f"{node_words(node, nid)} has no attribute {name!r}", 404)


def _left_unset(model: onnx.ModelProto, node: onnx.NodeProto, name: str) -> str:
    """What a call's attribute deleted leaves: the function's default, or (without one) the
    attributes of its body that refer to it unset, their operators' defaults applying."""
    f = called_function(functions_by_key(model), node)
    if f is None:
        return ""
    declared = next((a for a in declared_attributes(f) if a["name"] == name), None)
    if declared is None:
        return ""
    if declared["default"] is not None:
        return f": the call takes {f.name}'s default"
    users = ", ".join(declared["used_by"]) or "nothing in its body"
    return f": {f.name} has no default for it, so what refers to it ({users}) is left unset and its operator's default applies"
