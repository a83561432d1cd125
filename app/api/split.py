"""Split a model into two at tensors (QA37 #9: partitions for a compiler with a node budget, a
pipeline over two devices): POST /api/models/<id>/split {"at": [TENSOR...], "revision"?} makes
two new models in the store — the first from the graph inputs it needs to the tensors `at`, the
second from those tensors (and any graph input it needs besides) to the graph outputs — each the
extract_subgraph edit of the revision, its weights the revision's blobs, shared, not copied. The
model split is left as it is. Answer 201 {"parts": [summary + "inputs", "outputs", "nodes"]}."""

from __future__ import annotations

import onnx
from flask import jsonify

from ..edits.field_types import NAME
from ..edits.jsontypes import Array
from ..edits.whole_model import extract_subgraph, inputs_needed
from ..errors import StudioError
from ..store.records import Edited
from . import bp
from .documents import load, page_ready, store
from .file_names import model_stem
from .request_body import json_object
from .routes import summary_of
from .run import integer

MAX_CUT = 256  # tensors one cut may name


@bp.post("/models/<model_id>/split")
def split_model(model_id):
    body = json_object('{"at": [TENSOR, ...], "revision"?: N}', ("at", "revision"))
    problem = Array(NAME, min_items=1, max_items=MAX_CUT).check(body.get("at"), "at")
    if problem:
        raise StudioError("bad_request", f"{problem}: name the tensors to cut at")
    at: list[str] = body["at"]
    rev = body.get("revision")
    record, revision, model = load(model_id, None if rev is None else integer(rev, '"revision"'))
    g = model.graph
    fed = {v.name for v in g.input} - {t.name for t in g.initializer}
    bare = [x for x in at if x in fed]
    if bare:
        raise StudioError("bad_value", f"split: {', '.join(map(repr, bare))} is a graph input: nothing comes before it")
    outputs = [v.name for v in g.output]
    parts = [
        (inputs_needed(g, [], at), at),
        ([*at, *inputs_needed(g, at, outputs)], outputs),
    ]
    cut = []  # both parts first: a cut that can't be made makes no model
    for k, (ins, outs) in enumerate(parts, 1):
        part = onnx.ModelProto()
        part.CopyFrom(model)
        op = {"op": "extract_subgraph", "inputs": ins, "outputs": outs}
        change = extract_subgraph(part, op)
        if not part.graph.node:
            raise StudioError("bad_value", f"split: part {k} would hold no node: cut between the graph's nodes")
        said = f"part {k} of 2 of {record.name} (revision {revision.rev}), split at {', '.join(at)}: {change}"
        cut.append((Edited(part.SerializeToString(), revision.external, [op], [said], model=part), ins, outs))
    stem = model_stem(record.name)
    answer = []
    for k, (edited, ins, outs) in enumerate(cut, 1):
        new = store().derive_model(f"{stem} part {k} of 2.onnx", revision, edited)
        page_ready(new.id)
        answer.append({**summary_of(new.id), "inputs": ins, "outputs": outs, "nodes": len(edited.model.graph.node)})
    return jsonify({"parts": answer}), 201
