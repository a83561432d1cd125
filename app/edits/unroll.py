"""Unroll a Loop that runs a known number of times (QA37: an NPU compiler takes no control
flow, and Check a target's "no control flow" had no tool to offer for a Loop): its body's nodes
copied once per iteration in its place, each iteration reading what the one before computed,
the scan outputs stacked with Unsqueeze and Concat, the Loop's outputs keeping their names.

Known means: the trip count a constant (an initializer or a Constant node of the Loop's graph),
the condition left out or a constant true, and the body handing its condition on unchanged
(the body's condition output its condition input, through Identity nodes, or a constant true).
A body that computes when to stop runs a number of times only a run can tell."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import NotFound, StudioError
from ..onnx_io.address import resolve_graph
from ..onnx_io.inference import infer_isolated
from ..onnx_io.sizes import data_bytes
from ..onnx_io.traverse import (
    attribute_tensors_of,
    constant_value,
    graph_constants,
    graphs_within,
    live_from,
    opset_imports,
)
from ..views.scopes import nested_metadata
from ..words import plural
from .field_types import NODE
from .jsontypes import required
from .locate import find_node
from .names import all_names, fresh_name, rename_captures
from .registry import edit_op

MAX_ITERATIONS = 1024  # a longer loop is a sequence model's decoding: unrolled, no runtime wants it
MAX_UNROLLED_NODES = 100_000  # the body's nodes (its own bodies' too) times the iterations
MAX_UNROLLED_BYTES = 256 << 20  # the body's size times the iterations: a Constant of 100 MB in it is copied each time


@edit_op("unroll_loop", required("node", NODE, "the Loop's or Scan's node id or name"))
def unroll_loop(model: onnx.ModelProto, op: dict) -> str:
    """Replace a Loop or Scan that runs a known number of times by its body's nodes, once per
    iteration (named `<node>/<k>/<body node>`, their values `<node>/<k>/<value>`), each iteration
    reading the state the one before handed on; scan outputs stacked (Unsqueeze, Concat), a
    Scan's inputs taken slice by slice (Gather), directions kept; the node's outputs keep their
    names. A Loop's trip count must be a constant of its graph (an initializer or a Constant
    node), its condition left out or a constant true, and its body must hand its condition on
    unchanged (or output a constant true): a body that decides when to stop is refused. A
    Scan's sequence length must be known from its first scan input's declared shape. At most
    1,024 iterations, 100,000 nodes and 256 MiB of copied nodes made."""
    ref, k, node, nid = find_node(model, op["node"])
    if node.op_type not in ("Loop", "Scan") or node.domain not in ("", "ai.onnx"):
        raise StudioError("bad_value", f"unroll_loop: node {nid} is a {node.op_type}, not a Loop or a Scan")
    g = ref.container
    if not isinstance(g, onnx.GraphProto):
        raise StudioError(
            "bad_value", f"unroll_loop: {node.op_type} {nid} is in a function body: unroll loops of graphs"
        )
    body = helper.get_attribute_value(next(a for a in node.attribute if a.name == "body"))
    opset = opset_imports(model, g).get("", 1)
    plan = (
        _loop_plan(model, g, node, body, nid)
        if node.op_type == "Loop"
        else _scan_plan(model, ref.path, node, body, nid, opset)
    )
    _check_size(plan, body, f"{node.op_type} {nid}")
    made = _Unroller(g, node, body, plan, all_names(g), opset)
    nodes = made.unrolled()
    del g.node[k]
    for j, n in enumerate(nodes):
        g.node.insert(k + j, n)
    return (
        f"unrolled {node.op_type} {nid}{f' {node.name!r}' if node.name else ''} ({plural(plan.count, 'iteration')} of {len(body.node)} node(s)):"
        f" {len(nodes)} node(s) in its place"
    )


@dataclass
class _Plan:
    """How a Loop's or a Scan's body is fed and read, in names of its body."""

    count: int  # iterations
    state_in: list[str]  # the body's inputs a state comes in by
    state_out: list[str]  # and the outputs it goes on by
    initial: list[str]  # the states' first values (the node's inputs)
    scan_out: list[str]  # the body's outputs stacked, after the states
    scan_axes: list[int]
    scan_reversed: list[bool]
    # per iteration, the body's other inputs: Loop's iteration number and condition, Scan's slices
    fed: Callable[[_Unroller, int], dict[str, str]]
    wrapped: set[int] = field(default_factory=set)  # states a body takes as optional(T) and hands on as T


def _loop_plan(
    model: onnx.ModelProto, g: onnx.GraphProto, loop: onnx.NodeProto, body: onnx.GraphProto, nid: str
) -> _Plan:
    count = _trip_count(model, g, loop, nid)
    _check_condition(model, g, loop, body, nid)
    if any(not x for x in loop.input[2:]):
        raise StudioError("bad_value", f"unroll_loop: Loop {nid} leaves a carried value out")
    states = len(loop.input) - 2
    ins, outs = [v.name for v in body.input], [v.name for v in body.output]
    scans = len(outs) - 1 - states

    def fed(made: _Unroller, i: int) -> dict[str, str]:
        out = {}
        if ins[0] in made.read:
            out[ins[0]] = made.constant(f"{i}/iteration", np.array(i, np.int64))
        if ins[1] in made.read:
            out[ins[1]] = made.once("condition", np.array(True))
        return out

    carried = zip(body.input[2:], body.output[1:], strict=False)
    return _Plan(
        count=count,
        state_in=ins[2:],
        state_out=outs[1 : 1 + states],
        initial=list(loop.input[2:]),
        scan_out=outs[1 + states :],
        scan_axes=[0] * scans,
        scan_reversed=[False] * scans,
        fed=fed,
        wrapped={
            j
            for j, (x, y) in enumerate(carried)
            if x.type.HasField("optional_type") and not y.type.HasField("optional_type")
        },
    )


def _scan_plan(
    model: onnx.ModelProto, path: str, scan: onnx.NodeProto, body: onnx.GraphProto, nid: str, opset: int
) -> _Plan:
    if opset < 9:
        raise StudioError(
            "bad_value",
            f"unroll_loop: Scan {nid} is Scan-8 (a batch axis and sequence lengths): convert the opset to 9 or later first",
        )
    attrs = {a.name: helper.get_attribute_value(a) for a in scan.attribute}
    m = int(attrs["num_scan_inputs"])
    states = len(scan.input) - m
    ins, outs = [v.name for v in body.input], [v.name for v in body.output]
    scans = len(outs) - states
    in_axes = list(attrs.get("scan_input_axes") or [0] * m)
    in_reversed = [bool(d) for d in (attrs.get("scan_input_directions") or [0] * m)]
    out_axes = list(attrs.get("scan_output_axes") or [0] * scans)
    out_reversed = [bool(d) for d in (attrs.get("scan_output_directions") or [0] * scans)]
    sources = list(scan.input[states:])
    count = _sequence_length(model, path, sources[0], in_axes[0], nid)

    def fed(made: _Unroller, i: int) -> dict[str, str]:
        out = {}
        for formal, source, axis, back in zip(ins[states:], sources, in_axes, in_reversed, strict=True):
            if formal in made.read:
                at = made.constant(f"{i}/index", np.array(count - 1 - i if back else i, np.int64))
                out[formal] = made.add("Gather", [source, at], f"{i}/{formal}", axis=axis)
        return out

    return _Plan(
        count=count,
        state_in=ins[:states],
        state_out=outs[:states],
        initial=list(scan.input[:states]),
        scan_out=outs[states:],
        scan_axes=out_axes,
        scan_reversed=out_reversed,
        fed=fed,
    )


def _sequence_length(model: onnx.ModelProto, path: str, name: str, axis: int, nid: str) -> int:
    """A Scan's iterations: its first scan input's size along its scan axis, as declared, else as
    onnx's shape inference finds it (in the helper process: an untrusted model)."""
    size = _declared_size(resolve_graph(model, path).container, name, axis)
    if size is None:
        try:
            inferred = infer_isolated(model, data_prop=True)
            size = _declared_size(resolve_graph(inferred, path).container, name, axis)
        except (ValueError, NotFound):
            size = None
    if not size:
        raise StudioError(
            "bad_value",
            f"unroll_loop: Scan {nid}'s sequence length is unknown: {name!r} has no known size along axis {axis}"
            " (Make static gives the inputs sizes)",
        )
    return size


