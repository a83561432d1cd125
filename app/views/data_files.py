"""JSON views of the spec's non-model files: TensorProto, SequenceProto, MapProto, OptionalProto
(onnx-data.proto) and OperatorSetProto (onnx-operators.proto).

Tensors inside are addressed by refs starting with "$": "$" is the file's own tensor, "$/2" item 2
of a sequence or map, "$/value" an optional's content, nested as deep as the data goes.
"""

from __future__ import annotations

import onnx

from ..errors import NotFound
from ..onnx_io.limits import MAX_DATA_DEPTH
from .values import dtype_name, sparse_brief, tensor_brief, text

MAX_ITEMS = 1000
_ELEM = {1: "tensor", 2: "sparse_tensor", 3: "sequence", 4: "map", 5: "optional"}

# OptionalProto.elem_type -> the field holding its value
OPTIONAL_FIELD = {1: "tensor_value", 2: "sparse_tensor_value", 3: "sequence_value", 4: "map_value", 5: "optional_value"}


def _seq_items(s: onnx.SequenceProto) -> list:
    field = {
        1: "tensor_values",
        2: "sparse_tensor_values",
        3: "sequence_values",
        4: "map_values",
        5: "optional_values",
    }.get(s.elem_type)
    return list(getattr(s, field)) if field else []


def data_json(msg, ref: str = "$", depth: int = 0) -> dict:
    if depth > MAX_DATA_DEPTH:
        return {"kind": "truncated"}
    if isinstance(msg, onnx.TensorProto):
        return {"kind": "tensor", **tensor_brief(msg, ref)}
    if isinstance(msg, onnx.SparseTensorProto):
        return {"kind": "sparse_tensor", **sparse_brief(msg, ref)}
    if isinstance(msg, onnx.SequenceProto):
        items = _seq_items(msg)
        return {
            "kind": "sequence",
            "name": msg.name,
            "elem_type": _ELEM.get(msg.elem_type, "undefined"),
            "length": len(items),
            "items": [data_json(x, f"{ref}/{k}", depth + 1) for k, x in enumerate(items[:MAX_ITEMS])],
            # a file of one item is byte for byte an OptionalProto holding it (the two messages
            # number their fields alike): which one was written, nothing in the file says
            **({"reads_as_optional": True} if depth == 0 and len(items) == 1 else {}),
        }
    if isinstance(msg, onnx.MapProto):
        keys = [text(k) for k in msg.string_keys] if msg.key_type == onnx.TensorProto.STRING else list(msg.keys)
        values = _seq_items(msg.values)
        return {
            "kind": "map",
            "name": msg.name,
            "key_type": dtype_name(msg.key_type),
            "length": len(keys),
            "entries": [
                {"key": k, "value": data_json(v, f"{ref}/{i}", depth + 1)}
                # not strict: a map can pass detection with fewer values of its elem_type than keys
                for i, (k, v) in enumerate(list(zip(keys, values, strict=False))[:MAX_ITEMS])
            ],
        }
    if isinstance(msg, onnx.OptionalProto):
        field = OPTIONAL_FIELD.get(msg.elem_type)
        has = bool(field) and msg.HasField(field)
        return {
            "kind": "optional",
            "name": msg.name,
            "elem_type": _ELEM.get(msg.elem_type, "undefined"),
            "has_value": has,
            "value": data_json(getattr(msg, field), f"{ref}/value", depth + 1) if field and has else None,
        }
    if isinstance(msg, onnx.OperatorSetProto):
        return {
            "kind": "operator_set",
            "magic": msg.magic,
            "ir_version": msg.ir_version,
            "ir_version_prerelease": msg.ir_version_prerelease,
            "ir_build_metadata": msg.ir_build_metadata,
            "domain": msg.domain,
            "opset_version": msg.opset_version,
            "doc_string": text(msg.doc_string, 100_000),
            "operators": [
                {
                    "op_type": o.op_type,
                    "since_version": o.since_version,
                    "status": onnx.OperatorStatus.Name(o.status),
                    "doc_string": text(o.doc_string),
                }
                for o in msg.operator
            ],
            "functions": [
                {
                    "name": f.name,
                    "domain": f.domain,
                    "inputs": list(f.input),
                    "outputs": list(f.output),
                    "nodes": [
                        {"op_type": n.op_type, "domain": n.domain, "inputs": list(n.input), "outputs": list(n.output)}
                        for n in f.node
                    ],
                }
                for f in msg.functions
            ],
        }
    return {"kind": "unknown"}


def resolve_data_tensor(msg, ref: str):
    """The TensorProto/SparseTensorProto at `ref` inside a data file."""
    if not ref.startswith("$"):
        raise NotFound("unknown_tensor", f"no tensor {ref!r} in this file (data refs start with $)")
    node = msg
    for seg in [s for s in ref[1:].split("/") if s]:
        if isinstance(node, onnx.SequenceProto):
            items = _seq_items(node)
        elif isinstance(node, onnx.MapProto):
            items = _seq_items(node.values)
        elif isinstance(node, onnx.OptionalProto) and seg == "value":
            field = OPTIONAL_FIELD.get(node.elem_type)
            if not field or not node.HasField(field):
                raise NotFound("unknown_tensor", f"{ref!r}: the optional holds no value")
            node = getattr(node, field)
            continue
        else:
            raise NotFound("unknown_tensor", f"{ref!r}: nothing to index at {seg!r}")
        if not seg.isdigit() or int(seg) >= len(items):
            raise NotFound("unknown_tensor", f"{ref!r}: no item {seg!r}")
        node = items[int(seg)]
    if not isinstance(node, (onnx.TensorProto, onnx.SparseTensorProto)):
        raise NotFound("unknown_tensor", f"{ref!r} is a {type(node).__name__}, not a tensor")
    return node
