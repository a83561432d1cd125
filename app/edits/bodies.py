"""The graphs an edit op works in (the main graph or a body, never a model function), and the
contract between a node holding bodies (If, Loop, Scan) and them: a body's outputs are
positional, each standing for something of the holder's, so edits of them keep the count and
the element types that contract needs.

  If    then_branch, else_branch: output k is the If's output k, in both branches alike
  Loop  body: output 0 the condition (BOOL), 1..N the N carried values (typed as the body's
        inputs 2..N+1, which the next iteration reads), then the scan outputs
  Scan  body: the N state values (typed as the body's inputs 0..N-1), then the scan outputs
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from ..errors import StudioError
from ..onnx_io.address import GraphRef, node_words, resolve_graph, resolve_node, subgraph_path
from ..onnx_io.causes import graph_words
from ..onnx_io.traverse import node_graphs, opset_version
from ..words import plural


def graph_at(model: onnx.ModelProto, path: str, op_name: str) -> GraphRef:
    """The graph an op names by path: the main graph ("") or a body; a model function refused."""
    ref = resolve_graph(model, path)
    if isinstance(ref.container, onnx.FunctionProto):
        raise StudioError(
            "bad_value", f"{op_name}: {path!r} is a model function; {op_name} works in the main graph and its bodies"
        )
    return ref


def where(model: onnx.ModelProto, ref: GraphRef) -> str:
    """ "the main graph", "branch/then_branch": a graph in an op's words."""
    return graph_words(model, ref.path)


def defines(g: onnx.GraphProto | onnx.FunctionProto, name: str) -> bool:
    """Is `name` a value of g itself (an input, an initializer, a node's output)?"""
    if isinstance(g, onnx.FunctionProto):
        return name in g.input or any(name in n.output for n in g.node)
    return (
        any(v.name == name for v in g.input)
        or any(t.name == name for t in g.initializer)
        or any(s.values.name == name for s in g.sparse_initializer)
        or any(name in n.output for n in g.node)
    )


def enclosing_defines(model: onnx.ModelProto, ref: GraphRef, name: str) -> bool:
    """Is `name` a value of a graph around ref's (which a body reads by name)?"""
    return any(defines(resolve_graph(model, c["path"]).container, name) for c in ref.crumbs[:-1])


