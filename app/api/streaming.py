"""Answers streamed from an iterator of byte chunks (a revision rebuilt from its blobs), with the
download headers send_file writes (Content-Disposition for any name, ETag). The chunks go to
the socket as they come (MiBs each): through send_file's own file wrapper (8 KiB reads) a
415 MiB BERT downloaded at 0.42x the disk's copy speed, at 0.59x this way (bench/store_edits.py)."""

from __future__ import annotations

import io
from collections.abc import Iterator

from flask import Response, send_file


def send_chunks(chunks: Iterator[bytes], size: int, name: str, etag: str | None = None) -> Response:
    """An attachment named `name` of `size` bytes, streamed from `chunks`."""
    resp = send_file(
        io.BytesIO(),
        mimetype="application/octet-stream",
        as_attachment=True,
        download_name=name,
        etag=etag or False,
        conditional=False,
    )
    resp.response = chunks
    resp.content_length = size
    return resp
