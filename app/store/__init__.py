"""Models and their revisions: an index (SQLite) over content-addressed blobs (a folder)."""

from pathlib import Path

from .blobs import BlobStore
from .index import SqliteIndex
from .records import ModelRecord, Revision
from .store import Store
from .wire import SPLIT_MIN_BYTES


def open_store(config) -> Store:
    """The store the app's configuration names: DATA_DIR holds the default pair (SQLite index,
    blob folder); STORE_SPLIT_MIN_BYTES, the size from which a tensor is a blob of its own."""
    return Store.in_folder(Path(config["DATA_DIR"]), config.get("STORE_SPLIT_MIN_BYTES", SPLIT_MIN_BYTES))


__all__ = ["BlobStore", "ModelRecord", "Revision", "SqliteIndex", "Store", "open_store"]
