"""Which branch of each main-graph If a run took, where the inputs fed tell (QA31 #8: a merged
decoder's page and answer never said whether the with-cache branch ran): its condition is a
graph input (an Optimum `use_cache_branch`) or a constant, maybe through Identity and Not. A
condition the graph computes from values is not followed: nothing is said of that If."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import numpy_helper

from .address import node_id
from .traverse import constant_value, standard_domain

MAX_STEPS = 16  # Identity / Not nodes followed back from a condition


def branches_ran(graph: onnx.GraphProto, fed: Callable[[str], object]) -> list[dict]:
    """[{"node", "name", "ran": "then_branch" | "else_branch", "input"?, "value", "negated"?}]
    for each If of `graph` whose condition is known: "input" names the graph input it comes
    from and "value" is that input's value ("negated": through an odd number of Not), or, with
    no "input", the constant it is. `fed(name)`: the value a graph input was fed (None: not fed)."""
    writers = {o: n for n in graph.node for o in n.output if o}
    weights = {t.name: t for t in graph.initializer}
    inputs = {v.name for v in graph.input}
    found: list[dict] = []
    for i, n in enumerate(graph.node):
        if n.op_type != "If" or standard_domain(n.domain) != "" or not n.input:
            continue
        known = _condition(n.input[0], writers, weights, inputs, fed)
        if known is None:
            continue
        source, value, negated = known
        ran = "then_branch" if value != negated else "else_branch"
        found.append(
            {
                "node": node_id("", i),
                "name": n.name,
                "ran": ran,
                **({"input": source} if source is not None else {}),
                "value": value,
                **({"negated": True} if negated else {}),
            }
        )
    return found


def _condition(name, writers, weights, inputs: set[str], fed) -> tuple[str | None, bool, bool] | None:
    """(the graph input it comes from or None for a constant, that one's value, negated) of the
    value `name`, or None when it is neither."""
    negated = False
    for _ in range(MAX_STEPS):
        if name in inputs:
            value = _single(fed(name))
            if value is not None:
                return name, value, negated
            if name not in weights:  # not fed: its initializer (IR < 4 lists weights as inputs)
                return None
        if name in weights:
            value = _single(_array(weights[name]))
            return (None, value, negated) if value is not None else None
        n = writers.get(name)
        if n is None or standard_domain(n.domain) != "":
            return None
        if n.op_type == "Constant":
            t = constant_value(n)
            value = _single(_array(t)) if t is not None else None
            return (None, value, negated) if value is not None else None
        if n.op_type not in ("Identity", "Not") or not n.input:
            return None
        negated ^= n.op_type == "Not"
        name = n.input[0]
    return None


def _array(t: onnx.TensorProto) -> np.ndarray | None:
    """A constant's value when it is one element the graph holds (the store takes only tensors of
    KiBs out of it), else None."""
    if t.data_location == onnx.TensorProto.EXTERNAL or any(d != 1 for d in t.dims):
        return None
    return numpy_helper.to_array(t)


def _single(value) -> bool | None:
    """A condition's truth: the one element of a tensor (an If takes no other), else None."""
    if not isinstance(value, np.ndarray) or value.size != 1 or value.dtype.kind not in "biuf":
        return None
    return bool(value.reshape(-1)[0])
