"""Strings are text: upb hands a string field holding invalid UTF-8 back as bytes, and every view
that joins, splits or serialises names then fails. The models the views read have those fields
decoded with replacement characters (U+FFFD); the stored bytes, and the model the edits parse,
keep them byte for byte."""

from __future__ import annotations

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

_STRING = FieldDescriptor.TYPE_STRING
_MESSAGE = FieldDescriptor.TYPE_MESSAGE


def shown(text) -> str:
    """A string field as people are told it: upb's bytes for invalid UTF-8 decoded with
    replacement characters (printed as b'\\xff...' otherwise)."""
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else text


def is_bytes_error(exc: BaseException) -> bool:
    """What upb's bytes-for-invalid-UTF-8 strings raise: str/bytes mix-ups in Python, and JSON
    encoders refusing bytes."""
    return isinstance(exc, UnicodeError) or (isinstance(exc, TypeError) and "bytes" in str(exc))


def readable_strings(msg: Message) -> int:
    """Decode, in place, every string field of `msg` (at any depth) that holds invalid UTF-8;
    returns how many were replaced. Only set fields are visited: tensor data costs nothing."""
    fixed = 0
    stack = [msg]
    while stack:
        m = stack.pop()
        for field, value in m.ListFields():
            if field.type == _STRING:
                if field.is_repeated:
                    for i, v in enumerate(value):
                        if isinstance(v, bytes):
                            value[i] = v.decode("utf-8", "replace")
                            fixed += 1
                elif isinstance(value, bytes):
                    setattr(m, field.name, value.decode("utf-8", "replace"))
                    fixed += 1
            elif field.type == _MESSAGE:
                if field.is_repeated:
                    stack.extend(value)
                else:
                    stack.append(value)
    return fixed
