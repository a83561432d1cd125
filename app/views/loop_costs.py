"""How many times each Loop's body runs, for the costs (costs.py).

A plain for loop (a constant trip count, no condition or a constant true one, a body passing its
condition on untouched) runs its body that many times. Any other Loop's count is a value — a trip
count fed or computed (tf2onnx's `max_len`), a condition its body computes (a while loop) — so it
gets a symbol, "<Loop's name>.iterations", that a caller gives like a dim (GET .../stats?dims=
while.iterations=20) and the cost formulas carry; not given, its body is counted for one
iteration: its rows say so, and the totals are a lower bound.

Shape inference names sizes that follow from the iterations too: a Loop's scan outputs stack one
slice an iteration (their first dim is its count: an alias of its symbol), and a value it carries
from one iteration to the next may grow (an accumulator's Concat): no one size is right for that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import onnx
from onnx import TensorProto, numpy_helper

from ..onnx_io.address import node_id, subgraph_path
from ..onnx_io.inference import input_dims
from ..onnx_io.traverse import graph_constants, running_graphs, standard_domain

MAX_TRIPS = 1 << 31  # past this a trip count is a "while" loop's stand-in for no bound
MAX_SYMBOL = 200  # a Loop's name longer than this is named by its id in its symbol
ITERATIONS = ".iterations"


@dataclass(frozen=True)
class LoopCount:
    """A Loop that runs, and what its count is known from."""

    node: str  # its node id
    name: str
    body: str  # its body's graph path
    trips: int | None  # a plain for loop's constant trip count: it surely runs them all
    symbol: str  # "<name>.iterations": the count a caller may give, when trips is None
    trip_count: str | None  # the value giving its trip count, when that is no constant
    at_most: int | None  # a constant trip count a condition may cut short
    condition: str | None  # what may end it sooner: "the body's condition", or a condition fed

    def why(self) -> str:
        """What decides its count, for a person: "max_len, or the body's condition"."""
        if self.trips is not None:
            return "a constant trip count"
        bound = self.trip_count or (f"at most {self.at_most}" if self.at_most is not None else None)
        return ", or ".join(part for part in (bound, self.condition) if part) or "no trip count or condition"

    def as_json(self, iterations: Any) -> dict:
        return {
            "node": self.node,
            "name": self.name,
            "body": self.body,
            "symbol": None if self.trips is not None else self.symbol,
            # the count the totals use: its constant, the size given for its symbol, else None
            # (one iteration counted)
            "iterations": iterations,
            "trip_count": self.trip_count,
            "why": self.why(),
        }


def loops_of(model: onnx.ModelProto) -> list[LoopCount]:
    """Every Loop of a graph that runs, outer ones first."""
    taken = set(input_dims(model))
    out = []
    for ref in running_graphs(model):
        g = ref.container
        for i, node in enumerate(g.node):
            if node.op_type != "Loop" or standard_domain(node.domain) != "":
                continue
            nid = node_id(ref.path, i)
            symbol = _symbol(node.name, nid, taken)
            out.append(LoopCount(nid, node.name, subgraph_path(nid, "body"), symbol=symbol, **_count(g, node)))
    return out


def _symbol(name: str, nid: str, taken: set[str]) -> str:
    plain = name and name == name.strip() and not set(name) & {",", "="} and len(name) <= MAX_SYMBOL
    symbol = f"{name if plain else nid}{ITERATIONS}"
    if symbol in taken:  # two Loops of one name, or an input's dim of that name
        symbol = f"{nid}{ITERATIONS}"
    taken.add(symbol)
    return symbol


def _count(g: onnx.GraphProto, node: onnx.NodeProto) -> dict:
    body = next((a.g for a in node.attribute if a.name == "body" and a.type == onnx.AttributeProto.GRAPH), None)
    m_name = node.input[0] if node.input else ""
    cond = node.input[1] if len(node.input) > 1 else ""
    m = constant_ints(g, m_name)
    bound = m[0] if m is not None and len(m) == 1 and 0 <= m[0] < MAX_TRIPS else None
    passed_on = False
    if body is not None and len(body.input) >= 2 and body.output:
        cond_in, cond_out = body.input[1].name, body.output[0].name
        writer = next((n for n in body.node if cond_out in n.output), None)
        passed_on = cond_out == cond_in or (
            writer is not None and writer.op_type == "Identity" and list(writer.input) == [cond_in]
        )
    starts_true = not cond or constant_ints(g, cond) == [1]
    condition = None if passed_on and starts_true else "the body's condition" if not passed_on else cond
    return {
        "trips": bound if condition is None and body is not None else None,
        "trip_count": m_name if m_name and m is None else None,
        "at_most": bound if condition is not None else None,
        "condition": condition,
    }


def constant_ints(g: onnx.GraphProto, name: str) -> list[int] | None:
    """The value of a one-element integer or boolean constant of graph `g`, or None."""
    tensor = graph_constants(g, 1).get(name) if name else None
    if tensor is None or tensor.data_type not in (TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL):
        return None
    try:
        return [int(x) for x in numpy_helper.to_array(tensor).reshape(-1)]
    except ValueError:
        return None


def given_iterations(loops: list[LoopCount], dims: Mapping[str, Any]) -> dict[str, Any]:
    """Loop node id -> the count its body runs an iteration of its holder: its constant trips,
    or the size given for its symbol; the Loops left out count one iteration."""
    out: dict[str, Any] = {}
    for c in loops:
        if c.trips is not None:
            out[c.node] = c.trips
        elif c.symbol in dims:
            out[c.node] = dims[c.symbol]
    return out


def per_iteration(loops: list[LoopCount], iterations: Mapping[str, Any], path: str) -> list[str]:
    """The Loops (node ids, outer first) of unknown count whose body holds graph `path`."""
    return [c.node for c in loops if c.node not in iterations and (path == c.body or path.startswith(c.body + "/"))]


def loop_dims(model: onnx.ModelProto, loops: list[LoopCount]) -> tuple[dict[str, str], dict[str, dict]]:
    """The dims shape inference named in `model` (its inferred form) for what the iterations
    make: (aliases: dim -> Loop node id, the first dim of its scan outputs, which is its count;
    growing: dim -> {"tensor", "loop"}, a size of a value a Loop carries from one iteration to the
    next, which its body may change each time). Input dims are neither."""
    inputs = set(input_dims(model))
    by_node = {c.node: c for c in loops}
    aliases: dict[str, str] = {}
    growing: dict[str, dict] = {}
    for ref in running_graphs(model):
        g = ref.container
        types = {vi.name: vi for vi in [*g.input, *g.value_info, *g.output]}
        for i, node in enumerate(g.node):
            nid = node_id(ref.path, i)
            if nid not in by_node:
                continue
            carried = max(len(node.input) - 2, 0)
            for name in node.output[carried:]:
                first = _dims(types.get(name))[:1]
                if first and first[0] and first[0] not in inputs:
                    aliases.setdefault(first[0], nid)
            body = next((a.g for a in node.attribute if a.name == "body"), None)
            if body is None:
                continue
            for vi in [*body.input[2 : 2 + carried], *body.output[1 : 1 + carried]]:
                for d in _dims(vi):
                    if d and d not in inputs:
                        growing.setdefault(d, {"tensor": vi.name, "loop": nid})
    return aliases, {d: w for d, w in growing.items() if d not in aliases}


def _dims(vi: onnx.ValueInfoProto | None) -> list[str]:
    """The dim names of a tensor's shape ("" for a dim of a size, or of none)."""
    if vi is None or not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return []
    return [d.dim_param for d in vi.type.tensor_type.shape.dim]
