"""Write operators out as the primitives their ONNX definition gives (QA25 #2): HardSwish as
HardSigmoid × X, LayerNormalization as its ~28 nodes of ReduceMean, Sub, Pow…, for a runtime,
an NPU SDK or an older opset that lacks them (convert_opset down refused "HardSwish exists from
opset 14 on"). The bodies are onnx's own (its schemas' function bodies; a context-dependent one
built on the node's input types: offload_jobs.function_bodies, in the helper process), as
onnx_io/body_rewrites.py makes them; each node is replaced in place by its body's nodes, named
after it, reading and writing what it did."""

from __future__ import annotations

from collections import Counter

import onnx
from onnx import AttributeProto

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.body_rewrites import constant_as_tensor
from ..onnx_io.light import light_copy
from ..onnx_io.schema_defaults import default_of
from ..onnx_io.traverse import op_schema, standard_domain, walk_graphs
from ..views.scopes import nested_metadata
from .converted_bodies import worth_writing_out
from .field_types import NAME, NODE
from .jsontypes import Array, optional
from .locate import find_node
from .names import all_names, fresh_name
from .registry import edit_op


@edit_op(
    "write_out",
    optional(
        "op_types",
        Array(NAME, label="an array of operator types"),
        "every node of these operators (another domain's as DOMAIN.Type: ai.onnx.preview.FlexAttention)",
    ),
    optional("nodes", Array(NODE, label="an array of node ids or names"), "these nodes"),
)
def write_out(model: onnx.ModelProto, op: dict) -> str:
    """Replace nodes of standard operators by the primitive nodes their ONNX definition gives
    (the schema's function body at the node's opset; for LayerNormalization, Gelu,
    GroupNormalization, RMSNormalization… the one onnx builds for the node's input types):
    `op_types` (every node of them in the main graph and its bodies) and/or `nodes`. Each body
    node is named `<node>/<op>_<k>`, its values `<node>/<name>`; the node's inputs and outputs
    stay. The body is onnx's with three changes of form, not of meaning: only the nodes the
    node's outputs need (no optional Mean/InvStdDev it doesn't have), a CastLike to an input of
    known type as a Cast (CastLike needs opset 15), and a variance taken as the mean of squared
    deviations (onnx's E[x²] − E[x]² loses every digit in float32 at a large mean: NaN at 3000).
    Refused for an operator onnx defines no body for (Conv, MatMul…), or when a node's input
    types, which a context-dependent body needs, are unknown."""
    types = set(op.get("op_types") or [])
    picked = [find_node(model, key) for key in op.get("nodes") or []]
    if not types and not picked:
        raise StudioError("bad_value", 'write_out: name "op_types" or "nodes" to write out')
    targets: dict[tuple[str, int], onnx.NodeProto] = {}
    for ref in walk_graphs(model):
        if ref.is_function:
            continue
        for k, n in enumerate(ref.container.node):
            standard = standard_domain(n.domain) == ""
            # another domain's operator by DOMAIN.Type (ai.onnx.preview.FlexAttention: QA39 #9)
            if (standard and n.op_type in types) or (not standard and f"{n.domain}.{n.op_type}" in types):
                targets[(ref.path, k)] = n
    for ref, k, n, _ in picked:
        targets[(ref.path, k)] = n
    if not targets:
        elsewhere = sorted(
            {f"{n.domain}.{n.op_type}" for ref in walk_graphs(model) for n in ref.container.node if n.op_type in types}
        )
        hint = f" (another domain's operator is named with its domain: {', '.join(elsewhere)})" if elsewhere else ""
        raise StudioError("bad_value", f"write_out: the model has no node of {', '.join(sorted(types))}{hint}")
    where = sorted(targets)
    bodies = offload.function_bodies(light_copy(model), where)
    lacking = sorted({targets[w].op_type for w, body in zip(where, bodies, strict=True) if body is None})
    if lacking:
        raise StudioError(
            "bad_value",
            f"write_out: onnx defines no body of primitives for {', '.join(lacking)} here (an operator of its own, "
            "or one built on input types shape inference doesn't know)",
        )
    taken = all_names(model.graph)
    written: Counter = Counter()
    left: Counter = Counter()  # operators with a body of their own the bodies hold
    made = 0
    graphs = {ref.path: ref.container for ref in walk_graphs(model) if not ref.is_function}
    # the later positions first: each replacement shifts the nodes after it
    for (path, k), body in sorted(zip(where, bodies, strict=True), key=lambda e: (e[0][0], -e[0][1])):
        g = graphs[path]
        node = g.node[k]
        schema = op_schema(model, g, node)
        nodes = _inlined(node, body, schema, taken)
        _import_body_domains(model, body)
        del g.node[k]
        for j, new in enumerate(nodes):
            g.node.insert(k + j, new)
        written[node.op_type] += 1
        made += len(nodes)
        left.update(n.op_type for n in nodes if standard_domain(n.domain) == "" and worth_writing_out(n.op_type))
    kinds = ", ".join(f"{o} ×{c}" for o, c in sorted(written.items(), key=lambda e: (-e[1], e[0])))
    # a body made of an operator onnx defines by others in its turn (SwiGLU's Swish, which
    # onnxruntime lacks): said, not written out unasked (QA39 #10)
    nested = ", ".join(f"{o} ×{c}" for o, c in sorted(left.items()))
    again = (
        f"; left {nested}, which onnx defines by other operators too: write it out as well if the target lacks it"
        if left
        else ""
    )
    return (
        f"wrote out {sum(written.values())} node(s) ({kinds}) as the primitives their ONNX definitions give: "
        f"{made} node(s) in their place{again}"
    )


