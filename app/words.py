"""Counts in sentences the server says: "1 node", "3 nodes" (the page's twin: lib/format.js plural)."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"
