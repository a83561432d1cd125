"""Nodes left out of a QDQ quantization computed in float for real.

onnxruntime's quantizer leaves a node of `nodes_to_exclude` on float weights, but its inputs
still read the DequantizeLinear outputs of tensors quantized for their other nodes (a tensor is
quantized as its maker's output), and onnxruntime's runtime then quantizes such a Conv's,
ConvTranspose's or Gemm's float weights itself (its WeightBiasQuantization transformer, per
tensor, while the node reads a DequantizeLinear and its output leads to a QuantizeLinear): a
ResNet's Conv "left in float" ran on int8 weights. Here each left-out node reads the float
value in place of each QuantizeLinear → DequantizeLinear pair's output — through a copy of the
Relu or Clip the quantizer folded into the pair's range, where it dropped one — and the pairs
no node reads any more go.
"""

from __future__ import annotations

import onnx

from .quant_switches import REMOVABLE, is_qdq
from .traverse import graphs_within


def read_float(base: onnx.ModelProto, quantized: onnx.ModelProto, names: set[str]) -> list[str]:
    """In `quantized` (made from `base`), make the main-graph nodes named in `names` read float
    values (the module's doc), in place; the names of the nodes changed."""
    g = quantized.graph
    producer = {o: n for n in g.node for o in n.output if o}
    base_producer = {o: n for n in base.graph.node for o in n.output if o}
    initializers = {t.name for t in g.initializer}
    base_initializers = {t.name: t for t in base.graph.initializer}
    restored: dict[str, str] = {}  # a pair's input -> the dropped activation's float output made for it
    before: dict[int, list[onnx.NodeProto]] = {}
    changed: list[str] = []
    for index, node in enumerate(g.node):
        if node.name not in names or is_qdq(node):
            continue
        for i, x in enumerate(node.input):
            dq = producer.get(x)
            q = producer.get(dq.input[0]) if dq is not None and is_qdq(dq, "DequantizeLinear") else None
            if q is None or not is_qdq(q, "QuantizeLinear"):
                continue  # not a pair's output (a weight: the quantizer left the node's own float)
            source = q.input[0]
            dropped = base_producer.get(source)
            maker = producer.get(source)
            if (
                dropped is not None
                and dropped.op_type in REMOVABLE
                and (maker is None or maker.op_type != dropped.op_type)
            ):
                if source not in restored:  # the quantizer's node makes the activation's input now
                    activation = onnx.NodeProto()
                    activation.CopyFrom(dropped)
                    restored[source] = activation.name = f"{source}/float"
                    activation.input[0] = source
                    activation.output[:] = [restored[source]]
                    for extra in activation.input[1:]:  # a Clip's bounds
                        if extra and extra not in initializers and extra in base_initializers:
                            g.initializer.append(base_initializers[extra])
                            initializers.add(extra)
                    before.setdefault(index, []).append(activation)
                source = restored[source]
            node.input[i] = source
            if node.name not in changed:
                changed.append(node.name)
    if before:
        nodes = list(g.node)
        del g.node[:]
        for index, node in enumerate(nodes):
            g.node.extend(before.get(index, []))
            g.node.append(node)
    _drop_unread_pairs(quantized)
    return changed


def _drop_unread_pairs(model: onnx.ModelProto) -> None:
    """Remove the DequantizeLinear nodes of the main graph nothing reads, then the QuantizeLinear
    nodes that fed only them, then the initializers only they read."""
    g = model.graph
    outputs = {o.name for o in g.output}
    dropped: list[onnx.NodeProto] = []
    for op in ("DequantizeLinear", "QuantizeLinear"):
        read = {x for graph in graphs_within(g) for n in graph.node for x in n.input}
        keep = []
        for n in g.node:
            if is_qdq(n, op) and not any(o in read or o in outputs for o in n.output):
                dropped.append(n)
            else:
                keep.append(n)
        del g.node[:]
        g.node.extend(keep)
    if dropped:
        read = {x for graph in graphs_within(g) for n in graph.node for x in n.input} | outputs
        gone = {x for n in dropped for x in n.input} - read
        kept = [t for t in g.initializer if t.name not in gone]
        del g.initializer[:]
        g.initializer.extend(kept)
