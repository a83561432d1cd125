"""A QDQ model's quantization as switches on its float base, for a sensitivity sweep.

For each node the quantized model quantizes (a node reading DequantizeLinear outputs), the same
quantization is put on the float model's node: each activation input through QuantizeLinear →
DequantizeLinear with the quantized model's own scale and zero point, each weight input as the
quantized model's integer weight dequantized; the node reads the quantized value or the float
one through a Where on a boolean graph input of its own. One onnxruntime session then runs the
model with any set of nodes quantized: all off is the float model, all on its quantization
simulated, one on what that node costs alone, all but one what leaving it float would save.

The float model is the reference, not the QDQ graph with its pairs bypassed: onnxruntime drops
the Relu or Clip after a quantized node (the output's range does its clipping), so bypassing
every pair of the QDQ graph computes something else than the float model.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx
from onnx import TensorProto, helper

from ..errors import StudioError
from .traverse import standard_domain

SWITCH_PREFIX = "studio_quantized/"
QDQ_DOMAINS = ("", "com.microsoft")  # onnxruntime writes 16-bit and 4-bit pairs in its own domain at low opsets


@dataclass
class Switch:
    """One node's quantization: `flag` (a bool graph input) turns it on; `node` is the node's
    index in the quantized model's main graph; `inputs` how many of its inputs it quantizes."""

    flag: str
    node: int
    name: str
    op_type: str
    inputs: int


def _is(node: onnx.NodeProto, op: str) -> bool:
    return node.op_type == op and standard_domain(node.domain) in QDQ_DOMAINS


REMOVABLE = ("Relu", "Clip")  # activations a QDQ quantizer folds into the range of the node before


def dequantized(model: onnx.ModelProto) -> dict[str, str]:
    """Tensor -> the output of the DequantizeLinear reading its QuantizeLinear: in a QDQ model,
    the value the next nodes read in its place (quantized, and clipped where the quantizer
    dropped a Relu after it)."""
    graph = model.graph
    dq = {n.input[0]: n.output[0] for n in graph.node if _is(n, "DequantizeLinear") and n.input and n.output}
    pairs: dict[str, str] = {}
    for n in graph.node:
        if _is(n, "QuantizeLinear") and n.input and n.output and n.output[0] in dq:
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


def switchable(base: onnx.ModelProto, quantized: onnx.ModelProto) -> tuple[onnx.ModelProto, list[Switch]]:
    """The float model `base` with `quantized`'s quantization behind switches (the module's
    doc). Tensors copied from the quantized model (integer weights, scales, zero points) keep
    their data as they are (external references included) under names of SWITCH_PREFIX. A
    StudioError when `quantized` quantizes no node of `base` in QDQ form."""
    qg = quantized.graph
    producer = {out: n for n in qg.node for out in n.output if out}
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

    switched: dict[int, onnx.NodeProto] = {}  # float node index -> the If standing for it
    switches: list[Switch] = []
    for qi, qn in enumerate(qg.node):
        if _is(qn, "QuantizeLinear") or _is(qn, "DequantizeLinear"):
            continue
        bi = _match(qn, base.graph, by_name, by_output, pairs)
        if bi is None or bi in switched or not all(g.node[bi].output):
            continue
        target = g.node[bi]
        flag = f"{SWITCH_PREFIX}{len(switches)}"
        fake: list[onnx.NodeProto] = []  # the quantization of its inputs, in the If's quantized branch
        reads = list(target.input)
        for i, name in enumerate(qn.input):
            dq = producer.get(name)
            if dq is None or not _is(dq, "DequantizeLinear") or not target.input[i]:
                continue
            stem = f"{flag}/in{i}"
            params = [copy(x) for x in dq.input[1:]]
            q = producer.get(dq.input[0])
            if q is not None and _is(q, "QuantizeLinear"):  # an activation: quantize the float value
                q_params = [copy(x) for x in q.input[1:]]
                if None in params or None in q_params:
                    continue
                fake.append(_renamed(q, f"{stem}/q", [target.input[i], *q_params]))
                quantized_value = f"{stem}/q"
            else:  # a weight: the quantizer's integer tensor
                quantized_value = copy(dq.input[0]) or ""
                if not quantized_value or None in params:
                    continue
            fake.append(_renamed(dq, f"{stem}/dq", [quantized_value, *params]))
            reads[i] = f"{stem}/dq"
        if not fake:
            continue
        switched[bi] = _switch(flag, target, fake, reads)
        g.input.append(helper.make_tensor_value_info(flag, TensorProto.BOOL, []))
        switches.append(Switch(flag, qi, qn.name, qn.op_type, sum(1 for n in fake if _is(n, "DequantizeLinear"))))
    if not switches:
        raise StudioError(
            "not_quantized",
            "no node of this revision reads QuantizeLinear/DequantizeLinear pairs that the other revision's nodes "
            "can take: compare a QDQ quantization (quant_format QDQ) with the float revision it was made from",
            422,
        )
    for i, node in switched.items():
        g.node[i].CopyFrom(node)
    return out, switches


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
