"""Node attributes: set a value (keeping the type), add a new one, delete one."""

from __future__ import annotations

import onnx
from onnx import AttributeProto

from ..errors import StudioError
from ..onnx_io.traverse import op_schema
from .attr_values import SETTABLE_TYPES, set_attribute_value
from .field_types import ATTRIBUTE_VALUE, NAME, NODE
from .jsontypes import Enum, optional, required
from .locate import find_node, node_words
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
def set_attribute(model: onnx.ModelProto, op: dict) -> str:
    """Set a node attribute's value. An existing attribute keeps its type (a value of another type
    is refused). A new attribute takes its type from the operator schema, or from `type`
    (an AttributeProto type name) for operators without one. Graph attributes can't be set."""
    ref, _, node, nid = find_node(model, op["node"])
    name, value = op["name"], op["value"]
    existing = [a for a in node.attribute if a.name == name]
    what = f"attribute {name!r} of {node_words(node, nid)}"
    if existing:
        attr = existing[0]
        if attr.ref_attr_name:
            raise StudioError(
                "bad_value", f"{what} refers to function attribute {attr.ref_attr_name!r}; set that instead"
            )
        if "type" in op and op["type"] != AttributeProto.AttributeType.Name(attr.type):
            raise StudioError(
                "bad_value", f"{what} is of type {AttributeProto.AttributeType.Name(attr.type)}, not {op['type']}"
            )
        scratch = AttributeProto()
        scratch.CopyFrom(attr)
        set_attribute_value(scratch, value, what)  # validate before touching the model
        attr.CopyFrom(scratch)
        return f"{what} set to {value!r}"
    node.attribute.append(new_attribute(model, ref.container, node, name, value, op.get("type"), what))
    return f"added {what} = {value!r}"


def new_attribute(
    model, container, node, name: str, value, type_name: str | None, what: str | None = None
) -> AttributeProto:
    """A new AttributeProto for `node`, typed from the operator schema (or `type_name`)."""
    what = what or f"attribute {name!r} of the new {node.op_type} node"
    # the stubs type the enum field as their AttributeType class; at run time (and from Value()) it is an int
    attr = AttributeProto(name=name, type=_new_attribute_type(model, container, node, name, type_name, what))  # type: ignore[arg-type]
    set_attribute_value(attr, value, what)
    return attr


def _new_attribute_type(model, container, node, name, type_name, what) -> int:
    schema = op_schema(model, container, node)
    if schema is not None and name in schema.attributes:
        return int(schema.attributes[name].type)  # type: ignore[call-overload]  # stub: AttrType has no __int__
    if schema is not None and type_name is None:
        known = ", ".join(sorted(schema.attributes)) or "none"
        raise StudioError("unknown_attribute", f"{node.op_type} has no attribute {name!r} (its attributes: {known})")
    if type_name is None:
        raise StudioError("missing_field", f'{what} is new and {node.op_type} has no schema here: give its "type"')
    return AttributeProto.AttributeType.Value(type_name)  # one of SETTABLE_TYPES: the contract checked it


@edit_op("delete_attribute", required("node", NODE, "the node"), required("name", NAME, "the attribute's name"))
def delete_attribute(model: onnx.ModelProto, op: dict) -> str:
    """Remove one attribute from a node (the operator's default then applies)."""
    _, _, node, nid = find_node(model, op["node"])
    name = op["name"]
    for i, a in enumerate(node.attribute):
        if a.name == name:
            del node.attribute[i]
            return f"deleted attribute {name!r} of {node_words(node, nid)}"
    raise StudioError("unknown_attribute", f"{node_words(node, nid)} has no attribute {name!r}", 404)
