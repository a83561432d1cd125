"""Types of the values onnxruntime's quantized operators (com.microsoft's QLinear family, QGemm)
make, where neither onnx's inference (it has no schemas for them) nor onnxruntime's symbolic
inference (it stops at the first one it doesn't know: "Incomplete symbolic shape inference")
gives any. A QOperator quantization writes them between standard operators, so everything after
the first one was untyped: no shapes on the drawing, FLOPs and activations unknown.

One walk of the main graph in order: an output nothing types gets its type from the rule of its
operator below, or for a standard operator from onnx's inference of that one node on the types
the walk has found for its inputs (its constant inputs' values given: a Reshape's shape).
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from onnx import TypeProto, defs

from .traverse import graph_constants, opset_version, standard_domain

Rule = Callable[[onnx.NodeProto, list[TypeProto | None]], list[TypeProto | None]]
MAX_CONSTANT = 64  # elements of an initializer given to a node's inference as its value


def _tensor(elem_type: int, dims: list | None) -> TypeProto | None:
    if not elem_type or dims is None:
        return None
    t = onnx.helper.make_tensor_type_proto(elem_type, None)
    shape = t.tensor_type.shape
    for d in dims:
        dim = shape.dim.add()
        if isinstance(d, int):
            dim.dim_value = d
        elif d:
            dim.dim_param = d
    return t


def _dims(t: TypeProto | None) -> list | None:
    if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in t.tensor_type.shape.dim]


def _elem(t: TypeProto | None) -> int:
    return t.tensor_type.elem_type if t is not None and t.HasField("tensor_type") else 0


def _same_as_input(node, ins):  # QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax: X's type
    return [ins[0]] if ins and ins[0] is not None else [None]


def _broadcast(a: list | None, b: list | None) -> list | None:
    if a is None or b is None:
        return None
    a, b = [1] * (len(b) - len(a)) + a, [1] * (len(a) - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        else:
            return None  # symbolic dims that may differ: not ours to guess
    return out


def _binary(node, ins):  # QLinearAdd, QLinearMul: A, A_scale, A_zp, B, ...
    a, b = (ins[0] if ins else None), (ins[3] if len(ins) > 3 else None)
    return [_tensor(_elem(a), _broadcast(_dims(a), _dims(b)))]


def _global_pool(node, ins):  # QLinearGlobalAveragePool: every spatial dim to 1
    x = _dims(ins[0]) if ins else None
    if x is None or len(x) < 3:
        return [None]
    last = any(a.name == "channels_last" and a.i for a in node.attribute)
    dims = [x[0], *[1] * (len(x) - 2), x[-1]] if last else [x[0], x[1], *[1] * (len(x) - 2)]
    return [_tensor(_elem(ins[0]), dims)]


def _concat(node, ins):  # QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) triplets
    axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
    found = [_dims(t) for t in ins[2::3]]
    parts = [p for p in found if p is not None]
    if not parts or len(parts) != len(found) or len({len(p) for p in parts}) != 1:
        return [None]
    rank = len(parts[0])
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank or not all(isinstance(p[axis], int) for p in parts):
        return [None]
    dims = list(parts[0])
    dims[axis] = sum(p[axis] for p in parts)
    return [_tensor(_elem(ins[2]), dims)]


def _gemm(node, ins):  # QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?
    a, b = (_dims(ins[0]) if ins else None), (_dims(ins[3]) if len(ins) > 3 else None)
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return [None]
    trans = {x.name: x.i for x in node.attribute}
    m = a[1] if trans.get("transA") else a[0]
    n = b[0] if trans.get("transB") else b[1]
    quantized = len(node.input) > 8 and node.input[8]  # y_zp given: the output is quantized as it
    elem = _elem(ins[8]) if quantized else onnx.TensorProto.FLOAT
    return [_tensor(elem, [m, n])]


def _as_standard(op_type: str, picked: tuple[int, ...], drop: tuple[str, ...] = ()) -> Rule:
    """The rule of an operator that computes what a standard one does on some of its inputs
    (QLinearAveragePool: AveragePool on its X): onnx's inference of that one."""

    def rule(node, ins):
        if any(a.name == "channels_last" and a.i for a in node.attribute):
            return [None]  # a layout onnx's operator doesn't take
        inputs = [node.input[k] if k < len(node.input) else "" for k in picked]
        stand_in = onnx.helper.make_node(op_type, inputs, [node.output[0]])
        stand_in.attribute.extend(a for a in node.attribute if a.name not in drop)
        given = {x: ins[k] for k, x in zip(picked, inputs, strict=True) if x and k < len(ins) and ins[k] is not None}
        data = [t for t in given.values() if _elem(t) != onnx.TensorProto.BOOL]
        if not data:
            return [None]
        # the standard operator may not take 8-bit integers (AveragePool): its shape of floats
        as_float = {x: _tensor(onnx.TensorProto.FLOAT, _dims(t)) or t if t in data else t for x, t in given.items()}
        schema = defs.get_schema(op_type, STANDARD_OPSET)
        out = onnx.shape_inference.infer_node_outputs(schema, stand_in, as_float).get(node.output[0])
        return [_tensor(_elem(data[0]), _dims(out))]

    return rule


