"""Writing a revision out in another layout: external data inlined, or weights moved out."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

import onnx
from onnx.external_data_helper import _get_all_tensors, convert_model_to_external_data

from ..errors import StudioError
from .limits import PROTOBUF_LIMIT
from .load import parse_model

EXTERNAL_THRESHOLD = 1024  # bytes; smaller tensors stay inside the .onnx


def _inline(model: onnx.ModelProto, read) -> None:
    for t in _get_all_tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        length = int(info["length"]) if info.get("length") else None
        t.raw_data = read(info.get("location", ""), int(info.get("offset", 0) or 0), length)
        del t.external_data[:]
        t.ClearField("data_location")  # as if it had never been external


def embedded(data: bytes, read) -> bytes:
    """The model as one file: external data read (via `read(location, offset, length)`) and inlined."""
    model = parse_model(data)
    _inline(model, read)
    if model.ByteSize() >= PROTOBUF_LIMIT:
        raise StudioError(
            "too_large",
            "the model with its weights inlined is over protobuf's 2 GiB limit; download it with external data",
            422,
        )
    return model.SerializeToString()


def with_external_data(data: bytes, read, name: str) -> bytes:
    """A .zip holding `name` and `<stem>.data` with every tensor over 1 KiB moved out of the .onnx."""
    model = parse_model(data)
    _inline(model, read)
    stem = name[:-5] if name.endswith(".onnx") else name
    convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location=f"{stem}.data", size_threshold=EXTERNAL_THRESHOLD
    )
    with tempfile.TemporaryDirectory() as tmp:
        onnx.save_model(model, Path(tmp) / name)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
            for f in sorted(Path(tmp).iterdir()):
                z.write(f, f.name)
    return buf.getvalue()
