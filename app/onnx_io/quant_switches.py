"""A QDQ model's quantization as switches on its float base, for a sensitivity sweep.

The quantized model's quantization is a set of points: each activation tensor it quantizes
(QuantizeLinear → DequantizeLinear, the pair's output read by every node of the tensor in its
place) and each node's quantized weights (its integer tensors dequantized, bias included). Each
point is put on the float model behind a boolean graph input of its own: an activation tensor
through an If whose one branch quantizes it with the quantized model's own scale and zero point
and the other passes it on; a node with quantized weights as an If running it on its dequantized
weights or on its float ones. One onnxruntime session then runs the model with any set of
points on: all off is the float model, all on its quantization simulated, one on what that
point costs alone, all but one what turning it float would save.

A point's owners are the nodes to leave out of the quantization (quantize_static's
nodes_to_exclude, which makes them read float values: qdq_float_nodes.py) to remove it: a
node's weights, that node; an activation tensor, every node reading its quantized value (a
graph output's, the node making it) — leaving a Softmax alone out keeps its output quantized
for the MatMul reading it.

The float model is the reference, not the QDQ graph with its pairs bypassed: onnxruntime drops
the Relu or Clip after a quantized node (the output's range does its clipping), so bypassing
every pair of the QDQ graph computes something else than the float model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx
from onnx import TensorProto, helper

from ..errors import StudioError
from .traverse import standard_domain

SWITCH_PREFIX = "studio_quantized/"
QDQ_DOMAINS = ("", "com.microsoft")  # onnxruntime writes 16-bit and 4-bit pairs in its own domain at low opsets
REMOVABLE = ("Relu", "Clip")  # activations a QDQ quantizer folds into the range of the node before


@dataclass
class Point:
    """One quantization point: `flag` (a bool graph input) turns it on. `kind` "activation" (of
    `tensors`[0], the float model's name) or "weights" (of one node: its integer `tensors`);
    `owners`: indices in the quantized model's main graph of the nodes that quantize it;
    `dtype`: the quantized type's name; `node`: for weights, the node they are of."""

    flag: str
    kind: str
    tensors: list[str]
    dtype: str
    owners: list[int] = field(default_factory=list)
    node: int | None = None  # weights: the node they are of


def is_qdq(node: onnx.NodeProto, op: str | None = None) -> bool:
    """Whether `node` is a QuantizeLinear or DequantizeLinear (`op`: that one) of a domain QDQ
    models use."""
    return node.op_type in ((op,) if op else ("QuantizeLinear", "DequantizeLinear")) and (
        standard_domain(node.domain) in QDQ_DOMAINS
    )


def dequantized(model: onnx.ModelProto) -> dict[str, str]:
    """Tensor -> the output of the DequantizeLinear reading its QuantizeLinear: in a QDQ model,
    the value the next nodes read in its place (quantized, and clipped where the quantizer
    dropped a Relu after it)."""
    graph = model.graph
    dq = {n.input[0]: n.output[0] for n in graph.node if is_qdq(n, "DequantizeLinear") and n.input and n.output}
    pairs: dict[str, str] = {}
    for n in graph.node:
        if is_qdq(n, "QuantizeLinear") and n.input and n.output and n.output[0] in dq:
            pairs.setdefault(n.input[0], dq[n.output[0]])
    return pairs


def _base_nodes(base: onnx.GraphProto) -> tuple[dict[str, int], dict[str, list[int]]]:
    """The float graph's nodes by name (where unique), and the nodes that may make a tensor in the
    quantized graph: its producer, and for the output of a Relu or Clip that is its producer's
    only reader, that producer too (the quantizer drops the activation; the node makes its output)."""
    names: dict[str, int] = {}
    seen: set[str] = set()
    readers: dict[str, list[int]] = {}
    for i, n in enumerate(base.node):
        if n.name:
            if n.name in seen:
                names.pop(n.name, None)
            else:
                names[n.name] = i
            seen.add(n.name)
        for name in set(n.input):
            readers.setdefault(name, []).append(i)
    makers: dict[str, list[int]] = {}
    for i, n in enumerate(base.node):
        for out in n.output:
            if out:
                makers.setdefault(out, []).append(i)
                after = readers.get(out, [])
                if len(after) == 1 and base.node[after[0]].op_type in REMOVABLE and base.node[after[0]].output:
                    makers.setdefault(base.node[after[0]].output[0], []).append(i)
    return names, makers


def _match(
    node: onnx.NodeProto,
    base: onnx.GraphProto,
    by_name: dict[str, int],
    by_output: dict[str, list[int]],
    pairs: dict[str, str],
) -> int | None:
    """The float graph's node the quantized one is: same name (quantizers keep names), else one
    that makes its first output, or the name that output takes after its QuantizeLinear →
    DequantizeLinear pair (`pairs`: a graph output's quantized maker writes a new name); of the
    same op with as many inputs."""
    named = by_name.get(node.name) if node.name else None
    first = node.output[0] if node.output else ""
    candidates = ([] if named is None else [named]) + by_output.get(first, []) + by_output.get(pairs.get(first, ""), [])
    for i in candidates:
        b = base.node[i]
        if b.op_type == node.op_type and b.domain == node.domain and len(b.input) == len(node.input):
            return i
    return None


def switchable(base: onnx.ModelProto, quantized: onnx.ModelProto) -> tuple[onnx.ModelProto, list[Point]]:
    """The float model `base` with `quantized`'s quantization behind switches (the module's
    doc). Tensors copied from the quantized model (integer weights, scales, zero points) keep
    their data as they are (external references included) under names of SWITCH_PREFIX. A
    StudioError when `quantized` quantizes no node of `base` in QDQ form."""
    qg = quantized.graph
    producer = {out: i for i, n in enumerate(qg.node) for out in n.output if out}
    readers: dict[str, list[int]] = {}
    for i, n in enumerate(qg.node):
        for name in set(n.input):
            readers.setdefault(name, []).append(i)
    initializers = {t.name: t for t in qg.initializer}
    by_name, by_output = _base_nodes(base.graph)
    pairs = dequantized(quantized)

    out = onnx.ModelProto()
    out.CopyFrom(base)
    g = out.graph
    # the quantized model's opsets: it ran the float nodes at them (a quantizer raises the opset
    # QuantizeLinear needs) and its pairs need them
    del out.opset_import[:]
    out.opset_import.extend(quantized.opset_import)
    out.ir_version = max(base.ir_version, quantized.ir_version)
    makers = {o: i for i, n in enumerate(g.node) for o in n.output if o}  # float tensor -> its node
    float_readers: dict[str, list[int]] = {}
    for i, n in enumerate(g.node):
        for x in set(n.input):
            float_readers.setdefault(x, []).append(i)
    float_tensors = set(makers) | {v.name for v in g.input}
    graph_outputs = {o.name for o in g.output}

    copied: dict[str, str] = {}  # quantized model's initializer -> its name here

    def copy(name: str) -> str | None:
        if not name:
            return ""
        if name not in initializers:
            return None  # made by a node: not a constant this can carry over
        if name not in copied:
            t = TensorProto()
            t.CopyFrom(initializers[name])
            t.name = f"{SWITCH_PREFIX}t/{name}"
            g.initializer.append(t)
            copied[name] = t.name
        return copied[name]

    def pair_node(i: int) -> bool:
        return is_qdq(qg.node[i])

    matched = {
        qi: bi
        for qi, qn in enumerate(qg.node)
        if not pair_node(qi) and (bi := _match(qn, g, by_name, by_output, pairs)) is not None
    }
    points: list[Point] = []
    after: dict[int, list[onnx.NodeProto]] = {}  # float node index (-1: the graph's inputs) -> Ifs right after it
    weights: dict[int, list[tuple[int, onnx.NodeProto]]] = {}  # quantized node -> (input slot, its DequantizeLinear)

    for dq in qg.node:
        if not is_qdq(dq, "DequantizeLinear") or not dq.input or not dq.output:
            continue
        slots = [
            (r, k)
            for r in readers.get(dq.output[0], [])
            if not pair_node(r)
            for k, x in enumerate(qg.node[r].input)
            if x == dq.output[0]
        ]
        source = producer.get(dq.input[0])
        if source is None or not is_qdq(qg.node[source], "QuantizeLinear"):
            for r, k in slots:  # a weight: one point per node, below
                if r in matched and dq.input[0] in initializers:
                    weights.setdefault(r, []).append((k, dq))
            continue
        q = qg.node[source]
        # the float model's tensor: the pair's input, or where a graph output was renamed for the
        # pair to make it, the pair's output
        found = [x for x in (q.input[0], dq.output[0]) if x in float_tensors]
        params = [copy(x) for x in [*q.input[1:], *dq.input[1:]]]
        if not found or None in params or (not slots and dq.output[0] not in graph_outputs):
            continue
        name = found[0]
        flag = f"{SWITCH_PREFIX}{len(points)}"
        value, shown = f"{flag}/value", name
        if dq.output[0] in graph_outputs and name == dq.output[0]:  # the graph's output itself is quantized
            made = f"{flag}/float"
            if name in makers:
                makers[made] = i = makers.pop(name)
                g.node[i].output[:] = [made if x == name else x for x in g.node[i].output]
            float_readers[made] = float_readers.pop(name, [])
            for i in float_readers[made]:
                g.node[i].input[:] = [made if x == name else x for x in g.node[i].input]
            value, name = name, made
        for r, k in slots:
            if r in matched:
                g.node[matched[r]].input[k] = value
        fake_q = _renamed(q, f"{flag}/q", [name, *params[: len(q.input) - 1]])
        fake_dq = _renamed(dq, f"{flag}/dq", [fake_q.output[0], *params[len(q.input) - 1 :]])
        after.setdefault(makers.get(name, -1), []).append(
            helper.make_node(
                "If",
                [flag],
                [value],
                name=f"{flag}/if",
                then_branch=_branch(f"{flag}/quantized", [fake_q, fake_dq], fake_dq.output[0]),
                else_branch=_branch(
                    f"{flag}/float", [helper.make_node("Identity", [name], [f"{flag}/id"])], f"{flag}/id"
                ),
            )
        )
        owners = {r for r, _ in slots}
        maker = producer.get(q.input[0])
        if dq.output[0] in graph_outputs and maker is not None and not pair_node(maker):
            owners.add(maker)  # no node reads a graph output's pair: its maker quantizes its output
        points.append(Point(flag, "activation", [shown], _quantized_type(dq, initializers), sorted(owners)))

    for qi, taken in weights.items():
        flag = f"{SWITCH_PREFIX}{len(points)}"
        target = g.node[matched[qi]]
        fake, reads, floats = [], list(target.input), []
        for k, wdq in taken:
            params = [copy(x) for x in wdq.input[1:]]
            integer = copy(wdq.input[0])
            if None in params or not integer or not target.input[k]:
                continue
            fake.append(_renamed(wdq, f"{flag}/in{k}", [integer, *params]))
            reads[k] = fake[-1].output[0]
            floats.append(target.input[k])
        if fake and all(target.output):
            target.CopyFrom(_switch(flag, target, fake, reads))
            weight = min(taken, key=lambda slot: slot[0])[1]  # the weight's type, not its bias's (INT32)
            points.append(Point(flag, "weights", floats, _quantized_type(weight, initializers), [qi], node=qi))

    if not points:
        raise StudioError(
            "not_quantized",
            "no node of this revision reads QuantizeLinear/DequantizeLinear pairs that the other revision's nodes "
            "can take: compare a QDQ quantization (quant_format QDQ) with the float revision it was made from",
            422,
        )
    nodes = list(g.node)
    del g.node[:]
    g.node.extend(after.get(-1, []))
    for i, n in enumerate(nodes):  # each If right after what it reads: the graph stays in order
        g.node.append(n)
        g.node.extend(after.get(i, []))
    for p in points:
        g.input.append(helper.make_tensor_value_info(p.flag, TensorProto.BOOL, []))
    return out, points


def _quantized_type(dq: onnx.NodeProto, initializers: dict[str, TensorProto]) -> str:
    """The integer type of a DequantizeLinear's input: its tensor's, or its zero point's."""
    for name in (dq.input[0], dq.input[2] if len(dq.input) > 2 else ""):
        if name in initializers:
            return TensorProto.DataType.Name(initializers[name].data_type)
    return "UINT8"  # no zero point: QuantizeLinear's default


def _branch(name: str, nodes: list[onnx.NodeProto], output: str) -> onnx.GraphProto:
    return helper.make_graph(nodes, name, [], [onnx.ValueInfoProto(name=output)])  # typed by the If's runtime


def _renamed(node: onnx.NodeProto, output: str, inputs: list) -> onnx.NodeProto:
    """A copy of a QuantizeLinear/DequantizeLinear (its attributes: axis, block size, output
    type) reading `inputs`, making `output`."""
    made = onnx.NodeProto()
    made.CopyFrom(node)
    made.name = output
    made.input[:] = inputs
    made.output[:] = [output]
    return made


def _switch(flag: str, node: onnx.NodeProto, fake: list[onnx.NodeProto], reads: list[str]) -> onnx.NodeProto:
    """An If on `flag` making `node`'s outputs: its quantized branch runs `fake` and the node on
    the quantized values `reads`, the other the node as it is. onnxruntime runs the branch taken
    only, and the node's weights stay constants it can prepack (a Where choosing between a
    weight and its dequantized copy made every Conv of a ResNet-50 run unpacked: 6x slower)."""

    def branch(kind: str, nodes: list[onnx.NodeProto], inputs: list[str]) -> onnx.GraphProto:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.input[:] = inputs
        copy.output[:] = [f"{flag}/{kind}{j}" for j in range(len(node.output))]
        outputs = [onnx.ValueInfoProto(name=o) for o in copy.output]  # typed by the If's runtime
        return helper.make_graph([*nodes, copy], f"{flag}/{kind}", [], outputs)

    return helper.make_node(
        "If",
        [flag],
        list(node.output),
        name=f"{flag}/if",
        then_branch=branch("quantized", fake, reads),
        else_branch=branch("float", [], list(node.input)),
    )
