"""What onnx's version converter leaves undone, done: model-local functions' bodies converted too,
and what it drops from the nodes it keeps put back.

onnx.version_converter (1.23) converts the main graph only: after an upgrade every function
still imports the old opset (which the checker refuses: a function may not import an older
ai.onnx than its model), after a downgrade the model says opset 17 with bodies at 18. Each
body is converted on its own, as the graph of a stand-in model. The converter also drops each
node's metadata_props and turns a reference to a function attribute (`alpha = @alpha`) into an
empty value (alpha = 0): both are put back on the node that writes the same first output."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import onnx
from onnx import helper

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.traverse import standard_domain
from ..words import some_names


def restore_dropped(before, after) -> list[str]:
    """Put the metadata_props and attribute references of the nodes `before` (a node list) back
    on the nodes of `after` writing the same first output. Returns the nodes whose reference
    the conversion turned into something else (an input), which no reference can fill."""
    kept = {n.output[0]: n for n in after if n.output}
    lost: list[str] = []
    for old in before:
        new = kept.get(old.output[0]) if old.output else None
        if new is None:
            continue
        if old.metadata_props and not new.metadata_props:
            new.metadata_props.extend(old.metadata_props)
        for a in old.attribute:
            if not a.ref_attr_name:
                continue
            at = next((k for k, b in enumerate(new.attribute) if b.name == a.name), None)
            if at is None:
                lost.append(f"{old.name or old.output[0]!r} ({old.op_type}: {a.name} = @{a.ref_attr_name})")
                continue
            new.attribute[at].CopyFrom(a)
    return lost


def convert_functions(model: onnx.ModelProto, version: int) -> list[str]:
    """Convert each model-local function importing ai.onnx at another version to `version`, in
    place. Returns the functions converted; StudioError (422) naming the function when one
    can't be (the model is left as it was)."""
    done: list[tuple[int, onnx.FunctionProto]] = []
    for k, f in enumerate(model.functions):
        imports = {standard_domain(o.domain): o.version for o in f.opset_import}
        if imports.get("", version) == version:
            continue
        converted = _converted_body(model, f, version)
        done.append((k, converted))
    for k, converted in done:
        model.functions[k].CopyFrom(converted)
    return [model.functions[k].name for k, _ in done]


def _converted_nodes(
    model: onnx.ModelProto, nodes, inputs: list[str], outputs: list[str], imports, version: int, what: str
) -> onnx.GraphProto:
    """`nodes` (reading `inputs`, writing `outputs`) converted to `version` as the main graph of
    a stand-in model importing `imports`; 422 naming `what` when they can't be."""
    untyped = [onnx.ValueInfoProto(name=n) for n in inputs], [onnx.ValueInfoProto(name=n) for n in outputs]
    stand_in = helper.make_model(
        helper.make_graph(list(nodes), "stand_in", *untyped), opset_imports=list(imports), ir_version=model.ir_version
    )
    try:
        return offload.convert(stand_in, version).graph  # C++: in the helper process
    except ValueError as exc:
        raise StudioError(
            "conversion_failed",
            f"convert_opset: {what} can't be converted to opset {version}: " + plain_reason(exc, nodes),
            422,
        ) from None


def convert_training_graphs(model: onnx.ModelProto, version: int) -> int:
    """Convert the training graphs (each TrainingInfoProto's initialization and algorithm) to
    `version` with the main graph, in place: they follow the model's opset imports, and one
    left behind holds operators the new opset defines otherwise (ReduceSum's `axes`, an
    attribute until 13) while the checker looks no further than the main graph. How many were
    converted; 422 naming the graph that can't be (nothing changed then)."""
    done: list[tuple[onnx.GraphProto, onnx.GraphProto]] = []
    for k, t in enumerate(model.training_info):
        for field, words in (("initialization", "initialization"), ("algorithm", "algorithm")):
            g = getattr(t, field)
            if not t.HasField(field) or not len(g.node):
                continue
            made = {o for n in g.node for o in n.output}
            outside = [
                name
                for name in dict.fromkeys(i for n in g.node for i in n.input)
                if name and name not in made and name not in {v.name for v in g.input}
            ]
            inputs = [v.name for v in g.input] + outside
            outputs = list(dict.fromkeys([v.name for v in g.output] + [n for n in made if n not in inputs]))
            what = f"the {words} graph of training_info[{k}]"
            converted = _converted_nodes(model, g.node, inputs, outputs, model.opset_import, version, what)
            done.append((g, converted))
    for g, converted in done:
        restore_dropped(g.node, converted.node)
        del g.node[:]
        g.node.extend(converted.node)
    return len(done)


