"""GET /api/models/<id>/weight-ranges[?revision=&bits=8]: how well each weight tensor survives
integer quantization, per tensor and per output channel, from the weights alone
(views/weight_ranges.py); kept in the store by the revision's content and the bits."""

from __future__ import annotations

import orjson
from flask import jsonify, request

from ..errors import StudioError
from ..views.weight_ranges import weight_ranges
from . import bp, derived
from .documents import external_reader, load, revision_number, store

BITS = (4, 8, 16)  # the weight widths onnxruntime's quantizer writes


@bp.get("/models/<model_id>/weight-ranges")
def get_weight_ranges(model_id):
    raw = request.args.get("bits", "8")
    if raw not in {str(b) for b in BITS}:
        raise StudioError("bad_request", f"bits is one of {', '.join(map(str, BITS))}")
    bits = int(raw)
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    answer = derived.kept(
        store(),
        "weight-ranges",
        revision.blob,
        lambda: weight_ranges(model, external_reader(revision), bits),
        orjson.dumps,
        orjson.loads,
        str(bits),
    )
    return jsonify({"revision": revision.rev, **answer})
