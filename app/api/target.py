"""GET /api/models/<id>/target?max_opset=13&static=1&control_flow=0&ops=Conv,Relu&standard=1
&max_nodes=500[&revision=]: the revision held to a deployment target's limits, rule by rule
(views/target_check.py). Each limit left out is no rule."""

from __future__ import annotations

import re

from flask import jsonify, request

from ..errors import StudioError
from ..views.target_check import Target, check_target
from ..words import closest
from . import bp
from .documents import load, revision_number

_YES, _NO = ("1", "true", "yes"), ("0", "false", "no")
_OP = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")  # an op type, or DOMAIN.OpType for another domain's
_SEPARATORS = re.compile(r"[\s,;]+")  # what people type between operator types
MAX_LIMIT = 10**9


def _flag(name: str, default: bool) -> bool:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in _YES:
        return True
    if raw.lower() in _NO:
        return False
    raise StudioError("bad_request", f"{name} is true or false (1 or 0), not {raw[:40]!r}")


def _count(name: str) -> int | None:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10 and 0 < int(raw) <= MAX_LIMIT):
        raise StudioError("bad_request", f"{name} is a whole number from 1, not {raw[:40]!r}")
    return int(raw)


def _ops() -> frozenset[str] | None:
    raw = request.args.get("ops")
    if raw is None:
        return None
    ops = [p for p in _SEPARATORS.split(raw) if p]  # "Conv, Relu", "Conv Relu", "Conv;Relu" alike
    bad = [op for op in ops if not _OP.match(op)]
    if bad or not ops:
        what = f"{bad[0][:40]!r} is not an operator type" if bad else "it names none"
        raise StudioError("bad_request", f"ops is a list of operator types separated by commas: {what}")
    return frozenset(ops)


PARAMS = ("max_opset", "static", "control_flow", "ops", "standard", "max_nodes", "revision")


@bp.get("/models/<model_id>/target")
def target_check(model_id):
    unknown = [k for k in request.args if k not in PARAMS]
    if unknown:  # a typo (maxnodes=2) would read as "keeps every limit" to a script
        raise StudioError("bad_request", f"no limit named {unknown[0][:40]!r}{closest(unknown[0], PARAMS)}")
    target = Target(
        max_opset=_count("max_opset"),
        static=_flag("static", False),
        control_flow=_flag("control_flow", True),
        ops=_ops(),
        standard=_flag("standard", False),
        max_nodes=_count("max_nodes"),
    )
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    return jsonify({"revision": revision.rev, **check_target(model, target)})
