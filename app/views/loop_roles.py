"""The part each input and output of a Loop, Scan or If plays, and each input and output of the
bodies they hold, with what goes with what — by the ONNX spec's conventions:

  Loop  inputs   M (the trip count, may be ""), cond (may be ""), v_initial 1..N
        outputs  v_final 1..N, then the K scan outputs
        body     inputs (iteration_num, condition, v 1..N); outputs (condition, v 1..N, scan 1..K):
                 carried value k is the node's input 2+k, the body's input 2+k and output 1+k, the
                 node's output k; scan output k, each iteration's value stacked along a new axis 0
  Scan  inputs   N initial states, then the num_scan_inputs scanned inputs (Scan 8: the optional
                 sequence_lens first, and the batch axis first in every input and output)
        outputs  N final states, then the K scan outputs
        body     inputs (state 1..N, one slice of each scanned input); outputs (state 1..N, scan
                 1..K): sliced along scan_input_axes (0 by default; Scan 8: axis 1), last slice
                 first where scan_input_directions says 1; stacked along scan_output_axes
  If    input    cond; output k is then_branch's output k or else_branch's, whichever runs

Each input or output gets a role (None where the spec gives it none: a malformed node's extra):
  kind     trip_count, condition, iteration, carried, state, scanned, scan_output, sequence_lens,
           branch_output
  tag      a word or two for a tag ("carried", "iteration #", "scan out")
  box      the line under a body input's or output's name in the drawing ("carried ↔ hidden_out")
  text     what it is, in a sentence of the panel that shows it
  k        its number among those of its kind
  node_input, body_input, body_output, node_output: the positions it pairs with (those it has)
  axis, reverse: where a scanned input is sliced, where a scan output is stacked
The graph JSON carries them (views/graph.py): `roles` on a Loop, Scan or If node, `role` on each
input and output of the bodies they hold."""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from ..onnx_io.traverse import node_graphs, standard_domain

HOLDERS = ("Loop", "Scan", "If")


@dataclass
class _Lane:
    """One value's way through a node and its body: the positions it holds on each side."""

    kind: str
    k: int
    node_in: int | None = None
    body_in: int | None = None
    body_out: int | None = None
    node_out: int | None = None
    axis: int | None = None
    reverse: bool = False


def holds_roles(node: onnx.NodeProto) -> bool:
    """Is this a Loop, Scan or If of the standard domain?"""
    return node.op_type in HOLDERS and standard_domain(node.domain) == ""


def _ints(node: onnx.NodeProto, name: str) -> list[int]:
    return next((list(a.ints) for a in node.attribute if a.name == name), [])


def _int(node: onnx.NodeProto, name: str, default: int) -> int:
    return next((a.i for a in node.attribute if a.name == name), default)


def is_scan8(node: onnx.NodeProto, opset: int | None) -> bool:
    """Scan 8 (sequence_lens first, batch axis first): below opset 9, or, the opset unknown, by its
    `directions` attribute (Scan 9 renamed it)."""
    if opset is not None:
        return opset < 9
    return any(a.name == "directions" for a in node.attribute)


def _body(node: onnx.NodeProto, attr: str = "body") -> onnx.GraphProto | None:
    return next((g for a, _, g in node_graphs(node) if a == attr), None)


def _branches(node: onnx.NodeProto) -> list[tuple[str, onnx.GraphProto]]:
    """An If's (attribute, branch), then_branch first."""
    found = {a: g for a, _, g in node_graphs(node) if a in ("then_branch", "else_branch")}
    return [(a, found[a]) for a in ("then_branch", "else_branch") if a in found]


