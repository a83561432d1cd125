"""What is judged when a batch's ops are all done, not after each: checks that hold for the
result (set auto_pad, then delete pads) and change lines a later op may still make untrue (a
"still hard-coded" warning about a constant the same batch then replaces)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import StudioError

_pending: ContextVar[list[Callable[[], None]] | None] = ContextVar("batch_end", default=None)


class LateLine:
    """A change line an op returns, written when the batch is done."""

    def __init__(self, write: Callable[[], str]):
        self.write = write

    def __str__(self) -> str:
        return self.write()


@contextmanager
def batch_end(stored_past: list[str] | None = None) -> Iterator[None]:
    """Run the checks the batch's ops left for its end, when they all succeeded. With
    `stored_past` (allow_invalid), a check's refusal of the result ("invalid_result") is
    listed there instead of raised."""
    token = _pending.set([])
    try:
        yield
        for check in _pending.get() or []:
            try:
                check()
            except StudioError as exc:
                if stored_past is None or exc.code != "invalid_result":
                    raise
                stored_past.append(exc.message)
    finally:
        _pending.reset(token)


def at_batch_end(check: Callable[[], None]) -> None:
    """Run `check` when the batch is done (at once for an op applied on its own)."""
    pending = _pending.get()
    if pending is None:
        check()
    else:
        pending.append(check)
