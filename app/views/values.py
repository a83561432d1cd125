"""JSON forms of ONNX types, shapes and attribute values."""

from __future__ import annotations

import math

import onnx
from onnx import AttributeProto, numpy_helper

from ..onnx_io.address import encode_attr, subgraph_path
from ..onnx_io.external import TENSOR_PREFIX
from ..onnx_io.limits import MAX_DATA_DEPTH

MAX_LIST_ITEMS = 4096  # longer attribute lists are cut; the item count is still reported
MAX_STRING_CHARS = 4096


def dtype_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"UNKNOWN({elem_type})"


def json_number(x: float):
    """Strict-JSON float: NaN/±Inf as strings."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def text(b: bytes | str, limit: int = MAX_STRING_CHARS) -> str:
    s = b.decode("utf-8", errors="replace") if isinstance(b, bytes) else b
    return s if len(s) <= limit else s[:limit] + "…"


def dim_json(d: onnx.TensorShapeProto.Dimension):
    """A dim as the graph JSON shows it (and the page sends it back): number, name or null."""
    which = d.WhichOneof("value")
    return d.dim_value if which == "dim_value" else d.dim_param if which == "dim_param" else None


def shape_json(shape: onnx.TensorShapeProto) -> list:
    return [dim_json(d) for d in shape.dim]


def type_json(tp: onnx.TypeProto, depth: int = 0) -> dict:
    out = _type_json(tp, depth)
    if tp.denotation:  # what the type stands for ("IMAGE", "TENSOR")
        out["denotation"] = text(tp.denotation)
    return out


def _type_json(tp: onnx.TypeProto, depth: int) -> dict:
    if depth > MAX_DATA_DEPTH:
        return {"kind": "unknown"}
    which = tp.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        t = getattr(tp, which)
        out = {
            "kind": "tensor" if which == "tensor_type" else "sparse_tensor",
            "dtype": dtype_name(t.elem_type) if t.elem_type else None,
            "shape": shape_json(t.shape) if t.HasField("shape") else None,
        }
        if any(d.denotation for d in t.shape.dim):  # each axis's meaning: DATA_BATCH, DATA_CHANNEL
            out["dim_denotations"] = [text(d.denotation) or None for d in t.shape.dim]
        return out
    if which == "sequence_type":
        return {"kind": "sequence", "elem": type_json(tp.sequence_type.elem_type, depth + 1)}
    if which == "map_type":
        return {
            "kind": "map",
            "key": dtype_name(tp.map_type.key_type),
            "value": type_json(tp.map_type.value_type, depth + 1),
        }
    if which == "optional_type":
        return {"kind": "optional", "elem": type_json(tp.optional_type.elem_type, depth + 1)}
    if which == "opaque_type":
        return {"kind": "opaque", "domain": tp.opaque_type.domain, "name": tp.opaque_type.name}
    return {"kind": "unknown"}


def value_info_json(vi: onnx.ValueInfoProto, types: dict | None = None) -> dict:
    """`types` (serialized TypeProto -> its JSON) shares the work among a graph's values: a
    40k-node graph types 25k values with a few dozen distinct types."""
    t: dict | None
    if not vi.HasField("type"):
        t = {"kind": "unknown"}
    elif types is None:
        t = type_json(vi.type)
    else:
        key = vi.type.SerializeToString()
        t = types.get(key)
        if t is None:
            t = types[key] = type_json(vi.type)
    out: dict = {"name": vi.name, "dtype": t.get("dtype"), "shape": t.get("shape"), "type": t}
    if vi.doc_string:
        out["doc_string"] = text(vi.doc_string)
    if vi.metadata_props:
        out["metadata_props"] = [{"key": p.key, "value": p.value} for p in vi.metadata_props]
    return out


def in_data_file(t: onnx.TensorProto) -> bool:
    """Is `t` in an external data file of the model as the person has it? A big tensor of an
    embedded model is external in the stored graph too, but in the store's own blob (its
    location "studio:tensor/…"): the model they uploaded and download holds it inline."""
    if t.data_location != onnx.TensorProto.EXTERNAL:
        return False
    location = next((e.value for e in t.external_data if e.key == "location"), "")
    return not location.startswith(TENSOR_PREFIX)


def tensor_brief(t: onnx.TensorProto, ref: str) -> dict:
    out = {
        "name": t.name,
        "dtype": dtype_name(t.data_type),
        "shape": list(t.dims),
        "ref": ref,
        "external": in_data_file(t),
    }
    if t.doc_string:
        out["doc_string"] = text(t.doc_string)
    if t.metadata_props:
        out["metadata_props"] = [{"key": p.key, "value": p.value} for p in t.metadata_props]
    return out


FEW_VALUES = 8
_FEW_TYPES = {
    onnx.TensorProto.INT64,
    onnx.TensorProto.INT32,
    onnx.TensorProto.INT16,
    onnx.TensorProto.INT8,
    onnx.TensorProto.UINT64,
    onnx.TensorProto.UINT32,
    onnx.TensorProto.UINT16,
    onnx.TensorProto.UINT8,
    onnx.TensorProto.FLOAT,
    onnx.TensorProto.DOUBLE,
    onnx.TensorProto.FLOAT16,
    onnx.TensorProto.BOOL,
}


def few_values(t: onnx.TensorProto) -> list | None:
    """The values of a tiny inline numeric tensor (a Constant's [1, -1], a scalar), flat, so
    the drawing can show them where the tensor is read; None for anything bigger or other."""
    n = 1
    for d in t.dims:
        n *= d
    if n > FEW_VALUES or t.data_type not in _FEW_TYPES or t.data_location == onnx.TensorProto.EXTERNAL:
        return None
    try:
        flat = numpy_helper.to_array(t).reshape(-1)
    except Exception:  # a malformed tensor shows its shape only; the checker reports it
        return None
    if flat.dtype.kind == "b":
        return [bool(x) for x in flat]
    if flat.dtype.kind in "iu":
        return [int(x) for x in flat]
    return [json_number(x) for x in flat]


def sparse_brief(st: onnx.SparseTensorProto, ref: str) -> dict:
    out = {
        "name": st.values.name,
        "dtype": dtype_name(st.values.data_type),
        "shape": list(st.dims),
        "nnz": st.values.dims[0] if st.values.dims else 0,
        "ref": ref,
        "sparse": True,
        "indices": {"dtype": dtype_name(st.indices.data_type), "shape": list(st.indices.dims)},
    }
    if in_data_file(st.values) or in_data_file(st.indices):
        out["external"] = True
    if st.values.doc_string:
        out["doc_string"] = text(st.values.doc_string)
    if st.values.metadata_props:
        out["metadata_props"] = [{"key": p.key, "value": p.value} for p in st.values.metadata_props]
    return out


_ATTR_TYPE_NAMES = {v: k for k, v in AttributeProto.AttributeType.items()}


def attribute_json(attr: AttributeProto, nid: str) -> dict:
    """{"name", "type", "value"} for every AttributeProto type."""
    # hot path: a 40k-node graph has tens of thousands of attributes
    a = AttributeProto
    t = attr.type
    type_name = _ATTR_TYPE_NAMES.get(t) or f"UNKNOWN({t})"
    name = attr.name
    out: dict = {"name": name, "type": type_name}
    if attr.doc_string:
        out["doc_string"] = text(attr.doc_string)
    if attr.ref_attr_name:
        # a reference holds no value of its own (its fields are empty: 0, ""): no value is sent,
        # which a reader would take for the value it has
        out["ref_attr_name"] = attr.ref_attr_name
        return out
    if t in _TENSOR_KINDS:
        tref = f"@{nid}#{encode_attr(name)}"
    if t == a.FLOAT:
        value = json_number(attr.f)
    elif t == a.INT:
        value = attr.i
    elif t == a.STRING:
        value = text(attr.s)
    elif t == a.TENSOR:
        value = tensor_brief(attr.t, tref)
        few = few_values(attr.t)
        if few is not None:
            value["values"] = few
    elif t == a.GRAPH:
        value = {"path": subgraph_path(nid, name), "name": attr.g.name, "nodes": len(attr.g.node)}
    elif t == a.SPARSE_TENSOR:
        value = sparse_brief(attr.sparse_tensor, tref)
    elif t == a.TYPE_PROTO:
        value = type_json(attr.tp)
    elif t == a.FLOATS:
        value = [json_number(x) for x in attr.floats[:MAX_LIST_ITEMS]]
    elif t == a.INTS:
        value = list(attr.ints[:MAX_LIST_ITEMS])
    elif t == a.STRINGS:
        value = [text(x) for x in attr.strings[:MAX_LIST_ITEMS]]
    elif t == a.TENSORS:
        value = [tensor_brief(x, f"{tref}[{k}]") for k, x in enumerate(attr.tensors[:MAX_LIST_ITEMS])]
    elif t == a.GRAPHS:
        value = [
            {"path": subgraph_path(nid, name, k), "name": g.name, "nodes": len(g.node)}
            for k, g in enumerate(attr.graphs)
        ]
    elif t == a.SPARSE_TENSORS:
        value = [sparse_brief(x, f"{tref}[{k}]") for k, x in enumerate(attr.sparse_tensors[:MAX_LIST_ITEMS])]
    elif t == a.TYPE_PROTOS:
        value = [type_json(x) for x in attr.type_protos[:MAX_LIST_ITEMS]]
    else:
        value = None
    out["value"] = value
    field = _LIST_FIELDS.get(t)
    if field:
        count = len(getattr(attr, field))
        if count > MAX_LIST_ITEMS:
            out["truncated"] = count
    return out


_TENSOR_KINDS = {
    AttributeProto.TENSOR,
    AttributeProto.SPARSE_TENSOR,
    AttributeProto.TENSORS,
    AttributeProto.SPARSE_TENSORS,
}
_LIST_FIELDS = {
    AttributeProto.FLOATS: "floats",
    AttributeProto.INTS: "ints",
    AttributeProto.STRINGS: "strings",
    AttributeProto.TENSORS: "tensors",
    AttributeProto.SPARSE_TENSORS: "sparse_tensors",
    AttributeProto.TYPE_PROTOS: "type_protos",
}
