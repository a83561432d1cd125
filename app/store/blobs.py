"""Content-addressed blob storage: a blob's name is the SHA-256 of its bytes."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


class BlobStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a blob digest: {digest!r}")
        return self.root / digest[:2] / digest

    def put(self, data: bytes) -> str:
        """Store bytes atomically (temp file, fsync, rename); return their digest."""
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if path.exists():
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return digest

    def put_stream(self, stream, chunk: int = 1 << 22) -> str:
        """Store a file-like object's bytes without holding them in memory; return their digest."""
        h = hashlib.sha256()
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                while block := stream.read(chunk):
                    h.update(block)
                    f.write(block)
                f.flush()
                os.fsync(f.fileno())
            path = self._path(h.hexdigest())
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                os.unlink(tmp)
            else:
                os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return h.hexdigest()

    def get(self, digest: str) -> bytes:
        return self._path(digest).read_bytes()

    def path(self, digest: str) -> Path:
        return self._path(digest)

    def size(self, digest: str) -> int:
        return self._path(digest).stat().st_size
