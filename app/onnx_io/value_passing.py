"""Ops that pass one small value on — a flag or a count going through Identity, Cast, Not, a
comparison with a constant, an Add of one — read both ways: forward, what such a node makes of
known inputs (which branch an If takes, given the inputs fed: if_conditions.py), and backward,
what its input must be for its output to be a wanted value (what to feed a graph input so that a
Loop runs or an If takes a branch: loop_counts.py). One table of these ops serves both.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import onnx

from .sizes import INTEGER_TYPES
from .traverse import standard_domain

Scalar = int | float | bool

# ops whose output holds their first input's value (or their only input's)
SAME = frozenset(
    {"Identity", "Cast", "CastLike", "Squeeze", "Unsqueeze", "Reshape", "Flatten", "Expand", "Ceil", "Floor"}
)
COMPARE: dict[str, Callable[[Scalar, Scalar], bool]] = {
    "Less": lambda a, b: a < b,
    "LessOrEqual": lambda a, b: a <= b,
    "Greater": lambda a, b: a > b,
    "GreaterOrEqual": lambda a, b: a >= b,
    "Equal": lambda a, b: a == b,
}
_ARITHMETIC: dict[str, Callable[[Scalar, Scalar], Scalar]] = {
    "Add": lambda a, b: a + b,
    "Sub": lambda a, b: a - b,
    "Mul": lambda a, b: a * b,
}


def one_value_input(vi: onnx.ValueInfoProto) -> bool:
    """Whether a graph input is a tensor of one value (a scalar, or every dim 1): what a flag or
    a count is; an image that a mangled graph wires to a Loop or an If is none."""
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return False
    return all(d.HasField("dim_value") and d.dim_value == 1 for d in vi.type.tensor_type.shape.dim)


def forward(node: onnx.NodeProto, value_of: Callable[[str], Scalar | None]) -> Scalar | None:
    """The one value a standard node of these ops makes of its inputs' values (`value_of(input)`,
    None: unknown, asked only for the inputs that count), or None when it can't be told."""
    op, ins = node.op_type, [x for x in node.input]
    if standard_domain(node.domain) != "" or not ins or not ins[0]:
        return None
    if op in SAME:
        value = value_of(ins[0])
        return None if value is None else _passed(node, value)
    if op == "Not":
        value = value_of(ins[0])
        return None if value is None else not value
    if op in ("And", "Or"):
        values = [value_of(x) for x in ins]
        decisive = op == "Or"  # a false And or a true Or needs no other input
        if any(v is not None and bool(v) == decisive for v in values):
            return decisive
        return None if any(v is None for v in values) else not decisive
    if op in ("Min", "Max") or (len(ins) == 2 and (op in COMPARE or op in _ARITHMETIC)):
        read = [value_of(x) for x in ins]
        known = [v for v in read if v is not None]
        if len(known) < len(read):
            return None
        if op in ("Min", "Max"):
            return (min if op == "Min" else max)(known)
        a, b = known
        return COMPARE[op](a, b) if op in COMPARE else _ARITHMETIC[op](a, b)
    return None


def _passed(node: onnx.NodeProto, value: Scalar) -> Scalar:
    """What a node of SAME makes of its input's value: a Cast converts it, Ceil/Floor round it."""
    if node.op_type == "Ceil":
        return math.ceil(value)
    if node.op_type == "Floor":
        return math.floor(value)
    if node.op_type == "Cast":
        to = next((a.i for a in node.attribute if a.name == "to"), None)
        if to == onnx.TensorProto.BOOL:
            return bool(value)
        if to in INTEGER_TYPES:
            return int(value)  # onnxruntime truncates toward 0
        return float(value)
    return value


def backward(node: onnx.NodeProto, want: Scalar, constants: dict[str, float], small: int) -> list[tuple[str, Scalar]]:
    """(input, the value it needs) for the node's output to be `want`, as far as can be told;
    `constants`: the one-element constants by name; `small`: the count tried first where a
    comparison holds for many (a loop's `i < max_len` with max_len `small`)."""
    op, ins = node.op_type, [x for x in node.input]
    if op in SAME:
        return [(ins[0], want)]
    if op == "Not":
        return [(ins[0], not want)] if isinstance(want, bool) else []
    if op in ("And", "Or") and isinstance(want, bool):
        return [(x, want) for x in ins if x not in constants]
    if op in ("Min", "Max"):
        return [(x, want) for x in ins if x not in constants]
    if op in COMPARE and isinstance(want, bool) and len(ins) == 2:
        return _compared(op, ins, want, constants, small)
    if op in _ARITHMETIC and len(ins) == 2 and not isinstance(want, bool):
        a, b = ins
        if a in constants and b in constants:
            return []
        if b in constants or a in constants:
            x, c, first = (a, constants[b], True) if b in constants else (b, constants[a], False)
            if op == "Add":
                return [(x, want - c)]
            if op == "Sub":
                return [(x, want + c if first else c - want)]
            return [(x, math.ceil(want / c))] if c > 0 else []
        return [(a, want), (b, want)]  # both made up: the count comes out bigger, still above 0
    return []


def _compared(op: str, ins: list[str], want: bool, constants: dict[str, float], small: int) -> list[tuple[str, Scalar]]:
    """The input of a comparison with a constant, and a value for which it holds `want`: a
    small count first, else one next to the constant."""
    a, b = ins
    if (a in constants) == (b in constants):
        return []
    x, c = (a, constants[b]) if b in constants else (b, constants[a])
    holds = COMPARE[op]
    for value in (small, c + small, c - 1, c):
        if bool(holds(value, c) if x == a else holds(c, value)) == want:
            return [(x, value)]
    return []
