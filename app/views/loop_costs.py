"""How many times each Loop's body runs, for the costs (costs.py).

A plain for loop (a constant trip count, no condition or a constant true one, a body passing its
condition on untouched) runs its body that many times. Any other Loop's count is a value — a trip
count fed or computed (tf2onnx's `max_len`), a condition its body computes (a while loop) — so it
gets a symbol, "<Loop's name>.iterations", that a caller gives like a dim (GET .../stats?dims=
while.iterations=20) and the cost formulas carry; not given, its body is counted for one
iteration: its rows say so, and the totals are a lower bound. A for loop whose trip count is a
dim of a tensor (torch's `Loop(Gather(Shape(x), 1))`: once per token) runs that many times: the
dim's size when fixed, the input dim it is when named ("seq": given once for both), else a
symbol of its own.

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
from .graph_scopes import declared_in

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
    dim_of: tuple[str, int] | None = None  # a for loop counting a tensor's dim: (tensor, axis)

    def why(self) -> str:
        """What decides its count, for a person: "max_len, or the body's condition"."""
        if self.dim_of is not None:
            return f"dim {self.dim_of[1]} of {self.dim_of[0]}"
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


def loops_of(model: onnx.ModelProto, typed: onnx.ModelProto | None = None) -> list[LoopCount]:
    """Every Loop of a graph that runs, outer ones first; `typed` (the model after shape
    inference) gives the dims a trip count may be read from."""
    inputs = input_dims(model)
    taken = set(inputs)
    # each graph's own value infos over its enclosing graphs': a sibling branch's same-named value isn't seen
    types = declared_in(model, typed if typed is not None else model)
    out = []
    for ref in running_graphs(model):
        g = ref.container
        for i, node in enumerate(g.node):
            if node.op_type != "Loop" or standard_domain(node.domain) != "":
                continue
            nid = node_id(ref.path, i)
            count = _count(g, node)
            dim_of = _counted_dim(g, node, count, types[ref.path])
            size = _dim_at(types[ref.path], dim_of) if dim_of else None
            if isinstance(size, int):  # a fixed dim: as good as a constant trip count
                count["trips"], count["trip_count"] = size, None
            symbol = size if isinstance(size, str) and size in inputs else _symbol(node.name, nid, taken)
            out.append(LoopCount(nid, node.name, subgraph_path(nid, "body"), symbol=symbol, dim_of=dim_of, **count))
    return out


def _dim_at(types: Mapping[str, onnx.ValueInfoProto], dim_of: tuple[str, int]) -> int | str | None:
    """The size (a number) or name of dim `axis` of a tensor as declared, or None."""
    vi = types.get(dim_of[0])
    if vi is None or not vi.type.tensor_type.HasField("shape"):
        return None
    shape = vi.type.tensor_type.shape.dim
    axis = dim_of[1] + len(shape) if dim_of[1] < 0 else dim_of[1]
    if not 0 <= axis < len(shape):
        return None
    d = shape[axis]
    return d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else d.dim_param or None


# ops a one-element trip count passes through on its way from a Shape to a Loop, unchanged
_PASS_ON = {"Cast", "Squeeze", "Unsqueeze", "Reshape", "Identity", "Flatten"}


def _counted_dim(g: onnx.GraphProto, node: onnx.NodeProto, count: dict, types) -> tuple[str, int] | None:
    """(tensor, axis) when a for loop's trip count is that dim of that tensor: Shape(x) and a
    Gather of one index or a Slice of one element (or Shape's start..end of one), through casts
    and squeezes — the dim's axis from the front, or from the back when counted so."""
    if count["condition"] is not None or not count["trip_count"]:
        return None
    writers = {o: n for n in g.node for o in n.output if o}
    name = count["trip_count"]
    at = writers.get(name)
    while at is not None and at.op_type in _PASS_ON and standard_domain(at.domain) == "" and at.input:
        name = at.input[0]
        at = writers.get(name)
    if at is None or standard_domain(at.domain) != "":
        return None
    if at.op_type == "Shape":
        return _shape_slice(at, 0)
    if at.op_type in ("Gather", "Slice") and at.input and at.input[0] in writers:
        shape = writers[at.input[0]]
        if shape.op_type != "Shape" or standard_domain(shape.domain) != "":
            return None
        if at.op_type == "Gather":
            index = constant_ints(g, at.input[1]) if len(at.input) > 1 else None
            if index is None or len(index) != 1 or _attr(at, "axis", 0) != 0:
                return None
            return _shape_slice(shape, index[0])
        starts = constant_ints(g, at.input[1]) if len(at.input) > 1 else None
        ends = constant_ints(g, at.input[2]) if len(at.input) > 2 else None
        if starts is None or ends is None or len(starts) != 1 or len(ends) != 1 or len(at.input) > 4:
            return None
        last = starts[0] == -1 and ends[0] >= MAX_TRIPS  # [-1:]: torch's way to the last dim
        if not last and (ends[0] != starts[0] + 1 or starts[0] < 0 <= ends[0]):
            return None
        return _shape_slice(shape, starts[0])
    return None


def _shape_slice(shape: onnx.NodeProto, index: int) -> tuple[str, int] | None:
    """(x, axis) of element `index` of Shape(x)[start:end] (Shape-15's slice; all of it before):
    an axis counted from the back when negative; None when x's rank would be needed to tell."""
    if not shape.input:
        return None
    start, end = _attr(shape, "start", 0), _attr(shape, "end", None)
    if index >= 0:
        axis = start + index
        return (shape.input[0], axis) if start >= 0 or axis < 0 else None
    if end is None:
        return shape.input[0], index
    axis = end + index
    return (shape.input[0], axis) if end < 0 or axis >= 0 else None


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name and a.type == onnx.AttributeProto.INT:
            return a.i
    return default


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
