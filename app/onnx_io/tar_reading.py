"""Reading an uploaded .tar, .tar.gz or .tgz (how the model zoo ships its models: a folder with
the .onnx, its data files and test_data_set_N/) without trusting it.

The archive is read once, in order, as it streams in; each regular file is written to a scratch
folder under a name of our own (no path from the archive ever reaches the file system: links,
devices and paths leaving the archive are never made). What it unpacks to is counted as it is
written, against a total and against the compressed bytes read so far (a gzip of zeros is a
bomb: refused before it fills the disk)."""

from __future__ import annotations

import posixpath
import tarfile
import zlib
from pathlib import Path

from ..errors import StudioError
from .archive_members import left_out, model_key, pick_model
from .external import MAX_ZIP_MEMBERS, normalize_location
from .model_names import model_name

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz")
CHUNK = 1 << 20
SLACK = 64 << 20  # unpacked bytes allowed beyond the ratio (headers, a small file of zeros)


class _Counted:
    """The upload's stream, counting the bytes read from it (what the archive costs compressed)."""

    def __init__(self, stream):
        self.stream = stream
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.count += len(data)
        return data


def is_tar_name(name: str) -> bool:
    return name.lower().endswith(TAR_SUFFIXES)


def unpack_tar(
    stream, name: str, folder: Path, max_total: int, max_ratio: float, member: str | None = None
) -> tuple[str, Path, dict[str, Path], list[dict]]:
    """(the model's file name, its unpacked file, {path relative to the model's folder: unpacked
    file} of every other regular file inside that folder, the members left out: left_out) from a
    tar archive (compressed or not) holding exactly one .onnx, or several and `member` naming the
    one to open (archive_members.py)."""
    counted = _Counted(stream)
    unpacked: dict[str, Path] = {}
    skipped: list[dict] = []
    produced = 0
    try:
        with tarfile.open(fileobj=counted, mode="r|*") as tar:  # type: ignore[call-overload]  # any object with read()
            for entry in tar:
                if not entry.isfile():
                    if not entry.isdir():  # links, devices: never made
                        skipped.append(left_out(entry.name, "a link" if entry.issym() or entry.islnk() else "no file"))
                    continue
                key = normalize_location(entry.name)
                if key is None or any(c in key for c in "\r\n") or key in unpacked:
                    # outside the archive's root, or a name no tensor can give
                    skipped.append(
                        left_out(entry.name, "a path leaving the archive" if key is None else "no name a file can have")
                    )
                    continue
                if len(unpacked) >= MAX_ZIP_MEMBERS:
                    raise StudioError(
                        "bad_tar", f"{name} holds more than {MAX_ZIP_MEMBERS} files; that is more than a model has"
                    )
                source = tar.extractfile(entry)
                if source is None:
                    continue
                target = folder / f"member-{len(unpacked)}"
                with target.open("wb") as out:
                    while block := source.read(CHUNK):
                        produced += len(block)
                        if produced > max_total:
                            raise StudioError(
                                "tar_too_big",
                                f"{name} unpacks to more than {max_total:,} bytes (this server's limit)",
                                413,
                            )
                        if produced > SLACK + max_ratio * counted.count:
                            raise StudioError(
                                "tar_bomb",
                                f"{name} expands more than {max_ratio:g}x its compressed size; refused as a bomb",
                                413,
                            )
                        out.write(block)
                unpacked[key] = target
    except (tarfile.TarError, zlib.error, EOFError, OSError, ValueError) as exc:
        raise StudioError("bad_tar", f"{name} is not a readable tar archive: {exc}") from None
    models = {k: k for k in unpacked if model_key(k) is not None}
    if not models:
        raise StudioError("bad_tar", f"{name} must hold exactly one .onnx file (it holds 0)")
    model = pick_model(name, models, member)
    root = posixpath.dirname(model)
    beside = {}
    for key, path in unpacked.items():
        if key == model:
            continue
        rel = posixpath.relpath(key, root) if root else key
        if normalize_location(rel) is not None:
            beside[rel] = path  # files outside the model's folder: no tensor may name them
    return model_name(model, name), unpacked[model], beside, skipped
