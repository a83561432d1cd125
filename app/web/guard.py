"""What keeps other sites out of a local server: only its own host names are answered (DNS
rebinding), state-changing requests from another site are refused (a cross-site form POST could
upload, undo or delete), and every response carries headers that forbid framing, sniffing and
inline script."""

from __future__ import annotations

from flask import Flask, Request, Response, jsonify, request

from .health import ENDPOINTS as HEALTH_ENDPOINTS

# the page: its own scripts and styles only (no inline script, no eval), no framing; workers and
# fetches to itself; exported images are data:/blob: URLs
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "font-src 'self'",
        "connect-src 'self'",
        "worker-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(host: str) -> str:
    """ "example.org:8080" -> "example.org"; "[::1]:5000" -> "[::1]"."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.index("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _refuse(status: int, code: str, message: str) -> Response:
    resp = jsonify({"error": {"code": code, "message": message}})
    resp.status_code = status
    return resp


def _cross_site(req: Request) -> bool:
    """A browser request made by another site's page (Fetch Metadata, else Origin vs Host).
    Requests without either header (curl, scripts, the test client) are not a browser's."""
    site = req.headers.get("Sec-Fetch-Site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = req.headers.get("Origin")
    if not origin:
        return False
    if origin == "null":  # sandboxed frames, file: pages
        return True
    return origin.split("://", 1)[-1].rstrip("/").lower() != (req.host or "").lower()


def install(app: Flask) -> None:
    """Check the Host and the caller of each request; put the security headers on each answer.
    app.config["ALLOWED_HOSTS"]: host names answered besides loopback ("*": any, for a server
    behind a proxy that checks them)."""

    def allowed_hosts() -> set[str]:
        extra = app.config.get("ALLOWED_HOSTS") or ()
        return {host_name(h) for h in (*LOOPBACK_HOSTS, *extra)}

    @app.before_request
    def _guard():
        if request.endpoint in HEALTH_ENDPOINTS:
            return None  # probes use the container's address as Host; the answer says nothing
        hosts = allowed_hosts()
        if "*" not in hosts and not request.environ.get("HTTP_HOST"):
            # werkzeug would take the address it listens on for the name: HTTP/1.1 requires one
            return _refuse(400, "missing_host", "a request must name the host it is for (a Host header)")
        if "*" not in hosts and host_name(request.host or "") not in hosts:
            return _refuse(
                421,
                "unknown_host",
                f"this server answers {', '.join(sorted(hosts))} only; add the host name with --allowed-host",
            )
        if request.method in UNSAFE_METHODS and _cross_site(request):
            return _refuse(403, "cross_site", "requests that change models must come from ONNX Studio's own pages")
        return None

    @app.after_request
    def _headers(resp: Response) -> Response:
        for key, value in HEADERS.items():
            resp.headers.setdefault(key, value)
        return resp