def _converted_body(model: onnx.ModelProto, f: onnx.FunctionProto, version: int) -> onnx.FunctionProto:
    converted = _converted_nodes(
        model, f.node, list(f.input), list(f.output), f.opset_import, version, f"the body of function {f.name}"
    )
    lost = restore_dropped(f.node, converted.node)
    if lost:
        raise StudioError(
            "conversion_failed",
            f"convert_opset: in function {f.name}, opset {version} takes as an input what "
            f"{', '.join(lost)} takes from the function's attribute: no reference can give an input"
            " (simplify inlines the functions, each call's value then a constant, and the model converts)",
            422,
        )
    out = onnx.FunctionProto()
    out.CopyFrom(f)
    del out.node[:]
    out.node.extend(converted.node)
    others = [o for o in f.opset_import if standard_domain(o.domain) != ""]
    del out.opset_import[:]
    out.opset_import.extend([helper.make_opsetid("", version), *others])
    return out


def plain_reason(exc: Exception, nodes: Iterable[onnx.NodeProto] = ()) -> str:
    """The converter's reason without its C++ file, line and assertion text; its missing
    adapter ("No Adapter To Version $12 for Relu None") and an operator older opsets lack ("No
    Previous Version of LayerNormalization exists") in words, naming the nodes of it (`nodes`:
    those converted)."""
    text = str(exc).strip()
    text = re.sub(r"^.*?(Assertion `[^`]*` failed: )", "", text, flags=re.S) or text
    missing = re.search(r"No Adapter (To|From) Version \$(\d+) for (\S+)", text)
    if missing:
        step = "to" if missing.group(1) == "To" else "from"
        op = missing.group(3)
        return (
            f"onnx's version converter can't take {op} {step} opset {missing.group(2)} (it has no adapter for that"
            f" step){_named(nodes, op)}"
        )
    newer = re.search(r"No Previous Version of (\S+) exists", text)
    if newer:
        op = newer.group(1)
        since = first_opset(op)
        first = f"exists from opset {since} on" if since else "has no older version"
        written = (
            f"; onnx defines {op} by other operators: Write out (its node's panel; the write_out edit) puts those in"
            " its place first"
            if has_body(op)
            else ""
        )
        return f"{op} {first}: older opsets have no such operator{_named(nodes, op)}{written}"
    if "No initializer or constant input to node found" in text:
        return _computed_attribute_input(list(nodes))
    return text


# operators whose input an older opset takes as an attribute (axes, split sizes): onnx's
# converter can move it there only when it is a constant
_INPUT_TO_ATTRIBUTE = {
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Squeeze", "Unsqueeze", "Split", "Pad", "Clip",
}  # fmt: skip


def _computed_attribute_input(nodes: list[onnx.NodeProto]) -> str:
    """QA38 #7: "No initializer or constant input to node found", naming no node: the nodes whose
    axes (split sizes, pads…) are computed, where the older opset wants a constant."""
    constants = {x for n in nodes if n.op_type == "Constant" for x in n.output}
    computed = {x for n in nodes if n.op_type != "Constant" for x in n.output} - constants
    held = [
        n for n in nodes
        if n.op_type in _INPUT_TO_ATTRIBUTE and standard_domain(n.domain) == "" and any(x in computed for x in n.input[1:])
    ]  # fmt: skip
    names = some_names([n.name or n.op_type for n in held], 3)
    which = f" (nodes {names})" if held else ""
    return (
        f"an input the older opset takes as an attribute (axes, split sizes, pads) is computed here, not a constant{which}:"
        " give the inputs' dims their sizes (Make static…) and Simplify first, so it folds to one"
    )


# operators onnx defines by others too that every runtime runs as they are: no one writes them out
ELEMENTARY = frozenset(
    {"Softmax", "LogSoftmax", "Cast", "CastLike", "Identity", "Reciprocal", "Neg", "Abs", "Relu", "Sigmoid"}
)


def worth_writing_out(op_type: str) -> bool:
    """An ai.onnx operator onnx defines by others, and not one every runtime has (Softmax)."""
    return op_type not in ELEMENTARY and has_body(op_type)


def has_body(op_type: str) -> bool:
    """Whether onnx defines the operator by others (write_out.py can put those in its place)."""
    try:
        schema: Any = onnx.defs.get_schema(op_type, onnx.defs.onnx_opset_version(), "")
    except onnx.defs.SchemaError:
        return False
    return bool(schema.has_function or schema.has_context_dependent_function)


def first_opset(op_type: str) -> int | None:
    """The ai.onnx opset an operator first appears in."""
    versions = [
        s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == op_type and s.domain == ""
    ]
    return min(versions) if versions else None


def _named(nodes: Iterable[onnx.NodeProto], op_type: str, most: int = 3) -> str:
    """ " (nodes 'ln_1', 'ln_2' and 4 more)": the nodes of an operator the conversion stops at."""
    of = [n for n in nodes if n.op_type == op_type and standard_domain(n.domain) == ""]
    if not of:
        return ""
    names = [repr(n.name) if n.name else "(unnamed)" for n in of[:most]]
    more = f" and {len(of) - most} more" if len(of) > most else ""
    return f" (node{'s' if len(of) > 1 else ''} {', '.join(names)}{more})"
