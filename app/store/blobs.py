"""Content-addressed blob storage: a blob's name is the SHA-256 of its bytes.

The interface the rest of the app uses (`Blobs`): put / put_stream / put_parts store bytes and
answer their digest; get / open / read_chunks / size read them; path gives a local file for what
needs one (memory maps, the helper process); digests / modified / remove / stray_temp_files serve
the collector. `BlobStore` is a folder; s3_blobs.S3BlobStore a bucket (with a local cache for path).
A blob that isn't there raises FileNotFoundError from every reading method."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

from ..errors import BlobMissing

CHUNK = 1 << 22


class Blobs(Protocol):
    """What the store needs of a blob store (BlobStore: a folder; S3BlobStore: a bucket)."""

    def put(self, data) -> str: ...
    def put_stream(self, stream, chunk: int = CHUNK) -> str: ...
    def put_parts(self, parts: Iterable) -> str: ...
    def get(self, digest: str) -> bytes: ...
    def open(self, digest: str) -> BinaryIO: ...
    def read_chunks(self, digest: str, chunk: int = CHUNK) -> Iterator[bytes]: ...
    def readable(self, digests: Iterable[str]) -> None: ...
    def path(self, digest: str) -> Path: ...
    def scratch(self) -> Path: ...
    def exists(self, digest: str) -> bool: ...
    def size(self, digest: str) -> int: ...
    def ping(self) -> None: ...
    def digests(self) -> Iterator[str]: ...
    def modified(self, digest: str) -> float: ...
    def remove(self, digest: str) -> None: ...
    def stray_temp_files(self) -> Iterator[Path]: ...
    def remove_strays(self, before: float) -> int: ...


SCRATCH = ".scratch"  # not a digest nor a 2-letter folder: no walk of the blobs meets it
# a scratch folder left by a killed process holds hard links that keep removed blobs' bytes on
# disk; one is removed once this much older than the collector's cutoff (a run with compare_to
# lasts up to two runs' wall clock, 2 x 300 s)
SCRATCH_SLACK_SECONDS = 3600.0


def remove_stale_scratch(root: Path, before: float) -> int:
    """Remove the scratch folders (and files) of a blob root older than `before` minus the
    slack; how many."""
    removed = 0
    with contextlib.suppress(FileNotFoundError):
        for entry in (root / SCRATCH).iterdir():
            with contextlib.suppress(FileNotFoundError):
                if file_time(entry) < before - SCRATCH_SLACK_SECONDS:
                    if entry.is_dir() and not entry.is_symlink():
                        shutil.rmtree(entry, ignore_errors=True)
                    else:
                        entry.unlink()
                    removed += 1
    return removed


def scratch_in(root: Path) -> Path:
    """The scratch folder of a blob root (made when missing)."""
    folder = root / SCRATCH
    folder.mkdir(exist_ok=True)
    return folder


def is_digest(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


# File times come from the kernel's coarse clock, up to a tick (4-10 ms) behind time.time(): a
# file written just after a collector took its cutoff could look older than the cutoff (a put's
# temp file was removed under it once, in a test collecting with no grace). A file counts as
# written up to this much after its time says.
FILE_TIME_SLACK = 0.05


def file_time(path: Path) -> float:
    """The latest time `path` may have been written (FILE_TIME_SLACK)."""
    return path.stat().st_mtime + FILE_TIME_SLACK


def remove_older(files: Iterable[Path], before: float) -> int:
    """Remove the files last written before `before`; how many."""
    removed = 0
    for path in files:
        with contextlib.suppress(FileNotFoundError):
            if file_time(path) < before:
                path.unlink()
                removed += 1
    return removed


class BlobStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, digest: str) -> Path:
        if not is_digest(digest):
            raise ValueError(f"not a blob digest: {digest!r}")
        return self.root / digest[:2] / digest

    def put(self, data) -> str:
        """Store bytes (or any buffer: a memoryview of a memory map is written without a copy)
        atomically; return their digest."""
        return self.put_parts([data])

    def put_stream(self, stream, chunk: int = CHUNK) -> str:
        """Store a file-like object's bytes without holding them in memory; return their digest."""
        return self.put_parts(iter(lambda: stream.read(chunk), b""))

    def put_parts(self, parts: Iterable) -> str:
        """Store the concatenation of buffers (temp file, fsync, rename); return its digest."""
        h = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                for part in parts:
                    h.update(part)
                    f.write(part)
                f.flush()
                os.fsync(f.fileno())
            path = self._path(h.hexdigest())
            path.parent.mkdir(parents=True, exist_ok=True)
            # also when the blob is there: its time is fresh again (the collector spares it), and
            # a collector removing it meanwhile can't leave this put without its file
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return h.hexdigest()

    @contextlib.contextmanager
    def _reading(self, digest: str) -> Iterator[None]:
        """A blob that isn't there: BlobMissing, named (a FileNotFoundError still)."""
        try:
            yield
        except FileNotFoundError:
            raise BlobMissing(digest, "the data folder's blobs") from None

    def get(self, digest: str) -> bytes:
        with self._reading(digest):
            return self._path(digest).read_bytes()

    def open(self, digest: str) -> BinaryIO:
        with self._reading(digest):
            return open(self._path(digest), "rb")

    def readable(self, digests: Iterable[str]) -> None:
        """Raise now (BlobMissing) what reading these would raise midway, past a response's headers."""
        for digest in digests:
            self.size(digest)

    def read_chunks(self, digest: str, chunk: int = CHUNK) -> Iterator[bytes]:
        with self.open(digest) as f:
            while block := f.read(chunk):
                yield block

    def path(self, digest: str) -> Path:
        """A local file holding the blob's bytes."""
        return self._path(digest)

    def scratch(self) -> Path:
        """A folder for a request's temporary files on the blobs' own file system: a hard link
        there to a blob's file (path()) shares its bytes (a run's weights, runtime_check)."""
        return scratch_in(self.root)

    def exists(self, digest: str) -> bool:
        return self._path(digest).is_file()

    def size(self, digest: str) -> int:
        with self._reading(digest):
            return self._path(digest).stat().st_size

    def ping(self) -> None:
        """Raise unless blobs can be stored here (the folder is there and writable)."""
        if not self.root.is_dir():
            raise OSError(f"{self.root} is missing")
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise OSError(f"{self.root} is not writable")

    # --- for the collector ----------------------------------------------------------
    def digests(self) -> Iterator[str]:
        for sub in self.root.iterdir():
            if sub.is_dir() and len(sub.name) == 2:
                for f in sub.iterdir():
                    if is_digest(f.name):
                        yield f.name

    def modified(self, digest: str) -> float:
        """When the blob was last stored (put again counts): the collector spares fresh ones."""
        return file_time(self._path(digest))

    def remove(self, digest: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(digest).unlink()

    def stray_temp_files(self) -> Iterator[Path]:
        """Temp files of puts that a killed process left behind."""
        yield from self.root.glob(".tmp-*")

    def remove_strays(self, before: float) -> int:
        """Remove what puts cut short before `before` left (their temp files), and stale scratch
        folders; how many."""
        return remove_older(self.stray_temp_files(), before) + remove_stale_scratch(self.root, before)
