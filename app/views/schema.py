"""Operator documentation for a node, at the opset the model imports: from onnx.defs, or from
onnxruntime for its own domains (com.microsoft)."""

from __future__ import annotations

from typing import Any

import onnx
from onnx import defs

from ..onnx_io.address import node_id, resolve_node
from ..onnx_io.attribute_choices import attribute_choices
from ..onnx_io.function_calls import declared_attributes
from ..onnx_io.runtime_schemas import ONNX_DOMAINS, runtime_operators
from ..onnx_io.traverse import op_schema, opset_imports, opset_version
from .values import attribute_json


def _formal(p) -> dict:
    option = {
        defs.OpSchema.FormalParameterOption.Single: "single",
        defs.OpSchema.FormalParameterOption.Optional: "optional",
        defs.OpSchema.FormalParameterOption.Variadic: "variadic",
    }.get(p.option, str(p.option))
    return {"name": p.name, "type": p.type_str, "option": option, "description": p.description}


def _function_attributes(f: onnx.FunctionProto, nid: str) -> list[dict]:
    """A function's attributes as a schema's: none is required (a call without one leaves what
    refers to it unset), the type its default or its body's references give (null: neither)."""
    out = []
    for a in declared_attributes(f):
        users = ", ".join(a["used_by"])
        out.append(
            {
                "name": a["name"],
                "type": None if a["type"] is None else onnx.AttributeProto.AttributeType.Name(a["type"]),
                "required": False,
                "default": None if a["default"] is None else attribute_json(a["default"], nid)["value"],
                "description": f"Read by {users}." if users else "Nothing in the body reads it.",
            }
        )
    return out


def node_schema(model: onnx.ModelProto, nid: str) -> dict:
    ref, index, node = resolve_node(model, nid)
    version = opset_version(model, ref.container, node.domain)
    out: dict = {
        "node": node_id(ref.path, index),
        "op_type": node.op_type,
        "domain": node.domain,
        "opset_version": version,
    }
    local = [
        (f"fn[{k}]", f)
        for k, f in enumerate(model.functions)
        if (f.domain, f.name, f.overload) == (node.domain, node.op_type, node.overload)
    ]
    if local:
        path, f = local[0]
        out.update(known=True, kind="function", function=path, attributes=_function_attributes(f, nid))
        return out
    schema = op_schema(model, ref.container, node)
    if schema is None:
        out.update(
            known=False,
            kind="unknown",
            problem=(
                f"no opset is imported for domain {node.domain or 'ai.onnx'!r}"
                if version is None
                else f"{node.op_type} is not an operator of {node.domain or 'ai.onnx'} opset {version}"
            ),
        )
        return out
    attrs = []
    for name, a in sorted(schema.attributes.items()):
        default = None
        if a.default_value is not None and a.default_value.type:
            default = attribute_json(a.default_value, nid)["value"]
        attrs.append(
            {
                "name": name,
                "type": onnx.AttributeProto.AttributeType.Name(int(a.type)),  # type: ignore[call-overload]  # stub: AttrType has no __int__
                "required": a.required,
                "default": default,
                "description": a.description,
                # a closed set of strings (Resize's mode): offered as a choice, not free text
                "choices": list(attribute_choices(node.op_type, node.domain, name) or []) or None,
            }
        )
    known_attrs = set(schema.attributes)
    out.update(
        known=True,
        kind="schema",
        source="onnx" if schema.domain in ONNX_DOMAINS else "onnxruntime",  # whose registry documents it
        since_version=schema.since_version,
        deprecated=schema.deprecated,
        doc=schema.doc or "",
        inputs=[_formal(p) for p in schema.inputs],
        outputs=[_formal(p) for p in schema.outputs],
        min_inputs=schema.min_input,
        max_inputs=schema.max_input,
        min_outputs=schema.min_output,
        max_outputs=schema.max_output,
        attributes=attrs,
        type_constraints=[
            {"name": c.type_param_str, "allowed": list(c.allowed_type_strs), "description": c.description}
            for c in schema.type_constraints
        ],
        unknown_attributes=[a.name for a in node.attribute if a.name not in known_attrs],
        # onnx defines it by other operators: the write_out edit can put those in its place
        has_body=_has_body(schema),
    )
    return out


def operators_at(model: onnx.ModelProto) -> list[dict]:
    """Every operator the model's opset imports offer (the newest version of each at or below the
    imported one), with its attributes: what an "insert node" form may offer."""
    imports = opset_imports(model)
    best: dict[tuple[str, str], defs.OpSchema] = {}
    for schema in defs.get_all_schemas_with_history():
        version = imports.get(schema.domain)
        if version is None or schema.since_version > version:
            continue
        key = (schema.domain, schema.name)
        if key not in best or schema.since_version > best[key].since_version:
            best[key] = schema
    for domain, version in imports.items():  # onnxruntime's own domains the model imports
        best.update({(domain, r.name): r for r in runtime_operators(domain, version)})
    out = []
    for (domain, name), schema in sorted(best.items()):
        if schema.deprecated:
            continue
        out.append(
            {
                "op_type": name,
                "domain": domain,
                "since_version": schema.since_version,
                "min_inputs": schema.min_input,
                "max_inputs": schema.max_input,
                "min_outputs": schema.min_output,
                "max_outputs": schema.max_output,
                "attributes": [
                    {
                        "name": a.name,
                        "type": onnx.AttributeProto.AttributeType.Name(int(a.type)),  # type: ignore[call-overload]  # stub: AttrType has no __int__
                        "required": a.required,
                        "default": attribute_json(a.default_value, "")["value"]
                        if a.default_value is not None and a.default_value.type
                        else None,
                    }
                    for a in sorted(schema.attributes.values(), key=lambda a: a.name)
                ],
            }
        )
    return out


def _has_body(schema: defs.OpSchema) -> bool:
    """Whether onnx defines the operator by others (a function body, or one built on the node's
    input types); onnx's type stubs lack these members."""
    bound: Any = schema
    return bool(bound.has_function or bound.has_context_dependent_function)
