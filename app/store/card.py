"""A model's card for the models list: who made it, its opset, how many nodes its graph has and
which operators, its metadata (what the list's filter finds a model by) —
read from its protobuf bytes at the wire level (a 2 GiB upload is not parsed for it), or from
the parsed model an edit already holds."""

from __future__ import annotations

import onnx

from .wire import WireError, _fields, _varint

_MODEL = onnx.ModelProto.DESCRIPTOR.fields_by_name
_IR_VERSION = _MODEL["ir_version"].number
_PRODUCER = _MODEL["producer_name"].number
_PRODUCER_VERSION = _MODEL["producer_version"].number
_OPSET = _MODEL["opset_import"].number
_GRAPH = _MODEL["graph"].number
_OPSET_DOMAIN = onnx.OperatorSetIdProto.DESCRIPTOR.fields_by_name["domain"].number
_OPSET_VERSION = onnx.OperatorSetIdProto.DESCRIPTOR.fields_by_name["version"].number
_NODE = onnx.GraphProto.DESCRIPTOR.fields_by_name["node"].number
_OP_TYPE = onnx.NodeProto.DESCRIPTOR.fields_by_name["op_type"].number
_METADATA = _MODEL["metadata_props"].number
_KEY = onnx.StringStringEntryProto.DESCRIPTOR.fields_by_name["key"].number
_VALUE = onnx.StringStringEntryProto.DESCRIPTOR.fields_by_name["value"].number
MAX_TEXT = 80  # a producer's name (a metadata value) as the list shows it
MAX_OPS = 200  # distinct operators a card names (a model has a few dozen)
MAX_METADATA = 20  # metadata entries a card holds


def card_of_bytes(buf, contents: bool = True) -> dict | None:
    """{"ir_version", "producer", "opset", "nodes", "ops", "metadata"} of a serialized ModelProto,
    None when its bytes can't be walked (they are stored whole, as protobuf accepted them).
    Without `contents`, no "ops" nor "metadata": reading each node's operator costs ~3 µs a node
    (0.1 s on a 31k-node LLaMA), which an upload leaves to the models list (Store.card)."""
    ir_version, opset, ml, nodes = 0, None, None, 0
    producer = version = ""
    ops: set[str] = set()
    metadata: dict[str, str] = {}
    try:
        for number, wire, _start, payload, end in _fields(buf, 0, len(buf)):
            if number == _IR_VERSION and wire == 0:
                ir_version = _varint(buf, payload)[0]
            elif number == _PRODUCER and wire == 2:
                producer = _text(buf, payload, end)
            elif number == _PRODUCER_VERSION and wire == 2:
                version = _text(buf, payload, end)
            elif number == _OPSET and wire == 2:
                domain, v = _opset(buf, payload, end)
                if domain in ("", "ai.onnx") and opset is None:  # the first, should it be imported twice
                    opset = v
                elif domain == "ai.onnx.ml" and ml is None:
                    ml = v
            elif number == _METADATA and wire == 2 and len(metadata) < MAX_METADATA:
                key, value = _entry(buf, payload, end)
                metadata.setdefault(key, value)
            elif number == _GRAPH and wire == 2:
                for n, w, _s, node, node_end in _fields(buf, payload, end):
                    if n == _NODE and w == 2:
                        nodes += 1
                        if contents and len(ops) < MAX_OPS:
                            ops.add(_op_type(buf, node, node_end))
    except WireError:
        return None
    card = _card(ir_version, producer, version, opset, nodes, ml, ops, metadata)
    if not contents:
        del card["ops"], card["metadata"]
    return card


def card_of_model(model: onnx.ModelProto) -> dict:
    """The same card of a parsed model."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    ml = next((o.version for o in model.opset_import if o.domain == "ai.onnx.ml"), None)
    producer, version = (_as_text(x) for x in (model.producer_name, model.producer_version))
    ops = {_as_text(n.op_type) for n in model.graph.node}
    metadata: dict[str, str] = {}
    for p in model.metadata_props[:MAX_METADATA]:
        metadata.setdefault(_as_text(p.key), _as_text(p.value))
    return _card(model.ir_version, producer, version, opset, len(model.graph.node), ml, ops, metadata)


def _as_text(x: str | bytes) -> str:
    """upb hands a string field that isn't valid UTF-8 back as bytes."""
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else x


def _card(
    ir_version: int,
    producer: str,
    version: str,
    opset: int | None,
    nodes: int,
    ml: int | None,
    ops: set[str],
    metadata: dict[str, str],
) -> dict:
    """opset: ai.onnx's; for a model importing only ai.onnx.ml (an XGBoost export), ai.onnx.ml's,
    with "opset_domain" saying so. ops: the main graph's operators, sorted (at most MAX_OPS)."""
    made_by = f"{producer} {version}".strip()[:MAX_TEXT]
    card = {
        "ir_version": ir_version,
        "producer": made_by,
        "opset": opset,
        "nodes": nodes,
        "ops": sorted(ops)[:MAX_OPS],
        "metadata": {k[:MAX_TEXT]: v[:MAX_TEXT] for k, v in metadata.items()},
    }
    if opset is None and ml is not None:
        card.update(opset=ml, opset_domain="ai.onnx.ml")
    return card


def _text(buf, start: int, end: int) -> str:
    return bytes(buf[start:end]).decode("utf-8", "replace")


def _op_type(buf, start: int, end: int) -> str:
    """A node's op_type: its fields read up to that one (exporters write it after inputs,
    outputs and name; the rest of the node, attributes included, is not walked)."""
    for number, wire, _s, payload, field_end in _fields(buf, start, end):
        if number == _OP_TYPE and wire == 2:
            return _text(buf, payload, field_end)
    return ""


def _entry(buf, start: int, end: int) -> tuple[str, str]:
    key = value = ""
    for number, wire, _s, payload, field_end in _fields(buf, start, end):
        if number == _KEY and wire == 2:
            key = _text(buf, payload, field_end)
        elif number == _VALUE and wire == 2:
            value = _text(buf, payload, field_end)
    return key, value


def _opset(buf, start: int, end: int) -> tuple[str, int | None]:
    domain, version = "", None
    for number, wire, _s, payload, field_end in _fields(buf, start, end):
        if number == _OPSET_DOMAIN and wire == 2:
            domain = _text(buf, payload, field_end)
        elif number == _OPSET_VERSION and wire == 0:
            version = _varint(buf, payload)[0]
    return domain, version
