"""Standard operators that onnxruntime's graph optimizer would write out as their function bodies,
kept whole through it (offload_jobs.simplify, in the helper process).

onnxruntime's CPU provider has no kernel for some standard operators whose schema defines a
function body (GroupNormalization-18/21, Mish-18, HardSwish…): loading a model, it inlines that
body in their place, and the model it saves holds ~28 unnamed primitive nodes for each
GroupNormalization of a UNet (149 -> 513 nodes) — an operator TensorRT runs natively gone, with
its name and scope. Which operators at which input types is asked of the installed onnxruntime
itself: a model of the one node, optimized, still holds it or not.

Each such node of the main graph is taken out before optimizing: its outputs become (typed)
graph inputs and what it reads graph outputs, so their producers and names stay. After, the
nodes go back in an order where each comes after what it reads and before its readers, those
temporary inputs and outputs go, and the initializers only they read, which the optimizer
dropped as unused, come back. Nodes inside If/Loop bodies and model-local functions are left to
onnxruntime: the server's change line says what it wrote out (simplify.py).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import onnx
from onnx import defs

from .light import light_copy
from .traverse import graphs_within, node_reads, standard_domain, topological_order

# the result model's metadata entry carrying what was kept to the server (simplify.py reads and
# drops it: the model keeps its own metadata)
REPORT_KEY = "onnx_studio:simplify_kept"


@dataclass
class Aside:
    """The nodes taken out of a model's main graph, and what stands in for them meanwhile."""

    path: str  # the model without them, for onnxruntime
    nodes: list[onnx.NodeProto]
    inputs: list[str]  # the temporary graph inputs (the nodes' outputs)
    outputs: list[str]  # the temporary graph outputs (what the nodes read)
    initializers: dict[str, onnx.TensorProto]  # what the nodes read, as it was
    kept: Counter = field(default_factory=Counter)  # op type -> nodes kept
    untyped: Counter = field(default_factory=Counter)  # op type -> nodes left: their types unknown


def with_function_body(node: onnx.NodeProto, opsets: dict[str, int]) -> bool:
    """Whether a node is a standard operator whose schema, at its opset, defines a function
    body (a plain or a context-dependent one)."""
    version = opsets.get(standard_domain(node.domain))
    if version is None or not 0 < version < 2**31 or node.op_type == "":
        return False
    try:
        schema: Any = defs.get_schema(node.op_type, version, standard_domain(node.domain))  # stubs lack has_function
    except defs.SchemaError:
        return False
    return bool(schema.has_function or schema.has_context_dependent_function)


def _opsets(model: onnx.ModelProto) -> dict[str, int]:
    out: dict[str, int] = {}
    for o in model.opset_import:
        out.setdefault(standard_domain(o.domain), o.version)
    return out


