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

import onnx
from onnx import helper

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.traverse import standard_domain


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


def _converted_body(model: onnx.ModelProto, f: onnx.FunctionProto, version: int) -> onnx.FunctionProto:
    untyped = [onnx.ValueInfoProto(name=n) for n in f.input], [onnx.ValueInfoProto(name=n) for n in f.output]
    stand_in = helper.make_model(
        helper.make_graph(list(f.node), f.name or "function", *untyped),
        opset_imports=list(f.opset_import),
        ir_version=model.ir_version,
    )
    try:
        converted = offload.convert(stand_in, version)  # C++: in the helper process
    except ValueError as exc:
        raise StudioError(
            "conversion_failed",
            f"convert_opset: the body of function {f.name} can't be converted to opset {version}: {plain_reason(exc)}",
            422,
        ) from None
    lost = restore_dropped(f.node, converted.graph.node)
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
    out.node.extend(converted.graph.node)
    others = [o for o in f.opset_import if standard_domain(o.domain) != ""]
    del out.opset_import[:]
    out.opset_import.extend([helper.make_opsetid("", version), *others])
    return out


def plain_reason(exc: Exception) -> str:
    """The converter's reason without its C++ file, line and assertion text; its missing
    adapter ("No Adapter To Version $12 for Relu None") in words."""
    text = str(exc).strip()
    text = re.sub(r"^.*?(Assertion `[^`]*` failed: )", "", text, flags=re.S) or text
    missing = re.search(r"No Adapter (To|From) Version \$(\d+) for (\S+)", text)
    if missing:
        step = "to" if missing.group(1) == "To" else "from"
        return f"onnx's version converter can't take {missing.group(3)} {step} opset {missing.group(2)} (it has no adapter for that step)"
    return text
