"""Nodes that are valid as they are at an older opset, carried through onnx's version converter
untouched. The converter has no adapter down for most operators whose newer versions only took
more types or an attribute or input left at its default (Mul-14, Add-14, Relu-14, Reshape-14,
Shape-15, Identity-16…), so it refused 17 → 13 on practically every torch export (QA25 #1),
though each such node means the same at 13. A node whose operator's contract at the older opset
holds what it uses — its inputs within that version's inputs, each attribute it sets defined
there (one it sets at the newer version's default is dropped), every default it relies on the
same — is moved to a private domain the converter leaves alone, and put back after; the full
check at the older opset then holds its types to that version's constraints. Operators whose
meaning changed under an unchanged signature (Softmax-13 no longer flattens) go through the
converter's adapters.
"""

from __future__ import annotations

from collections import Counter

import onnx
from onnx import defs

from ..onnx_io.schema_defaults import at_default, default_of
from ..onnx_io.traverse import graphs_within, standard_domain
from .names import fresh_name

KEPT_DOMAIN = "ai.onnx-studio.kept"
# a signature that holds, a meaning that doesn't: the converter's adapters take these
CHANGED_MEANING = frozenset({"Softmax", "LogSoftmax", "Hardmax", "GridSample"})
# (op, input) an older version requires where a newer one takes none, and reads as not given when
# it is an empty tensor: Resize-11's roi and scales (torch's opset-11 exports pass empty
# constants; its opset-13+ ones, Resize(X, "", scales), were refused going down, QA43 #3)
EMPTY_MEANS_NONE = frozenset({("Resize", 1), ("Resize", 2)})
# (op, attribute, value) -> the opset that brought the value to an attribute older versions have:
# no checker holds a node to its version's list (Resize-19's half_pixel_symmetric, carried to 11,
# was called valid, QA44 #3)
NEWER_VALUES = {
    ("Resize", "coordinate_transformation_mode", b"half_pixel_symmetric"): 19,
    ("Pad", "mode", b"wrap"): 19,
}


def _schema(op_type: str, version: int) -> defs.OpSchema | None:
    try:
        return defs.get_schema(op_type, version, "")
    except defs.SchemaError:
        return None


def holds_at(node: onnx.NodeProto, now: defs.OpSchema, then: defs.OpSchema) -> bool:
    """Whether `node`, valid under `now`, means the same under `then` (an older version): what it
    uses is there, and what it leaves out defaults alike (types: the full check's to say)."""
    if node.op_type in CHANGED_MEANING or now.since_version == then.since_version:
        return now.since_version == then.since_version
    used = len(node.input)
    while used and not node.input[used - 1]:
        used -= 1
    params = list(then.inputs)
    variadic = bool(params) and params[-1].option == defs.OpSchema.FormalParameterOption.Variadic
    if used > len(params) and not variadic:
        return False
    if any((node.op_type, k) not in EMPTY_MEANS_NONE for k in left_out(node, then)):
        return False  # an input the older version requires, left out
    if len(node.output) > len(then.outputs) and not (
        then.outputs and then.outputs[-1].option == defs.OpSchema.FormalParameterOption.Variadic
    ):
        return False
    set_here = {a.name: a for a in node.attribute}
    for name, a in set_here.items():
        if a.ref_attr_name:
            return False  # a function's attribute: its value is the caller's
        if then.since_version < NEWER_VALUES.get((node.op_type, name, a.s), 0):
            return False  # a value the older version doesn't know
        if name not in then.attributes and not at_default(a, default_of(now, name)):
            return False
    for name in then.attributes:
        if name in set_here:
            continue
        old, new = default_of(then, name), default_of(now, name)
        if (old is None) != (new is None) or (old is not None and not at_default(old, new)):
            return False
    return True


def left_out(node: onnx.NodeProto, then: defs.OpSchema) -> list[int]:
    """The positions of inputs `then` requires (single) that the node leaves empty."""
    params = list(then.inputs)
    single = defs.OpSchema.FormalParameterOption.Single
    return [k for k in range(min(len(node.input), len(params))) if not node.input[k] and params[k].option == single]


