"""Optional token authentication: with app.config["AUTH_TOKEN"] set, every page and API call
needs it — as `Authorization: Bearer TOKEN` (scripts, curl) or the cookie the login page sets
(the browser). The page's own scripts, styles and libraries stay public: they hold no data.
Signing out (a POST from the pages' top bar) takes the cookie off this browser.

Failed attempts are not throttled, by choice: a token is at least 12 characters (the one made up
at start holds 24 random bytes), which no rate of guessing reaches, and a throttle keyed by address
would lock a whole team out behind a load balancer, where every request has its address."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from flask import Flask, jsonify, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from .health import ENDPOINTS as HEALTH_ENDPOINTS

COOKIE = "onnx_studio_session"
PUBLIC_PREFIXES = ("/static/", "/vendor/")
PUBLIC_ENDPOINTS = {"auth.login", "auth.login_post", "auth.logout", *HEALTH_ENDPOINTS}


def _session_value(token: str) -> str:
    """What the cookie holds: derived from the token, so the cookie never carries the token itself."""
    return hashlib.sha256(b"onnx-studio-session\0" + token.encode()).hexdigest()


def _signed_in(token: str) -> bool:
    """Does this browser hold the login's cookie?"""
    cookie = request.cookies.get(COOKIE, "")
    return bool(cookie) and hmac.compare_digest(cookie.encode(), _session_value(token).encode())


def _authorized(token: str) -> bool:
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer ") and hmac.compare_digest(header[7:].strip().encode(), token.encode()):
        return True
    return _signed_in(token)


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
        resp = redirect(target)
        resp.set_cookie(
            COOKIE, _session_value(token), httponly=True, samesite="Strict", secure=request.is_secure, path="/"
        )
        return resp

    @bp.post("/logout")
    def logout():
        # 303: the browser asks for the login page with GET
        resp = redirect(url_for("auth.login"), code=303)
        resp.delete_cookie(COOKIE, path="/", httponly=True, samesite="Strict", secure=request.is_secure)
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
    def _require_token() -> Response | None:
        token = app.config.get("AUTH_TOKEN")
        if not token or request.endpoint in PUBLIC_ENDPOINTS or request.path.startswith(PUBLIC_PREFIXES):
            return None
        if _authorized(token):
            return None
        if request.path.startswith("/api/"):
            resp = jsonify({"error": {"code": "unauthorized", "message": "this server needs its access token"}})
            resp.status_code = 401
            resp.headers["WWW-Authenticate"] = 'Bearer realm="onnx-studio"'
            return resp
        return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
