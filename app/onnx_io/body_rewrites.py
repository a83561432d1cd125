"""What write_out makes of onnx's function body before it takes a node's place (QA37): the
body as onnx defines it, with changes that keep the meaning and serve the reasons for
writing an operator out (an older opset, an NPU compiler, a node budget):

- only the nodes the node's own outputs need: LayerNormalization's body also computes its
  optional Mean and InvStdDev, 3 nodes nothing reads where the node has one output (#4);
- a Constant's value_float (value_int, …, opset 12 on) is its `value` tensor, which every opset
  takes (a Shrink written out at opset 9 was refused: QA38 #4), once the node's attributes fill
  the body's references (constant_as_tensor, from write_out);
- CastLike(x, like) of an input whose element type is known becomes Cast(x, to=T): CastLike
  exists from opset 15 on, and a Gelu written out had to be written out again to reach 13 (#2);
- the variance as the mean of squared deviations, not the mean of squares less the squared mean
  (onnx's LayerNormalization, GroupNormalization and MeanVarianceNormalization bodies): in float32 that difference loses
  every digit once the mean is large against the spread (0.73 off at a mean of 1000, NaN at
  3000, where onnxruntime's kernel stays within 4e-4) (#1).

Pure protobuf: run in the helper process beside onnx's body builder (offload_jobs)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .traverse import live_from, standard_domain, topological_order


def rewritten(body: onnx.FunctionProto, node: onnx.NodeProto, types: dict[str, int]) -> onnx.FunctionProto:
    """`body` for `node`, whose formal inputs have the element types `types` (where known)."""
    out = onnx.FunctionProto()
    out.CopyFrom(body)
    _casts_resolved(out, types)
    _two_pass_variance(out)
    _needed_only(out, node)
    return out


def _standard(n: onnx.NodeProto, op: str) -> bool:
    return n.op_type == op and standard_domain(n.domain) == ""


# Constant's value_* attributes (opset 12 on) as the one `value` tensor every opset's Constant takes
_VALUE_FIELDS = {
    "value_float": lambda a: numpy_helper.from_array(np.array(a.f, np.float32)),
    "value_floats": lambda a: numpy_helper.from_array(np.array(a.floats, np.float32)),
    "value_int": lambda a: numpy_helper.from_array(np.array(a.i, np.int64)),
    "value_ints": lambda a: numpy_helper.from_array(np.array(a.ints, np.int64)),
}


def constant_as_tensor(n: onnx.NodeProto) -> None:
    """A Constant of value_float (value_int, …) as one of `value`: those exist from opset 12 on,
    and a Shrink written out at opset 9 was refused for them (QA38 #4). Asked of a body's node
    once the node's attributes are filled in (a `value_float = @lambd` is the node's lambd)."""
    if not _standard(n, "Constant") or len(n.attribute) != 1 or n.attribute[0].name not in _VALUE_FIELDS:
        return
    if n.attribute[0].ref_attr_name:
        return
    tensor = _VALUE_FIELDS[n.attribute[0].name](n.attribute[0])
    del n.attribute[:]
    n.attribute.append(helper.make_attribute("value", tensor))


def _casts_resolved(body: onnx.FunctionProto, types: dict[str, int]) -> None:
    for n in body.node:
        if not _standard(n, "CastLike") or len(n.input) != 2 or n.input[1] not in types:
            continue
        to = types[n.input[1]]
        # saturate (opset 19) means something for float8 targets only; Cast before 19 lacks it
        kept = [a for a in n.attribute if a.name == "saturate" and to in _FLOAT8]
        n.op_type = "Cast"
        del n.input[1]
        del n.attribute[:]
        n.attribute.extend([helper.make_attribute("to", to), *kept])


_FLOAT8 = {
    onnx.TensorProto.FLOAT8E4M3FN,
    onnx.TensorProto.FLOAT8E4M3FNUZ,
    onnx.TensorProto.FLOAT8E5M2,
    onnx.TensorProto.FLOAT8E5M2FNUZ,
}


def _two_pass_variance(body: onnx.FunctionProto) -> None:
    """Var = Sub(ReduceMean(Mul(X, X)), Mul(M, M)) with M = ReduceMean(X) over the same axes
    becomes Var = ReduceMean(Mul(D, D)) with D = Sub(X, M) (the body's own deviation node when it
    has one); the nodes left unread go with _needed_only. A body of another shape stays as it is."""
    made = {x: n for n in body.node for x in n.output}
    for var in list(body.node):
        deviation = _mean_of_squares_less_square_of_mean(var, made)
        if deviation is None:
            continue
        x, mean, mean_of_square = deviation
        dev = next((n for n in body.node if _standard(n, "Sub") and list(n.input) == [x, mean]), None)
        added = []
        if dev is None:
            dev = helper.make_node("Sub", [x, mean], [f"{var.output[0]}_Deviation"])
            added.append(dev)
        squared = helper.make_node("Mul", [dev.output[0], dev.output[0]], [f"{var.output[0]}_DeviationSquared"])
        averaged = onnx.NodeProto()
        averaged.CopyFrom(mean_of_square)  # the same axes (attribute or input) and keepdims
        averaged.input[0] = squared.output[0]
        averaged.output[:] = [var.output[0]]
        averaged.name = ""
        at = list(body.node).index(var)
        del body.node[at]
        for k, n in enumerate([*added, squared, averaged]):
            body.node.insert(at + k, n)
    order = topological_order(body.node)
    if order is not None and order != list(range(len(body.node))):
        nodes = [body.node[i] for i in order]
        del body.node[:]
        body.node.extend(nodes)


def _mean_of_squares_less_square_of_mean(
    var: onnx.NodeProto, made: dict[str, onnx.NodeProto]
) -> tuple[str, str, onnx.NodeProto] | None:
    """(X, M, the ReduceMean of X²) when `var` computes E[X²] − E[X]²; else None."""
    if not _standard(var, "Sub") or len(var.input) != 2:
        return None
    mean_of_square, square_of_mean = made.get(var.input[0]), made.get(var.input[1])
    if mean_of_square is None or square_of_mean is None or not _standard(mean_of_square, "ReduceMean"):
        return None
    x, m = _squared(made.get(mean_of_square.input[0]), made), _squared(square_of_mean, made)
    mean = made.get(m) if m is not None else None
    if x is None or mean is None or not _standard(mean, "ReduceMean") or mean.input[0] != x:
        return None
    same_axes = list(mean.input[1:]) == list(mean_of_square.input[1:]) and sorted(
        a.SerializeToString() for a in mean.attribute
    ) == sorted(a.SerializeToString() for a in mean_of_square.attribute)
    return (x, m, mean_of_square) if same_axes and m is not None else None


def _squared(node: onnx.NodeProto | None, made: dict[str, onnx.NodeProto]) -> str | None:
    """What `node` squares: Mul(a, a), or Pow(a, 2) with 2 a Constant of the body
    (MeanVarianceNormalization's); else None."""
    if node is None or not node.input:
        return None
    if _standard(node, "Mul") and len(node.input) == 2 and node.input[0] == node.input[1]:
        return node.input[0]
    if _standard(node, "Pow") and len(node.input) == 2:
        exponent = made.get(node.input[1])
        if exponent is not None and _standard(exponent, "Constant") and _constant_value(exponent) == 2:
            return node.input[0]
    return None


def _constant_value(node: onnx.NodeProto) -> float | None:
    """A Constant node's one number (value_float, value_int or a one-element value), else None."""
    for a in node.attribute:
        if a.name == "value_float":
            return a.f
        if a.name == "value_int":
            return float(a.i)
        if a.name == "value":
            values = numpy_helper.to_array(a.t).ravel()
            return float(values[0]) if values.size == 1 else None
    return None


def _needed_only(body: onnx.FunctionProto, node: onnx.NodeProto) -> None:
    """Keep the body's nodes that the outputs `node` has depend on (an optional output it leaves
    out, or past its last, needs nothing)."""
    needed = {formal for formal, actual in zip(body.output, node.output, strict=False) if actual}
    keep = live_from(body.node, needed)
    nodes = [n for n, k in zip(body.node, keep, strict=True) if k]
    del body.node[:]
    body.node.extend(nodes)
