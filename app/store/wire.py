"""A model's big tensors taken out of, and put back into, its protobuf bytes — at the wire level,
without parsing the model: how a revision is stored as its graph plus content-addressed tensors.

Every TensorProto the model holds (initializers, Constant values, sparse tensors, tensors in
subgraphs, functions and training graphs: wherever onnx.proto nests one, found from the
descriptors) whose `raw_data` is at least SPLIT_MIN_BYTES long has that field replaced by an
external-data reference to a blob (`location` = TENSOR_PREFIX + digest, `length`,
`data_location` EXTERNAL). The graph that remains parses as a model whose tensors are external
data; `join` streams it back whole, each reference replaced by the blob's bytes.

Small tensors (shapes, axes, biases of a few KiB) stay in the graph: the checker, shape
inference and the onnxruntime smoke run read their values.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import onnx
from google.protobuf.descriptor import FieldDescriptor

from ..onnx_io.external import TENSOR_PREFIX

SPLIT_MIN_BYTES = 4096

_TENSOR = onnx.TensorProto.DESCRIPTOR
_RAW_DATA = _TENSOR.fields_by_name["raw_data"].number
_EXTERNAL_DATA = _TENSOR.fields_by_name["external_data"].number
_DATA_LOCATION = _TENSOR.fields_by_name["data_location"].number
_EXTERNAL = onnx.TensorProto.EXTERNAL
_ENTRY_KEY = onnx.StringStringEntryProto.DESCRIPTOR.fields_by_name["key"].number
_ENTRY_VALUE = onnx.StringStringEntryProto.DESCRIPTOR.fields_by_name["value"].number


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def _message_fields(desc) -> list[tuple[int, str]]:
    """(number, message type name) of each message-typed field of a message type."""
    return [
        (f.number, f.message_type.full_name)
        for f in desc.fields
        if f.type == FieldDescriptor.TYPE_MESSAGE and f.message_type is not None
    ]


def _holding_tensors() -> dict[str, dict[int, str]]:
    """For each message type that can hold a TensorProto (at any depth): its fields that lead
    to one, by number -> the field's message type name. Types that can't are never descended
    into (a fixpoint over the types reachable from ModelProto: subgraphs nest recursively)."""
    pool = onnx.ModelProto.DESCRIPTOR.file.pool
    fields: dict[str, list[tuple[int, str]]] = {}
    todo = [onnx.ModelProto.DESCRIPTOR.full_name]
    while todo:
        name = todo.pop()
        if name not in fields:
            fields[name] = _message_fields(pool.FindMessageTypeByName(name))
            todo.extend(t for _n, t in fields[name])
    holding = {_TENSOR.full_name}
    grew = True
    while grew:
        grew = False
        for name, fs in fields.items():
            if name not in holding and any(t in holding for _n, t in fs):
                holding.add(name)
                grew = True
    return {
        name: {n: t for n, t in fs if t in holding}
        for name, fs in fields.items()
        if name != _TENSOR.full_name and name in holding
    }


_LEADS = _holding_tensors()


def _varint(buf, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise WireError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError("varint too long")


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _fields(buf, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, field start, payload start, payload end) of each field (a
    varint's payload is its value's bytes; a group's, what lies between its tags). A run of
    one repeated scalar field written unpacked (2M int64s: 2M varints, each with its tag) comes
    as one field spanning the run: every caller reads such fields by number and range only, and
    walking them one by one held the server's GIL for seconds."""
    pos = start
    while pos < end:
        field_start = pos
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 2:
            length, payload = _varint(buf, pos)
            pos = payload + length
        else:
            payload = pos
            pos = _skip(buf, pos, end, number, wire)
            if wire in _SCALAR_RUNS and pos < end and buf[pos] == buf[field_start]:
                pattern = _scalar_run(bytes(buf[field_start:payload]), wire)
                while run := pattern.match(buf, pos, end):  # a slice at a time: re holds the GIL
                    pos = run.end()
        if pos > end:
            raise WireError("field runs past the end of its message")
        yield number, wire, field_start, payload, pos


