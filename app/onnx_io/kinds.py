"""What an uploaded file is, decided from its content (never only from its extension).

ModelProto (binary or ONNX text syntax), TensorProto, SequenceProto, MapProto, OptionalProto and
OperatorSetProto all share protobuf's wire format, and protobuf parses most bytes as most
messages, so each kind must also make sense: no unknown fields, known enum values, and data
whose element count matches its dims.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from google.protobuf import unknown_fields
from google.protobuf.message import DecodeError, Message
from onnx import numpy_helper

from ..errors import StudioError
from .function_expansion import check_expansion
from .limits import MAX_DATA_DEPTH
from .load import parse_model
from .sizes import INTEGER_TYPES

KINDS = ("model", "tensor", "sequence", "map", "optional", "operator_set")


@dataclass
class Detected:
    kind: str  # one of KINDS
    message: Message  # the parsed proto
    data: bytes  # the bytes to store (a text model is stored as its binary ModelProto)
    source: str  # "binary" | "text"


def _parse(cls, data: bytes):
    msg = cls()
    try:
        msg.ParseFromString(data)
    except (DecodeError, RecursionError):
        return None
    return msg


def _clean(msg: Message, depth: int = 0) -> bool:
    """No unknown fields here or in any nested message."""
    if depth > MAX_DATA_DEPTH or len(unknown_fields.UnknownFieldSet(msg)):
        return False
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        if not all(_clean(v, depth + 1) for v in items):
            return False
    return True


def _tensor_ok(t: onnx.TensorProto) -> bool:
    if t.data_type not in onnx.TensorProto.DataType.values() or t.data_type == 0:
        return False
    if t.data_location == onnx.TensorProto.EXTERNAL:
        return any(e.key == "location" for e in t.external_data)
    n = int(np.prod(t.dims, dtype=np.float64)) if t.dims else 1
    if n > 1 << 31:
        return False
    try:
        return numpy_helper.to_array(t).size == n
    except Exception:
        return False


def _sequence_ok(s: onnx.SequenceProto, depth: int = 0) -> bool:
    S = onnx.SequenceProto
    if depth > MAX_DATA_DEPTH:
        return False
    if s.elem_type == S.TENSOR:
        return all(_tensor_ok(t) for t in s.tensor_values)
    if s.elem_type == S.SPARSE_TENSOR:
        return all(_tensor_ok(t.values) for t in s.sparse_tensor_values)
    if s.elem_type == S.SEQUENCE:
        return all(_sequence_ok(x, depth + 1) for x in s.sequence_values)
    if s.elem_type == S.MAP:
        return all(_map_ok(x, depth + 1) for x in s.map_values)
    if s.elem_type == S.OPTIONAL:
        return all(_optional_ok(x, depth + 1) for x in s.optional_values)
    return False


def _map_ok(m: onnx.MapProto, depth: int = 0) -> bool:
    T = onnx.TensorProto
    if m.key_type == T.STRING:
        count = len(m.string_keys)
    elif m.key_type in INTEGER_TYPES:
        count = len(m.keys)
    else:
        return False
    return _sequence_ok(m.values, depth + 1) and _sequence_len(m.values) == count


def _sequence_len(s: onnx.SequenceProto) -> int:
    return max(
        len(s.tensor_values),
        len(s.sparse_tensor_values),
        len(s.sequence_values),
        len(s.map_values),
        len(s.optional_values),
    )


def _optional_ok(o: onnx.OptionalProto, depth: int = 0) -> bool:
    Opt = onnx.OptionalProto
    if o.elem_type == Opt.UNDEFINED:
        return not o.ListFields() or all(f.name in ("name", "elem_type") for f, _ in o.ListFields())
    if o.elem_type == Opt.TENSOR:
        return o.HasField("tensor_value") and _tensor_ok(o.tensor_value)
    if o.elem_type == Opt.SPARSE_TENSOR:
        return o.HasField("sparse_tensor_value") and _tensor_ok(o.sparse_tensor_value.values)
    if o.elem_type == Opt.SEQUENCE:
        return o.HasField("sequence_value") and _sequence_ok(o.sequence_value, depth + 1)
    if o.elem_type == Opt.MAP:
        return o.HasField("map_value") and _map_ok(o.map_value, depth + 1)
    if o.elem_type == Opt.OPTIONAL:
        return o.HasField("optional_value") and _optional_ok(o.optional_value, depth + 1)
    return False


# brackets ONNX text may nest: a subgraph costs two or three levels ("<...{...}>"), and the
# parser recurses in C++ per level (an If nested 5,000 deep crashed it); address.py follows 64
MAX_TEXT_NESTING = 256


def nesting_depth(text: str) -> int:
    """The deepest nesting of (), [], {} and <> in ONNX text, string literals aside."""
    depth = deepest = 0
    in_string = escaped = False
    prev = ""
    for ch in text:
        arrow = ch == ">" and prev == "="  # "=>" between a graph's inputs and outputs
        prev = ch
        if arrow:
            continue
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "([{<":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}>":
            depth -= 1
    return deepest


def _text_model(data: bytes, name: str) -> Detected | None:
    if len(data) > 64 * 1024 * 1024 or b"\0" in data[:4096]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "{" not in text or ("=>" not in text and "<" not in text.lstrip()[:1]):
        return None
    if nesting_depth(text) > MAX_TEXT_NESTING:
        raise StudioError(
            "too_deep", f"{name} nests brackets more than {MAX_TEXT_NESTING} deep; no real model does", 422
        )
    from . import offload

    try:  # onnx's parser is C++: in the helper process
        model = onnx.ModelProto.FromString(offload.run("parse_text", offload.content_key(data), text))
    except ValueError as exc:
        if text.lstrip().startswith("<"):
            raise StudioError(
                "bad_text_model", f"{name} looks like ONNX text syntax but does not parse: {exc}"
            ) from None
        return None
    if not model.HasField("graph"):
        return None
    if model.ir_version <= 0:
        model.ir_version = onnx.IR_VERSION
    check_expansion(model, name)
    return Detected("model", model, model.SerializeToString(), "text")


def detect(data: bytes, name: str = "file") -> Detected:
    """Decide what `data` is; raise StudioError(400) naming the problem when it's none of them."""
    try:
        model = parse_model(data, name)
        return Detected("model", model, data, "binary")
    except StudioError as model_error:
        if model_error.code in ("empty_file", "functions_too_large"):
            raise  # nothing to read as anything else either; a model, refused as one
        first_error = model_error
    text = _text_model(data, name)
    if text is not None:
        return text
    opset = _parse(onnx.OperatorSetProto, data)
    if opset is not None and opset.magic == "ONNXOPSET" and _clean(opset):
        return Detected("operator_set", opset, data, "binary")
    checks = (
        ("tensor", onnx.TensorProto, _tensor_ok),
        ("sequence", onnx.SequenceProto, _sequence_ok),
        ("map", onnx.MapProto, _map_ok),
        ("optional", onnx.OptionalProto, _optional_ok),
    )
    for kind, cls, ok in checks:
        msg = _parse(cls, data)
        if msg is not None and msg.ByteSize() and _clean(msg) and ok(msg):
            return Detected(kind, msg, data, "binary")
    raise StudioError(
        first_error.code,
        first_error.message + "; nor is it a TensorProto, SequenceProto, MapProto, "
        "OptionalProto, OperatorSetProto or ONNX text",
    )
