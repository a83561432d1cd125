"""An attribute at the default its operator's schema gives it: writing it and leaving it out mean
the same. Exporters differ there (torch's legacy exporter leaves `auto_pad` out, its dynamo
exporter writes `auto_pad = 'NOTSET'`; dynamo writes `noop_with_empty_axes = 0` on every
ReduceMean), and onnx's version converter keeps such an attribute on a node it takes to an
opset whose schema no longer has it."""

from __future__ import annotations

import onnx
from onnx import AttributeProto, defs


def default_of(schema: defs.OpSchema | None, name: str) -> AttributeProto | None:
    """The default value `schema` gives its attribute `name` (an AttributeProto), or None: no
    schema, no such attribute, or one without a default (required, or optional and unset)."""
    if schema is None:
        return None
    declared = schema.attributes.get(name)
    if declared is None:
        return None
    default = declared.default_value
    if default is None or default.type == AttributeProto.UNDEFINED:
        return None
    return default


def at_default(a: AttributeProto, default: AttributeProto | None) -> bool:
    """Whether attribute `a` holds the value `default` (of default_of): of its type, equal. A
    reference to a function's attribute (`@alpha`) holds no value of its own: never."""
    if default is None or a.ref_attr_name or a.type != default.type:
        return False
    return bool(onnx.helper.get_attribute_value(a) == onnx.helper.get_attribute_value(default))


def value_words(a: AttributeProto) -> str:
    """An attribute's value as a change line writes it: `0`, `'NOTSET'`, `0.01`, `[1, 1]`."""
    if a.ref_attr_name:
        return f"@{a.ref_attr_name}"
    if a.type == AttributeProto.FLOAT:  # float32: its shortest form, not a double's digits
        return f"{a.f:.7g}"
    if a.type == AttributeProto.FLOATS:
        return "[" + ", ".join(f"{v:.7g}" for v in a.floats) + "]"
    if a.type == AttributeProto.STRING:
        return repr(a.s.decode("utf-8", "replace"))
    if a.type == AttributeProto.STRINGS:
        return str([v.decode("utf-8", "replace") for v in a.strings])
    if a.type in (AttributeProto.INT, AttributeProto.INTS):
        return str(onnx.helper.get_attribute_value(a))
    return AttributeProto.AttributeType.Name(a.type).lower()  # a tensor, a graph: its kind
