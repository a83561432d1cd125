"""The JSON REST API: /api/..."""

from flask import Blueprint

bp = Blueprint("api", __name__, url_prefix="/api")

from . import (  # noqa: E402,F401  (attach handlers and routes)
    attach,
    compare,
    errors,
    measure,
    openapi,
    readers,
    recipes,
    reference,
    routes,
    run,
    sensitivity,
    split,
    target,
    weights,
)
