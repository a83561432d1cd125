"""value_info an edit made stale. Exports (and our own Shape inference tool) store the type of
every intermediate value; an edit that changes what a node produces (Conv strides 1 → 2, a
MaxPool's kernel with its pads, a weight of another shape) leaves those entries saying the old
shapes, and onnx's strict check then refuses the edited model over a hint, not over the graph:
"Inferred shape and existing shape differ in dimension 2: (16) vs (32)". The entries the graph
now contradicts are re-inferred; the rest stay as stored. Graph outputs are the model's
contract and are never changed here."""

from __future__ import annotations

import re

import onnx

from ..onnx_io.inference import infer_isolated
from ..onnx_io.type_rules import is_known
from ..words import plural, some_names

# onnx's words when a stored type disagrees with what inference finds for the same value
_STALE = re.compile(
    r"Inferred shape and existing shape differ|Inferred elem type differs from existing elem type"
    r"|existing shape differ in rank"
)


def says_stale(message: str) -> bool:
    """Whether a strict-check failure is a stored type disagreeing with inference."""
    return bool(_STALE.search(message or ""))


def reinfer_stale(model: onnx.ModelProto) -> str | None:
    """Replace the main graph's value_info entries that inference (run without them) now
    contradicts; a change line naming them, or None when none does (or inference fails)."""
    g = model.graph
    if not len(g.value_info):
        return None
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.value_info[:]
    try:  # in the helper process (onnx's C++ on an untrusted model)
        inferred = infer_isolated(probe, check_type=False, strict_mode=False, data_prop=True)
    except ValueError:
        return None
    found = {v.name: v.type for v in inferred.graph.value_info}
    stale = []
    for v in g.value_info:
        new = found.get(v.name)
        if new is not None and _contradicts(v.type, new):
            keep_dim_names(new, v.type)
            v.type.CopyFrom(new)
            stale.append(v.name)
    if not stale:
        return None
    return f"stored value_info of {some_names(stale)} re-inferred: the edit changed {_their(len(stale))}"


def keep_dim_names(new: onnx.TypeProto, old: onnx.TypeProto) -> None:
    """Where inference only invents a dim's name (unk__1: it can't carry "sequence" through a
    Range) and the old type named it, the old name stays."""
    if not (new.HasField("tensor_type") and old.HasField("tensor_type")):
        return
    dims, before = new.tensor_type.shape.dim, old.tensor_type.shape.dim
    if len(dims) != len(before):
        return
    for d, o in zip(dims, before, strict=True):
        if is_known(o.dim_param) and not d.HasField("dim_value") and not is_known(d.dim_param):
            d.dim_param = o.dim_param


def _contradicts(stored: onnx.TypeProto, inferred: onnx.TypeProto) -> bool:
    """Whether two tensor types can't both hold: other element types, ranks or fixed sizes."""
    if not (stored.HasField("tensor_type") and inferred.HasField("tensor_type")):
        return False
    a, b = stored.tensor_type, inferred.tensor_type
    if a.elem_type and b.elem_type and a.elem_type != b.elem_type:
        return True
    if not (a.HasField("shape") and b.HasField("shape")):
        return False
    if len(a.shape.dim) != len(b.shape.dim):
        return True
    return any(
        x.HasField("dim_value") and y.HasField("dim_value") and x.dim_value != y.dim_value
        for x, y in zip(a.shape.dim, b.shape.dim, strict=True)
    )


def _their(n: int) -> str:
    return "its shape" if n == 1 else f"their shapes ({plural(n, 'value')})"
