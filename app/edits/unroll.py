"""Unroll a Loop that runs a known number of times (QA37: an NPU compiler takes no control
flow, and Check a target's "no control flow" had no tool to offer for a Loop): its body's nodes
copied once per iteration in its place, each iteration reading what the one before computed,
the scan outputs stacked with Unsqueeze and Concat, the Loop's outputs keeping their names.

Known means: the trip count a constant (an initializer or a Constant node of the Loop's graph),
the condition left out or a constant true, and the body handing its condition on unchanged
(the body's condition output its condition input, through Identity nodes, or a constant true).
A body that computes when to stop runs a number of times only a run can tell."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import StudioError
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
from .field_types import NODE
from .jsontypes import required
from .locate import find_node
from .names import all_names, fresh_name
from .registry import edit_op

MAX_ITERATIONS = 1024  # a longer loop is a sequence model's decoding: unrolled, no runtime wants it
MAX_UNROLLED_NODES = 100_000  # the body's nodes (its own bodies' too) times the iterations
MAX_UNROLLED_BYTES = 256 << 20  # the body's size times the iterations: a Constant of 100 MB in it is copied each time


@edit_op("unroll_loop", required("node", NODE, "the Loop's node id or name"))
def unroll_loop(model: onnx.ModelProto, op: dict) -> str:
    """Replace a Loop that runs a known number of times by its body's nodes, once per iteration
    (named `<loop>/<k>/<node>`, their values `<loop>/<k>/<value>`), each iteration reading the
    values the one before carried on; scan outputs stacked along a new first axis (Unsqueeze,
    Concat); the Loop's outputs keep their names. The trip count must be a constant of the
    Loop's graph (an initializer or a Constant node), its condition left out or a constant true,
    and the body must hand its condition on unchanged (or output a constant true): a body that
    decides when to stop is refused. At most 1,024 iterations and 100,000 nodes made."""
    ref, k, loop, nid = find_node(model, op["node"])
    if loop.op_type != "Loop" or loop.domain not in ("", "ai.onnx"):
        raise StudioError("bad_value", f"unroll_loop: node {nid} is a {loop.op_type}, not a Loop")
    g = ref.container
    if not isinstance(g, onnx.GraphProto):
        raise StudioError("bad_value", f"unroll_loop: Loop {nid} is in a function body: unroll loops of graphs")
    body = helper.get_attribute_value(next(a for a in loop.attribute if a.name == "body"))
    count = _trip_count(g, loop, nid)
    _check_condition(g, loop, body, nid)
    carried = len(loop.input) - 2
    if any(not x for x in loop.input[2:]):
        raise StudioError("bad_value", f"unroll_loop: Loop {nid} leaves a carried value out")
    if count < 1:
        raise StudioError("bad_value", f"unroll_loop: Loop {nid} runs {count} times: nothing to unroll")
    nodes_in = sum(len(h.node) for h in graphs_within(body))
    if count > MAX_ITERATIONS or count * nodes_in > MAX_UNROLLED_NODES:
        raise StudioError(
            "bad_value",
            f"unroll_loop: Loop {nid} runs {count} times over {nodes_in} nodes: past"
            f" {MAX_ITERATIONS:,} iterations or {MAX_UNROLLED_NODES:,} nodes unrolled",
        )
    size = _copied_bytes(body)
    if count * size > MAX_UNROLLED_BYTES:
        raise StudioError(
            "bad_value",
            f"unroll_loop: Loop {nid}'s body holds {size:,} bytes of nodes and constants: {count} copies would"
            f" pass {MAX_UNROLLED_BYTES >> 20} MiB",
        )
    base = loop.name or loop.output[0] or "loop"
    taken = all_names(g)
    opset = opset_imports(model, g).get("", 1)
    made = _Unroller(g, loop, body, base, taken, opset)
    nodes: list[onnx.NodeProto] = []
    values = list(loop.input[2:])
    stacked: list[list[str]] = [[] for _ in body.output[1 + carried :]]
    for i in range(count):
        last = i == count - 1
        nodes += made.iteration(i, values, keep=list(loop.output[:carried]) if last else None)
        values = made.carried_out
        for s, name in zip(stacked, made.scanned, strict=True):
            s.append(name)
    nodes += made.passed_on(values, list(loop.output[:carried]))
    for s, out in zip(stacked, loop.output[carried:], strict=False):
        if out:
            nodes += made.stack(s, out)
    del g.node[k]
    for j, n in enumerate(nodes):
        g.node.insert(k + j, n)
    return f"unrolled Loop {nid} ({count} iterations of {len(body.node)} node(s)): {len(nodes)} node(s) in its place"


def _copied_bytes(body: onnx.GraphProto) -> int:
    """What each iteration copies: the body's nodes and their constants at their data's size (a
    big one is held by reference while edited, its bytes written with each copy); its
    initializers are made the graph's once."""
    size = sum(n.ByteSize() for n in body.node)
    for h in graphs_within(body):
        for t in attribute_tensors_of(h):
            count = 1
            for d in t.dims:
                count *= d
            size += data_bytes(t.data_type, count) or 0
    return size


