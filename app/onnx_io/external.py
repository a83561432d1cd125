"""External data: where a tensor's bytes live, safely.

A tensor's `location` is looked up among the files uploaded (or linked) with its model, by a
normalised relative path; it is never opened as a path of its own, so "../../etc/passwd" or an
absolute path simply names no file.
"""

from __future__ import annotations

import math
import posixpath
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx

from ..errors import StudioError
from ..words import plural
from .limits import PROTOBUF_LIMIT
from .load import parse_model
from .model_names import model_name
from .sizes import data_bytes, size_text
from .traverse import tensors
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
    """The external data files of one revision; `path_of(entry)` turns a stored entry into a Path,
    `size_of(entry)` gives its size (None when it can't be told) without fetching it."""

    def __init__(
        self, entries: dict, path_of: Callable[[object], Path], size_of: Callable[[object], int | None] | None = None
    ):
        self.entries = entries
        self.path_of = path_of
        self.size_of = size_of

    def key(self, location: str) -> str | None:
        """The entry a tensor's location names, or None when no file of the model is it."""
        if location.startswith(TENSOR_PREFIX):
            return location if location in self.entries else None
        key = normalize_location(location)
        if key is None:
            return None
        if key in self.entries:
            return key
        # a browser sends bare file names: accept "w.bin" for "weights/w.bin" when unambiguous
        same = [
            k
            for k in self.entries
            if posixpath.basename(k) == posixpath.basename(key) and not k.startswith(TENSOR_PREFIX)
        ]
        return same[0] if len(same) == 1 else None

    def size(self, key: str) -> int | None:
        return self.size_of(self.entries[key]) if self.size_of else None

    def add(self, location: str, entry: object) -> None:
        """A file made meanwhile (a tool's result stored as a blob): the next op of the batch
        reading the same tensors finds it."""
        self.entries[location] = entry

    def path(self, location: str) -> Path:
        key = self.key(location)
        if key is None:
            raise StudioError(
                "external_data_missing", f"external data file {location!r} was not uploaded with this model", 422
            )
        path = self.path_of(self.entries[key])
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


@dataclass
class DataRef:
    """Where one tensor's bytes are in an external data file."""

    tensor: str
    offset: int
    length: int | None  # None: the file's rest (a string tensor, an unknown type)


def data_refs(model: onnx.ModelProto, main_only: bool = False) -> dict[str, list[DataRef]]:
    """location -> the tensors whose bytes that external data file holds, over every graph and
    function (the main graph's initializers only, on ask: where a model's weights almost always are)."""
    out: dict[str, list[DataRef]] = {}
    for t in model.graph.initializer if main_only else tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        if "location" not in info:
            continue
        try:
            offset = int(info.get("offset") or 0)
            length = int(info["length"]) if info.get("length") else data_bytes(t.data_type, math.prod(t.dims))
        except ValueError:
            offset, length = 0, None  # not numbers: the checker says so; here, the file is "needed"
        out.setdefault(info["location"], []).append(DataRef(t.name, offset, length))
    return out


def missing_data(model: onnx.ModelProto, files: ExternalFiles) -> list[dict]:
    """The external data the model's tensors name that isn't among its files, or that a file
    holds too few bytes of: [{"location", "tensors" (count), "names" (the first few), "bytes"
    (their data's), "file_bytes" (the least the file must hold), "reason"}]. The store's own tensor blobs are not looked at."""
    out = []
    named = data_refs(model)
    unnamed = _unnamed_files(named, files)
    for location, refs in sorted(named.items()):
        if location.startswith(TENSOR_PREFIX):
            continue
        end = max((r.offset + (r.length or 0) for r in refs), default=0)
        key = files.key(location)
        if normalize_location(location) is None:
            reason = "a place outside the model's folder, where no file is read"
        elif key is None:
            reason = "not uploaded with this model" + _maybe_this(unnamed, end, files)
        else:
            size = files.size(key)
            if size is None or size >= end:
                continue
            # the tensors past its end only (QA40 #9: 642 of a truncated file's said missing, 304 there)
            refs = [r for r in refs if r.offset + (r.length or 0) > size]
            past = refs[0] if len(refs) == 1 else None
            reason = (
                f"holds {size_text(size)}; {past.tensor} needs bytes {past.offset:,} to {past.offset + (past.length or 0):,}"
                if past is not None
                else f"holds {size_text(size)}; its tensors need {size_text(end)}"
            )
        names = [r.tensor for r in refs]
        out.append(
            {
                "location": location,
                "tensors": len(names),
                "names": names[:8],
                "bytes": sum(r.length or 0 for r in refs),
                "file_bytes": end,  # the least a file must hold: the end of the last tensor in it
                "reason": reason,
            }
        )
    return out


