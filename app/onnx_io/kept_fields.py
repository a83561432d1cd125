"""What a tool rewriting a graph drops of the fields it has no business with, put back.

onnx's version converter, onnxruntime's optimizer and shape inference hand back a graph of
their own making: it keeps the nodes, tensors and types they work on, and loses the rest — the
graph's doc string, metadata and quantization annotations, the doc strings and metadata of its
inputs, outputs, value_info and initializers, and each node's doc string, metadata and device
configurations (QA22: a convert_opset dropped them all, saying nothing). Each is put back from
the graph before, matched by name (a node by its first output and op, its bodies by attribute),
where the new graph still has it and has none of its own.
"""

from __future__ import annotations

import onnx


def keep_described(value: onnx.ValueInfoProto, before: onnx.ValueInfoProto) -> onnx.ValueInfoProto:
    """`value` (re-made by a tool) with `before`'s doc string and metadata where it has none."""
    if before.doc_string and not value.doc_string:
        value.doc_string = before.doc_string
    if len(before.metadata_props) and not len(value.metadata_props):
        value.metadata_props.extend(before.metadata_props)
    return value


def restore_graph_fields(before: onnx.GraphProto, after: onnx.GraphProto, declared: bool = False) -> None:
    """Put back on `after` (in place) what it lost of `before` that no tool rewrites; with
    `declared`, also the types its inputs and outputs declared (of the same element type) and
    only the value_info it held — for a tool whose shape inference writes what it found into
    them (onnx's converter, in bodies too), where the edit is no re-typing."""
    if declared:
        _keep_declared(before, after)
    if before.doc_string and not after.doc_string:
        after.doc_string = before.doc_string
    if len(before.metadata_props) and not len(after.metadata_props):
        after.metadata_props.extend(before.metadata_props)
    named = _tensor_names(after)
    if len(before.quantization_annotation) and not len(after.quantization_annotation):
        kept = [a for a in before.quantization_annotation if a.tensor_name in named]
        after.quantization_annotation.extend(kept)
        _keep_annotation_tensors(before, after, kept, named)
    old_values = {v.name: v for v in [*before.input, *before.output, *before.value_info]}
    for v in [*after.input, *after.output, *after.value_info]:
        if v.name in old_values:
            keep_described(v, old_values[v.name])
    old_tensors = {t.name: t for t in before.initializer}
    old_tensors.update({s.values.name: s.values for s in before.sparse_initializer})
    for t in [*after.initializer, *(s.values for s in after.sparse_initializer)]:
        old = old_tensors.get(t.name)
        if old is None:
            continue
        if old.doc_string and not t.doc_string:
            t.doc_string = old.doc_string
        if len(old.metadata_props) and not len(t.metadata_props):
            t.metadata_props.extend(old.metadata_props)
    old_nodes = {n.output[0]: n for n in before.node if n.output}
    for n in after.node:
        node = old_nodes.get(n.output[0]) if n.output else None
        if node is None or node.op_type != n.op_type:
            continue
        if node.doc_string and not n.doc_string:
            n.doc_string = node.doc_string
        if len(node.metadata_props) and not len(n.metadata_props):
            n.metadata_props.extend(node.metadata_props)
        if len(node.device_configurations) and not len(n.device_configurations):
            n.device_configurations.extend(node.device_configurations)
        # its bodies (an If's branches, a Loop's body), attribute by attribute
        old_graphs = {a.name: a for a in node.attribute}
        for a in n.attribute:
            was = old_graphs.get(a.name)
            if was is None or was.type != a.type:
                continue
            if a.type == onnx.AttributeProto.GRAPH:
                restore_graph_fields(was.g, a.g, declared)
            elif a.type == onnx.AttributeProto.GRAPHS and len(a.graphs) == len(was.graphs):
                for g_before, g_after in zip(was.graphs, a.graphs, strict=True):
                    restore_graph_fields(g_before, g_after, declared)


def _keep_annotation_tensors(before: onnx.GraphProto, after: onnx.GraphProto, kept, named: set[str]) -> None:
    """The scale and zero-point weights the kept annotations name, brought back where the tool
    dropped them as read by no node (QA39: a split's part 1 kept `b`'s annotation, its scale
    `bias` left with part 2): an annotation naming no tensor of its graph says nothing."""
    weights = {t.name: t for t in before.initializer}
    wanted = [p.value for a in kept for p in a.quant_parameter_tensor_names]
    for name in dict.fromkeys(wanted):
        if name not in named and name in weights:
            after.initializer.append(weights[name])


def _keep_declared(before: onnx.GraphProto, after: onnx.GraphProto) -> None:
    had = {v.name for v in before.value_info}
    kept = [v for v in after.value_info if v.name in had]
    del after.value_info[:]
    after.value_info.extend(kept)
    old = {v.name: v for v in [*before.input, *before.output]}
    for v in [*after.input, *after.output]:
        was = old.get(v.name)
        if was is not None and _elem_type(was.type) == _elem_type(v.type):
            v.type.CopyFrom(was.type)


def _elem_type(t: onnx.TypeProto) -> int | None:
    return t.tensor_type.elem_type if t.HasField("tensor_type") else None


def _tensor_names(g: onnx.GraphProto) -> set[str]:
    names = {v.name for v in [*g.input, *g.output, *g.value_info]}
    names |= {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
    names |= {o for n in g.node for o in n.output}
    return names
