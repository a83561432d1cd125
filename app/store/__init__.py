"""Models and their revisions: an index (SQLite) over content-addressed blobs (a folder, or an
S3 bucket when BLOB_URL names one)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from .blobs import Blobs, BlobStore
from .index import SqlIndex, SqliteIndex
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


def open_index(url: str | None, data_dir: Path) -> SqlIndex:
    """The index DATABASE_URL names: sqlite:///PATH (default: DATA_DIR/index.sqlite3) or
    postgresql://USER:PASS@HOST:PORT/DB."""
    if not url:
        return SqliteIndex(data_dir / "index.sqlite3")
    if url.startswith("sqlite:///"):
        return SqliteIndex(Path(url.removeprefix("sqlite:///")))
    if url.startswith(("postgresql://", "postgres://")):
        from .pg_index import PostgresIndex

        return PostgresIndex(url)
    raise ValueError(f"database URL {url!r}: use sqlite:///PATH or postgresql://USER:PASS@HOST:PORT/DB")


def open_store(config) -> Store:
    """The store the app's configuration names: DATABASE_URL the index (default: SQLite in
    DATA_DIR); BLOB_URL the blobs (default: a folder in DATA_DIR; s3://BUCKET/PREFIX: an S3
    bucket, its local cache in DATA_DIR/blob-cache, at most BLOB_CACHE_BYTES);
    STORE_SPLIT_MIN_BYTES, the size from which a tensor is a blob of its own."""
    data_dir = Path(config["DATA_DIR"])
    data_dir.mkdir(parents=True, exist_ok=True)
    index = open_index(config.get("DATABASE_URL"), data_dir)
    url = config.get("BLOB_URL")
    blobs: Blobs
    if url:
        from .s3_blobs import DEFAULT_CACHE_BYTES, S3BlobStore

        bucket, prefix = parse_blob_url(url)
        blobs = S3BlobStore(
            bucket, prefix, data_dir / "blob-cache", config.get("BLOB_CACHE_BYTES") or DEFAULT_CACHE_BYTES
        )
    else:
        blobs = BlobStore(data_dir / "blobs")
    where = config.get("DATABASE_URL") or str(data_dir.resolve())
    split = config.get("STORE_SPLIT_MIN_BYTES", SPLIT_MIN_BYTES)
    return Store(index, blobs, where, split)


__all__ = [
    "BlobStore",
    "Blobs",
    "ModelRecord",
    "Revision",
    "SqlIndex",
    "SqliteIndex",
    "Store",
    "open_index",
    "open_store",
    "parse_blob_url",
]
