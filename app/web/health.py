"""Health checks for process managers and load balancers: GET /healthz (the process answers)
and GET /readyz (the store's index and blob store are reachable: 503 naming what is not).
Open to any caller and any Host name (a probe uses the container's address): they say nothing
about the models, nor (with an access token, to a caller without it) where the store is. readyz's checks are bounded to seconds (Store.reachable): probes piling up
on a hung store must not hold every worker thread."""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify

bp = Blueprint("health", __name__)
log = logging.getLogger(__name__)
ENDPOINTS = {"health.healthz", "health.readyz"}


@bp.get("/healthz")
def healthz():
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz():
    problems = current_app.extensions["store"].reachable()
    if problems:
        log.warning("not ready: %s", "; ".join(problems))
        from .auth import holds_token  # auth installs these endpoints' exemption: imported late

        token = current_app.config.get("AUTH_TOKEN")
        if token and not holds_token(token):
            # open to anyone: which part is down, not the database's host and port or the
            # bucket's endpoint (QA18 F12); the whole of it in the log, and for a Bearer holder
            problems = [f"{p.split(':', 1)[0]}: unavailable" for p in problems]
        resp = jsonify({"status": "unavailable", "problems": problems})
        resp.status_code = 503
        return resp
    return jsonify({"status": "ok"})
