"""Where onnxruntime's optimised run spends its time, on the model's own nodes.

onnxruntime runs a graph of its own: nodes fused (Conv with its activation, MatMul with its scale,
a Gelu's five nodes as one BiasGelu), laid out for the CPU (a Conv in NCHWc is named after the
tensor it makes, "<tensor>_nchwc"), and nodes of its own (layout reorders). Each kernel's time is
put on the model node it runs, found by, in order:
  1. its name, when that is a model node's (most nodes keep theirs; a fusion may keep its first
     node's, and rule 2 adds the rest);
  2. the tensors it makes that the model has: the model's nodes between its inputs and those
     tensors are what it runs (a fusion keeps the last node's output);
  3. "<tensor>_nchwc": the node making that tensor, back through the activation fused into it
     to the node of the kernel's operator;
  4. "<node name>/<fusion>/": that node, and the nodes after it reading the kernel's other
     inputs (MatMul + bias Add as one Gemm);
  5. "<node name>_token_<k>": that node (the QDQ and NHWC transformers' QLinearConv of an int8
     model's Conv).
A kernel covering several nodes puts its time on the one of its own operator (or the operator it
is a form of: QLinearMatMul's MatMul; else its first), and names the others as fused into it; a
kernel matching nothing is onnxruntime's own. Constants (and what is made of them alone) bound
the nodes a kernel runs: onnxruntime folds them.
"""

from __future__ import annotations

import re

import onnx

from ..onnx_io.address import node_id

_TOKEN = re.compile(r"_token_\d+$")
MAX_REGION = 64  # nodes a fused kernel may stand for: past that the tensors don't say what it runs
MAX_CHAIN = 4  # nodes back from an NCHWc kernel's tensor to its operator (Conv <- Add <- Relu)


def kernel_times(model: onnx.ModelProto, kernels: list[dict], graph: list[dict]) -> dict:
    """{"nodes": [{"node", "name", "op_type", "time_us", "kernel", "kernel_op", "fused"?: [ids]}
    | {..., "time_us": 0, "fused_into": id}], "other": [{"name", "op_type", "time_us"}]} for the
    main graph's nodes, in graph order."""
    nodes = list(model.graph.node)
    names: dict[str, int | None] = {}
    for i, n in enumerate(nodes):
        if n.name:
            names[n.name] = None if n.name in names else i
    producer = {out: i for i, n in enumerate(nodes) for out in n.output if out}
    weights = _constants(model)
    readers: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        for name in set(n.input):
            if name:
                readers.setdefault(name, []).append(i)
    io = {g["name"]: g for g in graph}
    timed: dict[int, dict] = {}
    fused_into: dict[int, int] = {}
    other = []
    for k in kernels:
        region = _region(k, io.get(k["name"]), nodes, names, producer, weights, readers)
        if not region:
            other.append({"name": k["name"], "op_type": k["op_type"], "time_us": round(k["time_us"], 1)})
            continue
        main = _main(region, k["op_type"], nodes)
        entry = timed.setdefault(main, {"time_us": 0.0, "kernel": k["name"], "kernel_op": k["op_type"], "fused": set()})
        entry["time_us"] += k["time_us"]
        for i in region:
            if i != main and i not in timed:
                fused_into.setdefault(i, main)
                entry["fused"].add(i)
    out = []
    for i, n in enumerate(nodes):
        base = {"node": node_id("", i), "name": n.name, "op_type": n.op_type}
        if i in timed:
            t = timed[i]
            fused = sorted(j for j in t["fused"] if j not in timed)
            entry = {**base, "time_us": round(t["time_us"], 1), "kernel": t["kernel"], "kernel_op": t["kernel_op"]}
            if fused:
                entry["fused"] = [node_id("", j) for j in fused]
            out.append(entry)
        elif i in fused_into:
            out.append({**base, "time_us": 0.0, "fused_into": node_id("", fused_into[i])})
    return {"nodes": out, "other": other}


def _constants(model: onnx.ModelProto) -> set[str]:
    """Initializers, and what nodes make of constants alone (a weight's DequantizeLinear, its
    Identity): onnxruntime folds those into initializers, so they bound a kernel's nodes."""
    constant = {t.name for t in model.graph.initializer}
    for n in model.graph.node:
        inputs = [t for t in n.input if t]
        if n.op_type == "Constant" or (inputs and all(t in constant for t in inputs)):
            constant.update(o for o in n.output if o)
    return constant


