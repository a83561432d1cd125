"""Types of the values onnxruntime's quantized operators (com.microsoft's QLinear family, QGemm,
MatMulNBits) make, where neither onnx's inference (it has no schemas for them) nor onnxruntime's symbolic
inference (it stops at the first one it doesn't know: "Incomplete symbolic shape inference")
gives any. A QOperator quantization writes them between standard operators, so everything after
the first one was untyped: no shapes on the drawing, FLOPs and activations unknown.

The rules below, keyed by op_type in the com.microsoft domain; type_rules.py walks the graph.
"""

from __future__ import annotations

import onnx
from onnx import defs

from .type_rules import Rule, dims_of, elem_of, tensor_type


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
    return [tensor_type(elem_of(a), _broadcast(dims_of(a), dims_of(b)))]


def _global_pool(node, ins):  # QLinearGlobalAveragePool: every spatial dim to 1
    x = dims_of(ins[0]) if ins else None
    if x is None or len(x) < 3:
        return [None]
    last = any(a.name == "channels_last" and a.i for a in node.attribute)
    dims = [x[0], *[1] * (len(x) - 2), x[-1]] if last else [x[0], x[1], *[1] * (len(x) - 2)]
    return [tensor_type(elem_of(ins[0]), dims)]


def _concat(node, ins):  # QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) triplets
    axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
    found = [dims_of(t) for t in ins[2::3]]
    parts = [p for p in found if p is not None]
    if not parts or len(parts) != len(found) or len({len(p) for p in parts}) != 1:
        return [None]
    rank = len(parts[0])
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank or not all(isinstance(p[axis], int) for p in parts):
        return [None]
    dims = list(parts[0])
    dims[axis] = sum(p[axis] for p in parts)
    return [tensor_type(elem_of(ins[2]), dims)]


def _gemm(node, ins):  # QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?
    a, b = (dims_of(ins[0]) if ins else None), (dims_of(ins[3]) if len(ins) > 3 else None)
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return [None]
    trans = {x.name: x.i for x in node.attribute}
    m = a[1] if trans.get("transA") else a[0]
    n = b[0] if trans.get("transB") else b[1]
    quantized = len(node.input) > 8 and node.input[8]  # y_zp given: the output is quantized as it
    elem = elem_of(ins[8]) if quantized else onnx.TensorProto.FLOAT
    return [tensor_type(elem, [m, n])]


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
        data = [t for t in given.values() if elem_of(t) != onnx.TensorProto.BOOL]
        if not data:
            return [None]
        # the standard operator may not take 8-bit integers (AveragePool): its shape of floats
        as_float = {
            x: tensor_type(onnx.TensorProto.FLOAT, dims_of(t)) or t if t in data else t for x, t in given.items()
        }
        schema = defs.get_schema(op_type, STANDARD_OPSET)
        out = onnx.shape_inference.infer_node_outputs(schema, stand_in, as_float).get(node.output[0])
        return [tensor_type(elem_of(data[0]), dims_of(out))]

    return rule


def _matmul_nbits(node, ins):  # MatMulNBits: A [..., K] times the N×K packed weights -> [..., N]
    a = dims_of(ins[0]) if ins else None
    n = next((x.i for x in node.attribute if x.name == "N"), None)
    if a is None or not a or n is None:
        return [None]
    return [tensor_type(elem_of(ins[0]), [*a[:-1], int(n)])]


def _tokenizer(node, ins):  # Tokenizer: X's dims and the tokens of the longest text (data-dependent)
    x = dims_of(ins[0]) if ins else None
    return [tensor_type(onnx.TensorProto.STRING, None if x is None else [*x, None])]


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
    "Tokenizer": _tokenizer,
    # onnxruntime's int4 LLM matmul: typed, the nodes after it are too (the shapes stopped at the
    # first one when onnxruntime's symbolic inference gave up on the model, QA24 #7)
    "MatMulNBits": _matmul_nbits,
}
