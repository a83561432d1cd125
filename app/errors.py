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
    ):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or []  # further causes, one line each (the page folds them)
        self.node = node  # the node the message is about, by its id in the revision asked of (the page links it)
        if status is not None:
            self.status = status


class NotFound(StudioError):
    status = 404


class Conflict(StudioError):
    status = 409


def stale_base(base: int, head: int) -> Conflict:
    """An edit, undo, redo or restore made from a revision that is no longer the head."""
    return Conflict(
        "stale_base", f"revision {base} is no longer current (the model is at revision {head}); reload and retry"
    )
