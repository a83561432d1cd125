"""Optional token authentication: with app.config["AUTH_TOKEN"] set, every page and API call
needs it — as `Authorization: Bearer TOKEN` (scripts, curl) or the cookie the login page sets
(the browser). The page's own scripts, styles and libraries stay public: they hold no data.
Each sign-in is a session of its own: the cookie holds a random id, the index (shared by every
worker and host) an HMAC of it under the token, until SESSION_SECONDS pass or Sign out (a POST
from the pages' top bar) ends it — a copied cookie stops working then too, as every session does
when the token changes. A worker remembers a session it checked for CHECKED_SECONDS: Sign out
ends it on the other workers within that.

Failed attempts are not throttled, by choice: a token is at least 12 characters (the one made up
at start holds 24 random bytes), which no rate of guessing reaches, and a throttle keyed by address
would lock a whole team out behind a load balancer, where every request has its address."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from urllib.parse import urlsplit

from flask import Flask, g, jsonify, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from ..store.authorship import act_as, clean_author, stop_acting
from .health import ENDPOINTS as HEALTH_ENDPOINTS

COOKIE = "onnx_studio_session"
PUBLIC_PREFIXES = ("/static/", "/vendor/")
PUBLIC_ENDPOINTS = {"auth.login", "auth.login_post", "auth.logout", *HEALTH_ENDPOINTS}


SESSION_SECONDS = 7 * 24 * 3600  # a sign-in lasts a week (the cookie's Max-Age too)
CHECKED_SECONDS = 5.0  # how long a worker trusts a session it found in the index
_checked: dict[str, tuple[float, str | None]] = {}  # session key -> (when this worker last found it in time, its name)
AUTHOR_HEADER = "X-Studio-Author"  # a script's way of saying whose its edits are (no session to hold a name)
_checked_lock = threading.Lock()


def _session_key(token: str, session_id: str) -> str:
    """What the index keeps of a session: neither the cookie's id nor the token, and no session
    of another token matches it."""
    return hmac.new(token.encode(), b"onnx-studio-session\0" + session_id.encode(), hashlib.sha256).hexdigest()


def _index():
    from ..api.documents import store

    return store().index


def _session(token: str) -> tuple[bool, str | None]:
    """(does this browser hold the cookie of a session that has not ended, the name it signed in as)."""
    cookie = request.cookies.get(COOKIE, "")
    if not cookie or len(cookie) > 100:
        return False, None
    key = _session_key(token, cookie)
    now = time.monotonic()
    with _checked_lock:
        when, name = _checked.get(key, (-CHECKED_SECONDS, None))
        if now - when < CHECKED_SECONDS:
            return True, name
    found = _index().session(key)
    if found is None or found[0] < time.time():
        return False, None
    with _checked_lock:
        if len(_checked) > 10_000:  # a bound, not a policy: they are looked up again
            _checked.clear()
        _checked[key] = (now, found[1])
    return True, found[1]


def _signed_in(token: str) -> bool:
    return _session(token)[0]


def request_author(token: str | None) -> str | None:
    """Who the request's revisions are by: what it says in X-Studio-Author (a script's; store/
    authorship.py cleans it), else the name its browser signed in as; None when neither says."""
    said = request.headers.get(AUTHOR_HEADER)
    if said or not token:
        return said or None
    signed_in, name = _session(token)
    return name if signed_in else None


def _bearer(token: str) -> bool | None:
    """The Authorization header's verdict: True for this server's token, False for another,
    None when there is none."""
    scheme, _, sent = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":  # an auth scheme's name is case-insensitive (RFC 7235)
        return None
    return hmac.compare_digest(sent.strip().encode(), token.encode())


def holds_token(token: str) -> bool:
    """Does the request carry this server's token (Authorization: Bearer)?"""
    return _bearer(token) is True


def _secure() -> bool:
    """Is the browser's connection HTTPS, here or at the proxy in front (which ends TLS and says
    so in X-Forwarded-Proto): the cookie is then sent over HTTPS only."""
    return request.is_secure or request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip() == "https"


