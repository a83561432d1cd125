"""Operator schemas onnxruntime defines beyond onnx's: its contrib operators (com.microsoft's
Attention, MatMulNBits, SkipLayerNormalization, GroupQueryAttention, …, which transformer
optimizers and int4 LLM exports write) and its layout domains. They are read from onnxruntime's
registry once per process and made into `onnx.defs.OpSchema` objects, so what reads a node's
schema (the docs panel, attribute types, the node forms, output counts) treats them as onnx's
own. They are never registered into onnx: its checker and shape inference stay as they are.
"""

from __future__ import annotations

import functools

import onnx
from onnx import defs

# the domains onnx's own registry defines: those never come from onnxruntime
ONNX_DOMAINS = frozenset({"", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training"})


def runtime_schema(op_type: str, domain: str, version: int) -> defs.OpSchema | None:
    """onnxruntime's schema of `domain`::`op_type` at opset `version` (the newest at or below
    it), or None."""
    found = None
    for schema in _registry().get((domain, op_type), ()):
        if schema.since_version <= version:
            found = schema
    return found


def runtime_operators(domain: str, version: int) -> list[defs.OpSchema]:
    """Every operator of an onnxruntime domain at opset `version` (the newest schema of each)."""
    if domain in ONNX_DOMAINS:
        return []
    names = sorted(name for d, name in _registry() if d == domain)
    return [s for name in names if (s := runtime_schema(name, domain, version)) is not None]


def all_runtime_schemas() -> list[defs.OpSchema]:
    """Every version of every operator onnxruntime defines beyond onnx (the page's catalog)."""
    return [s for versions in _registry().values() for s in versions]


@functools.cache
def _registry() -> dict[tuple[str, str], list[defs.OpSchema]]:
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_c
    except ImportError:  # onnxruntime is a dependency; without it, onnx's schemas alone
        return {}
    out: dict[tuple[str, str], list[defs.OpSchema]] = {}
    for s in ort_c.get_all_operator_schema():
        if s.domain in ONNX_DOMAINS or s.deprecated:
            continue
        out.setdefault((s.domain, s.name), []).append(_as_onnx(s))
    for versions in out.values():
        versions.sort(key=lambda x: x.since_version)
    return out


def _as_onnx(s) -> defs.OpSchema:
    return defs.OpSchema(
        s.name,
        s.domain,
        s.since_version,
        s.doc or "",
        inputs=_formals(s.inputs, s.min_input),
        outputs=_formals(s.outputs, s.min_output),
        type_constraints=[(t.type_param_str, list(t.allowed_type_strs), t.description) for t in s.type_constraints],
        attributes=[_attribute(name, a) for name, a in sorted(s.attributes.items())],
    )


def _formals(params, min_count: int) -> list:
    out = []
    for k, p in enumerate(params):
        option = getattr(defs.OpSchema.FormalParameterOption, p.option.name)  # the same enum, onnxruntime's copy
        variadic = option == defs.OpSchema.FormalParameterOption.Variadic
        out.append(
            defs.OpSchema.FormalParameter(
                p.name,
                p.typeStr,
                p.description,
                param_option=option,
                is_homogeneous=p.isHomogeneous,
                min_arity=max(0, min_count - k) if variadic else 1,  # EPContext's inputs may be none at all
            )
        )
    return out


def _attribute(name: str, a) -> defs.OpSchema.Attribute:
    default = onnx.AttributeProto()
    default.ParseFromString(a._default_value)  # onnxruntime gives the default serialized
    if default.type:
        return defs.OpSchema.Attribute(name, default, a.description)
    return defs.OpSchema.Attribute(
        name, getattr(defs.OpSchema.AttrType, a.type.name), a.description, required=a.required
    )
