"""Graph inputs and outputs: their types and shapes; adding and removing outputs."""

from __future__ import annotations

import re

import onnx

from ..errors import NotFound, StudioError
from ..views.values import dim_json, shape_json
from .locate import check_kind, main_graph_value, require
from .registry import edit_op
from .shape_hints import hard_coded_hint, refresh_types

MAX_RANK = 64
_DIM_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-+*/ ()]*$")


def _dtype(op: dict, value) -> int:
    check_kind(op, "dtype", value, str)
    try:
        elem = onnx.TensorProto.DataType.Value(value)
    except ValueError:
        raise StudioError(
            "bad_value", f"{op['op']}: {value!r} is not a tensor element type (e.g. FLOAT, INT64, FLOAT16)"
        ) from None
    if elem == onnx.TensorProto.UNDEFINED:
        raise StudioError("bad_value", f"{op['op']}: dtype UNDEFINED is not allowed")
    return elem


def _fill_shape(op: dict, shape_proto: onnx.TensorShapeProto, shape) -> None:
    """Set `shape`; a dim sent as the model already has it at that index stays exactly as it is
    (a "?" or "-1" PaddlePaddle writes, its denotation): only the dims that change are checked."""
    check_kind(op, "shape", shape, list)
    if len(shape) > MAX_RANK:
        raise StudioError("bad_value", f"{op['op']}: rank {len(shape)} is more than {MAX_RANK}")
    old = list(shape_proto.dim)
    same = lambda d, o: type(d) is type(dim_json(o)) and d == dim_json(o)  # noqa: E731 (True == 1 is not a match)
    dims = []
    for i, d in enumerate(shape):
        # the dim at that index first, else one that moved (a dim removed before it)
        was = old[i] if i < len(old) and same(d, old[i]) else next((o for o in old if same(d, o)), None)
        if was is not None:
            kept = onnx.TensorShapeProto.Dimension()
            kept.CopyFrom(was)
            dims.append(kept)
        elif d is None:
            dims.append(onnx.TensorShapeProto.Dimension())
        elif isinstance(d, int) and not isinstance(d, bool):
            if not 0 <= d < 2**63:
                raise StudioError("bad_value", f"{op['op']}: dim {i} must be a non-negative 64-bit integer, got {d}")
            dims.append(onnx.TensorShapeProto.Dimension(dim_value=d))
        elif isinstance(d, str) and _DIM_PARAM.match(d):
            dims.append(onnx.TensorShapeProto.Dimension(dim_param=d))
        else:
            raise StudioError(
                "bad_value", f'{op["op"]}: dim {i} must be a number, a symbolic name like "batch", or null; got {d!r}'
            )
    shape_proto.Clear()
    shape_proto.dim.extend(dims)


@edit_op("set_io_shape", required=("name", "shape"), optional=("dtype", "update_types"))
def set_io_shape(model: onnx.ModelProto, op: dict) -> str:
    """Set the shape (each dim an integer, a symbolic name, or null for unknown; the whole shape
    null for unknown rank) and optionally the element type of a main-graph input or output.
    Dims sent as the model has them stay exactly as they are; its name, doc_string and other
    fields stay. `update_types: true` re-infers the main graph's value_info and outputs' shapes
    from it. The answer names nodes whose constant inputs still hard-code a value it changed."""
    name = require(op, "name")
    hits = [v for v in list(model.graph.input) + list(model.graph.output) if v.name == name]
    if not hits:
        raise NotFound("unknown_io", f"set_io_shape: the graph has no input or output named {name!r}")
    elem = _dtype(op, op["dtype"]) if op.get("dtype") is not None else None
    shape = op["shape"]
    update = op.get("update_types", False)
    check_kind(op, "update_types", update, bool)
    before = [shape_json(v.type.tensor_type.shape) if v.type.tensor_type.HasField("shape") else None for v in hits]
    for v in hits:
        if v.type.WhichOneof("value") not in (None, "tensor_type"):
            raise StudioError("bad_value", f"set_io_shape: {name!r} is a {v.type.WhichOneof('value')}, not a tensor")
        tt = v.type.tensor_type
        if elem is not None:
            tt.elem_type = elem
        elif not tt.elem_type:
            raise StudioError("missing_field", f'set_io_shape: {name!r} has no element type yet; give "dtype"')
        if shape is None:
            tt.ClearField("shape")
        else:
            _fill_shape(op, tt.shape, shape)
    said = f"{name!r} is now {onnx.TensorProto.DataType.Name(hits[0].type.tensor_type.elem_type)} {shape}"
    if update:
        said += f"; {refresh_types(model)}"
    if any(v.name == name for v in model.graph.input) and before[0]:
        said += hard_coded_hint(model, before[0], shape or [])
    return said


