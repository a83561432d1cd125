"""What ONNX's operator specs say an attribute's value must be, where onnx's checker doesn't
check it and onnxruntime refuses it in its own words ("Unknown AutoPadType String", "Attribute
pads has incorrect size"): a string from a closed set, a conv's spatial lists of the right
length, auto_pad and pads not both. Checked on the node an edit set an attribute of, and said
in one line naming the node, what the value must be, and what was given. Judged on the batch's
result, as the other gates are: a refusal of the result (422), which allow_invalid stores past."""

from __future__ import annotations

from typing import NamedTuple

import onnx
from onnx import numpy_helper

from ..errors import StudioError
from ..onnx_io.address import node_id
from ..onnx_io.attribute_choices import PADDED, attribute_choices
from ..onnx_io.traverse import standard_domain
from .batch_end import at_batch_end
from .locate import node_words

# list attributes of a conv or pool with one value per spatial axis (pads: two)
_PER_AXIS = {"kernel_shape": 1, "strides": 1, "dilations": 1, "pads": 2, "output_padding": 1, "output_shape": 1}
_POSITIVE = ("kernel_shape", "strides", "dilations")
SPEC_REFUSAL = "the edit breaks its operator's spec: "  # onnx's checker passes it; onnxruntime refuses it
# integer attributes the spec gives as a switch, 0 or 1, whatever the operator
_FLAGS = frozenset(
    [
        "transA",
        "transB",
        "count_include_pad",
        "ceil_mode",
        "keepdims",
        "select_last_index",
        "exclusive",
        "reverse",
        "center_point_box",
        "noop_with_empty_axes",
        "largest",
        "sorted",
        "storage_order",
        "training_mode",
        "upper",
        "detect_negative",
        "detect_positive",
        "fmod",
        "periodic",
        "onesided",
        "inverse",
        "is_case_sensitive",
        "align_corners",
        "linear_before_reset",
        "input_forget",
        "new_axis",
    ]
)
_GROUPED = ("Conv", "ConvTranspose", "ConvInteger", "QLinearConv")


def check_attribute(graph, node: onnx.NodeProto, nid: str, name: str) -> None:
    """Judge, when the batch is done (a later op may set the rest: delete pads, a new weight),
    the value the node's attribute `name` has then."""
    if standard_domain(node.domain) != "":
        return  # another domain's operator of the same name may take other values
    at_batch_end(lambda: _judged(graph, node, nid, name))


def _judged(graph, node: onnx.NodeProto, nid: str, name: str) -> None:
    """_judge, a refusal naming the node by where it is once the batch is done."""
    try:
        _judge(graph, node, nid, name)
    except StudioError as exc:
        at = next((i for i, n in enumerate(graph.node) if n is node), None)
        exc.node = node_id(nid.rpartition("/")[0], at) if at is not None else None
        raise


def _judge(graph, node: onnx.NodeProto, nid: str, name: str) -> None:
    if not any(n is node for n in graph.node):
        return  # deleted later in the batch
    attr = next((a for a in node.attribute if a.name == name), None)
    what = f"attribute {name!r} of {node_words(node, nid)}"
    choices = attribute_choices(node.op_type, node.domain, name)
    if attr is not None and choices and attr.type == onnx.AttributeProto.STRING:
        got = attr.s.decode("utf-8", "replace")
        if got not in choices:
            _refuse(f"{what} must be one of {', '.join(choices)}; got {got!r}")
    if attr is not None and attr.type == onnx.AttributeProto.INT:
        if name in _FLAGS and attr.i not in (0, 1):
            _refuse(f"{what} is a switch: 0 or 1; got {attr.i}")
        if name == "group" and node.op_type in _GROUPED and attr.i < 1:
            _refuse(f"{what} must be a whole number from 1; got {attr.i}")
    if attr is not None and node.op_type in PADDED and name in _PER_AXIS and attr.type == onnx.AttributeProto.INTS:
        _check_per_axis(graph, node, what, name, list(attr.ints))
    if node.op_type in PADDED and name in ("auto_pad", "pads"):
        _check_auto_pad(node, nid)


def _refuse(message: str) -> None:
    """A value the spec rules out: the result is invalid (allow_invalid stores past it)."""
    raise StudioError("invalid_result", f"{SPEC_REFUSAL}{message}", 422)


def _check_per_axis(graph, node: onnx.NodeProto, what: str, name: str, values: list[int]) -> None:
    axes = _spatial_axes(graph, node, name)
    per = _PER_AXIS[name]
    if axes is not None and len(values) != per * axes:
        layout = (
            f"the start of each of its {axes} spatial axes, then the end of each"
            if per == 2
            else f"one for each of its {axes} spatial axes"
        )
        _refuse(f"{what} needs {per * axes} values ({layout}); got {len(values)}: {values}")
    if name in _POSITIVE and any(v < 1 for v in values):
        _refuse(f"{what} must be whole numbers from 1; got {values}")
    if name == "pads" and any(v < 0 for v in values):
        _refuse(f"{what} must be whole numbers from 0 (the pixels added before and after each axis); got {values}")
    weight = _weight(graph, node)
    if name == "kernel_shape" and weight is not None and len(weight.dims) == len(values) + 2:
        kernel = weight.dims[2:]  # onnxruntime refuses any other kernel than its weight's
        if values != kernel:
            _refuse(
                f"{what} must be {kernel}, the last {len(kernel)} dims of its weight {weight.name!r}"
                f" ⟨{'×'.join(map(str, weight.dims))}⟩; got {values} ({weight.change})"
            )


