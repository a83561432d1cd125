"""The shapes of a Loop's carried values and a Scan's state, where onnx's inference leaves them
untyped. onnx gives a Loop's (or Scan's) carried output no shape: a carried value may change
shape between iterations. When the body gives each such value back in the very shape it took
(its output inferred as its input is declared, once fit_body_inputs gave the input the dims its
node feeds), it can't: the node's output has that shape. Said as value_info of the graph around,
inference then types what follows (a batch made dynamic reaches the graph's outputs)."""

from __future__ import annotations

import onnx

from ..onnx_io.traverse import node_graphs
from .stale_value_info import graph_pairs


def invariant_carried(model: onnx.ModelProto, inferred: onnx.ModelProto) -> dict[str, list[onnx.ValueInfoProto]]:
    """Graph path -> value_info for the carried outputs of its Loop and Scan nodes that
    `inferred` (the model after inference) leaves without a shape and whose body keeps it."""
    out: dict[str, list[onnx.ValueInfoProto]] = {}
    for ref, theirs in graph_pairs(model, inferred):
        typed = {v.name for v in [*theirs.value_info, *theirs.output] if _shaped(v.type)}
        for node, their_node in zip(ref.container.node, theirs.node, strict=True):
            for k_in, k_out, name in _carried(node):
                if not name or name in typed:
                    continue
                body = next((g for a, _, g in node_graphs(node) if a == "body"), None)
                their_body = next((g for a, _, g in node_graphs(their_node) if a == "body"), None)
                if body is None or their_body is None or k_in >= len(body.input) or k_out >= len(their_body.output):
                    continue
                took, gave = body.input[k_in].type, their_body.output[k_out].type
                if _shaped(took) and _same_shape(took, gave):
                    out.setdefault(ref.path, []).append(onnx.helper.make_value_info(name, took))
    return out


def _carried(node: onnx.NodeProto) -> list[tuple[int, int, str]]:
    """(body input, body output, the node's output) of each value a Loop carries or a Scan keeps
    as its state."""
    if node.op_type == "Loop":
        return [(k + 2, k + 1, node.output[k]) for k in range(min(len(node.input) - 2, len(node.output)))]
    if node.op_type == "Scan" and not any(a.name == "directions" for a in node.attribute):  # Scan 8: batch first
        scans = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        return [(k, k, node.output[k]) for k in range(min(len(node.input) - scans, len(node.output)))]
    return []


def _shaped(t: onnx.TypeProto) -> bool:
    return t.HasField("tensor_type") and t.tensor_type.HasField("shape")


def _same_shape(a: onnx.TypeProto, b: onnx.TypeProto) -> bool:
    """The same element type and dims: each a size or a name, alike in both."""
    if not (_shaped(a) and _shaped(b)) or a.tensor_type.elem_type != b.tensor_type.elem_type:
        return False
    da, db = a.tensor_type.shape.dim, b.tensor_type.shape.dim
    if len(da) != len(db):
        return False
    for x, y in zip(da, db, strict=True):
        if x.HasField("dim_value") and y.HasField("dim_value") and x.dim_value == y.dim_value:
            continue
        if x.HasField("dim_param") and y.HasField("dim_param") and x.dim_param == y.dim_param:
            continue
        return False
    return True
