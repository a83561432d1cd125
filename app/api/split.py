"""Split a model into two at tensors (QA37 #9: partitions for a compiler with a node budget, a
pipeline over two devices): POST /api/models/<id>/split {"at": [TENSOR...], "revision"?} makes
two new models in the store — the first from the graph inputs it needs to the tensors `at`, the
second from those tensors (and any graph input it needs besides) to the graph outputs — each the
extract_subgraph edit of the revision, its weights the revision's blobs, shared, not copied. The
model split is left as it is. Answer 201 {"parts": [summary + "inputs", "outputs", "nodes"],
"both"?, "crossing"?} (a cut leaving nodes on both sides: how many, and the values to cut at too);
with "dry_run": true, 200 and the same without storing anything."""

from __future__ import annotations

from collections import Counter

import onnx
from flask import jsonify

from ..edits.field_types import NAME
from ..edits.jsontypes import Array
from ..edits.whole_model import extract_subgraph, inputs_needed
from ..errors import StudioError
from ..onnx_io.external import data_refs
from ..onnx_io.traverse import graphs_within
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
    body = json_object('{"at": [TENSOR, ...], "revision"?: N, "dry_run"?: true}', ("at", "revision", "dry_run"))
    dry = body.get("dry_run", False)
    if not isinstance(dry, bool):
        raise StudioError("bad_request", '"dry_run" must be true or false')
    problem = Array(NAME, min_items=1, max_items=MAX_CUT).check(body.get("at"), "at")
    if problem:
        raise StudioError("bad_request", f"{problem}: name the tensors to cut at")
    at: list[str] = body["at"]
    twice = sorted(x for x, k in Counter(at).items() if k > 1)
    if twice:
        raise StudioError("bad_request", f'split: {", ".join(map(repr, twice))} named more than once in "at"')
    rev = body.get("revision")
    record, revision, model = load(model_id, None if rev is None else integer(rev, '"revision"'))
    _check_cut(model.graph, at)
    g = model.graph
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
        external = {loc: e for loc, e in revision.external.items() if loc in _locations(part)}
        cut.append((Edited(part.SerializeToString(), external, [op], [said], model=part), ins, outs))
    unread = [x for x in at if not any(x in n.input for n in cut[1][0].model.graph.node)]
    if unread:
        raise StudioError(
            "bad_value",
            f"split: no graph output depends on {', '.join(map(repr, unread))}: nothing would come after it",
        )
    stem = model_stem(record.name)
    overlap = _overlap(cut[0][0].model.graph, cut[1][0].model.graph)
    if dry:  # what the cut would make, nothing stored: the page asks before a cut that doesn't separate
        planned = [
            {"name": f"{stem} part {k} of 2.onnx", "inputs": ins, "outputs": outs, "nodes": len(e.model.graph.node)}
            for k, (e, ins, outs) in enumerate(cut, 1)
        ]
        return jsonify({"parts": planned, "dry_run": True, **overlap})
    answer = []
    for k, (edited, ins, outs) in enumerate(cut, 1):
        new = store().derive_model(f"{stem} part {k} of 2.onnx", revision, edited)
        page_ready(new.id)
        answer.append({**summary_of(new.id), "inputs": ins, "outputs": outs, "nodes": len(edited.model.graph.node)})
    return jsonify({"parts": answer, **overlap}), 201


def _check_cut(g: onnx.GraphProto, at: list[str]) -> None:
    """Each tensor of `at` one a node of the main graph computes, else a 400 saying what it is."""
    weights = {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    made = {x for n in g.node for x in n.output}
    fed = {v.name for v in g.input}
    for x in at:
        if x in weights:
            raise StudioError("bad_value", f"split: {x!r} is a weight, not a value a node computes")
        if x in fed:
            raise StudioError("bad_value", f"split: {x!r} is a graph input: nothing comes before it")
        if x not in made:
            inner = any(x in n.output for h in graphs_within(g) if h is not g for n in h.node)
            where = (
                "inside an If, Loop or Scan body: cut at a value of the main graph" if inner else "in the main graph"
            )
            raise StudioError("unknown_tensor", f"split: no tensor named {x!r} {where}", 404)
    if g.sparse_initializer:
        raise StudioError("bad_value", "split: onnx's extractor takes no model with sparse initializers")


def _locations(model: onnx.ModelProto) -> set[str]:
    """The external data files a part's tensors name: the others go with the other part (a file
    both name goes with both, whole: Download's "External data" lays each part's out anew)."""
    return set(data_refs(model))


def _overlap(first: onnx.GraphProto, second: onnx.GraphProto) -> dict:
    """What the cut leaves on both sides (QA39: a skip connection made part 2 run part 1's Relu
    again): {"both": nodes in both parts, "crossing": values part 1 computes that part 2 computes
    again to read} — cut at those too to separate the graph; {} when the cut separates it."""
    key = lambda n: (n.op_type, tuple(n.input), tuple(n.output))  # noqa: E731
    mine = {key(n) for n in first.node}
    both = [n for n in second.node if key(n) in mine]
    if not both:
        return {}
    again = {x for n in both for x in n.output}
    crossing = sorted({x for n in second.node if key(n) not in mine for x in n.input if x in again})
    return {"both": len(both), "crossing": crossing}
