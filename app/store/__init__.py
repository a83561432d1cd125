"""Models and their revisions: an index (SQLite) over content-addressed blobs (a folder)."""

from pathlib import Path

from .blobs import BlobStore
from .index import SqlIndex, SqliteIndex
from .records import ModelRecord, Revision
from .store import Store
from .wire import SPLIT_MIN_BYTES


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
    """The store the app's configuration names: DATABASE_URL the index (default: SQLite under
    DATA_DIR), the blob folder under DATA_DIR; STORE_SPLIT_MIN_BYTES, the size from which a
    tensor is a blob of its own."""
    data_dir = Path(config["DATA_DIR"])
    data_dir.mkdir(parents=True, exist_ok=True)
    index = open_index(config.get("DATABASE_URL"), data_dir)
    where = config.get("DATABASE_URL") or str(data_dir.resolve())
    split = config.get("STORE_SPLIT_MIN_BYTES", SPLIT_MIN_BYTES)
    return Store(index, BlobStore(data_dir / "blobs"), where, split)


__all__ = ["BlobStore", "ModelRecord", "Revision", "SqlIndex", "SqliteIndex", "Store", "open_index", "open_store"]