def _spatial_axes(graph, node: onnx.NodeProto, skip: str) -> int | None:
    """How many spatial axes the node works on: its weight's rank (a conv's), its data input's
    declared rank, else another of its per-axis attributes (what the same batch may be changing
    too, so the last word); None when unknown."""
    weight = _weight(graph, node)
    if weight is not None and len(weight.dims) > 2:
        return len(weight.dims) - 2
    data = node.input[0] if node.input else ""
    for v in [*getattr(graph, "input", ()), *getattr(graph, "value_info", ())]:
        if data and v.name == data and v.type.tensor_type.HasField("shape") and len(v.type.tensor_type.shape.dim) > 2:
            return len(v.type.tensor_type.shape.dim) - 2
    for a in node.attribute:
        if a.name != skip and a.name in ("kernel_shape", "strides", "dilations") and len(a.ints):
            return len(a.ints)
    return None


class _Weight(NamedTuple):
    name: str
    dims: list[int]
    change: str  # how a person changes it, said with a refusal


def _weight(graph, node: onnx.NodeProto) -> _Weight | None:
    """A conv's weight, when its graph fixes its shape: an initializer, a Constant's value, a
    ConstantOfShape of constant dims (how the wheel's light models make theirs), or a value
    declared with every dim a number. A function body's weights come from its calls: None."""
    at = {"Conv": 1, "ConvTranspose": 1, "ConvInteger": 1, "QLinearConv": 3}.get(node.op_type)
    if at is None or len(node.input) <= at or not node.input[at]:
        return None
    name = node.input[at]
    dims = _constant_dims(graph, name)
    if dims is None:
        return None
    producer = next((n for n in graph.node if name in n.output), None)
    initializer = any(t.name == name for t in getattr(graph, "initializer", ()))
    change = (
        "set_initializer changes the weight"
        if initializer or producer is None
        else f"the {producer.op_type} making it sets its shape"
    )
    return _Weight(name, dims, change)


def _constant_dims(graph, name: str) -> list[int] | None:
    """The shape of value `name` when its graph fixes it (see _weight), else None."""
    for t in getattr(graph, "initializer", ()):
        if t.name == name:
            return list(t.dims)
    producer = next((n for n in graph.node if name in n.output), None)
    if producer is not None and standard_domain(producer.domain) == "" and producer.op_type == "Constant":
        value = next(
            (a for a in producer.attribute if a.name == "value" and a.type == onnx.AttributeProto.TENSOR), None
        )
        return list(value.t.dims) if value is not None else None
    if producer is not None and standard_domain(producer.domain) == "" and producer.op_type == "ConstantOfShape":
        shape = _small_ints(graph, producer.input[0] if producer.input else "")
        if shape is not None:
            return shape
    for v in (*getattr(graph, "value_info", ()), *getattr(graph, "input", ())):
        if v.name == name and v.type.tensor_type.HasField("shape"):
            dims = v.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") for d in dims):
                return [d.dim_value for d in dims]
    return None


def _small_ints(graph, name: str) -> list[int] | None:
    """The values of a small 1-D integer constant (an initializer or a Constant), else None."""
    tensor = next((t for t in getattr(graph, "initializer", ()) if t.name == name), None)
    if tensor is None:
        producer = next((n for n in graph.node if name in n.output), None)
        if producer is not None and producer.op_type == "Constant" and standard_domain(producer.domain) == "":
            tensor = next(
                (a.t for a in producer.attribute if a.name == "value" and a.type == onnx.AttributeProto.TENSOR), None
            )
    if (
        tensor is None
        or len(tensor.dims) != 1
        or tensor.dims[0] > 8
        or tensor.data_location == onnx.TensorProto.EXTERNAL
    ):
        return None
    if tensor.data_type not in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
        return None
    return [int(v) for v in numpy_helper.to_array(tensor).tolist()]


def _check_auto_pad(node: onnx.NodeProto, nid: str) -> None:
    attrs = {a.name: a for a in node.attribute}
    auto_pad = attrs["auto_pad"].s.decode("utf-8", "replace") if "auto_pad" in attrs else "NOTSET"
    if auto_pad != "NOTSET" and "pads" in attrs:
        _refuse(
            f"{node_words(node, nid)} can't have both auto_pad {auto_pad} and pads {list(attrs['pads'].ints)}"
            " (the spec takes one or the other): delete pads, or set auto_pad to NOTSET"
        )
