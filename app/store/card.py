"""A model's card for the models list: who made it, its opset, how many nodes its graph has —
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
MAX_TEXT = 80  # a producer's name as the list shows it


def card_of_bytes(buf) -> dict | None:
    """{"ir_version", "producer", "opset", "nodes"} of a serialized ModelProto, None when its
    bytes can't be walked (they are stored whole, as protobuf accepted them)."""
    ir_version, opset, ml, nodes = 0, None, None, 0
    producer = version = ""
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
            elif number == _GRAPH and wire == 2:
                nodes += sum(1 for n, w, *_ in _fields(buf, payload, end) if n == _NODE and w == 2)
    except WireError:
        return None
    return _card(ir_version, producer, version, opset, nodes, ml)


def card_of_model(model: onnx.ModelProto) -> dict:
    """The same card of a parsed model."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    ml = next((o.version for o in model.opset_import if o.domain == "ai.onnx.ml"), None)
    producer, version = (_as_text(x) for x in (model.producer_name, model.producer_version))
    return _card(model.ir_version, producer, version, opset, len(model.graph.node), ml)


def _as_text(x: str | bytes) -> str:
    """upb hands a string field that isn't valid UTF-8 back as bytes."""
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else x


def _card(ir_version: int, producer: str, version: str, opset: int | None, nodes: int, ml: int | None = None) -> dict:
    """opset: ai.onnx's; for a model importing only ai.onnx.ml (an XGBoost export), ai.onnx.ml's,
    with "opset_domain" saying so."""
    made_by = f"{producer} {version}".strip()[:MAX_TEXT]
    card = {"ir_version": ir_version, "producer": made_by, "opset": opset, "nodes": nodes}
    if opset is None and ml is not None:
        card.update(opset=ml, opset_domain="ai.onnx.ml")
    return card


def _text(buf, start: int, end: int) -> str:
    return bytes(buf[start:end]).decode("utf-8", "replace")


def _opset(buf, start: int, end: int) -> tuple[str, int | None]:
    domain, version = "", None
    for number, wire, _s, payload, field_end in _fields(buf, start, end):
        if number == _OPSET_DOMAIN and wire == 2:
            domain = _text(buf, payload, field_end)
        elif number == _OPSET_VERSION and wire == 0:
            version = _varint(buf, payload)[0]
    return domain, version
