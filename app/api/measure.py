"""GET /api/models/<id>/stats[?revision=&dims=NAME=N,...]: parameters, FLOPs and output bytes,
per node and in all (views/costs.py has the formulas). Symbolic dims are unknown unless given;
the answer's "unknown" names the ones that left something unknown."""

from __future__ import annotations

import re

import orjson
from flask import current_app, request

from ..errors import StudioError
from ..views.costs import model_costs
from . import bp, derived
from .documents import inferred, load, revision_number, store

_DIM = re.compile(r"^\s*([^=,]+?)\s*=\s*(\d{1,12})\s*$")


def parse_dims(raw: str | None) -> dict[str, int]:
    """ "batch=1,seq=128" -> {"batch": 1, "seq": 128}."""
    dims: dict[str, int] = {}
    for part in (raw or "").split(","):
        if not part.strip():
            continue
        m = _DIM.match(part)
        if m is None:
            raise StudioError("bad_dims", f"dims are NAME=N pairs separated by commas; {part.strip()!r} is not one")
        dims[m.group(1)] = int(m.group(2))
    return dims


@bp.get("/models/<model_id>/stats")
def get_stats(model_id):
    dims = parse_dims(request.args.get("dims"))
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))

    def compute() -> dict:
        return model_costs(model, inferred(revision.blob, model), dims)

    extra = ",".join(f"{k}={v}" for k, v in sorted(dims.items()))
    costs = derived.kept(store(), "costs", revision.blob, compute, orjson.dumps, orjson.loads, extra)
    return current_app.response_class(
        orjson.dumps({"revision": revision.rev, "dims": dims, **costs}), mimetype="application/json"
    )