def _lanes(node: onnx.NodeProto, opset: int | None) -> list[_Lane]:
    body = _body(node)
    if node.op_type == "Loop":
        n = max(0, len(node.input) - 2)
        k = max(len(node.output) - n, (len(body.output) - 1 - n) if body is not None else 0, 0)
        lanes = [_Lane("trip_count", 0, node_in=0), _Lane("iteration", 0, body_in=0)]
        lanes.append(_Lane("condition", 0, node_in=1, body_in=1, body_out=0))
        lanes += [_Lane("carried", j, node_in=2 + j, body_in=2 + j, body_out=1 + j, node_out=j) for j in range(n)]
        lanes += [_Lane("scan_output", j, body_out=1 + n + j, node_out=n + j, axis=0) for j in range(k)]
        return lanes
    if node.op_type == "Scan":
        old = is_scan8(node, opset)
        first = 1 if old else 0
        # an attribute of the file: bounded by the inputs the node has (2^62 made range() take 21 GB)
        m = max(0, min(_int(node, "num_scan_inputs", 0), len(node.input) - first))
        n = max(0, len(node.input) - first - m)
        k = max(len(node.output) - n, (len(body.output) - n) if body is not None else 0, 0)
        lanes = [_Lane("sequence_lens", 0, node_in=0)] if old else []
        lanes += [_Lane("state", j, node_in=first + j, body_in=j, body_out=j, node_out=j) for j in range(n)]
        in_axes, in_dirs = _ints(node, "scan_input_axes"), _ints(node, "directions" if old else "scan_input_directions")
        out_axes, out_dirs = _ints(node, "scan_output_axes"), _ints(node, "scan_output_directions")
        at = lambda values, j: values[j] if j < len(values) else 0  # noqa: E731
        lanes += [
            _Lane(
                "scanned",
                j,
                node_in=first + n + j,
                body_in=n + j,
                axis=1 if old else at(in_axes, j),
                reverse=at(in_dirs, j) == 1,
            )
            for j in range(m)
        ]
        lanes += [
            _Lane(
                "scan_output",
                j,
                body_out=n + j,
                node_out=n + j,
                axis=1 if old else at(out_axes, j),
                reverse=not old and at(out_dirs, j) == 1,
            )
            for j in range(k)
        ]
        return lanes
    if node.op_type == "If":
        branches = [g for _, g in _branches(node)]
        k = max([len(node.output), *(len(g.output) for g in branches)])
        return [_Lane("condition", 0, node_in=0)] + [
            _Lane("branch_output", j, body_out=j, node_out=j) for j in range(k)
        ]
    return []


class _Names:
    """The names at each position of a node and one of its bodies, for the sentences."""

    def __init__(self, node: onnx.NodeProto, body: onnx.GraphProto | None):
        self.node, self.op = node, node.op_type
        self.body_in = [v.name for v in body.input] if body is not None else []
        self.body_out = [v.name for v in body.output] if body is not None else []

    @staticmethod
    def _at(names, k: int | None) -> str:
        return names[k] if k is not None and 0 <= k < len(names) else ""

    def node_in(self, k):
        return self._at(self.node.input, k)

    def node_out(self, k):
        return self._at(self.node.output, k)

    def bin(self, k):
        return self._at(self.body_in, k)

    def bout(self, k):
        return self._at(self.body_out, k)

    def inp(self, k, when: str = "") -> str:
        """ "h0 (the Loop's input 3)", with `when`: "h0 on entry (the Loop's input 3)"; "nothing
        (the Loop's input 3 is not given)" """
        name = self.node_in(k)
        when = f" {when}" if when else ""
        return (
            f"{name}{when} (the {self.op}'s input {k})"
            if name
            else f"nothing{when} (the {self.op}'s input {k} is not given)"
        )

    def out(self, k) -> str:
        name = self.node_out(k)
        return f"the {self.op}'s {name} (output {k})" if name else f"the {self.op}'s output {k}, which is not kept"


_TAGS = {
    "trip_count": "trip count",
    "condition": "condition",
    "iteration": "iteration #",
    "carried": "carried",
    "state": "state",
    "scanned": "scanned",
    "scan_output": "scan output",
    "sequence_lens": "sequence lengths",
    "branch_output": "If output",
}