def _declared_size(g, name: str, axis: int) -> int | None:
    if not isinstance(g, onnx.GraphProto):
        return None
    weights = {t.name: list(t.dims) for t in g.initializer}
    if name in weights and name not in {v.name for v in g.input}:  # an input's default: its declaration says
        dims: list[int | None] = list(weights[name])
    else:
        typed = next((v.type for v in [*g.input, *g.value_info, *g.output] if v.name == name), None)
        if typed is None or not typed.HasField("tensor_type") or not typed.tensor_type.HasField("shape"):
            return None
        dims = [d.dim_value if d.HasField("dim_value") else None for d in typed.tensor_type.shape.dim]
    return dims[axis] if -len(dims) <= axis < len(dims) else None


def _check_size(plan: _Plan, body: onnx.GraphProto, what: str) -> None:
    count = plan.count
    if count < 1:
        raise StudioError("bad_value", f"unroll_loop: {what} runs {count} times: nothing to unroll")
    nodes_in = sum(len(h.node) for h in graphs_within(body))
    if count > MAX_ITERATIONS or count * nodes_in > MAX_UNROLLED_NODES:
        raise StudioError(
            "bad_value",
            f"unroll_loop: {what} runs {count} times over {nodes_in} nodes: past"
            f" {MAX_ITERATIONS:,} iterations or {MAX_UNROLLED_NODES:,} nodes unrolled",
        )
    size = _copied_bytes(body)
    if count * size > MAX_UNROLLED_BYTES:
        raise StudioError(
            "bad_value",
            f"unroll_loop: {what}'s body holds {size:,} bytes of nodes and constants: {count} copies would"
            f" pass {MAX_UNROLLED_BYTES >> 20} MiB",
        )


