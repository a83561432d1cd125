"""Who a revision is by: the person a request comes from (the name given at sign-in, or a
script's X-Studio-Author header), set by the web layer for the request's length (web/auth.py)
and written by the index with each revision it stores — so every way of storing one (upload,
edit, recipe, restore, attached files) records it without each passing it down. Attribution
among people who share the server's token, not proof of identity: anyone holding the token
may sign in under any name."""

from __future__ import annotations

import re
from contextvars import ContextVar, Token

MAX_AUTHOR = 60  # characters: a person's name, not a paragraph
_author: ContextVar[str | None] = ContextVar("author", default=None)
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def clean_author(text: str | None) -> str | None:
    """A name as stored and shown: control and direction characters out, spaces collapsed, at
    most MAX_AUTHOR characters; None for nothing left."""
    if not text:
        return None
    spaced = " ".join(text.split())  # a tab or line break is a space
    name = " ".join(_UNPRINTABLE.sub("", spaced).split())[:MAX_AUTHOR].strip()
    return name or None


def current_author() -> str | None:
    """The name the request under way acts as (None: not said, or outside a request)."""
    return _author.get()


def act_as(name: str | None) -> Token:
    """Act as `name` until reset(token) (a request's end)."""
    return _author.set(clean_author(name))


def stop_acting(token: Token) -> None:
    _author.reset(token)
