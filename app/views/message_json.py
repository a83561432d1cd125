"""A protobuf message as the API's JSON: field names as onnx.proto spells them (snake_case),
integers as numbers, strings as text (invalid UTF-8 shown with replacement characters), only the
fields set. protobuf's own JSON (MessageToDict) camelCases names and writes 64-bit integers as
strings, unlike every other answer of the API (QA22 p8: a node's device_configurations)."""

from __future__ import annotations

from typing import Any, cast

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from .values import text


def message_json(msg: Message) -> dict[str, Any]:
    return {field.name: _field_json(field, value) for field, value in msg.ListFields()}


def _field_json(field: FieldDescriptor, value: Any) -> Any:
    if _repeated(field):
        return [_value_json(field, v) for v in value]
    return _value_json(field, value)


def _value_json(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return message_json(value)
    if field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        return text(value)
    return value


def _repeated(field: FieldDescriptor) -> bool:
    """is_repeated where protobuf has it (≥ 6.31: `label` is gone in 7.x), `label` before."""
    flag = getattr(field, "is_repeated", None)
    return bool(flag) if flag is not None else cast(Any, field).label == FieldDescriptor.LABEL_REPEATED