# a scalar's bytes after its tag, by wire type: a varint, 8 bytes, 4 bytes
_SCALAR_RUNS = {0: rb"[\x80-\xff]{0,9}[\x00-\x7f]", 1: rb"[\x00-\xff]{8}", 5: rb"[\x00-\xff]{4}"}


@functools.lru_cache(maxsize=64)
def _scalar_run(tag: bytes, wire: int) -> re.Pattern[bytes]:
    """Repetitions of one scalar field (its tag's bytes), matched by re in C."""
    return re.compile(b"(?:" + re.escape(tag) + _SCALAR_RUNS[wire] + b"){1,4096}", re.DOTALL)


_START_GROUP, _END_GROUP = 3, 4
MAX_GROUP_DEPTH = 100  # protobuf's own recursion limit


def _skip(buf, pos: int, end: int, number: int, wire: int) -> int:
    """The position after the value of field `number` of type `wire` that starts at `pos`: a
    varint, 8 or 4 bytes, a length and its bytes, or a group (an unknown field protobuf keeps,
    proto2's groups) up to its end tag, nested groups and all."""
    open_groups: list[int] = []
    while True:
        if wire == 0:
            _, pos = _varint(buf, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = _varint(buf, pos)
            pos += length
        elif wire == _START_GROUP:
            if len(open_groups) >= MAX_GROUP_DEPTH:
                raise WireError("groups nested too deep")
            open_groups.append(number)
        elif wire == _END_GROUP and open_groups:
            if number != open_groups.pop():
                raise WireError("a group ends with another group's tag")
        else:
            raise WireError(f"unsupported wire type {wire}")
        if not open_groups:
            return pos
        if pos >= end:
            raise WireError("group runs past the end of its message")
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7


@dataclass(frozen=True)
class BlobRef:
    """Bytes that come from a stored blob, in a stream of segments."""

    digest: str
    size: int


Segment = bytes | memoryview | BlobRef
Rewriter = Callable[[object, int, int], list[Segment] | None]


def _size(segments: list[Segment]) -> int:
    return sum(s.size if isinstance(s, BlobRef) else len(s) for s in segments)


def _rewrite(buf, start: int, end: int, desc_name: str, tensor: Rewriter) -> list[Segment] | None:
    """The message at buf[start:end] with each tensor it holds rewritten by tensor(buf, s, e)
    (None: unchanged), as segments; None when nothing in it changed."""
    leads = _LEADS.get(desc_name)
    if not leads:
        return None
    out: list[Segment] = []
    copied = start  # bytes from here on are copied as they are, up to the next changed field
    changed = False
    for number, wire, field_start, payload, field_end in _fields(buf, start, end):
        child = leads.get(number)
        if child is None or wire != 2:
            continue
        if child == _TENSOR.full_name:
            inner = tensor(buf, payload, field_end)
        else:
            inner = _rewrite(buf, payload, field_end, child, tensor)
        if inner is None:
            continue
        changed = True
        out.append(memoryview(buf)[copied:field_start])
        out.append(encode_varint((number << 3) | 2) + encode_varint(_size(inner)))
        out.extend(inner)
        copied = field_end
    if not changed:
        return None
    out.append(memoryview(buf)[copied:end])
    return out


def _entry(key: str, value: str) -> bytes:
    k, v = key.encode(), value.encode()
    body = (
        encode_varint((_ENTRY_KEY << 3) | 2)
        + encode_varint(len(k))
        + k
        + encode_varint((_ENTRY_VALUE << 3) | 2)
        + encode_varint(len(v))
        + v
    )
    return encode_varint((_EXTERNAL_DATA << 3) | 2) + encode_varint(len(body)) + body


@dataclass(frozen=True)
class Payload:
    """A big tensor's raw_data in the original bytes: buf[start:end]."""

    start: int
    end: int


@dataclass
class Split:
    graph: bytes  # the model with each big tensor's raw_data replaced by a reference
    payloads: list[tuple[Payload, str]]  # (where in the original, the blob digest it became)
    refs: dict[str, int]  # every reference the graph holds (new or there before): digest -> length


def split(buf, digest_of: Callable[[memoryview], str], min_bytes: int = SPLIT_MIN_BYTES) -> Split:
    """Take the big tensors' bytes out of a serialized ModelProto. digest_of(bytes) stores the
    bytes as a blob and returns its digest (called once per tensor, in file order)."""
    payloads: list[tuple[Payload, str]] = []
    refs: dict[str, int] = {}
    view = memoryview(buf)

    def tensor(b, start: int, end: int) -> list[Segment] | None:
        raw = None
        for number, wire, field_start, payload, field_end in _fields(b, start, end):
            if number in (_EXTERNAL_DATA, _DATA_LOCATION):
                # already external (or an odd mix): left as it is; a reference of ours is listed
                known = _reference(b, start, end)
                if known is not None:
                    refs[known[0]] = known[1]
                return None
            if number == _RAW_DATA and wire == 2:
                if raw is not None:
                    return None  # raw_data twice (the last wins): left as it is
                raw = (field_start, payload, field_end)
        if raw is None or raw[2] - raw[1] < min_bytes:
            return None
        field_start, payload, field_end = raw
        digest = digest_of(view[payload:field_end])
        payloads.append((Payload(payload, field_end), digest))
        refs[digest] = field_end - payload
        ref = (
            _entry("location", TENSOR_PREFIX + digest)
            + _entry("length", str(field_end - payload))
            + encode_varint(_DATA_LOCATION << 3)
            + encode_varint(_EXTERNAL)
        )
        return [view[start:field_start], view[field_end:end], ref]

    segments = _rewrite(buf, 0, len(buf), onnx.ModelProto.DESCRIPTOR.full_name, tensor)
    graph = bytes(buf) if segments is None else b"".join(bytes(s) for s in segments)  # type: ignore[arg-type]
    return Split(graph, payloads, refs)


def _reference(buf, start: int, end: int) -> tuple[str, int] | None:
    """(digest, length) when the tensor at buf[start:end] is a reference of ours, else None."""
    location: bytes | None = None
    length: bytes | None = None
    offset = 0
    external = False
    for number, wire, _field_start, payload, field_end in _fields(buf, start, end):
        if number == _DATA_LOCATION and wire == 0:
            external = _varint(buf, payload)[0] == _EXTERNAL
        elif number == _EXTERNAL_DATA and wire == 2:
            key: bytes | None = None
            value: bytes | None = None
            for n, w, _s, p, e in _fields(buf, payload, field_end):
                if w == 2 and n == _ENTRY_KEY:
                    key = bytes(buf[p:e])
                elif w == 2 and n == _ENTRY_VALUE:
                    value = bytes(buf[p:e])
            if key == b"location":
                location = value
            elif key == b"length" and value is not None:
                length = value
            elif key == b"offset" and value not in (None, b"0"):
                offset = -1
        elif number == _RAW_DATA:
            return None
    if not external or location is None or not location.startswith(TENSOR_PREFIX.encode()) or offset:
        return None
    digest = location[len(TENSOR_PREFIX) :].decode("ascii", "replace")
    try:
        size = int(length) if length is not None else -1
    except ValueError:
        return None
    return digest, size


def join(buf, sizes: dict[str, int]) -> list[Segment]:
    """The graph with each reference of ours (its digest in `sizes`: digest -> blob size)
    replaced by the tensor's raw_data from the blob, as segments to stream. The raw_data field
    goes where protobuf puts field 9 (before the first field numbered above it), so an edited
    revision streams out as the bytes `SerializeToString` gives for the same model whole."""

    def tensor(b, start: int, end: int) -> list[Segment] | None:
        ref = _reference(b, start, end)
        if ref is None or ref[0] not in sizes:
            return None
        digest = ref[0]
        size = sizes[digest]
        view = memoryview(b)
        out: list[Segment] = []
        placed = False
        copied = start
        for number, _wire, field_start, _p, field_end in _fields(b, start, end):
            if number in (_EXTERNAL_DATA, _DATA_LOCATION) or (not placed and number > _RAW_DATA):
                out.append(view[copied:field_start])
                copied = field_start
                if not placed and number > _RAW_DATA:
                    out.append(encode_varint((_RAW_DATA << 3) | 2) + encode_varint(size))
                    out.append(BlobRef(digest, size))
                    placed = True
                if number in (_EXTERNAL_DATA, _DATA_LOCATION):
                    copied = field_end
        out.append(view[copied:end])
        if not placed:
            out.append(encode_varint((_RAW_DATA << 3) | 2) + encode_varint(size))
            out.append(BlobRef(digest, size))
        return out

    segments = _rewrite(buf, 0, len(buf), onnx.ModelProto.DESCRIPTOR.full_name, tensor)
    return [memoryview(buf)] if segments is None else segments


def segments_size(segments: list[Segment]) -> int:
    return _size(segments)


def skeleton(buf, payloads: list[tuple[Payload, str]]) -> tuple[Iterator[memoryview], list[list]]:
    """The original bytes without the payloads (buffers to store as one blob), and where each
    payload goes back: [[offset in the skeleton, digest, length], ...] — what rebuilds the
    original byte for byte (`source_segments`)."""
    view = memoryview(buf)
    cuts = []
    taken = 0
    for p, digest in payloads:
        cuts.append([p.start - taken, digest, p.end - p.start])
        taken += p.end - p.start

    def parts() -> Iterator[memoryview]:
        pos = 0
        for p, _digest in payloads:
            yield view[pos : p.start]
            pos = p.end
        yield view[pos:]

    return parts(), cuts


@dataclass(frozen=True)
class SkeletonRange:
    """Bytes of the stored skeleton blob: [start, end)."""

    digest: str
    start: int
    end: int


def source_segments(recipe: dict) -> list[SkeletonRange | BlobRef]:
    """The uploaded bytes as ranges of the skeleton and whole tensor blobs, in order."""
    out: list[SkeletonRange | BlobRef] = []
    pos = 0
    for offset, digest, length in recipe["cuts"]:
        if offset > pos:
            out.append(SkeletonRange(recipe["skeleton"], pos, offset))
        out.append(BlobRef(digest, length))
        pos = offset
    if recipe["skeleton_size"] > pos:
        out.append(SkeletonRange(recipe["skeleton"], pos, recipe["skeleton_size"]))
    return out


def split_model(
    model: onnx.ModelProto, digest_of: Callable[[bytes], str], min_bytes: int = SPLIT_MIN_BYTES
) -> tuple[bool, dict[str, int]]:
    """`split` on a parsed model, in place: its big inline tensors become references (their
    bytes stored by digest_of). (whether any did, every reference it holds: digest -> length).
    An edit's result is in memory already: walking its tensors (~0.1 s on 44k nodes) beats
    walking its bytes again (~1 s)."""
    from ..onnx_io.traverse import tensors

    changed = False
    refs: dict[str, int] = {}
    for t in tensors(model):
        if t.data_location == onnx.TensorProto.EXTERNAL or len(t.external_data):
            info = {e.key: e.value for e in t.external_data}
            location = info.get("location", "")
            if (
                t.data_location == onnx.TensorProto.EXTERNAL
                and location.startswith(TENSOR_PREFIX)
                and info.get("offset", "0") == "0"
            ):
                with contextlib.suppress(ValueError):
                    refs[location[len(TENSOR_PREFIX) :]] = int(info.get("length", "-1"))
            continue
        n = len(t.raw_data)
        if n < min_bytes or n == 0:
            continue
        digest = digest_of(t.raw_data)
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        t.external_data.add(key="location", value=TENSOR_PREFIX + digest)
        t.external_data.add(key="length", value=str(n))
        refs[digest] = n
        changed = True
    return changed, refs
