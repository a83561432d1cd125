"""Words in sentences the server says: counts ("1 node", "3 nodes"; the page's twin: lib/format.js
plural), lists of names, a name a request sent quoted cut short."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def a_or_an(word: str) -> str:
    """ "an Optional", "a Conv": the article an operator or a type name takes (by its first letter)."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def some_names(names: list[str], shown: int = 5) -> str:
    """ "'a', 'b', 'c' and 4 more": the first few names quoted, the rest counted."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(repr(n) for n in names[:shown]) + more


def quoted(text: str, limit: int = 200) -> str:
    """A name or address a request sent, as a message quotes it: cut short (a 100 KB address is
    not echoed whole)."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def closest(name: str, known, quote: bool = True) -> str:
    """ " (did you mean 'preds'?)" for the name of `known` nearest a mistyped `name`, else ""."""
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean {close[0]!r}?)" if quote else f" (did you mean {close[0]}?)"
