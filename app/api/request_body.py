"""A request's JSON body as the object an endpoint expects (size and depth are bounded before
this, by errors.py)."""

from __future__ import annotations

from flask import request

from ..errors import StudioError
from ..words import closest, quoted


def json_object(shape: str, fields: tuple[str, ...] | None = None) -> dict:
    """The body as a JSON object, else a 400 saying what to send (`shape`: its outline).
    `fields`: the only top-level fields it may hold."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise StudioError("bad_request", f"send a JSON object {shape}")
    if fields is not None:
        refuse_unknown_fields(body, fields)
    return body


def refuse_unknown_fields(body: dict, fields: tuple[str, ...]) -> None:
    """400 naming a field the endpoint doesn't know, and the known one nearest it: a typo'd flag
    (`allowInvalid`) ignored would do what the script didn't ask for, unsaid (QA33 #6)."""
    for key in body:
        if key not in fields:
            hint = closest(key, fields) or f" (fields: {', '.join(fields)})"
            raise StudioError("bad_field", f"unexpected field {quoted(key, 80)}{hint}")
