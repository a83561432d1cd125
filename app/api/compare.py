"""GET /api/models/<id>/diff: what changed between two revisions of a model (?from=&to=), or
between another model and this one (?other=ID[&other_revision=REV][&revision=REV]): views/diff.py.
Ids in "added" and "changed[].node" are nodes of the `to` side (the one on screen), those in
"removed" and "changed[].other" of the `from` side."""

from __future__ import annotations

import time

import orjson
from flask import current_app, request

from ..errors import StudioError
from ..views.diff import model_diff
from . import bp
from .documents import external_reader, load, revision_number, store


@bp.get("/models/<model_id>/diff")
def get_diff(model_id):
    args = request.args
    record = store().model(model_id)
    if "other" in args:
        if "from" in args or "to" in args:
            raise StudioError("bad_request", "ask for ?from=&to= (two revisions) or ?other= (another model), not both")
        old_id, old_rev = args["other"], revision_number(args.get("other_revision"))
        new_id, new_rev = model_id, revision_number(args.get("revision"))
    else:
        start = revision_number(args.get("from"))
        end = revision_number(args.get("to"))
        old_id, old_rev = model_id, 0 if start is None else start
        new_id, new_rev = model_id, record.head if end is None else end
    t = time.perf_counter()
    old_record, old_revision, old = load(old_id, old_rev)
    new_record, new_revision, new = load(new_id, new_rev)
    # tensors kept outside the graph are read to tell what they hold (the same weights in a
    # blob of the store and in an uploaded .data file are no change)
    diff = model_diff(old, new, (external_reader(old_revision), external_reader(new_revision)))
    answer = {
        "from": {"model": old_record.id, "name": old_record.name, "revision": old_revision.rev},
        "to": {"model": new_record.id, "name": new_record.name, "revision": new_revision.rev},
        **diff,
        "ms": round((time.perf_counter() - t) * 1000, 1),
    }
    return current_app.response_class(orjson.dumps(answer), mimetype="application/json")