def _given_empty(
    model: onnx.ModelProto, g: onnx.GraphProto, node: onnx.NodeProto, then: defs.OpSchema, empties: dict
) -> int:
    """The inputs `then` requires that the node leaves out (EMPTY_MEANS_NONE) given an empty float
    tensor, one initializer per graph (`empties`: id of a graph -> its name); how many."""
    missing = left_out(node, then)
    if not missing:
        return 0
    name = empties.get(id(g))
    if name is None:
        name = empties[id(g)] = fresh_name(model, "empty")
        g.initializer.append(onnx.helper.make_tensor(name, onnx.TensorProto.FLOAT, [0], []))
    for k in missing:
        node.input[k] = name
    return len(missing)


class Carried:
    """What carry_down moved: how many of each op type, and each node's attribute order (by its
    first output), which the converter's round trip sorts."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.given_empty = 0  # inputs the older opset requires given an empty tensor (EMPTY_MEANS_NONE)
        self.order: dict[str, list[str]] = {}
        self.domain: dict[str, str | None] = {}  # "" or "ai.onnx" as written, None: not written


def carry_down(model: onnx.ModelProto, current: int, target: int) -> Carried:
    """Move, in place, the main graph's and its bodies' standard nodes that hold at `target` as
    they are into KEPT_DOMAIN (dropping attributes `target` lacks that they set at their
    defaults). put_back undoes the move on the converter's result."""
    carried = Carried()
    moved = carried.counts
    empties: dict[int, str] = {}
    for g in graphs_within(model.graph):
        for node in g.node:
            if standard_domain(node.domain) != "":
                continue
            now, then = _schema(node.op_type, current), _schema(node.op_type, target)
            if now is None or then is None or now.since_version == then.since_version:
                continue
            if not holds_at(node, now, then):
                continue
            carried.given_empty += _given_empty(model, g, node, then, empties)
            kept = [a for a in node.attribute if a.name in then.attributes]
            del node.attribute[:]
            node.attribute.extend(kept)
            if node.output:
                carried.order[node.output[0]] = [a.name for a in node.attribute]
                carried.domain[node.output[0]] = node.domain if node.HasField("domain") else None
            node.domain = KEPT_DOMAIN
            moved[node.op_type] += 1
    if moved:
        model.opset_import.add(domain=KEPT_DOMAIN, version=1)
    return carried


def put_back(model: onnx.ModelProto, carried: Carried) -> None:
    """The nodes carry_down moved, back in the standard domain with their attributes in their
    order; its import gone."""
    for g in graphs_within(model.graph):
        for node in g.node:
            if node.domain != KEPT_DOMAIN:
                continue
            written = carried.domain.get(node.output[0], "") if node.output else ""
            if written is None:
                node.ClearField("domain")  # as the model wrote it: not at all (proto2 keeps presence)
            else:
                node.domain = written
            order = carried.order.get(node.output[0]) if node.output else None
            if order:
                attributes = sorted(
                    node.attribute, key=lambda a: order.index(a.name) if a.name in order else len(order)
                )
                copies = [onnx.AttributeProto() for _ in attributes]
                for copy, a in zip(copies, attributes, strict=True):
                    copy.CopyFrom(a)
                del node.attribute[:]
                node.attribute.extend(copies)
    kept = [o for o in model.opset_import if o.domain != KEPT_DOMAIN]
    del model.opset_import[:]
    model.opset_import.extend(kept)


def missing_at(model: onnx.ModelProto, target: int) -> Counter:
    """op type -> nodes of it (main graph and bodies) that no opset up to `target` has: what a
    conversion down can't take without writing them out."""
    found: Counter = Counter()
    for g in graphs_within(model.graph):
        for node in g.node:
            if standard_domain(node.domain) == "" and _schema(node.op_type, target) is None:
                found[node.op_type] += 1
    return found
