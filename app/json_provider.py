"""Flask JSON through orjson: graph JSON of a 40,000-node model is tens of MB, where the stdlib
encoder alone takes about a second."""

from __future__ import annotations

import math
from typing import cast

import orjson
from flask import Response
from flask.json.provider import DefaultJSONProvider

from .errors import StudioError


class OrjsonProvider(DefaultJSONProvider):
    def dumps(self, obj, **kwargs) -> str:
        try:
            return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:  # a type orjson doesn't know (or an int past 64 bits): the stdlib path
            return super().dumps(obj, **kwargs)

    def loads(self, s, **kwargs):
        try:
            return super().loads(s, parse_float=_finite_float, **kwargs)
        except RecursionError:  # nested deeper than the parser's stack: bad input (a 400), not a crash
            raise ValueError("the JSON nests too deeply") from None

    def response(self, *args, **kwargs):
        obj = self._prepare_response_obj(args, kwargs)
        try:
            body = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:
            body = super().dumps(obj).encode()
        # _app is typed as the sans-IO App, whose Response takes no body; a Flask app's is the WSGI one
        return cast("type[Response]", self._app.response_class)(body, mimetype="application/json")


def _finite_float(text: str) -> float:
    """A JSON number as a float; one past any double (1e400) is refused, not read as infinity:
    an infinite value is asked for by name ("Infinity"), never by a number that overflowed. Not
    a ValueError, which request.get_json(silent=True) would swallow into "not JSON"."""
    value = float(text)
    if math.isinf(value):
        raise StudioError(
            "number_out_of_range",
            f'{text} is beyond the largest number a double holds (1.8e308); send "Infinity" for an infinite value',
        )
    return value
