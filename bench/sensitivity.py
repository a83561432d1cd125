"""Quantization sensitivity on big models (POST .../sensitivity): what the sweep costs against
the runs it makes, and whether its ranking picks better nodes to leave in float than the run's
per-node error table does.

For each model: a fresh `onnx-studio serve`, the model uploaded, quantize_static (QDQ, 8 random
samples: bench/model_tools.py calibration()), then
- the sweep ("alone") on one random input, symbolic dims 1 (the first) and SEQUENCE; its time
  against a floor measured in the same run: the float model run bare in onnxruntime (one
  thread, as the worker runs it) as many times as the sweep runs it;
- with --samples, the same sweep on the 8 calibration samples (or how soon it is refused);
- the output error of the quantizations on held-out random inputs (seed HELD_OUT; POST .../run
  against the float revision, onnxruntime's default optimisations: as deployed): all quantized;
  the owners of the TOP costliest points of the sweep left out (nodes_to_exclude); the TOP
  nodes furthest off in the run's per-node error table (compare.nodes, what the page listed
  before) left out; the owners of the samples sweep's TOP left out;
- with --target MODEL=REL_ERROR, the sweep asks for the fewest nodes to leave out for that error
  ("plan": its nodes, the simulated error, the search's runs), and the quantization made again
  without them is judged on the held-out inputs like the others.

  .venv/bin/python bench/sensitivity.py [--models resnet50 bert_base] [--samples]
      [--target resnet50=0.006 bert_base=0.05]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.model_tools import static_op  # noqa: E402
from bench.store_edits import MODELS, Server, measure_each, post  # noqa: E402

SEQUENCE = 128
TOP = 5


def dims_of(path: Path) -> dict[str, int]:
    """Each symbolic dim of the inputs: the first 1, the others SEQUENCE."""
    model = onnx.load(path, load_external_data=False)
    dims: dict[str, int] = {}
    for v in model.graph.input:
        for k, d in enumerate(v.type.tensor_type.shape.dim):
            if d.HasField("dim_param") and d.dim_param not in dims:
                dims[d.dim_param] = 1 if k == 0 else SEQUENCE
    return dims


def bare_run_ms(path: Path, dims: dict[str, int], repeat: int = 5) -> float:
    """The float model's median run in onnxruntime, one thread, on zeros / small token ids."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    feeds = {}
    for arg in sess.get_inputs():
        shape = [d if isinstance(d, int) else dims.get(d, 1) for d in arg.shape]
        kind = arg.type[len("tensor(") : -1]
        feeds[arg.name] = np.ones(shape, np.int64 if kind == "int64" else np.float32)
    sess.run(None, feeds)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1000)
    return sorted(times)[len(times) // 2]


HELD_OUT = 7  # the seed of the inputs quantizations are judged on: not the sweep's (seed 0)


def output_error(server: Server, mid: str, dims: dict, inputs: list[str]) -> float:
    """The worst output's relative error of the head against revision 0, on random inputs of
    seed HELD_OUT."""
    body = {"dims": dims, "compare_to": 0, "inputs": {name: {"random": {"seed": HELD_OUT}} for name in inputs}}
    _, answer = post(f"{server.base}/api/models/{mid}/run", body)
    return max(c["rel_error"] for c in answer["compare"]["outputs"].values() if c.get("rel_error") is not None)


def requantized(server: Server, mid: str, op: dict, names: list[str], dims: dict, inputs: list[str]) -> float:
    """The output error of the quantization made again with `names` in float (then undone)."""
    post(f"{server.base}/api/models/{mid}/undo")
    post(f"{server.base}/api/models/{mid}/edits", {"base": 0, "ops": [{**op, "nodes_to_exclude": names}]})
    return output_error(server, mid, dims, inputs)


def owners_of(points: list[dict]) -> list[str]:
    return sorted({o["name"] for p in points[:TOP] for o in p["owners"]})


def measure(path: Path, on_samples: bool, target: float | None = None) -> dict:
    dims = dims_of(path)
    graph = onnx.load(path, load_external_data=False).graph
    inputs = [v.name for v in graph.input if v.name not in {t.name for t in graph.initializer}]
    row: dict = {"model": path.stem, "dims": dims}
    server = Server()
    try:
        mid = server.upload(path)["id"]
        server.settled(mid)
        op = static_op(server, path)
        post(f"{server.base}/api/models/{mid}/edits", {"base": 0, "ops": [op]})
        server.settled(mid)
        asked = {"base": 0, "dims": dims, **({} if target is None else {"target": target})}
        dt, sweep = post(f"{server.base}/api/models/{mid}/sensitivity", asked)
        t0 = time.perf_counter()
        row.update(seconds=dt, runs=sweep["runs"], points=len(sweep["points"]), sweep_ms=sweep["ms"])
        if "plan" in sweep:
            plan = sweep["plan"]
            row["plan"] = {k: plan[k] for k in ("target", "reached", "float", "rel_error", "runs")}
            row["plan"]["nodes"] = [n["name"] for n in plan["nodes"]]
        row["all_simulated"] = sweep["all"]["rel_error"]
        row["costliest"] = [
            (p["kind"], p["tensors"], [o["name"] for o in p["owners"]], p["rel_error"]) for p in sweep["points"][:TOP]
        ]
        if on_samples:  # the same sweep on the 8 calibration samples (or its refusal, and how soon)
            try:
                dt, by_samples = post(
                    f"{server.base}/api/models/{mid}/sensitivity", {"base": 0, "samples": op["calibration"]}
                )
                row.update(
                    samples_seconds=dt, samples_runs=by_samples["runs"], samples_owners=owners_of(by_samples["points"])
                )
            except urllib.error.HTTPError as exc:
                row.update(samples_seconds=time.perf_counter() - t0, samples_refused=json.load(exc)["error"]["message"])
        _, run = post(f"{server.base}/api/models/{mid}/run", {"dims": dims, "compare_to": 0, "locate": True})
        off = [n for n in run["compare"]["nodes"] if not n["equal"] and n["name"] and "Linear" not in n["op_type"]]
        furthest = sorted(off, key=lambda n: -(n["rel_error"] or 0))[:TOP]
        row["furthest"] = [(n["name"], n["op_type"], n["rel_error"]) for n in furthest]
        row["error_all"] = output_error(server, mid, dims, inputs)
        owners = owners_of(sweep["points"])
        row["left_out"] = len(owners)
        row["error_without_costliest"] = requantized(server, mid, op, owners, dims, inputs)
        row["error_without_furthest"] = requantized(server, mid, op, [n[0] for n in row["furthest"]], dims, inputs)
        if row.get("plan", {}).get("nodes"):
            row["error_plan"] = requantized(server, mid, op, row["plan"]["nodes"], dims, inputs)
        if row.get("samples_owners"):
            row["error_without_samples_costliest"] = requantized(server, mid, op, row["samples_owners"], dims, inputs)
    finally:
        server.close()
    row["bare_ms"] = bare_run_ms(path, dims)
    row["floor"] = row["runs"] * row["bare_ms"] / 1000
    return row


def print_table(rows: list[dict]) -> None:
    print(
        "| model | quantized tensors | sweep | floor: the float model run as often, bare | ratio | one switched run ÷ bare "
        f"| output error: all quantized (simulated) | owners of the top {TOP} by cost alone left out "
        f"| top {TOP} of the error table left out | the sweep on 8 calibration samples | its top {TOP}'s owners left out |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        if "samples_refused" in r:
            on_samples = f"refused after {r['samples_seconds']:.1f} s | —"
        elif "samples_runs" in r:
            on_samples = (
                f"{r['samples_seconds']:.1f} s ({r['samples_runs']} runs) "
                f"| {100 * r['error_without_samples_costliest']:.2f} % ({len(r['samples_owners'])} nodes)"
            )
        else:
            on_samples = "— | —"
        print(
            f"| {r['model']} | {r['points']} | {r['seconds']:.1f} s ({r['runs']} runs) | {r['floor']:.1f} s "
            f"| {r['seconds'] / r['floor']:.2f}× | {r['sweep_ms'] / r['bare_ms']:.2f}× "
            f"| {100 * r['error_all']:.2f} % ({100 * r['all_simulated']:.2f} %) "
            f"| {100 * r['error_without_costliest']:.2f} % ({r['left_out']} nodes) "
            f"| {100 * r['error_without_furthest']:.2f} % | {on_samples} |"
        )


def print_plans(rows: list[dict]) -> None:
    planned = [r for r in rows if "plan" in r]
    if not planned:
        return
    print()
    print(
        "| model | target | nodes left out | points turned float | simulated error (all quantized) "
        f"| held-out error as deployed | the search's runs | top {TOP} by cost alone left out |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in planned:
        p = r["plan"]
        deployed = f"{100 * r['error_plan']:.2f} %" if "error_plan" in r else "—"
        print(
            f"| {r['model']} | {100 * p['target']:.2f} % | {len(p['nodes'])}{'' if p['reached'] else ' (not reached)'} "
            f"| {p['float']} of {r['points']} | {100 * p['rel_error']:.2f} % ({100 * r['all_simulated']:.2f} %) "
            f"| {deployed} ({100 * r['error_all']:.2f} %) | {p['runs']} "
            f"| {100 * r['error_without_costliest']:.2f} % ({r['left_out']} nodes) |"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["resnet50", "bert_base"], choices=list(MODELS))
    ap.add_argument("--samples", action="store_true", help="also sweep on the 8 calibration samples")
    ap.add_argument("--target", nargs="*", default=[], help="MODEL=REL_ERROR: find the fewest nodes to leave out")
    args = ap.parse_args()
    targets = {name: float(value) for name, _, value in (t.partition("=") for t in args.target)}
    rows = measure_each(args.models, lambda path: measure(path, args.samples, targets.get(path.stem)))
    print_table(rows)
    print_plans(rows)


if __name__ == "__main__":
    main()
