"""convert_opset for a domain other than ai.onnx (ai.onnx.ml, ai.onnx.preview.training): onnx's
version converter knows only ai.onnx, so the import's version is moved where the nodes of that
domain read the same under the new version's definitions — each op defined there, taking the
attributes the node has (every required one among them) and as many inputs and outputs. A node
an op's new definition can't take is refused by name; what the definitions mean is checked
after, by the edit's gates (the checker and the onnxruntime run). A model function importing
the domain at the model's version moves with it."""

from __future__ import annotations

import onnx
from onnx import defs

from ..errors import StudioError
from ..onnx_io.traverse import walk_graphs
from ..words import plural


def known_domain(domain: str) -> bool:
    """Whether onnx defines operators of `domain` (its schemas say what each version takes)."""
    return any(s.domain == domain for s in defs.get_all_schemas_with_history())


def convert_domain(model: onnx.ModelProto, domain: str, version: int) -> str:
    """Move `domain`'s import to `version` (in place); the change line's words."""
    imports = [o for o in model.opset_import if o.domain == domain]
    if not imports:
        raise StudioError("bad_value", f"convert_opset: the model imports no {domain} opset")
    if len({o.version for o in imports}) > 1:
        raise StudioError(
            "bad_value",
            f"convert_opset: the model imports {domain} {len(imports)} times, at opsets"
            f" {', '.join(str(o.version) for o in imports)}: remove the imports it doesn't mean first",
        )
    current = imports[0].version
    if current == version:
        raise StudioError("bad_value", f"convert_opset: the model is already at {domain} opset {version}")
    if not known_domain(domain):
        raise StudioError(
            "bad_value", f"convert_opset: onnx defines no operators of {domain}: what its versions take is unknown"
        )
    latest = max(s.since_version for s in defs.get_all_schemas_with_history() if s.domain == domain)
    if not 1 <= version <= latest:
        raise StudioError("bad_value", f"convert_opset: {domain} versions run from 1 to {latest}")
    functions = [f for f in model.functions if _imports(f.opset_import, domain) in (None, current)]
    moved = {id(f) for f in functions}
    changed: dict[str, tuple[int, int]] = {}  # op -> (its definition's version before, after)
    for ref in walk_graphs(model):
        owner = ref.container if isinstance(ref.container, onnx.FunctionProto) else None
        if owner is not None and id(owner) not in moved:
            continue
        for node in ref.container.node:
            if node.domain != domain:
                continue
            before, after = _definition(node, current), _definition(node, version)
            if after is None:
                raise StudioError(
                    "conversion_failed",
                    f"convert_opset: {domain} {version} has no {node.op_type} (node {node.name or node.op_type}):"
                    " onnx's converter can't convert this domain's operators",
                    422,
                )
            problem = _misfit(node, after)
            if problem:
                raise StudioError(
                    "conversion_failed",
                    f"convert_opset: {node.op_type} of {domain} {after.since_version} {problem}"
                    f" (node {node.name or node.op_type}): onnx's converter can't convert this domain's operators",
                    422,
                )
            if before is None or before.since_version != after.since_version:
                changed[node.op_type] = (before.since_version if before else 0, after.since_version)
    for o in imports:
        o.version = version
    for f in functions:
        for o in f.opset_import:
            if o.domain == domain:
                o.version = version
    words = f"converted {domain} from opset {current} to {version}"
    if changed:
        ops = ", ".join(f"{op} ({a} -> {b})" for op, (a, b) in sorted(changed.items()))
        words += f"; {plural(len(changed), 'operator')} read by a newer definition: {ops}"
    else:
        words += "; every operator's definition the same"
    if functions and model.functions:
        words += f"; {plural(len(functions), 'model function')} importing it too"
    return words


def _imports(imports, domain: str) -> int | None:
    return next((o.version for o in imports if o.domain == domain), None)


def _definition(node: onnx.NodeProto, version: int) -> defs.OpSchema | None:
    try:
        return defs.get_schema(node.op_type, version, node.domain)
    except defs.SchemaError:
        return None


def _misfit(node: onnx.NodeProto, schema: defs.OpSchema) -> str:
    """Why a node doesn't fit an op definition: an attribute it doesn't define, a required one
    missing, too many or too few inputs or outputs; "" when it fits."""
    defined = schema.attributes
    unknown = [a.name for a in node.attribute if a.name not in defined]
    if unknown:
        return f"defines no attribute {', '.join(unknown)}"
    missing = [name for name, a in defined.items() if a.required and name not in {x.name for x in node.attribute}]
    if missing:
        return f"requires {', '.join(missing)}"
    if not schema.min_input <= len(node.input) <= schema.max_input:
        return f"takes {schema.min_input}–{schema.max_input} inputs, the node has {len(node.input)}"
    if not schema.min_output <= len(node.output) <= schema.max_output:
        return f"gives {schema.min_output}–{schema.max_output} outputs, the node has {len(node.output)}"
    return ""
