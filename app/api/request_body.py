"""A request's JSON body as the object an endpoint expects (size and depth are bounded before
this, by errors.py)."""

from __future__ import annotations

from flask import request

from ..errors import StudioError


def json_object(shape: str) -> dict:
    """The body as a JSON object, else a 400 saying what to send (`shape`: its outline)."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise StudioError("bad_request", f"send a JSON object {shape}")
    return body
