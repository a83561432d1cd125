"""Models and their revisions: immutable content-addressed blobs plus a SQLite index."""

from .blobs import BlobStore
from .index import ModelRecord, Revision, Store

__all__ = ["BlobStore", "ModelRecord", "Revision", "Store"]
