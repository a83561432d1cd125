"""Every error leaves the API as {"error": {"code", "message"}} (plus "details": further causes,
"node": the id of the node the message is about, "fix": {"label", "ops"} a batch that would be
accepted instead, for the page to offer, "head": a stale base's current revision, "models": an
uploaded archive's models, one to name as its `member`; "request_id": request_log.py's, on every
error). Every code, its statuses and when: error_codes.py."""

from __future__ import annotations

import logging
import re

from flask import jsonify
from werkzeug.exceptions import HTTPException

from ..errors import BlobMissing, StoreUnavailable, StudioError
from . import bp
from .error_codes import framework_code

RETRY_AFTER_SECONDS = 10


def error_response(
    code: str,
    message: str,
    status: int,
    details: list[str] | None = None,
    node: str | None = None,
    fix: dict | None = None,
    head: int | None = None,
    models: list[str] | None = None,
):
    body: dict = {"code": code, "message": message}
    if head is not None:
        body["head"] = head
    if details:
        body["details"] = details
    if node:
        body["node"] = node
    if fix:
        body["fix"] = fix
    if models is not None:
        body["models"] = models
    resp = jsonify({"error": body})
    resp.status_code = status
    return resp


_log = logging.getLogger("onnx_studio.store")
_URL = re.compile(r':?\s*"?https?://[^\s"]+"?')


@bp.errorhandler(StudioError)
def _studio_error(exc: StudioError):
    hide = _server_paths()
    details = [hide(d) for d in exc.details] if exc.details else None
    message = hide(exc.message)
    if isinstance(exc, StoreUnavailable):
        # botocore names the URL it tried: the internal endpoint and a blob's key are for the
        # log, not for every signed-in person (QA36 #6)
        _log.error("%s", exc.message)
        message = _URL.sub("", message)
    response = error_response(exc.code, message, exc.status, details, exc.node, exc.fix, exc.head, exc.models)
    if isinstance(exc, StoreUnavailable) and not exc.refused:
        # a database or bucket that can't be reached: when a client may ask again (the blob
        # store's breaker answers at once meanwhile)
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _server_paths():
    """A function taking the server's own folders out of a message: onnxruntime and onnx name
    the files they were given (a run's model, written in the store's scratch folder), and where
    the server keeps its data is nobody's business."""
    from .documents import store

    try:
        scratch = store().blobs.scratch()
        folders = sorted({str(scratch), str(scratch.resolve())}, key=len, reverse=True)  # longest first
    except Exception:  # the store itself failing is what the error says: no folder to hide
        folders = []

    def hide(text: str) -> str:
        for folder in folders:
            text = text.replace(folder + "/", "").replace(folder, "")
        return text

    return hide


@bp.errorhandler(FileNotFoundError)
def _missing_file(exc: FileNotFoundError):
    """A blob the index names gone from the blob store's folder (S3's raise BlobMissing, a
    StudioError): said as such, not as an internal error. Any other missing file is a fault."""
    from pathlib import Path

    from ..store.blobs import is_digest
    from .documents import store

    root = getattr(store().blobs, "root", None)
    name = Path(str(exc.filename)) if exc.filename else None
    if root is None or name is None or Path(root) not in name.parents or not is_digest(name.name):
        raise exc
    missing = BlobMissing(name.name, "the data folder's blobs")
    return error_response(missing.code, missing.message, missing.status)


@bp.errorhandler(HTTPException)
def _http_error(exc: HTTPException):
    code = framework_code(exc.code or 500)  # one of error_codes.py's
    message = exc.description or exc.name
    drained = True
    if exc.code == 413:
        message = _too_large_words()
        drained = _drain_refused_body()
    response = error_response(code, message, exc.code or 500)
    if exc.code == 413 and not drained:
        response.headers["Connection"] = "close"
    return response


DRAIN_MAX_BYTES = 64 << 20  # a refused upload's body read (and dropped) up to this, at LAN speed < 1 s


def _drain_refused_body() -> bool:
    """Read the rest of a refused upload's body before answering: a server closing a socket the
    client is still sending on resets it, and the client sees no answer at all, not the 413
    (2 of 22 uploads, QA18 F25). Bounded: past DRAIN_MAX_BYTES the connection is closed instead.
    Whether the whole body was read."""
    from flask import request

    size = request.content_length
    if size is None or size > DRAIN_MAX_BYTES:
        return False
    stream = request.environ.get("wsgi.input")
    if stream is None:
        return False
    left = size
    try:
        while left > 0:
            chunk = stream.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
    except OSError:
        return False
    return True


def _too_large_words() -> str:
    """Which limit a 413 from werkzeug's form parser is: the request's size, or its file count."""
    from flask import current_app, request

    from ..onnx_io.sizes import size_text

    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    size = request.content_length
    parts = current_app.config.get("MAX_FORM_PARTS")
    if limit and (size is None or size > limit):
        return f"the upload is larger than this server accepts (at most {size_text(limit)})"
    return f"an upload holds at most {parts:,} files; send more as one .zip"


def install_api_not_found(app) -> None:
    """An unknown /api/... path (or a method it doesn't take) answers JSON like the rest of the
    API, not the HTML page a browser gets."""
    from flask import request

    def handler(exc: HTTPException):
        if request.path.startswith("/api/"):
            return _http_error(exc)
        return exc

    app.register_error_handler(404, handler)
    app.register_error_handler(405, handler)


def install_readable_retry(app) -> None:
    """A GET whose view tripped over a model's invalid UTF-8 strings (upb's bytes) runs again
    once the models the views hold are decoded with replacement characters (documents.py)."""
    from flask import current_app, g, request

    from ..onnx_io.text_fields import is_bytes_error
    from .documents import make_readable

    def handler(exc: Exception):
        if (
            request.method not in ("GET", "HEAD")
            or g.get("readable_retry")
            or not is_bytes_error(exc)
            or not make_readable()
        ):
            raise exc
        g.readable_retry = True
        view = current_app.view_functions[request.endpoint or ""]
        return current_app.make_response(current_app.ensure_sync(view)(**(request.view_args or {})))

    app.register_error_handler(TypeError, handler)
    app.register_error_handler(UnicodeError, handler)


@bp.before_request
def _json_body_size():
    """A JSON body is held whole to be parsed: bounded far below an upload's limit
    (app.config["MAX_JSON_BYTES"]); big tensors come as uploaded .npy files instead."""
    from flask import current_app, request

    limit = current_app.config["MAX_JSON_BYTES"]
    if request.mimetype == "application/json" and (request.content_length or 0) > limit:
        raise StudioError(
            "body_too_big",
            f"a JSON body may hold at most {limit:,} bytes; send big tensors as .npy (POST /api/blobs)",
            413,
        )
