"""Which INT attributes hold a TensorProto.DataType (Cast's `to`, RandomNormal's `dtype`, …):
those onnx.defs documents as a data type or a precision. Found once from the schemas, so a
new operator's attribute is known without a list kept by hand; the page's table
(app/static/js/lib/format.js DTYPE_ATTRIBUTES) is checked against this one by a test."""

from __future__ import annotations

import re
from functools import lru_cache

import onnx
import onnx.defs

from .traverse import standard_domain

# INT attributes whose documentation speaks of a data type or a precision without holding one
NOT_DATA_TYPES = frozenset({("", "Attention", "qk_matmul_output_mode")})


@lru_cache(maxsize=1)
def dtype_attributes() -> frozenset[tuple[str, str, str]]:
    """(domain, op_type, attribute name) of every INT attribute that holds a data type."""
    found = set()
    for schema in onnx.defs.get_all_schemas_with_history():
        for name, attr in schema.attributes.items():
            if attr.type == onnx.defs.OpSchema.AttrType.INT and re.search(
                r"data ?type|precision", attr.description, re.I
            ):
                found.add((schema.domain, schema.name, name))
    return frozenset(found) - NOT_DATA_TYPES


def dtype_attribute_name(attr: onnx.AttributeProto, domain: str, op_type: str) -> str | None:
    """The data type an INT attribute such as Cast's `to` names ("INT64"), else None."""
    if attr.type != onnx.AttributeProto.INT or attr.i <= 0:
        return None
    if (standard_domain(domain), op_type, attr.name) not in dtype_attributes():
        return None
    try:
        return onnx.TensorProto.DataType.Name(attr.i)
    except ValueError:
        return None