def _inlined(node: onnx.NodeProto, body: onnx.FunctionProto, schema, taken: set[str]) -> list[onnx.NodeProto]:
    """`body`'s nodes standing for `node`: its formal inputs and outputs the node's, its own
    values fresh names after the node, attribute references the node's values (or the schema's
    defaults)."""
    base = node.name or (node.output[0] if node.output else node.op_type)
    names: dict[str, str] = {"": ""}
    for formal, actual in zip(body.input, node.input, strict=False):
        names[formal] = actual
    for formal in body.input[len(node.input) :]:
        names[formal] = ""  # an optional input the node leaves out
    for formal, actual in zip(body.output, node.output, strict=False):
        names[formal] = actual
    given = {a.name: a for a in node.attribute}

    def renamed(x: str) -> str:
        if x not in names:
            names[x] = fresh_name(onnx.ModelProto(), f"{base}/{x}", taken)
            taken.add(names[x])
        return names[x]

    out: list[onnx.NodeProto] = []
    for j, b in enumerate(body.node):
        if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in b.attribute):
            raise StudioError("bad_value", f"write_out: {node.op_type}'s body holds a graph: not written out here")
        new = onnx.NodeProto()
        new.CopyFrom(b)
        new.name = f"{base}/{b.op_type}_{j}"
        for key, said in nested_metadata(node, new):  # the node's module, one level deeper
            new.metadata_props.add(key=key, value=said)
        new.input[:] = [renamed(x) for x in b.input]
        new.output[:] = [renamed(x) for x in b.output]
        kept = []
        for a in b.attribute:
            if not a.ref_attr_name:
                kept.append(a)
                continue
            value = given.get(a.ref_attr_name) or default_of(schema, a.ref_attr_name)
            if value is None:
                continue  # left out by the node, no default: the body's op takes its own
            filled = AttributeProto()
            filled.CopyFrom(value)
            filled.name = a.name
            kept.append(filled)
        del new.attribute[:]
        new.attribute.extend(kept)
        constant_as_tensor(new)
        out.append(new)
    return out


def _import_body_domains(model: onnx.ModelProto, body: onnx.FunctionProto) -> None:
    """A domain the body's nodes use that the model doesn't import (ai.onnx always is)."""
    have = {standard_domain(o.domain) for o in model.opset_import}
    for o in body.opset_import:
        if standard_domain(o.domain) not in have:
            model.opset_import.add(domain=o.domain, version=o.version)
