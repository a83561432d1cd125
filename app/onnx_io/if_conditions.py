"""Which branch an If takes, where the values it is decided by are known: its condition read
forward (value_passing.forward) from constants and the main graph's inputs, through nodes that
pass a value on (Identity, Not, Cast, Squeeze, a comparison with a constant, And ...), in the
graph holding the If and those around it. A run says which branch of each If ran, nested Ifs in
a branch that ran too (QA31 #8: a merged decoder's page never said whether the with-cache step
ran); Costs counts the branch the values given pick (a decoder's per-token cost is its
with-cache branch's). A condition computed from other values is not known: no branch is said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

from .address import node_id, subgraph_path
from .traverse import constant_value, standard_domain
from .value_passing import Scalar, forward

MAX_STEPS = 32  # nodes followed back from a condition

Fed = Callable[[str], object]  # the value a main-graph input was fed (an array), None: not fed


@dataclass
class Condition:
    """A condition's value (None: unknown), the main-graph inputs it comes from with the values
    they were fed (None: not fed), and the ops it went through (Identity left out), in order."""

    value: Scalar | None
    inputs: dict[str, Scalar | None] = field(default_factory=dict)
    ops: list[str] = field(default_factory=list)


class Scope:
    """Names as a graph's nodes see them: its own, then those of the graphs around it, out to
    the main graph (`graphs`, innermost first), whose inputs take the values `fed` gives."""

    def __init__(self, graphs: list[onnx.GraphProto], fed: Fed):
        self._graphs = [_Names(g) for g in graphs]
        self._fed = fed
        self._known: dict[str, Condition] = {}

    def value(self, name: str, steps: int = 0) -> Condition:
        if name not in self._known:
            self._known[name] = Condition(None)  # a cycle (a malformed graph) reads as unknown
            self._known[name] = self._read(name, steps)
        return self._known[name]

    def _read(self, name: str, steps: int) -> Condition:
        for depth, g in enumerate(self._graphs):
            weight = g.weights.get(name)
            if name in g.inputs:
                if depth < len(self._graphs) - 1:
                    return Condition(None)  # a body's own input: a value of its iteration
                value = _single(self._fed(name))
                if value is not None or weight is None:  # not fed: its initializer (IR < 4)
                    return Condition(value, {name: value})
            if weight is not None:
                return Condition(_single(_array(weight)))
            if name in g.writers:
                return self._made(g.writers[name], steps)
        return Condition(None)

    def _made(self, node: onnx.NodeProto, steps: int) -> Condition:
        if standard_domain(node.domain) != "" or steps >= MAX_STEPS:
            return Condition(None)
        if node.op_type == "Constant":
            t = constant_value(node)
            return Condition(_single(_array(t)) if t is not None else None)
        inputs: dict[str, Scalar | None] = {}
        ops: list[str] = []

        def value_of(name: str) -> Scalar | None:
            read = self.value(name, steps + 1)
            inputs.update(read.inputs)
            ops.extend(op for op in read.ops if op not in ops)
            return read.value

        value = forward(node, value_of)
        if node.op_type != "Identity":
            ops.append(node.op_type)
        return Condition(value, inputs, ops)


class _Names:
    """What one graph defines: its inputs, initializers and the nodes writing each value."""

    def __init__(self, g: onnx.GraphProto):
        self.inputs = {vi.name for vi in g.input}
        self.weights = {t.name: t for t in g.initializer}
        self.writers = {o: n for n in g.node for o in n.output if o}


def branches_ran(graph: onnx.GraphProto, fed: Fed) -> list[dict]:
    """[{"node", "name", "ran": "then_branch" | "else_branch", "value", "input"?, "negated"?,
    "inputs"?, "through"?}] for each If of `graph`, and of each branch that ran, whose condition
    is known (`said`)."""
    found: list[dict] = []

    def visit(graphs: list[onnx.GraphProto], path: str) -> None:
        scope = Scope(graphs, fed)
        for i, n in enumerate(graphs[0].node):
            if n.op_type != "If" or standard_domain(n.domain) != "" or not n.input or not n.input[0]:
                continue
            condition = scope.value(n.input[0])
            if condition.value is None:
                continue
            ran = "then_branch" if condition.value else "else_branch"
            nid = node_id(path, i)
            found.append({"node": nid, "name": n.name, "ran": ran, **said(condition)})
            branch = next((a.g for a in n.attribute if a.name == ran and a.HasField("g")), None)
            if branch is not None:
                visit([branch, *graphs], subgraph_path(nid, ran))

    visit([graph], "")
    return found


def said(condition: Condition) -> dict:
    """How a known condition came about: with no input, `value` is the constant it is; from one
    input, `input` and `value` its value fed (`negated`: through Not alone, an odd number of
    times); from several, `inputs` with theirs; `through`: the ops on the way, but for Not."""
    fed = {k: v for k, v in condition.inputs.items() if v is not None}
    if not fed:
        return {"value": condition.value}
    out: dict = {"input": next(iter(fed)), "value": next(iter(fed.values()))} if len(fed) == 1 else {"inputs": fed}
    if set(condition.ops) <= {"Not"}:
        if len(fed) == 1 and bool(out["value"]) != bool(condition.value):
            out["negated"] = True
    else:
        out["through"] = condition.ops
    return out


def _array(t: onnx.TensorProto) -> np.ndarray | None:
    """A constant's value when it is one element the graph holds (the store takes only tensors of
    KiBs out of it), else None."""
    if t.data_location == onnx.TensorProto.EXTERNAL or any(d != 1 for d in t.dims):
        return None
    try:
        return numpy_helper.to_array(t)
    except Exception:  # a type numpy can't read: no value to reason with
        return None


def _single(value) -> Scalar | None:
    """The one element of a tensor of numbers or booleans, as a Python value, else None."""
    if not isinstance(value, np.ndarray) or value.size != 1 or value.dtype.kind not in "biuf":
        return None
    return value.reshape(-1)[0].item()
