"""Opset imports for the domains of nodes an edit adds.

A node of a domain its graph doesn't import fails the checker ("No opset import for domain
'com.microsoft'"), so adding onnxruntime's FastGelu or a custom op took a second edit no form
offers. The import is added with the node: for a domain onnx defines (ai.onnx.ml, ...), the
version of the operator's newest schema; for any other (com.microsoft, a company's own), 1 —
the version onnxruntime's contrib ops and custom-op libraries register.
"""

from __future__ import annotations

import onnx
from onnx import defs

from ..onnx_io.traverse import opset_version, standard_domain

OTHER_DOMAIN_VERSION = 1


def import_domain(model: onnx.ModelProto, container, node: onnx.NodeProto) -> str:
    """Import `node`'s domain where `container` (a graph or a model-local function) has none,
    raising the model's ir_version only as far as that import needs. Words for the edit's
    answer ("" when nothing was imported)."""
    domain = standard_domain(node.domain)
    if opset_version(model, container, domain) is not None:
        return ""
    version = _version_for(node.op_type, domain)
    said = []
    targets: list[onnx.ModelProto | onnx.FunctionProto] = (
        [model] if not isinstance(container, onnx.FunctionProto) else [container, model]
    )
    for holder in targets:
        if opset_version(model, holder, domain) is None:
            holder.opset_import.append(onnx.helper.make_opsetid(domain, version))
    need = onnx.helper.find_min_ir_version_for([onnx.helper.make_opsetid(domain, version)], True)
    if need > model.ir_version:
        said.append(f"ir_version {model.ir_version} → {need}")
        model.ir_version = need
    return f"imported opset {domain or 'ai.onnx'} v{version}" + (f" ({', '.join(said)})" if said else "")


def _version_for(op_type: str, domain: str) -> int:
    try:
        return int(defs.get_schema(op_type, domain=domain).since_version)
    except defs.SchemaError:
        return OTHER_DOMAIN_VERSION


def new_node(op_type: str, domain: str, name: str) -> onnx.NodeProto:
    """A node of `op_type`, its domain and name set only when given: proto2 keeps a field set to
    "" (onnx's text form then prints the node named `[""]`), as onnx.helper.make_node does not."""
    node = onnx.NodeProto(op_type=op_type)
    if domain:
        node.domain = domain
    if name:
        node.name = name
    return node