def _trip_count(g: onnx.GraphProto, loop: onnx.NodeProto, nid: str) -> int:
    name = loop.input[0] if loop.input else ""
    if not name:
        raise StudioError("bad_value", f"unroll_loop: Loop {nid} has no trip count: it runs until its body says stop")
    t = graph_constants(g, 1).get(name)
    if t is None:
        raise StudioError(
            "bad_value",
            f"unroll_loop: Loop {nid}'s trip count {name!r} is computed, not a constant of its graph"
            " (Simplify folds it where it can be; Make static gives the inputs it comes from their sizes)",
        )
    return int(numpy_helper.to_array(t).reshape(-1)[0])


def _check_condition(g: onnx.GraphProto, loop: onnx.NodeProto, body: onnx.GraphProto, nid: str) -> None:
    cond = loop.input[1] if len(loop.input) > 1 else ""
    if cond:
        t = graph_constants(g, 1).get(cond)
        if t is None or not bool(numpy_helper.to_array(t).reshape(-1)[0]):
            raise StudioError(
                "bad_value", f"unroll_loop: Loop {nid}'s condition {cond!r} is not a constant true: it may not run"
            )
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
    """The copies of one Loop's body, one per iteration, into the Loop's graph."""

    def __init__(self, g, loop, body, base: str, taken: set[str], opset: int):
        self.g, self.loop, self.body, self.base, self.taken, self.opset = g, loop, body, base, taken, opset
        self.carried_out: list[str] = []
        self.scanned: list[str] = []
        self.weights: dict[str, str] = {}  # the body's initializers, made the graph's once
        for t in body.initializer:
            self.weights[t.name] = self._fresh(f"{base}/{t.name}")
            copy = onnx.TensorProto()
            copy.CopyFrom(t)
            copy.name = self.weights[t.name]
            g.initializer.append(copy)
        self.truth = ""  # a constant true for the condition input, made once where read
        # the nodes the carried and scan outputs need (not the condition's Identity), and what they read
        self.read = {o.name for o in body.output[1:]}
        self.live = live_from(body.node, self.read)
        carried = zip(body.input[2:], body.output[1:], strict=False)
        self.wrapped = {
            j
            for j, (x, y) in enumerate(carried)
            if x.type.HasField("optional_type") and not y.type.HasField("optional_type")
        }

    def _fresh(self, name: str) -> str:
        name = fresh_name(onnx.ModelProto(), name, self.taken)
        self.taken.add(name)
        return name

    def _constant(self, name: str, value) -> str:
        name = self._fresh(name)
        self.g.initializer.append(numpy_helper.from_array(value, name))
        return name

    def iteration(self, i: int, values: list[str], keep: list[str] | None) -> list[onnx.NodeProto]:
        """The body's nodes for iteration i, reading `values`; in the last (`keep`: the Loop's
        carried outputs) a carried value a node computes is given the Loop's output name."""
        b, carried = self.body, len(values)
        names = dict(self.weights)
        names[""] = ""
        read = self.read
        if b.input[0].name in read:
            names[b.input[0].name] = self._constant(f"{self.base}/{i}/iteration", np.array(i, np.int64))
        if b.input[1].name in read:
            self.truth = self.truth or self._constant(f"{self.base}/condition", np.array(True))
            names[b.input[1].name] = self.truth
        out: list[onnx.NodeProto] = []
        for j, (formal, actual) in enumerate(zip(b.input[2:], values, strict=True)):
            if i and j in self.wrapped:  # a body taking optional(T) that hands T on (Loop-16's optional carry)
                held = self._fresh(f"{self.base}/{i}/{formal.name}")
                out.append(
                    helper.make_node("Optional", [actual], [held], name=f"{self.base}/{i}/optional_{formal.name}")
                )
                actual = held
            names[formal.name] = actual
        nodes = [n for n, live in zip(b.node, self.live, strict=True) if live]
        produced = {o for n in nodes for o in n.output if o}
        if keep:  # the Loop's output names for what the last iteration computes, each once
            for formal, kept in zip(b.output[1 : 1 + carried], keep, strict=True):
                if kept and formal.name in produced and formal.name not in names:
                    names[formal.name] = kept
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
            for a in new.attribute:  # a nested If's branches read the body's values by name
                for h in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                    _rename_reads(h, names)
            for key, said in nested_metadata(self.loop, new):
                new.metadata_props.add(key=key, value=said)
            out.append(new)
        self.carried_out = [names.get(o.name, o.name) for o in b.output[1 : 1 + carried]]
        self.scanned = [names.get(o.name, o.name) for o in b.output[1 + carried :]]
        return out

    def passed_on(self, values: list[str], outputs: list[str]) -> list[onnx.NodeProto]:
        """Identity nodes for the Loop's carried outputs the last iteration didn't compute under
        their names (a value carried through unchanged, or one output twice)."""
        return [
            helper.make_node("Identity", [v], [o], name=f"{self.base}/{o}")
            for v, o in zip(values, outputs, strict=True)
            if o and v != o
        ]

    def stack(self, names: list[str], out: str) -> list[onnx.NodeProto]:
        """Each iteration's scan value with a new first axis, concatenated into `out`."""
        axes: dict[str, Any] = {} if self.opset >= 13 else {"axes": [0]}
        axis = [self._constant(f"{self.base}/axis0", np.array([0], np.int64))] if self.opset >= 13 else []
        nodes = []
        parts = []
        for i, x in enumerate(names):
            y = out if len(names) == 1 else self._fresh(f"{self.base}/{i}/{x.rsplit('/', 1)[-1]}_stacked")
            nodes.append(
                helper.make_node("Unsqueeze", [x, *axis], [y], name=f"{self.base}/{i}/unsqueeze_{out}", **axes)
            )
            parts.append(y)
        if len(parts) > 1:
            nodes.append(helper.make_node("Concat", parts, [out], name=f"{self.base}/concat_{out}", axis=0))
        return nodes


def _rename_reads(g: onnx.GraphProto, names: dict[str, str]) -> None:
    """Reads of the outer body's values in a nested graph (and deeper), renamed; the nested
    graph's own values shadow nothing (ONNX names are unique across scopes), so stay."""
    own = {v.name for v in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output}
    for n in g.node:
        n.input[:] = [names[x] if x in names and x not in own else x for x in n.input]
        for a in n.attribute:
            for h in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                _rename_reads(h, names)
    for o in g.output:
        if o.name in names and o.name not in own:
            o.name = names[o.name]
