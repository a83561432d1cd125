"""Request ids and request log lines. Each request gets an id (the caller's X-Request-Id when it
is a plain token, else a new one), echoed in the X-Request-Id response header and in every JSON
error body ({"error": {..., "request_id"}}), so a person's report and the server's log meet. One
log line per request: id, method, path, route, status, duration (to the response's first byte:
a streamed download's body goes on after)."""

from __future__ import annotations

import logging
import re
import secrets
import time

import orjson
from flask import Flask, Response, g, has_request_context, request

HEADER = "X-Request-Id"
_CALLERS_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
log = logging.getLogger("onnx_studio.requests")


def request_id() -> str:
    """This request's id (made on first ask)."""
    rid = g.get("request_id")
    if rid is None:
        given = request.headers.get(HEADER, "")
        rid = given if _CALLERS_ID.fullmatch(given) else secrets.token_hex(8)
        g.request_id = rid
    return rid


def _tag_records_with_request_id() -> None:
    """Every log record made while a request runs (a 500's traceback, a warning deep in the
    store) carries that request's id, so the line an error body points to can be found."""
    make = logging.getLogRecordFactory()
    if getattr(make, "tags_request_id", False):
        return

    def factory(*args, **kwargs) -> logging.LogRecord:
        record = make(*args, **kwargs)
        if has_request_context() and not hasattr(record, "request_id"):
            rid = g.get("request_id")
            if rid is not None:
                record.request_id = rid
        return record

    factory.tags_request_id = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


def install(app: Flask) -> None:
    """Before every other hook (the host guard and the token check answer some requests
    themselves: those get an id and a line too)."""

    def start() -> None:
        g.started = time.perf_counter()
        request_id()

    app.before_request_funcs.setdefault(None, []).insert(0, start)
    _tag_records_with_request_id()

    @app.after_request
    def finish(resp: Response) -> Response:
        rid = request_id()
        resp.headers[HEADER] = rid
        code = None  # the error's code, for the log line: a 503's component, a 422's gate
        if resp.status_code >= 400 and resp.mimetype == "application/json" and not resp.direct_passthrough:
            code = _add_to_error(resp, rid)
        started = g.get("started")
        duration = round((time.perf_counter() - started) * 1000, 1) if started is not None else None
        route = request.url_rule.rule if request.url_rule is not None else None
        # a server error is an error line: an alert on the request log's level sees it
        extra = {  # request_id: set by the record factory, as on every line of a request
            "method": request.method,
            "path": request.path,
            "route": route,
            "status": resp.status_code,
            "duration_ms": duration,
        }
        if code:
            extra["error_code"] = code
        log.log(
            logging.ERROR if resp.status_code >= 500 else logging.INFO,
            "%s %s %s %s ms [%s]%s",
            request.method,
            _printable(request.full_path.rstrip("?")),
            resp.status_code,
            duration,
            rid,
            f" {code}" if code else "",
            extra=extra,
        )
        return resp


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _printable(text: str) -> str:
    """A path as the text log writes it: control characters escaped (a %0A in a URL would write
    a line of its own, a forged one)."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _add_to_error(resp: Response, rid: str) -> str | None:
    """The request id put into an error's body; its code, if it has one."""
    try:
        body = orjson.loads(resp.get_data())
    except orjson.JSONDecodeError:
        return None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body["error"]["request_id"] = rid
        resp.set_data(orjson.dumps(body))
        code = body["error"].get("code")
        return code if isinstance(code, str) else None
    return None