def _infer_type(model: onnx.ModelProto, tensor: str) -> onnx.TypeProto | None:
    g = model.graph
    for v in list(g.value_info) + list(g.input) + list(g.output):
        if v.name == tensor and v.HasField("type"):
            return v.type
    for t in g.initializer:
        if t.name == tensor:
            return onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        return None
    for v in inferred.graph.value_info:
        if v.name == tensor and v.HasField("type"):
            return v.type
    return None


@edit_op("add_output", required=("tensor",), optional=("dtype", "shape"))
def add_output(model: onnx.ModelProto, op: dict) -> str:
    """Make an intermediate tensor a graph output. Its type comes from value_info or shape
    inference, or from `dtype`/`shape` when those can't tell."""
    tensor = require(op, "tensor")
    g = model.graph
    if any(v.name == tensor for v in g.output):
        raise StudioError("already_output", f"add_output: {tensor!r} is already a graph output")
    produced = (
        any(tensor in n.output for n in g.node)
        or any(v.name == tensor for v in g.input)
        or any(t.name == tensor for t in g.initializer)
    )
    if not tensor or not produced:
        raise NotFound(
            "unknown_tensor", f"add_output: no node, input or initializer of the main graph produces {tensor!r}"
        )
    vi = onnx.ValueInfoProto(name=tensor)
    if op.get("dtype") is not None:
        vi.type.tensor_type.elem_type = _dtype(op, op["dtype"])
        if op.get("shape") is not None:
            _fill_shape(op, vi.type.tensor_type.shape, op["shape"])
    else:
        tp = _infer_type(model, tensor)
        if tp is None:
            raise StudioError(
                "unknown_type",
                f'add_output: the type of {tensor!r} can\'t be inferred; give "dtype" (and "shape")',
                422,
            )
        vi.type.CopyFrom(tp)
    g.output.append(vi)
    return f"added graph output {tensor!r}"


@edit_op("remove_output", required=("name",))
def remove_output(model: onnx.ModelProto, op: dict) -> str:
    """Remove a graph output (the tensor and its producer stay). The last output can't go."""
    name = require(op, "name")
    field, i = main_graph_value(model, name, "output")
    if len(field) == 1:
        raise StudioError("last_output", f"remove_output: {name!r} is the graph's only output; a model needs one")
    del field[i]
    return f"removed graph output {name!r}"


@edit_op("add_input", required=("name", "dtype", "shape"))
def add_input(model: onnx.ModelProto, op: dict) -> str:
    """Add a graph input: a new name, or an existing initializer's name (which then becomes an
    input the caller may override)."""
    name = require(op, "name")
    g = model.graph
    if not name or any(v.name == name for v in g.input):
        raise StudioError("name_taken", f"add_input: {name!r} is empty or already a graph input")
    if any(name in n.output for n in g.node):
        raise StudioError("name_taken", f"add_input: {name!r} is computed by a node; it can't also be an input")
    vi = onnx.ValueInfoProto(name=name)
    vi.type.tensor_type.elem_type = _dtype(op, op["dtype"])
    if op["shape"] is not None:
        _fill_shape(op, vi.type.tensor_type.shape, op["shape"])
    g.input.append(vi)
    return f"added graph input {name!r}"


@edit_op("remove_input", required=("name",))
def remove_input(model: onnx.ModelProto, op: dict) -> str:
    """Remove a graph input. Only when nothing reads it, or when an initializer of that name keeps
    supplying the value."""
    from .whole_model import names_read

    name = require(op, "name")
    field, i = main_graph_value(model, name, "input")
    g = model.graph
    backed = any(t.name == name for t in g.initializer)
    if not backed and (name in names_read(g) or any(o.name == name for o in g.output)):
        raise StudioError("in_use", f"remove_input: {name!r} is read by the graph; remove or rewire its readers first")
    del field[i]
    return f"removed graph input {name!r}" + (" (its initializer stays)" if backed else "")
