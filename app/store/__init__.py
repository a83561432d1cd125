"""Models and their revisions: an index (SQLite) over content-addressed blobs (a folder, or an
S3 bucket when BLOB_URL names one)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from .blobs import Blobs, BlobStore
from .index import SqliteIndex
from .records import ModelRecord, Revision
from .store import Store
from .wire import SPLIT_MIN_BYTES

_BUCKET = re.compile(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]")


def parse_blob_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of `s3://BUCKET/PREFIX` (the prefix may be empty); ValueError otherwise."""
    parts = urlsplit(url)
    prefix = parts.path.strip("/")
    if (
        parts.scheme != "s3"
        or not _BUCKET.fullmatch(parts.netloc)
        or parts.query
        or parts.fragment
        or "//" in prefix
        or any(p in (".", "..") for p in prefix.split("/"))
    ):
        raise ValueError(f"BLOB_URL {url!r} is not s3://BUCKET/PREFIX")
    return parts.netloc, prefix


def open_store(config) -> Store:
    """The store the app's configuration names: DATA_DIR holds the SQLite index and, unless
    BLOB_URL names an S3 bucket (s3://BUCKET/PREFIX; its local cache in DATA_DIR/blob-cache, at
    most BLOB_CACHE_BYTES), the blob folder; STORE_SPLIT_MIN_BYTES, the size from which a tensor
    is a blob of its own."""
    data_dir = Path(config["DATA_DIR"])
    split_min_bytes = config.get("STORE_SPLIT_MIN_BYTES", SPLIT_MIN_BYTES)
    url = config.get("BLOB_URL")
    if not url:
        return Store.in_folder(data_dir, split_min_bytes)
    from .s3_blobs import DEFAULT_CACHE_BYTES, S3BlobStore

    bucket, prefix = parse_blob_url(url)
    data_dir.mkdir(parents=True, exist_ok=True)
    cache_bytes = config.get("BLOB_CACHE_BYTES") or DEFAULT_CACHE_BYTES
    blobs = S3BlobStore(bucket, prefix, data_dir / "blob-cache", cache_bytes)
    return Store(SqliteIndex(data_dir / "index.sqlite3"), blobs, str(data_dir.resolve()), split_min_bytes)


__all__ = ["BlobStore", "Blobs", "ModelRecord", "Revision", "SqliteIndex", "Store", "open_store", "parse_blob_url"]
