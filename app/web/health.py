"""Health checks for process managers and load balancers: GET /healthz (the process answers)
and GET /readyz (the store's index and blob store are reachable: 503 naming what is not).
Open to any caller and any Host name (a probe uses the container's address): they say nothing
about the models. readyz's checks are bounded to seconds (Store.reachable): probes piling up
on a hung store must not hold every worker thread."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

bp = Blueprint("health", __name__)
ENDPOINTS = {"health.healthz", "health.readyz"}


@bp.get("/healthz")
def healthz():
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz():
    problems = current_app.extensions["store"].reachable()
    if problems:
        resp = jsonify({"status": "unavailable", "problems": problems})
        resp.status_code = 503
        return resp
    return jsonify({"status": "ok"})
