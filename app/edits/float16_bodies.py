"""float16 inside model-local functions. onnxruntime's float16 converter converts the graphs,
not the bodies of functions, whose calls then get float16 values that a float32 constant in the
body meets ("B has inconsistent type"). A body declares no types of its own (its calls give
them): what fixes a float32 there is a Constant's value, a Cast's target, a ConstantOfShape's
value, a dtype attribute. Those are made float16 here, as the converter does in a graph; a
Constant whose value is a reference to the function's attribute (`value_float = @gain`: float32
whatever the call gives) gets a Cast to float16 after it."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..onnx_io.function_calls import body_graphs
from ..onnx_io.traverse import standard_domain
from .names import fresh_name

FLOAT, FLOAT16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16
_FLOAT16_MAX = float(np.finfo(np.float16).max)
# operators whose integer attribute names the element type they make
_DTYPE_ATTRIBUTE = {
    "Cast": "to",
    "RandomNormal": "dtype",
    "RandomUniform": "dtype",
    "RandomNormalLike": "dtype",
    "RandomUniformLike": "dtype",
    "EyeLike": "dtype",
    "Multinomial": "dtype",
}
_FLOAT_VALUE = ("value_float", "value_floats")


def halve_bodies(model: onnx.ModelProto) -> int:
    """Make every model-local function's float32 constants, Cast targets and dtypes float16, in
    place; how many nodes changed."""
    changed = 0
    for f in model.functions:
        taken = _names(f)
        for g in list(body_graphs(f)):
            i = 0
            while i < len(g.node):
                n = g.node[i]
                how = _halve_node(n)
                changed += how != ""
                if how == "cast after":  # its output is float32 whatever the call gives
                    out = n.output[0]
                    n.output[0] = fresh_name(model, f"{out}_float32", taken)
                    taken.add(n.output[0])
                    g.node.insert(i + 1, helper.make_node("Cast", [n.output[0]], [out], to=FLOAT16))
                    i += 1
                i += 1
    return changed


def _names(f: onnx.FunctionProto) -> set[str]:
    """Every value name of a function's body and the graphs its nodes hold."""
    names = set(f.input) | set(f.output)
    for g in body_graphs(f):
        names |= {x for n in g.node for x in (*n.input, *n.output)}
        if isinstance(g, onnx.GraphProto):
            names |= {v.name for v in (*g.input, *g.output)} | {t.name for t in g.initializer}
    return names


def _halve_node(n: onnx.NodeProto) -> str:
    """Make one node's float32 float16: "changed" (in place), "cast after" (its output is a
    reference's float32: a Cast follows it), or "" (nothing of it is float32)."""
    if standard_domain(n.domain):
        return ""
    how = ""
    for a in n.attribute:
        if a.ref_attr_name:
            if n.op_type == "Constant" and a.name in _FLOAT_VALUE:
                return "cast after"
            continue
        if (
            a.type == onnx.AttributeProto.TENSOR
            and a.t.data_type == FLOAT
            and n.op_type in ("Constant", "ConstantOfShape")
        ):
            a.t.CopyFrom(_half(a.t))
            how = "changed"
        elif n.op_type == "Constant" and a.name in _FLOAT_VALUE:
            values = np.array([a.f] if a.name == "value_float" else list(a.floats), np.float32)
            tensor = _half(numpy_helper.from_array(values.reshape([] if a.name == "value_float" else [-1])))
            a.CopyFrom(helper.make_attribute("value", tensor))
            how = "changed"
        elif a.name == _DTYPE_ATTRIBUTE.get(n.op_type) and a.type == onnx.AttributeProto.INT and a.i == FLOAT:
            a.i = FLOAT16
            how = "changed"
    return how


def _half(t: onnx.TensorProto) -> onnx.TensorProto:
    """A float32 tensor as float16, values past float16's range clamped (as the converter does)."""
    values = np.clip(numpy_helper.to_array(t), -_FLOAT16_MAX, _FLOAT16_MAX).astype(np.float16)
    return numpy_helper.from_array(values, t.name)
