"""Counts in sentences the server says: "1 node", "3 nodes" (the page's twin: lib/format.js plural)."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def some_names(names: list[str], shown: int = 5) -> str:
    """ "'a', 'b', 'c' and 4 more": the first few names quoted, the rest counted."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(repr(n) for n in names[:shown]) + more
