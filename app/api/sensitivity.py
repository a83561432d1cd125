"""POST /api/models/<id>/sensitivity: which parts of a quantization cost the most accuracy.

A QDQ revision and the float revision it was made from: the float model with each of the
quantization's points (an activation tensor, a node's weights) behind a switch
(onnx_io/quant_switches.py) runs in onnxruntime's worker with every point off (the float model,
the reference), every point on (the whole quantization, simulated), and once per point with that
point alone on ("alone", the default: what it costs by itself) or alone off ("without": what
turning it float saves). Each run's outputs are measured against the reference as a run's
per-node error is (relative L2 error, SQNR). Each point names its owners: the nodes to leave out
of the quantization (nodes_to_exclude) to turn it float.

  {"base": REV, "revision"?, "inputs"? | "samples"?, "dims"?, "mode"?: "alone" | "without",
   "op_types"?: [OP], "target"?: REL_ERROR}
  -> {"revision", "base", "mode", "outputs": [NAME], "all": {"output", "rel_error", "sqnr_db"},
      "points": [{"kind", "tensors", "dtype", "of"?, "owners": [{"node", "name", "op_type"}],
      "output", "rel_error", "sqnr_db"}] the most worth turning float first, "plan"?, "samples",
      "ms" (one run), "runs", "seconds", "onnxruntime"}
With "target", "plan" is the fewest nodes to leave out for the simulated error to stay within it
(quant_plan.py): {"target", "reached", "nodes": [{"node", "name", "op_type"}], "float": points
turned float, "output", "rel_error", "sqnr_db", "runs"}.
With "samples" (as a static quantization's calibration: {NAME: {"npy": BLOB}}, samples along
the first axis), each configuration runs on each of the first MAX_SAMPLES of them and is measured
over all of them at once; else on one input, "inputs" as for a run.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

import numpy as np
from flask import jsonify

from ..edits.calibration import calibration_samples
from ..edits.sources import blob_reader
from ..errors import StudioError
from ..onnx_io.address import node_id
from ..onnx_io.quant_plan import turned_float
from ..onnx_io.quant_switches import is_qdq, switchable
from ..onnx_io.runtime_check import sweep_model
from . import bp
from .documents import load, store
from .request_body import json_object
from .routes import read_uploaded_blob
from .run import check_dims, check_inputs, integer, run_failed, write_runnable

MODES = ("alone", "without")
MAX_POINTS = 5000  # one run of the whole model each
MAX_SAMPLES = 8  # samples each configuration runs on: the sweep's time grows with them
PROGRESS_TOKEN = re.compile(r"[A-Za-z0-9_-]{8,64}")  # the page's name for a sweep, to poll it by


def _target(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e6:
        raise StudioError("bad_request", '"target" is the relative error to stay within, a number above 0 (0.01: 1 %)')
    return float(value)


@bp.post("/models/<model_id>/sensitivity")
def post_sensitivity(model_id):
    body = json_object('{"base": REV, "inputs"?, "dims"?, "mode"?}')
    rev = body.get("revision")
    _, revision, quantized = load(model_id, None if rev is None else integer(rev, '"revision"'))
    if body.get("base") is None:
        raise StudioError("bad_request", '"base" names the float revision the quantization was made from')
    _, base_revision, base = load(model_id, integer(body["base"], '"base"'))
    mode = body.get("mode", "alone")
    if mode not in MODES:
        raise StudioError("bad_request", f'"mode" is one of {", ".join(MODES)}')
    if body.get("samples") is not None and body.get("inputs") is not None:
        raise StudioError("bad_request", 'give "inputs" (one input) or "samples" (several), not both')
    inputs = check_inputs(body.get("inputs"), base)
    dims = check_dims(body.get("dims"), base)
    token = body.get("progress")
    if token is not None and not (isinstance(token, str) and PROGRESS_TOKEN.fullmatch(token)):
        raise StudioError("bad_request", '"progress" is a token of 8 to 64 letters, digits, "_" or "-"')
    samples: dict[str, np.ndarray] = {}
    if body.get("samples") is not None:
        if not isinstance(body["samples"], dict):
            raise StudioError("bad_request", '"samples" maps each input to {"npy": BLOB}, samples along its first axis')
        with blob_reader(read_uploaded_blob):
            samples, _ = calibration_samples(base, body["samples"], "samples")
        samples = {name: a[:MAX_SAMPLES] for name, a in samples.items()}
    op_types = body.get("op_types")
    if op_types is not None and (not isinstance(op_types, list) or not all(isinstance(o, str) for o in op_types)):
        raise StudioError("bad_request", '"op_types" is a list of operator names (measure only their nodes)')
    target = _target(body.get("target"))
    model, points = switchable(base, quantized)
    nodes = quantized.graph.node
    # the nodes each point can be turned float by: named ones (nodes_to_exclude names them)
    owners = [p.owners if all(nodes[o].name and not is_qdq(nodes[o]) for o in p.owners) else [] for p in points]
    each = [k for k, p in enumerate(points) if op_types is None or any(nodes[o].op_type in op_types for o in p.owners)]
    if not each:
        raise StudioError("no_nodes", f"no quantized node is one of {', '.join(op_types or [])}", 422)
    if len(each) > MAX_POINTS:
        raise StudioError(
            "too_many_points", f"{len(each)} quantization points would take a run each (at most {MAX_POINTS})", 422
        )
    s = store()
    start = time.monotonic()
    # the folder named by the progress token: GET /api/sweeps/<token> finds its progress file
    with tempfile.TemporaryDirectory(prefix=f"sweep-{token or ''}-", dir=s.blobs.scratch()) as tmp:
        path, files = write_runnable(model, [base_revision, revision], Path(tmp))
        size = s.model_size(base_revision) + s.model_size(revision)
        stacked = {}
        for k, (name, arr) in enumerate(samples.items()):
            stacked[name] = str(Path(tmp) / f"samples{k}.npy")
            np.save(stacked[name], arr, allow_pickle=False)
        progress = str(Path(tmp) / "progress") if token else None
        flags = [p.flag for p in points]
        answer = sweep_model(path, inputs, dims, flags, each, mode, size, files, stacked, progress, target, owners)
    status = answer.get("status")
    if status == "refused" and answer.get("stage") == "time":
        raise StudioError(
            "too_long",
            f"{answer['message']}: measure fewer points (op_types), on smaller inputs (dims) or fewer samples",
            422,
        )
    if status == "refused":
        raise StudioError("bad_inputs", answer["message"])
    if status == "limit":
        raise StudioError(
            "run_failed",
            f"{answer['message']}: {len(each) + 2} configurations of the whole model — measure fewer points "
            "(op_types), on smaller inputs (dims) or fewer samples",
            422,
        )
    if status != "ok":
        raise run_failed(answer, model, "the switched model")

    def node(index: int) -> dict:
        return {"node": node_id("", index), "name": nodes[index].name, "op_type": nodes[index].op_type}

    measured = [
        {
            "kind": p.kind,
            "tensors": p.tensors,
            "dtype": p.dtype,
            **({} if p.node is None else {"of": node(p.node)}),
            "owners": [node(o) for o in p.owners],
            **error,
        }
        for p, error in zip([points[k] for k in each], answer["nodes"], strict=True)
    ]
    plan = answer.get("plan")
    return jsonify(
        {
            "revision": revision.rev,
            "base": base_revision.rev,
            "mode": mode,
            "outputs": answer["outputs"],
            "all": answer["all"],
            "points": [measured[k] for k in answer["order"]],
            **({} if plan is None else {"plan": _plan(plan, target, owners, node)}),
            "samples": answer.get("samples", 1),
            "ms": answer["ms"],
            "runs": answer["runs"],
            "seconds": round(time.monotonic() - start, 2),
            "onnxruntime": answer.get("onnxruntime"),
        }
    )


def _plan(plan: dict, target: float | None, owners: list[list[int]], node) -> dict:
    return {
        "target": target,
        "reached": plan["reached"],
        "nodes": [node(o) for o in plan["nodes"]],
        "float": len(turned_float(plan["points"], owners)),
        **plan["error"],
        "runs": plan["runs"],
    }


@bp.get("/sweeps/<token>")
def get_sweep_progress(token):
    """How far a sensitivity sweep sent with {"progress": token} is: {"done", "total"} runs; 404
    before its first runs are counted and once it has answered (or on another host)."""
    if not PROGRESS_TOKEN.fullmatch(token):
        raise StudioError("bad_request", "a progress token is 8 to 64 letters, digits, '_' or '-'")
    for folder in store().blobs.scratch().glob(f"sweep-{token}-*"):
        try:
            done, total = (folder / "progress").read_text().split()
            return jsonify({"done": int(done), "total": int(total)})
        except (OSError, ValueError):
            continue
    raise StudioError("unknown_sweep", f"no sweep {token!r} is running here", 404)
