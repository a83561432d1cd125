"""onnx's checker and inference messages as causes a person reads: the first real one in one
line naming its node (name, op, graph), the rest folded.

Strict inference reports one error per node: the node that is wrong, then "Input 0 expected to
have type but instead is null" for every node downstream of it (~180 lines on a real model).
Those follow from the first and are dropped when a real cause is there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import onnx

from .address import node_words
from .traverse import walk_graphs

# onnx names a failing node as "(op_type:Conv, node name: conv1): [ShapeInferenceError] text"
_PART = re.compile(r"\(op_type:([^,]*), node name: ([^)]*)\):\s*")
_TAG = re.compile(r"^\s*(?:\[[A-Za-z]+\]\s*)+")
_CONSEQUENCE = "expected to have type but instead is null"


@dataclass
class Causes:
    first: str  # one line
    more: list[str] = field(default_factory=list)  # the other causes, one line each

    def line(self) -> str:
        """The first cause, with how many more there are."""
        return self.first if not self.more else f"{self.first} (+{len(self.more)} more)"


def _graph_of(model: onnx.ModelProto | None, name: str, op_type: str) -> str | None:
    """Where the node named `name` with op `op_type` is, when exactly one node fits."""
    if model is None or not name:
        return None
    places = [
        ref.path for ref in walk_graphs(model) for n in ref.container.node if n.name == name and n.op_type == op_type
    ]
    if len(places) != 1:
        return None
    return "the main graph" if places[0] == "" else f"graph {places[0]}"


def _node_words(model, op_type: str, name: str) -> str:
    where = _graph_of(model, name, op_type)
    who = node_words(name, op_type)
    return f"{who} in {where}" if where else who


def causes_of(message: str, model: onnx.ModelProto | None = None) -> Causes:
    """Split an onnx checker/inference message into causes, the real ones first."""
    text = str(message or "")
    heads = list(_PART.finditer(text))
    if not heads:
        lines = [ln.strip() for ln in str(message or "").strip().splitlines() if ln.strip()]
        return Causes(lines[0] if lines else "onnx refused the model", lines[1:])
    found = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        reason = _TAG.sub("", " ".join(text[m.end() : end].split()))
        found.append((m.group(1).strip(), m.group(2).strip(), reason))
    real = [c for c in found if _CONSEQUENCE not in c[2]] or found
    follow = [c for c in found if c not in real]
    lines = [f"{_node_words(model, op, name)}: {reason}" for op, name, reason in real + follow]
    return Causes(lines[0], lines[1:])
