"""The external data files a download carries "as stored": each file as it came, but with the
bytes of weights an edit replaced or deleted zeroed (onnx_io/unread_data.py says why)."""

from __future__ import annotations

import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..onnx_io.sizes import size_text
from ..onnx_io.unread_data import Spans, read_spans, span_bytes, unread
from ..onnx_io.zip_writing import member
from .documents import external_reader, load, store

COPY_CHUNK = 1 << 20


@dataclass
class ShippedFile:
    name: str  # its location beside the .onnx
    path: Path  # where its bytes are
    zeroed: Spans  # ranges no tensor reads any more, shipped as zeros


def shipped_files(model_id: str, revision) -> list[ShippedFile]:
    """The revision's external data files, with what each must not carry of its old weights."""
    if not revision.external:
        return []
    s = store()
    files = [ShippedFile(name, s.external_path(entry), []) for name, entry in sorted(revision.external.items())]
    if revision.parent is None:
        return files  # an upload ships as it came
    by_rev = {r.rev: r for r in s.revisions(model_id)}
    now = read_spans(load(model_id, revision.rev)[2], external_reader(revision))
    for f in files:
        origin = _arrival(by_rev, revision, f.name)
        if origin.rev != revision.rev:
            before = read_spans(load(model_id, origin.rev)[2], external_reader(origin))
            f.zeroed = unread(before.get(f.name, []), now.get(f.name, []))
    return files


def old_weights_lines(base, edited, files, kept: dict) -> list[str]:
    """A line for each kept file in which the edit left old weight bytes no tensor reads."""
    before, now = read_spans(base, files), read_spans(edited, files)
    lines = []
    for name in sorted(kept):
        gone = span_bytes(unread(before.get(name, []), now.get(name, [])))
        if gone:
            lines.append(
                f"external data file {name!r} still holds {size_text(gone)} of old weights no tensor reads: "
                "the As stored download carries zeros there (Embedded or External data writes only what the model reads)"
            )
    return lines


def write_into(z: zipfile.ZipFile, f: ShippedFile, arcname: str) -> None:
    """Copy the file into the zip, its zeroed ranges as zeros."""
    size = f.path.stat().st_size
    with open(f.path, "rb") as src, z.open(member(z, arcname), "w", force_zip64=size >= 1 << 31) as dst:
        for start, end in f.zeroed:
            start, end = min(start, size), min(end, size)
            shutil.copyfileobj(_Slice(src, end=start), dst, COPY_CHUNK)
            _zeros(dst, end - start)
            src.seek(end)
        shutil.copyfileobj(src, dst, COPY_CHUNK)


def _arrival(by_rev: dict, revision, name: str):
    """The earliest revision in `revision`'s line that already held this very file: what its
    tensors read then is what the file was for."""
    entry, at = revision.external[name], revision
    while at.parent is not None and (parent := by_rev.get(at.parent)) and parent.external.get(name) == entry:
        at = parent
    return at


def _zeros(dst, n: int) -> None:
    block = bytes(min(n, COPY_CHUNK))
    while n > 0:
        dst.write(block[: min(n, len(block))])
        n -= len(block)


class _Slice:
    """A reader of `src` up to byte `end` (copyfileobj stops there)."""

    def __init__(self, src, end: int):
        self.src, self.end = src, end

    def read(self, n: int = -1) -> bytes:
        left = self.end - self.src.tell()
        if left <= 0:
            return b""
        return self.src.read(left if n < 0 else min(n, left))