def _types(light: onnx.ModelProto, data_prop: bool) -> dict[str, onnx.TypeProto]:
    """name -> type of the main graph's values of a weightless stand-in, as declared and as onnx's
    shape inference finds them (the weights by their tensors)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(light, check_type=False, strict_mode=False, data_prop=data_prop)
    except Exception:  # the types the model declares, then
        inferred = light
    out: dict[str, onnx.TypeProto] = {}
    for g in (inferred.graph, light.graph):  # inference's, the declared types merged in
        for t in g.initializer:
            out.setdefault(t.name, onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims)))
        for v in (*g.input, *g.output, *g.value_info):
            if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
                out.setdefault(v.name, v.type)
    return out


def _probe(node: onnx.NodeProto, model: onnx.ModelProto, types: dict, folder: str) -> tuple[bool, list]:
    """(whether onnxruntime writes this node out as its function body: a model of it alone,
    optimized, no longer holds its operator; the types it gives the node's outputs, None where
    it gives none). False where onnxruntime refuses that model (it would refuse the whole model
    as much, or run the node another way). The types matter: onnx's shape inference has none for
    some of these operators' outputs (GroupNormalization-21), and none for all that follows."""
    import onnxruntime as ort

    g = onnx.GraphProto(name="probe")
    g.node.add().CopyFrom(node)
    for name in dict.fromkeys(x for x in node.input if x):
        g.input.add(name=name).type.CopyFrom(types[name])
    g.output.extend(onnx.ValueInfoProto(name=x) for x in node.output if x)  # typed by onnxruntime
    probe = onnx.ModelProto(ir_version=model.ir_version, graph=g)
    probe.opset_import.extend(model.opset_import)
    saved = os.path.join(folder, "probe-optimized.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = saved
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    try:
        ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
        result = onnx.load(saved)
    except Exception:
        return False, [None] * len(node.output)
    finally:
        if os.path.exists(saved):
            os.remove(saved)
    same = standard_domain(node.domain)
    # gone, and nodes in its place (not a no-op removed)
    expanded = bool(result.graph.node) and not any(
        n.op_type == node.op_type and standard_domain(n.domain) == same for n in result.graph.node
    )
    typed = {
        v.name: v.type for v in result.graph.output if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type
    }
    return expanded, [typed.get(x) if x else None for x in node.output]


def _body_types(node: onnx.NodeProto, version: int, types: dict) -> list:
    """The types onnx's shape inference (data propagation on) gives the node's outputs through
    its function body, None each where it can't: where onnxruntime's inference of that body
    loses the dims (a symbolic batch: GroupNormalization's Reshape to Shape(X) leaves every
    dim unknown), onnx's keeps them."""
    none = [None] * len(node.output)
    domain = standard_domain(node.domain)
    try:
        schema: Any = defs.get_schema(node.op_type, version, domain)  # onnx's stubs lack the function accessors
        if schema.has_context_dependent_function:
            at = max((v for v in schema.context_dependent_function_opset_versions if v <= version), default=version)
            given = [types[x].SerializeToString() if x else onnx.TypeProto().SerializeToString() for x in node.input]
            body = onnx.FunctionProto.FromString(
                schema.get_context_dependent_function_with_opset_version(at, node.SerializeToString(), given)
            )
        else:
            at = max((v for v in schema.function_opset_versions if v <= version), default=version)
            body = onnx.FunctionProto.FromString(schema.get_function_with_opset_version(at))
    except Exception:
        return none
    if not body.node:
        return none
    given_attrs = {a.name: a for a in node.attribute}
    left_out = {x for k, x in enumerate(body.input) if k >= len(node.input) or not node.input[k]}
    g = onnx.GraphProto(name="body")
    for n in body.node:
        copy = g.node.add()
        copy.CopyFrom(n)
        copy.input[:] = ["" if x in left_out else x for x in n.input]
        del copy.attribute[:]
        for a in n.attribute:  # the node's attributes (or the schema's defaults) where the body refers to them
            if not a.ref_attr_name:
                copy.attribute.append(a)
                continue
            value = given_attrs.get(a.ref_attr_name)
            if value is None and a.ref_attr_name in schema.attributes:
                default = schema.attributes[a.ref_attr_name].default_value
                value = default if default.type else None
            if value is not None:
                copy.attribute.append(value)
                copy.attribute[-1].name = a.name
    for k, x in enumerate(body.input):
        if x not in left_out:
            g.input.add(name=x).type.CopyFrom(types[node.input[k]])
    g.output.extend(onnx.ValueInfoProto(name=x) for x in body.output)
    model = onnx.ModelProto(ir_version=onnx.IR_VERSION, graph=g)
    model.opset_import.extend(body.opset_import or [onnx.helper.make_opsetid(domain, version)])
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception:
        return none
    found = {v.name: v.type for v in inferred.graph.output if v.type.HasField("tensor_type")}
    return [found.get(body.output[k]) if x and k < len(body.output) else None for k, x in enumerate(node.output)]


def _better(probed, inferred):
    """onnx's type through the function body where it agrees with onnxruntime's (the element
    type and rank) and knows more dims; onnxruntime's else."""
    if probed is None or inferred is None:
        return probed
    a, b = probed.tensor_type, inferred.tensor_type
    if a.elem_type != b.elem_type or not b.HasField("shape"):
        return probed
    if a.HasField("shape") and len(a.shape.dim) != len(b.shape.dim):
        return probed
    known = sum(1 for d in b.shape.dim if d.HasField("dim_value") or d.HasField("dim_param"))
    had = sum(1 for d in a.shape.dim if d.HasField("dim_value") or d.HasField("dim_param"))
    return inferred if known > had or not a.HasField("shape") else probed


def _probe_key(node: onnx.NodeProto, types: dict) -> bytes:
    """What a probe's answer depends on: the operator, its attributes, its inputs' types (and
    which are left out) and which outputs it has."""
    shape = onnx.NodeProto(op_type=node.op_type, domain=node.domain, attribute=node.attribute)
    shape.input.extend(str(k) if x else "" for k, x in enumerate(node.input))
    shape.output.extend(str(k) if x else "" for k, x in enumerate(node.output))
    return shape.SerializeToString() + b"".join(types[x].SerializeToString() for x in node.input if x)


def _plan(model: onnx.ModelProto, candidates: list[int], folder: str) -> tuple[list[int], dict, Counter]:
    """(the candidates onnxruntime writes out, each typed; the types of the main graph's values;
    op type -> candidates whose types can't be told). A node's outputs onnx's inference leaves
    untyped are typed by its probe, and inference goes on from there, round after round."""
    from .inference import data_propagation_is_bounded

    light = light_copy(model)
    if light is model:  # nothing heavy: the model itself handed back, and the types go in a copy
        light = onnx.ModelProto()
        light.CopyFrom(model)
    data_prop = data_propagation_is_bounded(light)
    opsets = _opsets(model)
    types = _types(light, data_prop)
    verdicts: dict[bytes, tuple[bool, list]] = {}  # one probe per operator, attributes and input types
    expanded: set[int] = set()
    probed: set[int] = set()
    pending = candidates
    while pending:
        waiting, added = [], False
        for i in pending:
            n = model.graph.node[i]
            if any(x not in types for x in n.input if x):
                waiting.append(i)
                continue
            key = _probe_key(n, types)
            if key not in verdicts:
                verdicts[key] = _probe(n, model, types, folder)
            written_out, outputs = verdicts[key]
            probed.add(i)
            if written_out and any(x and x not in types for x in n.output):
                version = opsets[standard_domain(n.domain)]
                outputs = [_better(t, b) for t, b in zip(outputs, _body_types(n, version, types), strict=True)]
            for x, t in zip(n.output, outputs, strict=True):
                if x and x not in types and t is not None:
                    light.graph.value_info.add(name=x).type.CopyFrom(t)
                    types[x] = t
                    added = True
            if written_out:
                expanded.add(i)
        if not (added and waiting):
            break
        pending = waiting
        types = _types(light, data_prop)
    taken = [i for i in candidates if i in expanded and all(x in types for x in model.graph.node[i].output if x)]
    # neither probed (what they read untyped) nor typed after: left to onnxruntime
    untyped = Counter(model.graph.node[i].op_type for i in candidates if i not in probed or i in expanded - set(taken))
    return taken, types, untyped


def set_aside(src: str) -> Aside | None:
    """Take the main graph's nodes onnxruntime would write out as function bodies out of the
    model file `src`, the rest saved beside it (aside.onnx, naming the same weight files); None
    when it has none."""
    try:
        model = onnx.load(src, load_external_data=False)
    except Exception:  # onnxruntime's loader says why, in its words
        return None
    g = model.graph
    opsets = _opsets(model)
    candidates = [i for i, n in enumerate(g.node) if with_function_body(n, opsets)]
    if not candidates:
        return None
    folder = os.path.dirname(src)
    taken, types, untyped = _plan(model, candidates, folder)
    if not taken:
        return None
    nodes = [g.node[i] for i in taken]
    made = {x for n in nodes for x in n.output if x}
    initializers = {t.name: t for t in g.initializer}
    fed = {v.name for v in g.input} | {v.name for v in g.output}
    reads = list(dict.fromkeys(x for n in nodes for x in n.input if x))
    aside = Aside(
        path=os.path.join(folder, "aside.onnx"),
        nodes=[onnx.NodeProto() for _ in nodes],
        inputs=[x for n in nodes for x in n.output if x],
        outputs=[x for x in reads if x not in made and x not in initializers and x not in fed],
        initializers={},
        kept=Counter(n.op_type for n in nodes),
        untyped=untyped,
    )
    for kept, n in zip(aside.nodes, nodes, strict=True):
        kept.CopyFrom(n)
    for x in reads:
        if x in initializers:
            aside.initializers[x] = onnx.TensorProto()
            aside.initializers[x].CopyFrom(initializers[x])
    for i in reversed(taken):
        del g.node[i]
    for x in aside.inputs:
        g.input.add(name=x).type.CopyFrom(types[x])
    for x in aside.outputs:
        g.output.add(name=x).type.CopyFrom(types[x])
    with open(aside.path, "wb") as f:
        f.write(model.SerializeToString())
    return aside


def put_back(result: onnx.ModelProto, aside: Aside) -> None:
    """The nodes set aside back in onnxruntime's result, each after what it reads and before its
    readers; the temporary inputs and outputs gone, the initializers only they read back; what
    was kept noted in the result's metadata (REPORT_KEY) for the server."""
    g = result.graph
    temporary_inputs, temporary_outputs = set(aside.inputs), set(aside.outputs)
    for i in reversed(range(len(g.input))):
        if g.input[i].name in temporary_inputs:
            del g.input[i]
    for i in reversed(range(len(g.output))):
        if g.output[i].name in temporary_outputs:
            del g.output[i]
    have = {t.name for t in g.initializer} | {v.name for v in g.input} | {x for n in g.node for x in n.output}
    g.initializer.extend(t for name, t in aside.initializers.items() if name not in have)
    _past_identities(g, aside.nodes)
    _insert(g, aside.nodes)
    _rename_inlined(result)
    result.metadata_props.add(
        key=REPORT_KEY, value=json.dumps({"kept": dict(aside.kept), "untyped": dict(aside.untyped)})
    )
    os.remove(aside.path)


def _past_identities(g: onnx.GraphProto, nodes: list[onnx.NodeProto]) -> None:
    """The Identity nodes onnxruntime kept only because what they made was a temporary output
    (what a set-aside node read): those nodes read the Identity's input instead, and an Identity
    nothing else reads goes, as onnxruntime removes the others."""
    while True:
        outputs = {v.name for v in g.output}
        identity = {
            n.output[0]: k for k, n in enumerate(g.node) if n.op_type == "Identity" and n.domain in ("", "ai.onnx")
        }
        read = {x for n in nodes for x in n.input if x in identity and x not in outputs}
        if not read:
            return
        for n in nodes:
            n.input[:] = [g.node[identity[x]].input[0] if x in read else x for x in n.input]
        still = {x for n in (*g.node, *nodes) for x in node_reads(n)}
        for k in sorted((identity[x] for x in read if x not in still), reverse=True):
            del g.node[k]


# the names onnxruntime gives what it inlines: a constant of a GroupNormalization body it wrote
# out in a model-local function is _inlfunc_GroupNormalization_FloatEpsilon, the one it makes
# inlining a kept GroupNormalization at the next load the same, and it refuses the model then
# ("AddInitializedTensor already has tensor with name ...")
_INLINED = "_inlfunc_"


def _rename_inlined(result: onnx.ModelProto) -> None:
    """The values onnxruntime named _inlfunc_… in its result renamed inlined_… (unique in the
    model), so its inlining of the kept nodes at a later load names none the same."""
    graphs = list(graphs_within(result.graph))
    taken = set()
    for g in graphs:
        taken |= {t.name for t in g.initializer} | {v.name for v in (*g.input, *g.output, *g.value_info)}
        taken |= {x for n in g.node for x in (*n.input, *n.output)}
    renamed: dict[str, str] = {}
    for x in sorted(x for x in taken if x.startswith(_INLINED)):
        new = base = "inlined_" + x[len(_INLINED) :]
        k = 0
        while new in taken:
            k += 1
            new = f"{base}_{k}"
        taken.add(new)
        renamed[x] = new
    if not renamed:
        return
    for g in graphs:
        for t in g.initializer:
            t.name = renamed.get(t.name, t.name)
        for v in (*g.input, *g.output, *g.value_info):
            v.name = renamed.get(v.name, v.name)
        for n in g.node:
            n.input[:] = [renamed.get(x, x) for x in n.input]
            n.output[:] = [renamed.get(x, x) for x in n.output]


def _insert(g: onnx.GraphProto, nodes: list[onnx.NodeProto]) -> None:
    """Put `nodes` in g in a topological order that moves g's own nodes the least: each new node
    just before its first reader, once what it reads is there."""
    old = list(g.node)
    every = old + nodes
    readers: dict[str, list[int]] = {}
    for i, n in enumerate(old):
        for x in node_reads(n):
            readers.setdefault(x, []).append(i)
    places = [float(i) for i in range(len(old))]
    for k, n in enumerate(nodes):
        first = min((r for x in n.output if x for r in readers.get(x, [])), default=len(old))
        places.append(first - 0.5 + k / (2 * len(nodes) + 2))
    order = topological_order(every, places)
    if order is None:  # a cycle (never so: the model had these nodes in order): appended
        order = list(range(len(every)))
    copies = [onnx.NodeProto() for _ in order]
    for copy, i in zip(copies, order, strict=True):
        copy.CopyFrom(every[i])
    del g.node[:]
    g.node.extend(copies)


def left_to_onnxruntime(model: onnx.ModelProto) -> tuple[Counter, Counter]:
    """(op type -> nodes with a function body inside If/Loop/Scan bodies, the same in model-local
    functions): where nodes are not set aside, left to onnxruntime to write out or not."""
    opsets = _opsets(model)
    in_bodies: Counter = Counter()
    for k, sub in enumerate(graphs_within(model.graph)):
        if k:  # the main graph comes first
            in_bodies.update(n.op_type for n in sub.node if with_function_body(n, opsets))
    in_functions: Counter = Counter()
    for f in model.functions:
        here = {**opsets, **_function_opsets(f)}
        in_functions.update(n.op_type for g in graphs_within(f) for n in g.node if with_function_body(n, here))
    return in_bodies, in_functions


def _function_opsets(f: onnx.FunctionProto) -> dict[str, int]:
    out: dict[str, int] = {}
    for o in f.opset_import:
        out.setdefault(standard_domain(o.domain), o.version)
    return out