def _role(lane: _Lane, text: str, box: str | None = None) -> dict:
    out: dict = {"kind": lane.kind, "tag": _TAGS[lane.kind], "k": lane.k, "text": text}
    if box is not None:
        out["box"] = box
    for key in ("node_in", "body_in", "body_out", "node_out"):
        v = getattr(lane, key)
        if v is not None:
            out[
                {
                    "node_in": "node_input",
                    "body_in": "body_input",
                    "body_out": "body_output",
                    "node_out": "node_output",
                }[key]
            ] = v
    if lane.axis is not None:
        out["axis"] = lane.axis
        out["reverse"] = lane.reverse
    return out


def _where(lane: _Lane) -> str:
    """ " · axis 1", " · reversed": a Scan's axis and direction on its box, where not the first
    axis, first to last."""
    return (f" · axis {lane.axis}" if lane.axis else "") + (" · reversed" if lane.reverse else "")


def _order(lane: _Lane) -> str:
    return ", last to first" if lane.reverse else ""


def _node_input_text(lane: _Lane, nm: _Names) -> str:
    given = bool(nm.node_in(lane.node_in))
    if lane.kind == "trip_count":
        if not given:
            return "not given: the loop runs until its condition is false"
        return f"at most this many iterations; the body counts them in {nm.bin(0) or 'its input 0'}"
    if lane.kind == "condition" and nm.op == "If":
        return "true: then_branch runs; false: else_branch"
    if lane.kind == "condition":
        if not given:
            return "not given: the trip count alone ends the loop"
        return f"the loop starts only if it is true; then the body's {nm.bout(0) or 'output 0'} says whether it goes on"
    if lane.kind == "sequence_lens":
        return "each batch entry's number of steps" if given else "not given: every sequence runs its full length"
    if lane.kind in ("carried", "state"):
        return f"→ {nm.node_out(lane.node_out) or '(its last value not kept)'}: the body's {nm.bin(lane.body_in)} on the first iteration"
    if lane.kind == "scanned":
        return (
            f"sliced along axis {lane.axis}, one slice per iteration{_order(lane)}: the body's {nm.bin(lane.body_in)}"
        )
    return ""


def _node_output_text(lane: _Lane, nm: _Names, branches: list[tuple[str, onnx.GraphProto]]) -> str:
    if lane.kind in ("carried", "state"):
        return f"← the body's {nm.bout(lane.body_out)} after the last iteration (it starts as {nm.node_in(lane.node_in) or 'nothing given'})"
    if lane.kind == "scan_output":
        where = "a new axis 0" if nm.op == "Loop" else f"axis {lane.axis}"
        return f"stacked per iteration: the body's {nm.bout(lane.body_out)}, along {where}{', the last iteration first' if lane.reverse else ''}"
    if lane.kind == "branch_output":
        k = lane.k
        said = [f"{attr}'s {g.output[k].name}" for attr, g in branches if k < len(g.output)]
        return (" or ".join(said) + ", whichever runs") if said else "the output of the branch that runs"
    return ""


def _body_input_text(lane: _Lane, nm: _Names) -> tuple[str, str]:
    """(the drawing's line, the panel's sentence) of a body input."""
    if lane.kind == "iteration":
        limit = nm.node_in(0)
        more = (
            f"; the Loop runs at most {limit} of them (its input 0)"
            if limit
            else "; the Loop gives no trip count: its condition alone ends it"
        )
        return "iteration #", f"Iteration number: 0 on the first iteration, then 1, 2, …{more}."
    if lane.kind == "condition":
        start = nm.inp(1, "on entry") if nm.node_in(1) else "true on entry (the Loop gives no condition)"
        return (
            f"condition ↔ {nm.bout(0)}",
            f"Condition: {start}, {nm.bout(0)} after each iteration.",
        )
    if lane.kind in ("carried", "state"):
        word = "Carried" if lane.kind == "carried" else "State"
        after = nm.out(lane.node_out) if nm.node_out(lane.node_out) else f"the {nm.op} doesn't keep its last value"
        if nm.node_out(lane.node_out):
            after += " after the last"
        return (
            f"{lane.kind} ↔ {nm.bout(lane.body_out)}",
            f"{word}: {nm.inp(lane.node_in, 'on entry')}, {nm.bout(lane.body_out)} after each iteration; {after}.",
        )
    if lane.kind == "scanned":
        order = "last to first" if lane.reverse else "first to last"
        return (
            f"scanned ← {nm.node_in(lane.node_in)}{_where(lane)}",
            f"Scanned input: one slice of {nm.inp(lane.node_in)} per iteration, taken along its axis {lane.axis}, {order}.",
        )
    return "", ""


