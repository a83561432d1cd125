"""A body's declared inputs against what its Loop or Scan feeds them. onnx's inference takes a
Loop body's carried inputs as the body declares them (it drops the fed shapes: a carried value
may change shape between iterations), so a body exported at batch 1 keeps saying 1 after the
batch went dynamic and every shape inferred after it does too; onnxruntime then refuses the run
at another batch. A fixed size the fed value no longer has takes the fed dim."""

from __future__ import annotations

from collections import ChainMap

import onnx

from ..onnx_io.limits import MAX_GRAPH_DEPTH
from ..onnx_io.traverse import node_graphs


def fit_body_inputs(model: onnx.ModelProto, inferred: onnx.ModelProto) -> int:
    """Give the model's Loop and Scan bodies' inputs (at any depth) the dims of what their node
    feeds them, as `inferred` (the same model after shape inference) types those values, where
    a declared size contradicts them; how many inputs changed."""
    return _fit(model.graph, inferred.graph, ChainMap(), 0)


def _fit(mine: onnx.GraphProto, theirs: onnx.GraphProto, outer: ChainMap, depth: int) -> int:
    scope = outer.new_child({v.name: v.type for v in [*theirs.input, *theirs.value_info, *theirs.output]})
    changed = 0
    for node, their_node in zip(mine.node, theirs.node, strict=True):
        for (attr, _, body), (_, _, their_body) in zip(node_graphs(node), node_graphs(their_node), strict=True):
            for k, name, axis in _fed(node, attr):
                fed = scope.get(name)
                if k < len(body.input) and fed is not None and _take_fed_dims(body.input[k].type, fed, axis):
                    changed += 1
            if depth < MAX_GRAPH_DEPTH:
                changed += _fit(body, their_body, scope, depth + 1)
    return changed


def _fed(node: onnx.NodeProto, attr: str) -> list[tuple[int, str, int | None]]:
    """(body input index, the node's input feeding it, the axis a Scan takes slices along) for
    the body inputs a node feeds from its own inputs: a Loop's carried values, a Scan's state
    values and scanned inputs (Scan 8, whose batch axis comes first, is left alone)."""
    if node.op_type == "Loop" and attr == "body":
        return [(k, node.input[k], None) for k in range(2, len(node.input)) if node.input[k]]
    if node.op_type != "Scan" or attr != "body" or any(a.name == "directions" for a in node.attribute):
        return []
    scans = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
    axes = next((list(a.ints) for a in node.attribute if a.name == "scan_input_axes"), [])
    state = len(node.input) - scans
    fed: list[tuple[int, str, int | None]] = [(k, node.input[k], None) for k in range(state)]
    fed += [(state + j, node.input[state + j], axes[j] if j < len(axes) else 0) for j in range(scans)]
    return [f for f in fed if f[1]]


def _take_fed_dims(declared: onnx.TypeProto, fed: onnx.TypeProto, axis: int | None) -> bool:
    """Replace each fixed size of `declared` that the fed type's dim contradicts by that dim
    (a Scan's slice: the fed dims without `axis`); whether any changed."""
    if not (declared.HasField("tensor_type") and fed.HasField("tensor_type")):
        return False
    if not (declared.tensor_type.HasField("shape") and fed.tensor_type.HasField("shape")):
        return False
    dims = list(fed.tensor_type.shape.dim)
    if axis is not None:
        if not dims or not -len(dims) <= axis < len(dims):
            return False
        del dims[axis % len(dims)]
    mine = declared.tensor_type.shape.dim
    if len(mine) != len(dims):
        return False
    changed = False
    for d, f in zip(mine, dims, strict=True):
        if d.HasField("dim_value") and not (f.HasField("dim_value") and f.dim_value == d.dim_value):
            d.CopyFrom(f)
            changed = True
    return changed
