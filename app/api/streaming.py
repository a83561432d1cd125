"""Answers streamed from an iterator of byte chunks (a revision rebuilt from its blobs), through
send_file, which writes the download headers (Content-Disposition for any name, ETag)."""

from __future__ import annotations

import io
from collections.abc import Iterator

from flask import Response, send_file


class ChunkReader(io.RawIOBase):
    """A read-only file over an iterator of byte chunks."""

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks = chunks
        self._left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._left:
            try:
                self._left = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._left))
        buffer[:n] = self._left[:n]
        self._left = self._left[n:]
        return n


def send_chunks(chunks: Iterator[bytes], size: int, name: str, etag: str | None = None) -> Response:
    """An attachment named `name` of `size` bytes, streamed from `chunks`."""
    resp = send_file(
        io.BufferedReader(ChunkReader(chunks), 1 << 20),
        mimetype="application/octet-stream",
        as_attachment=True,
        download_name=name,
        etag=etag or False,
    )
    resp.content_length = size
    return resp