def _unnamed_files(named: dict, files: ExternalFiles) -> list[str]:
    """The uploaded data files no tensor names (one uploaded under another name, say)."""
    used = {k for loc in named if (k := files.key(loc)) is not None}
    return sorted(k for k in files.entries if not k.startswith(TENSOR_PREFIX) and k not in used)


def _maybe_this(unnamed: list[str], end: int, files: ExternalFiles) -> str:
    """ ": 'wrongname.data', uploaded and named by no tensor, holds enough: is it this file?" (QA40 #8)."""
    fits = [k for k in unnamed if (files.size(k) or 0) >= end]
    if not fits:
        return ""
    return f"; {fits[0]!r}, uploaded with it and named by no tensor, holds enough bytes: is it this file under another name?"


def missing_words(missing: list[dict]) -> str:
    """One line for people: what missing_data found, and what to do."""
    first = missing[0]
    held = ", ".join(first["names"][:3]) + (f" and {first['tensors'] - 3} more" if first["tensors"] > 3 else "")
    n = len(missing) - 1
    more = f" (and {plural(n, 'more file', 'more files')})" if n else ""
    return (
        f"the data of {held} is in {first['location']!r}, {first['reason']}{more}; "
        "attach it (model panel, Validation) or upload the model with its data files"
    )


def files_in_use(model: onnx.ModelProto, files: ExternalFiles) -> set[str]:
    """The keys of the model's external data files that some tensor names (the store's tensor
    blobs left out). The main graph's initializers are looked at first: when they name every
    file, the walk through subgraphs, attributes and functions (~0.1 s on 44k nodes) is skipped."""
    wanted = {k for k in files.entries if not k.startswith(TENSOR_PREFIX)}
    used: set[str] = set()
    for main_only in (True, False):
        used = {key for loc in data_refs(model, main_only) if (key := files.key(loc)) is not None and key in wanted}
        if used == wanted:
            break
    return used


def unpack_zip(stream, name: str, budget: ZipBudget | None = None, member: str | None = None):
    """(model file name, model bytes, {relative location: member stream}, the members left out:
    archive_members.left_out) from a .zip holding one .onnx file and its external data files
    (paths relative to the .onnx's folder), or several and `member` naming the one to open
    (archive_members.py). What the members decompress to is counted as they are read
    (zip_reading.py)."""
    from .archive_members import its_own_files, left_out, model_key, pick_model  # they read this module's helpers

    budget = budget or ZipBudget(name)
    try:
        z = zipfile.ZipFile(stream)
        infos = z.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise StudioError("bad_zip", f"{name} is not a readable zip archive: {exc}") from None
    # a path leaving the archive (../../evil.onnx) is none of its files, as in a tar (QA33 #5)
    members = [m for m in infos if not m.is_dir() and normalize_location(m.filename) is not None]
    skipped = [
        left_out(m.filename, "a path leaving the archive")
        for m in infos
        if not m.is_dir() and normalize_location(m.filename) is None
    ]
    if len(members) > MAX_ZIP_MEMBERS:
        raise StudioError("bad_zip", f"{name} holds {len(members)} files; that is more than a model has")
    models = [m for m in members if m.filename.lower().endswith(".onnx")]
    # one of several is named by its path: only a model at a clean path inside the archive can be
    named = {key: m for m in models if (key := model_key(m.filename)) is not None} if len(models) > 1 or member else {}
    if not models or (len(models) > 1 and not named):
        raise StudioError("bad_zip", f"{name} must hold exactly one .onnx file (it holds {len(models)})")
    model_info = models[0] if len(models) == 1 and member is None else pick_model(name, named, member)
    folder = posixpath.dirname(model_info.filename)
    data = BoundedMember(z, model_info, budget).read_all(MAX_MODEL_BYTES)
    model = parse_model(data, posixpath.basename(model_info.filename))
    beside = {}
    for m in members:
        if m is model_info:
            continue
        rel = posixpath.relpath(m.filename, folder) if folder else m.filename
        key = normalize_location(rel)
        if key is None or any(c in key for c in "\r\n"):
            continue  # outside the model's folder (or a name no tensor can give): no tensor may name it
        beside[key] = m
    if member is not None:
        beside = its_own_files(model, beside)
    external = {key: BoundedMember(z, m, budget) for key, m in beside.items()}
    return model_name(model_info.filename, name), data, external, skipped
