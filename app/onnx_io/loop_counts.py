"""Graph inputs that decide how often a Loop runs, and what to feed them so that it runs a few
times. Values made up for a run are zeros for integers (the edit gate's smoke run tries zeros
first; a run's random integers are 0): a while-loop whose trip count `max_len` is a graph input
then runs 0 times, its body never does, and a body edit that fails on the first iteration "runs"
(QA20 F1). An input that reaches a Loop's trip count (its input 0) or its condition (input 1),
directly or through ops that pass a number on (Cast, Identity, Squeeze, Reshape, Min/Max, Add,
Sub or Mul with a constant, a comparison with a constant, Not), is fed the value that makes the
Loop run LOOP_TRIPS times (its condition true) instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import onnx
from onnx import numpy_helper

from .sizes import INTEGER_TYPES, UNSIGNED_TYPES
from .traverse import graph_constants, graphs_within, standard_domain
from .value_passing import backward, one_value_input

LOOP = "loop"  # a run's role for such an input (api/run.py): fed its value, not random numbers
LOOP_TRIPS = 3  # iterations a made-up trip count asks for: the body runs, its carried values go round
MAX_FED = 1024  # the largest value fed: an input that must be bigger to run the Loop is left as it was
MAX_HOPS = 32  # nodes followed back from a Loop's input to the graph input it comes from

_FLOATS = frozenset({onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16})

Wanted = int | float | bool


def loop_counts(graph: onnx.GraphProto, names: set[str] | list[str]) -> dict[str, Wanted]:
    """{input: the value to feed it} for those of `names` (graph inputs of integer, float or
    boolean tensor type) that a Loop's trip count or condition comes from, in `graph` or a body
    at any depth: the number that makes the Loop run LOOP_TRIPS times (True for a condition)."""

    def wants(node: onnx.NodeProto) -> list[tuple[str, Wanted]]:
        if node.op_type != "Loop":
            return []
        return list(zip(node.input[:2], (LOOP_TRIPS, True), strict=False))

    return inputs_for(graph, names, wants)


def inputs_for(
    graph: onnx.GraphProto,
    names: set[str] | list[str],
    wants: Callable[[onnx.NodeProto], list[tuple[str, Wanted]]],
) -> dict[str, Wanted]:
    """{input: the value to feed it} for those of `names` (graph inputs of one value) that a
    value some node needs comes from, in `graph` or a body at any depth: `wants(node)` gives
    (the node's input, the value it needs) of each standard node, followed back to the graph's
    inputs through nodes that pass a value on (value_passing.backward)."""
    wanted = set(names)
    types = {vi.name: vi.type.tensor_type.elem_type for vi in graph.input if vi.name in wanted and one_value_input(vi)}
    producers: dict[str, onnx.NodeProto] = {}
    constants: dict[str, float] = {}
    targets: list[tuple[str, Wanted]] = []
    for g in graphs_within(graph):
        for name, t in graph_constants(g, 1).items():
            try:
                value = numpy_helper.to_array(t).reshape(-1)
            except Exception:  # a type numpy can't read: no constant to reason with
                continue
            if value.size == 1 and value.dtype.kind in "iufb":
                constants[name] = value[0].item()
        for n in g.node:
            for o in n.output:
                if o:
                    producers[o] = n
            if standard_domain(n.domain) == "":
                targets.extend(wants(n))
    found: dict[str, Wanted] = {}
    seen: set[str] = set()  # each value followed once: a graph of shared Adds is no tree to walk

    def reach(name: str, want: Wanted, hops: int) -> None:
        if not name or hops > MAX_HOPS or name in constants or name in seen:
            return
        seen.add(name)
        if name in types:
            value = _as_type(want, types[name])
            if value is not None:
                found.setdefault(name, value)
            return
        node = producers.get(name)
        if node is None or standard_domain(node.domain) != "" or not node.input:
            return
        for source, value in backward(node, want, constants, LOOP_TRIPS):
            reach(source, value, hops + 1)

    for name, want in targets:
        reach(name, want, 0)
    return found


def _as_type(want: Wanted, elem: int) -> Wanted | None:
    """`want` as a value of an input of element type `elem`; None when it can't be one, or is
    no small number (a count reached through a Mul by 1e-9 or an Add of -2**62: the input may
    size other things too)."""
    if not isinstance(want, bool) and not abs(want) <= MAX_FED:
        return None
    if elem == onnx.TensorProto.BOOL:
        return bool(want)
    if isinstance(want, bool):  # a condition read from a number: any but 0 is true
        want = LOOP_TRIPS if want else 0
    if elem in INTEGER_TYPES:
        value = math.ceil(want)
        return None if value < 0 and elem in UNSIGNED_TYPES else value
    if elem in _FLOATS:
        return float(want)
    return None