def _copied_bytes(body: onnx.GraphProto) -> int:
    """What each iteration copies: the body's nodes and their constants at their data's size (a
    big one is held by reference while edited, its bytes written with each copy); its
    initializers are made the graph's once."""
    size = sum(n.ByteSize() for n in body.node)
    for h in graphs_within(body):
        # a nested branch's weights are copied with it (QA42: 2 MiB × 200 copies made 419 MB)
        tensors = [*attribute_tensors_of(h), *(h.initializer if h is not body else [])]
        for t in tensors:
            count = 1
            for d in t.dims:
                count *= d
            size += data_bytes(t.data_type, count) or 0
    return size


def _constant(model: onnx.ModelProto, g: onnx.GraphProto, name: str, what: str) -> onnx.TensorProto:
    """The scalar constant `name` a Loop of `g` reads — of its graph, or of the main graph it is
    nested in — else a 400 saying what it is: a graph input (an initializer that is one too is
    a default a caller may override: QA42 unrolled the default and ignored the count fed), or a
    value computed."""
    for h in [g] if g is model.graph else [g, model.graph]:  # a body's own, then the main graph's
        fed = {v.name for v in h.input}
        if name in fed:
            raise StudioError(
                "bad_value",
                f"unroll_loop: {what} {name!r} is an input of the graph: a caller may feed any (Fix input, in its"
                " panel, makes it a constant first)",
            )
        t = graph_constants(h, 1).get(name)
        if t is not None:
            return t
        if any(name in n.output for n in h.node):
            break
    raise StudioError(
        "bad_value",
        f"unroll_loop: {what} {name!r} is computed, not a constant (Simplify folds it where the values it comes"
        " from are known; Fix input makes an input a constant)",
    )


def _trip_count(model: onnx.ModelProto, g: onnx.GraphProto, loop: onnx.NodeProto, nid: str) -> int:
    name = loop.input[0] if loop.input else ""
    if not name:
        raise StudioError("bad_value", f"unroll_loop: Loop {nid} has no trip count: it runs until its body says stop")
    t = _constant(model, g, name, f"Loop {nid}'s trip count")
    return int(numpy_helper.to_array(t).reshape(-1)[0])


def _check_condition(
    model: onnx.ModelProto, g: onnx.GraphProto, loop: onnx.NodeProto, body: onnx.GraphProto, nid: str
) -> None:
    cond = loop.input[1] if len(loop.input) > 1 else ""
    if cond:
        t = _constant(model, g, cond, f"Loop {nid}'s condition")
        if not bool(numpy_helper.to_array(t).reshape(-1)[0]):
            raise StudioError("bad_value", f"unroll_loop: Loop {nid}'s condition {cond!r} is false: it runs no time")
    if not _hands_condition_on(body):
        raise StudioError(
            "bad_value",
            f"unroll_loop: Loop {nid}'s body computes its condition: it may stop early, how often it runs"
            " only a run can tell",
        )


def _hands_condition_on(body: onnx.GraphProto) -> bool:
    """The body's condition output is its condition input (through Identity nodes) or a constant true."""
    made = {o: n for n in body.node for o in n.output}
    name = body.output[0].name
    for _ in range(len(body.node) + 1):
        if name == body.input[1].name:
            return True
        known = {t.name: t for t in body.initializer}
        node = made.get(name)
        value = known.get(name) if node is None else constant_value(node)
        if value is not None:
            return bool(numpy_helper.to_array(value).reshape(-1)[0])
        if node is None or node.op_type != "Identity":
            return False
        name = node.input[0]
    return False


