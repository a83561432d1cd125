"""Models and their revisions: immutable content-addressed blobs plus a SQLite index."""
from .blobs import BlobStore
from .index import Store, Revision, ModelRecord

__all__ = ["BlobStore", "Store", "Revision", "ModelRecord"]