def _body_output_text(lane: _Lane, nm: _Names, attr: str) -> tuple[str, str]:
    """(the drawing's line, the panel's sentence) of a body output."""
    if lane.kind == "condition":
        return (
            f"condition ↔ {nm.bin(1)}",
            f"Condition: the Loop runs another iteration while it is true; the next iteration reads it as {nm.bin(1)}.",
        )
    if lane.kind in ("carried", "state"):
        word = "Carried" if lane.kind == "carried" else "State"
        last = (
            f"after the last, it comes out as {nm.out(lane.node_out)}"
            if nm.node_out(lane.node_out)
            else f"the {nm.op} doesn't keep its last value"
        )
        return (
            f"{lane.kind} ↔ {nm.bin(lane.body_in)}",
            f"{word}: the next iteration reads it as {nm.bin(lane.body_in)}; {last}. It starts as {nm.inp(lane.node_in)}.",
        )
    if lane.kind == "scan_output":
        where = "a new axis 0" if nm.op == "Loop" else f"axis {lane.axis}"
        first = ", the last iteration first" if lane.reverse else ""
        return (
            f"scan out → {nm.node_out(lane.node_out) or '(not kept)'}{_where(lane) if nm.op == 'Scan' else ''}",
            f"Scan output: each iteration's value, stacked along {where} into {nm.out(lane.node_out)}{first}.",
        )
    if lane.kind == "branch_output":
        when = "true" if attr == "then_branch" else "false"
        cond = nm.node_in(0) or "its condition"
        return (
            f"If output → {nm.node_out(lane.node_out) or '(not kept)'}",
            f"If output: {nm.out(lane.node_out)} when this branch runs ({cond} is {when}).",
        )
    return "", ""


def node_roles(node: onnx.NodeProto, opset: int | None) -> dict | None:
    """{"inputs": [role or None, ...], "outputs": [...]}: the part each input and output of a
    Loop, Scan or If plays; None for any other node. `opset`: the default domain's version its
    graph imports (Scan 8 differs)."""
    if not holds_roles(node):
        return None
    lanes = _lanes(node, opset)
    nm = _Names(node, _body(node) if node.op_type != "If" else None)
    branches = _branches(node)
    inputs: list[dict | None] = [None] * len(node.input)
    outputs: list[dict | None] = [None] * len(node.output)
    for lane in lanes:
        if lane.node_in is not None and lane.node_in < len(inputs):
            inputs[lane.node_in] = _role(lane, _node_input_text(lane, nm))
        if lane.node_out is not None and lane.node_out < len(outputs):
            outputs[lane.node_out] = _role(lane, _node_output_text(lane, nm, branches))
    return {"inputs": inputs, "outputs": outputs}


def body_roles(node: onnx.NodeProto, attr: str, opset: int | None) -> dict | None:
    """{"inputs": [...], "outputs": [...]}: the role of each input and output of the body a
    Loop, Scan or If holds as attribute `attr`; None for a graph of another node (or attribute)."""
    if not holds_roles(node):
        return None
    if attr not in (("then_branch", "else_branch") if node.op_type == "If" else ("body",)):
        return None
    body = _body(node, attr)
    if body is None:
        return None
    nm = _Names(node, body)
    inputs: list[dict | None] = [None] * len(body.input)
    outputs: list[dict | None] = [None] * len(body.output)
    for lane in _lanes(node, opset):
        if lane.body_in is not None and lane.body_in < len(inputs):
            box, text = _body_input_text(lane, nm)
            inputs[lane.body_in] = _role(lane, text, box)
        if lane.body_out is not None and lane.body_out < len(outputs):
            box, text = _body_output_text(lane, nm, attr)
            outputs[lane.body_out] = _role(lane, text, box)
    return {"inputs": inputs, "outputs": outputs}