class _Unroller:
    """The copies of one Loop's or Scan's body, one per iteration, into the node's graph."""

    def __init__(self, g, node, body, plan: _Plan, taken: set[str], opset: int):
        self.g, self.node, self.body, self.plan, self.taken, self.opset = g, node, body, plan, taken, opset
        self.base = node.name or node.output[0] or node.op_type.lower()
        self.made: list[onnx.NodeProto] = []  # the nodes so far, in order
        self.constants: dict[str, str] = {}  # constants made once (a condition's true, an axis)
        self.weights: dict[str, str] = {}  # the body's initializers, made the graph's once
        for t in body.initializer:
            self.weights[t.name] = self._fresh(f"{self.base}/{t.name}")
            copy = onnx.TensorProto()
            copy.CopyFrom(t)
            copy.name = self.weights[t.name]
            g.initializer.append(copy)
        # the nodes the states and scan outputs need (not a Loop's condition), and what they read
        self.read = {*plan.state_out, *plan.scan_out}
        self.live = live_from(body.node, self.read)

    def _fresh(self, name: str) -> str:
        name = fresh_name(onnx.ModelProto(), name, self.taken)
        self.taken.add(name)
        return name

    def constant(self, name: str, value) -> str:
        """A new initializer `<node>/<name>` holding `value`."""
        name = self._fresh(f"{self.base}/{name}")
        self.g.initializer.append(numpy_helper.from_array(value, name))
        return name

    def once(self, key: str, value) -> str:
        """A constant made at its first use, shared by the iterations."""
        if key not in self.constants:
            self.constants[key] = self.constant(key, value)
        return self.constants[key]

    def add(self, op_type: str, inputs: list[str], name: str, output: str | None = None, **attrs) -> str:
        """A new node `<node>/<name>` of op_type; its output's name (fresh unless given)."""
        out = output or self._fresh(f"{self.base}/{name}")
        self.made.append(helper.make_node(op_type, inputs, [out], name=f"{self.base}/{name}", **attrs))
        return out

    def unrolled(self) -> list[onnx.NodeProto]:
        plan = self.plan
        states = list(plan.initial)
        stacked: list[list[str]] = [[] for _ in plan.scan_out]
        outputs = list(self.node.output)
        final, scanned_to = outputs[: len(states)], outputs[len(states) :]
        for i in range(plan.count):
            states, scanned = self._iteration(i, states, final if i == plan.count - 1 else None)
            for s, name in zip(stacked, scanned, strict=True):
                s.append(name)
        for v, o in zip(states, final, strict=True):  # a state handed on unchanged, or one output twice
            if o and v != o:
                self.add("Identity", [v], o, output=o)
        for s, out, axis, back in zip(stacked, scanned_to, plan.scan_axes, plan.scan_reversed, strict=False):
            if out:
                self._stack(s[::-1] if back else s, out, axis)
        return self.made

    def _iteration(self, i: int, states: list[str], keep: list[str] | None) -> tuple[list[str], list[str]]:
        """The body's nodes for iteration i, reading `states`; in the last (`keep`: the node's
        state outputs) a state a body node computes is given the node's output name. Answers the
        states handed on and the values to stack."""
        b, plan = self.body, self.plan
        names = dict(self.weights)
        names[""] = ""
        names.update(plan.fed(self, i))
        for j, (formal, actual) in enumerate(zip(plan.state_in, states, strict=True)):
            if i and j in plan.wrapped:  # a body taking optional(T) that hands T on (Loop-16's optional carry)
                actual = self.add("Optional", [actual], f"{i}/optional_{formal}")
            names[formal] = actual
        produced = {o for n, live in zip(b.node, self.live, strict=True) if live for o in n.output if o}
        if keep:  # the node's output names for what the last iteration computes, each once
            for formal, kept in zip(plan.state_out, keep, strict=True):
                if kept and formal in produced and formal not in names:
                    names[formal] = kept
        for x in sorted(produced):
            if x not in names:
                names[x] = self._fresh(f"{self.base}/{i}/{x}")
        for j, n in enumerate(b.node):
            if not self.live[j]:
                continue
            new = onnx.NodeProto()
            new.CopyFrom(n)
            new.name = f"{self.base}/{i}/{n.name or f'{n.op_type}_{j}'}"
            new.input[:] = [names.get(x, x) for x in n.input]
            new.output[:] = [names[x] for x in n.output]
            if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in new.attribute):
                for was, now in names.items():  # a nested If's branches read the body's values by name
                    if was and was != now:
                        rename_captures(new, was, now)
            for key, said in nested_metadata(self.node, new):
                new.metadata_props.add(key=key, value=said)
            self.made.append(new)
        return [names.get(x, x) for x in plan.state_out], [names.get(x, x) for x in plan.scan_out]

    def _stack(self, names: list[str], out: str, axis: int) -> None:
        """Each iteration's value with a new axis `axis`, concatenated along it into `out`."""
        if self.opset >= 13:
            axes_in = [self.once(f"axis{axis}", np.array([axis], np.int64))]
            attrs: dict[str, Any] = {}
        else:
            axes_in, attrs = [], {"axes": [axis]}
        parts = []
        for i, x in enumerate(names):
            one = out if len(names) == 1 else None
            parts.append(self.add("Unsqueeze", [x, *axes_in], f"{i}/unsqueeze_{out}", output=one, **attrs))
        if len(parts) > 1:
            self.add("Concat", parts, f"concat_{out}", output=out, axis=axis)
