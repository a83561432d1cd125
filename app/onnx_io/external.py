"""External data: where a tensor's bytes live, safely.

A tensor's `location` is looked up among the files uploaded (or linked) with its model, by a
normalised relative path; it is never opened as a path of its own, so "../../etc/passwd" or an
absolute path simply names no file.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Callable
from pathlib import Path

from ..errors import StudioError
from .limits import PROTOBUF_LIMIT
from .load import parse_model
from .model_names import model_name
from .zip_reading import BoundedMember, ZipBudget

MAX_ZIP_MEMBERS = 10_000
MAX_MODEL_BYTES = PROTOBUF_LIMIT  # one protobuf message
# where the store keeps a tensor it took out of a model (store/wire.py): "studio:tensor/<digest>".
# No location of a user's model can name it: normalize_location refuses a ":" in the first part.
TENSOR_PREFIX = "studio:tensor/"


def normalize_location(location: str) -> str | None:
    """A clean relative POSIX path, or None when the location tries to leave the model's folder."""
    if not location or "\\" in location or "\0" in location or location.startswith("/"):
        return None
    norm = posixpath.normpath(location)
    if norm.startswith("../") or norm == ".." or norm == "." or ":" in norm.split("/")[0]:
        return None
    return norm


class ExternalFiles:
    """The external data files of one revision; `path_of(entry)` turns a stored entry into a Path."""

    def __init__(self, entries: dict, path_of: Callable[[object], Path]):
        self.entries = entries
        self.path_of = path_of

    def path(self, location: str) -> Path:
        ours = location.startswith(TENSOR_PREFIX)
        key = location if ours else normalize_location(location)
        entry = self.entries.get(key) if key else None
        if entry is None and key and not ours:
            # a browser sends bare file names: accept "w.bin" for "weights/w.bin" when unambiguous
            same = [
                e
                for k, e in self.entries.items()
                if posixpath.basename(k) == posixpath.basename(key) and not k.startswith(TENSOR_PREFIX)
            ]
            entry = same[0] if len(same) == 1 else None
        if entry is None:
            raise StudioError(
                "external_data_missing", f"external data file {location!r} was not uploaded with this model", 422
            )
        path = self.path_of(entry)
        if not path.is_file():
            raise StudioError("external_data_missing", f"external data file {location!r} is no longer at {path}", 422)
        return path

    def read(self, location: str, offset: int, length: int | None) -> bytes:
        with open(self.path(location), "rb") as f:
            f.seek(offset)
            data = f.read(length if length is not None else -1)
        if length is not None and len(data) != length:
            raise StudioError("external_data_short", f"{location!r} holds fewer bytes than the tensor needs", 422)
        return data

    __call__ = read  # a reader(location, offset, length), as tensor previews and save expect


def unpack_zip(stream, name: str, budget: ZipBudget | None = None):
    """(model file name, model bytes, {relative location: member stream}) from a .zip holding
    one .onnx file and its external data files (paths relative to the .onnx's folder). What the
    members decompress to is counted as they are read (zip_reading.py)."""
    budget = budget or ZipBudget(name)
    try:
        z = zipfile.ZipFile(stream)
        infos = z.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise StudioError("bad_zip", f"{name} is not a readable zip archive: {exc}") from None
    members = [m for m in infos if not m.is_dir()]
    if len(members) > MAX_ZIP_MEMBERS:
        raise StudioError("bad_zip", f"{name} holds {len(members)} files; that is more than a model has")
    models = [m for m in members if m.filename.lower().endswith(".onnx")]
    if len(models) != 1:
        raise StudioError("bad_zip", f"{name} must hold exactly one .onnx file (it holds {len(models)})")
    model_info = models[0]
    folder = posixpath.dirname(model_info.filename)
    data = BoundedMember(z, model_info, budget).read_all(MAX_MODEL_BYTES)
    parse_model(data, posixpath.basename(model_info.filename))
    external = {}
    for m in members:
        if m is model_info:
            continue
        rel = posixpath.relpath(m.filename, folder) if folder else m.filename
        key = normalize_location(rel)
        if key is None or any(c in key for c in "\r\n"):
            continue  # outside the model's folder (or a name no tensor can give): no tensor may name it
        external[key] = BoundedMember(z, m, budget)
    return model_name(model_info.filename, name), data, external
