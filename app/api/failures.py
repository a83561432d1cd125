"""onnx's crashes and blow-ups on a content, remembered in the store as derived data: no worker
of a team's server, and no restart, runs the helper on that content again (offload.py keeps
them per process, and asks here when it has none)."""

from __future__ import annotations

from flask import has_app_context

from ..store.blobs import is_digest
from . import derived
from .documents import store


def _key(job: str, key: str) -> tuple[str, str]:
    """(derived key, its source): collected with the blob the content key names, if it names one
    (a revision's graph); a failure on content never stored goes at the next collection."""
    source = key[:64] if is_digest(key[:64]) else key
    return derived.key("failure", source, f"{job}:{key}"), source


class StoreFailures:
    def get(self, job: str, key: str) -> str | None:
        if not has_app_context():  # a thread outside any app: this process's memory only
            return None
        data = store().derived(_key(job, key)[0])
        return None if data is None else data.decode()

    def put(self, job: str, key: str, message: str) -> None:
        if has_app_context():
            k, source = _key(job, key)
            store().set_derived(k, message.encode(), source)
