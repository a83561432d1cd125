"""How many inputs a new node may read, by its operator's schema at the model's opset: said
before onnx's checker would (whose words name the If or Loop around a body's node, not the
node), with the attribute an input was at this opset (Unsqueeze's axes before opset 13)."""

from __future__ import annotations

from typing import NamedTuple

import onnx
from onnx import defs

from ..errors import StudioError
from ..onnx_io.function_calls import called_function, declared_attributes, functions_by_key
from ..onnx_io.traverse import op_schema, opset_version, standard_domain
from ..words import plural


def count_range(low: int, high: int, word: str) -> str:
    """ "1 input", "2 to 3 inputs", "1 or more inputs" (a variadic's max is 2**31 - 1)."""
    if low == high:
        return plural(low, word)
    if high >= 2**31 - 1:
        return f"{low} or more {word}s"
    return f"{low} to {high} {word}s"


def check_input_count(model: onnx.ModelProto, container, node: onnx.NodeProto, op_name: str) -> None:
    """Refuse a new node reading more or fewer inputs than its schema takes, or a call of a
    model-local function more than the function has (none known: no check)."""
    schema = op_schema(model, container, node)
    n = len(node.input)
    if schema is None:
        called = node_signature(model, container, node)
        if called is not None and n > called.max_input:  # onnxruntime: "actuals.size() <= formals.size() was false"
            raise StudioError(
                "schema_mismatch",
                f"{op_name}: function {node.op_type} takes {count_range(0, called.max_input, 'input')}; it would read {n}",
            )
        return
    if schema.min_input <= n <= schema.max_input:
        return
    version = opset_version(model, container, node.domain)
    reads = ", ".join(repr(x) for x in node.input) or "nothing"
    said = (
        f"{op_name}: {node.op_type} at opset {version} takes {count_range(schema.min_input, schema.max_input, 'input')};"
        f" it would read {n}: {reads}"
    )
    raise StudioError("schema_mismatch", said + _now_attributes(schema, node, n))


def _now_attributes(schema: defs.OpSchema, node: onnx.NodeProto, n: int) -> str:
    """ "; at this opset 'axes' is an attribute": the inputs past the schema's that a later
    version of the operator reads as inputs and this one takes as attributes."""
    try:
        newest = defs.get_schema(node.op_type, standard_domain(node.domain))
    except defs.SchemaError:
        return ""
    names = [
        f.name for f in newest.inputs[schema.max_input : n] if f.name in schema.attributes
    ]  # the positions this version has no input for
    if not names:
        return ""
    words = ", ".join(repr(x) for x in names)
    return f"; at this opset {words} {'is an attribute' if len(names) == 1 else 'are attributes'}"


class NodeSignature(NamedTuple):
    """What a node of an operator or a call of a model-local function may read, write and set."""

    min_input: int
    max_input: int
    min_output: int
    max_output: int
    attributes: set[str]
    required: list[str]


def node_signature(model: onnx.ModelProto, container, node: onnx.NodeProto) -> NodeSignature | None:
    """The operator schema's at the model's opset, else the model-local function's the node
    would call (a call may leave out inputs and outputs at the end, and set any attribute the
    function declares, none required: one left unset takes its default), else None."""
    schema = op_schema(model, container, node)
    if schema is not None:
        required = [k for k, a in schema.attributes.items() if a.required]
        return NodeSignature(
            schema.min_input, schema.max_input, schema.min_output, schema.max_output, set(schema.attributes), required
        )
    f = called_function(functions_by_key(model), node)
    if f is None:
        return None
    names = {a["name"] for a in declared_attributes(f)}
    return NodeSignature(0, len(f.input), 1, len(f.output), names, [])
