"""The uploaded files an edit's ops name ({"npy": DIGEST} an array, {"onnx": DIGEST} a model to
compose): a recipe carries them, and the store keeps them as long as a revision's ops name them
(QA40 #3: a .npy collected ten minutes after its upload made every recipe through that edit 404)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

BLOB_KEYS = ("npy", "onnx")


def blob_refs(ops: Any) -> Iterator[str]:
    """The digests of the uploaded files that ops name ({"npy" | "onnx": DIGEST} anywhere in them)."""
    if isinstance(ops, dict):
        for key in BLOB_KEYS:
            if isinstance(ops.get(key), str):
                yield ops[key]
        for value in ops.values():
            yield from blob_refs(value)
    elif isinstance(ops, list):
        for value in ops:
            yield from blob_refs(value)