def _main(region: list[int], op_type: str, nodes: list) -> int:
    """The node a kernel's time goes on: of its operator (Conv), or the operator it is a form
    of (QLinearMatMul, FusedMatMul: MatMul), else its first that isn't a QDQ pair's."""
    for fits in (lambda op: op == op_type, lambda op: op_type.endswith(op)):
        found = next((i for i in region if fits(nodes[i].op_type)), None)
        if found is not None:
            return found
    pairs = ("QuantizeLinear", "DequantizeLinear")
    return next((i for i in region if nodes[i].op_type not in pairs), region[0])


def _region(
    kernel: dict, io: dict | None, nodes: list, names: dict, producer: dict, weights: set[str], readers: dict
) -> list[int]:
    name = kernel["name"]
    made = [t for t in io["outputs"] if t in producer] if io is not None else []
    region = _between(made, set(io["inputs"]), nodes, producer, weights) if io is not None and made else []
    if names.get(name) is not None:  # a fusion may keep its first node's name (Conv + Relu: FusedConv)
        return sorted({names[name], *region}) if names[name] in region else [names[name]]
    if region:
        return region
    own = _TOKEN.sub("", name)  # the QDQ and NHWC transformers' "<node>_token_<k>": a quantized Conv
    if own != name and names.get(own) is not None:
        return [names[own]]
    if name.endswith("_nchwc") and name[: -len("_nchwc")] in producer:
        return _back_to(producer[name[: -len("_nchwc")]], kernel["op_type"], nodes, producer)
    parts = name.rstrip("/").split("/")
    for cut in range(len(parts) - 1, 0, -1):
        prefix = "/".join(parts[:cut])
        if names.get(prefix) is not None:
            return _grown([names[prefix]], set(io["inputs"]) if io else set(), nodes, readers)
    return []


def _grown(region: list[int], inputs: set[str], nodes: list, readers: dict[str, list[int]]) -> list[int]:
    """`region` with the nodes after it that the kernel also runs: a node reading the region's
    output and, besides, only the kernel's own inputs, one of them new (MatMul + the bias Add
    onnxruntime fuses into one Gemm reads the bias)."""
    grown = list(region)
    for _ in range(MAX_CHAIN):
        made = {o for i in grown for o in nodes[i].output if o}
        read = {t for i in grown for t in nodes[i].input if t}
        near = sorted({j for t in made for j in readers.get(t, ()) if j not in grown})
        after = [
            j
            for j in near
            if all(t in made or t in inputs for t in nodes[j].input if t)
            and any(t in inputs and t not in read for t in nodes[j].input)
        ]
        if not after:
            break
        grown.extend(after)
    return sorted(grown)


def _between(made: list[str], inputs: set[str], nodes: list, producer: dict, weights: set[str]) -> list[int]:
    """The model's nodes that make `made` from `inputs` (back from `made`, stopping at the
    kernel's inputs); [] when the walk doesn't close on them — it reaches a graph input the
    kernel doesn't read (a layout reorder restoring a tensor's name reads none of the model's)
    or goes past MAX_REGION nodes."""
    seen: set[int] = set()
    stack = [producer[t] for t in made]
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        if len(seen) > MAX_REGION:
            return []
        for t in nodes[i].input:
            if not t or t in inputs or t in weights:
                continue
            if t not in producer:
                return []
            stack.append(producer[t])
    return sorted(i for i in seen if nodes[i].op_type != "Constant")  # initializers to onnxruntime


def _back_to(start: int, op_type: str, nodes: list, producer: dict) -> list[int]:
    """From the node making an NCHWc kernel's tensor back to the node of the kernel's operator
    (a Conv's Relu, Add+Relu fused into it); just that node when none is near."""
    chain = [start]
    while nodes[chain[-1]].op_type != op_type and len(chain) <= MAX_CHAIN:
        previous = next((producer[t] for t in nodes[chain[-1]].input if t in producer), None)
        if previous is None:
            return [start]
        chain.append(previous)
    return sorted(chain) if nodes[chain[-1]].op_type == op_type else [start]