@dataclass
class Body:
    """A body and the node holding it."""

    ref: GraphRef
    holder: onnx.NodeProto
    holder_id: str
    attr: str  # then_branch, body, ...
    version: int | None = None  # the holder's opset (Scan 8 has sequence_lens first)

    @property
    def graph(self) -> onnx.GraphProto:
        return self.ref.container  # type: ignore[return-value]  # graph_at refuses functions

    @property
    def holder_words(self) -> str:
        return node_words(self.holder.name, self.holder.op_type, self.holder_id)

    def partner(self) -> onnx.GraphProto | None:
        """The If's other branch."""
        if self.holder.op_type != "If":
            return None
        other = "else_branch" if self.attr == "then_branch" else "then_branch"
        return next((g for a, _, g in node_graphs(self.holder) if a == other), None)

    def carried(self) -> int:
        """How many of the outputs the next iteration reads back (Loop, Scan); the Loop's
        condition not counted."""
        if self.holder.op_type == "Loop":
            return max(0, len(self.holder.input) - 2)
        if self.holder.op_type == "Scan":
            scans = next((a.i for a in self.holder.attribute if a.name == "num_scan_inputs"), 0)
            lens = 1 if self.version == 8 else 0
            return max(0, len(self.holder.input) - lens - scans)
        return 0

    def role(self, k: int) -> str:
        """What output k of the body stands for, in people's words."""
        op = self.holder.op_type
        if op == "If":
            return f"output {k} of {self.holder_words}"
        if op == "Loop" and k == 0:
            return f"the condition of {self.holder_words}"
        first = 1 if op == "Loop" else 0
        if op in ("Loop", "Scan") and k < first + self.carried():
            return f"a value {self.holder_words} carries to its next iteration"
        if op in ("Loop", "Scan"):
            return f"a scan output of {self.holder_words}"
        return f"output {k} of {self.attr}"

    def outer_output(self, k: int) -> str | None:
        """The holder's output standing for output k of the body: an If's k-th, a Scan's k-th,
        a Loop's (k-1)-th (its condition stands for none); None where the holder gives none."""
        j = k - 1 if self.holder.op_type == "Loop" else k
        if self.holder.op_type not in ("If", "Loop", "Scan") or not 0 <= j < len(self.holder.output):
            return None
        return self.holder.output[j] or None

    def around(self, model: onnx.ModelProto) -> GraphRef:
        """The graph holding the holder."""
        return resolve_node(model, self.holder_id)[0]

    def must_type(self, k: int) -> tuple[int, str] | None:
        """(element type, why) output k must keep, when the contract fixes one."""
        op = self.holder.op_type
        if op == "If":
            other = self.partner()
            if other is not None and k < len(other.output):
                t = other.output[k].type
                if t.WhichOneof("value") == "tensor_type" and t.tensor_type.elem_type:
                    return t.tensor_type.elem_type, f"the other branch's output {other.output[k].name!r} is"
            return None
        if op == "Loop" and k == 0:
            return onnx.TensorProto.BOOL, "a Loop's condition is"
        first = 1 if op == "Loop" else 0
        if op in ("Loop", "Scan") and first <= k < first + self.carried():
            read = k + 1 if op == "Loop" else k  # the body input the next iteration reads it as
            if read < len(self.graph.input):
                v = self.graph.input[read]
                if v.type.WhichOneof("value") == "tensor_type" and v.type.tensor_type.elem_type:
                    return v.type.tensor_type.elem_type, f"the next iteration reads it as {v.name!r}, which is"
        return None


def body_of(model: onnx.ModelProto, ref: GraphRef) -> Body | None:
    """The body ref is, with its holder; None for the main graph (or a training graph)."""
    if not ref.path or "/" not in ref.path:
        return None
    nid = ref.path.rpartition("/")[0]
    around, _, holder = resolve_node(model, nid)
    for attr, item, _ in node_graphs(holder):
        if subgraph_path(nid, attr, item) == ref.path:
            return Body(ref, holder, nid, attr, opset_version(model, around.container, holder.domain))
    return None


def check_type_kept(body: Body, k: int, now: onnx.TypeProto | None, op_name: str, name: str) -> None:
    """Refuse output k of the body becoming a value of type `now` where the contract fixes its
    element type to another."""
    fixed = body.must_type(k)
    if fixed is None or now is None or now.WhichOneof("value") != "tensor_type" or not now.tensor_type.elem_type:
        return
    want, why = fixed
    got = now.tensor_type.elem_type
    if got != want:
        type_name = onnx.TensorProto.DataType.Name
        raise StudioError(
            "breaks_body",
            f"{op_name}: {name!r}, {body.role(k)}, would be {type_name(got)}, but {why} {type_name(want)}",
        )


def positional_words(model: onnx.ModelProto, body: Body) -> str:
    """Why a body's outputs can't be added or removed one by one."""
    n = len(body.graph.output)
    op = body.holder.op_type
    if op == "If":
        why = f"each branch of {body.holder_words} gives {plural(n, 'output')}, one per output of the If"
    elif op == "Loop":
        why = (
            f"the body of {body.holder_words} gives its condition, {plural(body.carried(), 'carried value')}"
            " and its scan outputs, one per input and output of the Loop"
        )
    elif op == "Scan":
        why = (
            f"the body of {body.holder_words} gives {plural(body.carried(), 'state value')}"
            " and its scan outputs, one per output of the Scan"
        )
    else:
        why = f"the outputs of {where(model, body.ref)} stand one for one for what {body.holder_words} expects"
    return why
