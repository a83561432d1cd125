"""The error every layer raises for bad input; the API turns it into a 4xx JSON answer."""

from __future__ import annotations


class StudioError(Exception):
    """A request the server refuses, with an HTTP status, a stable code and a plain message."""

    status = 400

    def __init__(
        self,
        code: str,
        message: str,
        status: int | None = None,
        details: list[str] | None = None,
        node: str | None = None,
        fix: dict | None = None,
    ):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or []  # further causes, one line each (the page folds them)
        self.node = node  # the node the message is about, by its id in the revision asked of (the page links it)
        self.fix = fix  # {"label", "ops"}: the batch that would be accepted instead (outputs_follow.py)
        self.head: int | None = None  # a stale base's: the revision the model is at
        self.models: list[str] | None = None  # an archive's models, one to name in `member` (archive_members.py)
        if status is not None:
            self.status = status


class NotFound(StudioError):
    status = 404


class Conflict(StudioError):
    status = 409


class BlobMissing(StudioError, FileNotFoundError):
    """A blob the index names that the blob store doesn't have: the store's own damage (a bucket
    restored from a backup older than the index, a file removed by hand), not the request's. Is
    a FileNotFoundError, as every blob store's reads raise for a blob that isn't there."""

    status = 500

    def __init__(self, digest: str, where: str):
        super().__init__(
            "blob_missing",
            f"data this needs is missing from the blob store: no blob {digest} in {where}"
            " (was the blob store restored from a backup older than the index?)",
        )


def stale_base(base: int, head: int) -> Conflict:
    """An edit, undo, redo or restore made from a revision that is no longer the head."""
    conflict = Conflict(
        "stale_base", f"revision {base} is no longer current (the model is at revision {head}); reload and retry"
    )
    conflict.head = head  # in the answer too: a script rebases on it without parsing the message
    return conflict


class StoreUnavailable(StudioError):
    """The model index or the blob store can't be reached (its server down, hung or restarting):
    503, a state of the server a client may retry after, not a fault of the request. Raised where
    the store meets its database's or S3's own connection errors (store/pg_index.py, store/s3_blobs.py)."""

    status = 503

    def __init__(self, store: str, reason: str, refused: bool = False):
        reason = reason.strip().splitlines()[0] if reason.strip() else "no answer"  # drivers add hint lines
        # refused: it answers, and turns every request down (a bucket that doesn't exist, credentials it won't take)
        state = "refuses requests" if refused else "can't be reached"
        super().__init__("store_unavailable", f"the {store} {state}: {reason}")
        self.store = store  # what can't be reached: "model index (PostgreSQL)", "blob store (S3)"
        self.refused = refused
        self.reason = reason