def _safe_next(target: str | None) -> str:
    """Where to go after logging in: a path on this server only (never another site)."""
    parts = urlsplit(target or "/")
    if parts.scheme or parts.netloc or not (target or "/").startswith("/") or (target or "").startswith("//"):
        return "/"
    return target or "/"


def install(app: Flask) -> None:
    from flask import Blueprint

    bp = Blueprint("auth", __name__)

    @bp.get("/login")
    def login():
        return render_template("login.html", next=_safe_next(request.args.get("next")), failed=False)

    @bp.post("/login")
    def login_post():
        token = app.config.get("AUTH_TOKEN") or ""
        given = request.form.get("token", "")
        target = _safe_next(request.form.get("next"))
        if not token or not hmac.compare_digest(given.encode(), token.encode()):
            return render_template("login.html", next=target, failed=True), 401
        session_id = secrets.token_urlsafe(32)
        name = clean_author(request.form.get("name"))  # optional: each revision made then is by it
        _index().add_session(_session_key(token, session_id), time.time() + SESSION_SECONDS, name)
        resp = redirect(target)
        resp.set_cookie(
            COOKIE,
            session_id,
            max_age=SESSION_SECONDS,
            httponly=True,
            samesite="Strict",
            secure=_secure(),
            path="/",
        )
        return resp

    @bp.post("/logout")
    def logout():
        token = app.config.get("AUTH_TOKEN") or ""
        cookie = request.cookies.get(COOKIE, "")
        if token and cookie and len(cookie) <= 100:  # the session ends here, not only in this browser
            key = _session_key(token, cookie)
            _index().end_session(key)
            with _checked_lock:
                _checked.pop(key, None)
        # 303: the browser asks for the login page with GET
        resp = redirect(url_for("auth.login"), code=303)
        resp.delete_cookie(COOKIE, path="/", httponly=True, samesite="Strict", secure=_secure())
        return resp

    app.register_blueprint(bp)

    @app.after_request
    def _not_kept_by_the_browser(resp: Response) -> Response:
        # behind a token, no page or answer is kept in the browser's cache: after Sign out, Back
        # must not show the model again to whoever uses the machine next
        if app.config.get("AUTH_TOKEN") and not request.path.startswith(PUBLIC_PREFIXES):
            resp.headers["Cache-Control"] = "no-store"
        return resp

    @app.context_processor
    def _sign_out_offered() -> dict[str, bool]:
        # pages show "Sign out" to a browser signed in by the login (a Bearer header has no session)
        token = app.config.get("AUTH_TOKEN") or ""
        return {"signed_in": bool(token) and _signed_in(token)}

    @app.before_request
    def _act_as_the_requests_author() -> None:
        # only the API stores revisions: pages, scripts and styles look nobody up
        if request.path.startswith("/api/"):
            g.author_token = act_as(request_author(app.config.get("AUTH_TOKEN")))

    @app.teardown_request
    def _stop_acting(_exc: BaseException | None) -> None:
        token = g.pop("author_token", None)
        if token is not None:
            stop_acting(token)

    @app.before_request
    def _require_token() -> Response | None:
        token = app.config.get("AUTH_TOKEN")
        if not token or request.endpoint in PUBLIC_ENDPOINTS or request.path.startswith(PUBLIC_PREFIXES):
            return None
        bearer = _bearer(token)
        if bearer or (bearer is None and _signed_in(token)):
            return None
        if request.path.startswith("/api/"):
            # a script told its token is wrong, not only that one is needed
            words = (
                "the access token sent is not this server's"
                if bearer is False
                else "this server needs its access token"
            )
            resp = jsonify({"error": {"code": "unauthorized", "message": words}})
            resp.status_code = 401
            resp.headers["WWW-Authenticate"] = 'Bearer realm="onnx-studio"'
            return resp
        return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
