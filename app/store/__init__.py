"""Models and their revisions: an index (SQLite) over content-addressed blobs (a folder)."""

from .blobs import BlobStore
from .index import SqliteIndex
from .records import ModelRecord, Revision
from .store import Store

__all__ = ["BlobStore", "ModelRecord", "Revision", "SqliteIndex", "Store"]