STANDARD_OPSET = 21  # the opset of the standard operators the rules stand in with

RULES: dict[str, Rule] = {
    "QLinearAveragePool": _as_standard("AveragePool", (0,), ("channels_last",)),
    "QLinearWhere": _as_standard("Where", (0, 1, 4)),
    "QLinearSigmoid": _same_as_input,
    "QLinearLeakyRelu": _same_as_input,
    "QLinearSoftmax": _same_as_input,
    "QLinearAdd": _binary,
    "QLinearMul": _binary,
    "QLinearGlobalAveragePool": _global_pool,
    "QLinearConcat": _concat,
    "QGemm": _gemm,
}


def fill_runtime_op_types(inferred: onnx.ModelProto) -> int:
    """Type, in place, the main graph's values that onnxruntime's quantized operators make and
    those after them (value_info added): how many. Only where such an operator is."""
    g = inferred.graph
    if not any(standard_domain(n.domain) == "com.microsoft" and n.op_type in RULES for n in g.node):
        return 0
    types: dict[str, TypeProto] = {}
    for v in [*g.input, *g.value_info, *g.output]:
        if v.type.WhichOneof("value") and (not v.type.HasField("tensor_type") or v.type.tensor_type.elem_type):
            types.setdefault(v.name, v.type)
    constants = graph_constants(g, MAX_CONSTANT)  # given to a node's inference: a Reshape's shape
    for init in g.initializer:
        types.setdefault(init.name, onnx.helper.make_tensor_type_proto(init.data_type, list(init.dims)))
    found = 0
    for node in g.node:
        missing = [x for x in node.output if x and x not in types]
        if not missing:
            continue
        ins = [types.get(x) if x else None for x in node.input]
        try:
            outs = _node_types(inferred, g, node, ins, constants)
        except Exception:  # a node onnx can't infer on these types: its outputs stay untyped
            continue
        for name, typed in zip(node.output, outs, strict=False):
            if name in missing and typed is not None and _elem(typed):
                types[name] = typed
                g.value_info.append(onnx.helper.make_value_info(name, typed))
                found += 1
    return found


def _node_types(model, g, node, ins, constants) -> list[TypeProto | None]:
    domain = standard_domain(node.domain)
    if domain == "com.microsoft":
        rule = RULES.get(node.op_type)
        return rule(node, ins) if rule else []
    if domain not in ("", "ai.onnx.ml") or any(t is None for t, x in zip(ins, node.input, strict=True) if x):
        return []
    version = opset_version(model, g, node.domain)
    if version is None:
        return []
    schema = defs.get_schema(node.op_type, version, domain)
    given = {x: t for x, t in zip(node.input, ins, strict=True) if x and t is not None}
    data = {x: constants[x] for x in node.input if x in constants}
    out = onnx.shape_inference.infer_node_outputs(schema, node, given, data, opset_imports=list(model.opset_import))
    return [out.get(x) for x in node.output]
