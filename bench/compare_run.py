"""Compare and run (issue 15), over HTTP on a fresh `onnx-studio serve`: the diff of two
revisions of a big graph (one rename apart) the first time it is asked for (both revisions
parsed) and again, against the floor of a bare onnx.load of the model's graph; a run of a model
on random inputs (POST .../run: the model written out, a session made, one run, the outputs
previewed) and with compare_to, against a bare onnxruntime session + run in this process.

  .venv/bin/python bench/compare_run.py [--diff llama_deep] [--run resnet50] [--repeat 3]

Models: bench/corpus (make_corpus.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.bench_models import CORPUS, free_port, wait_http  # noqa: E402


def call(base: str, method: str, path: str, body: dict | None = None) -> tuple[float, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=900) as r:
        answer = json.loads(r.read())
    return time.perf_counter() - t, answer


def upload(base: str, path: Path) -> str:
    out = subprocess.run(
        ["curl", "-s", "-F", f"file=@{path}", f"{base}/api/models"], capture_output=True, check=True, text=True
    ).stdout
    return json.loads(out)["id"]


def serve(data_dir: str):
    port = free_port()
    proc = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/onnx-studio"),
            "serve",
            "--port",
            str(port),
            "--data-dir",
            data_dir,
            "--log-level",
            "warning",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    wait_http(base + "/readyz")
    return proc, base


def bench_diff(name: str, repeat: int) -> dict:
    path = CORPUS / f"{name}.onnx"
    t = time.perf_counter()
    model = onnx.load(str(path), load_external_data=False)
    floor = time.perf_counter() - t
    nodes = len(model.graph.node)
    with tempfile.TemporaryDirectory() as data_dir:
        proc, base = serve(data_dir)
        try:
            mid = upload(base, path)
            op = {"op": "rename_node", "node": f"n{nodes // 2}", "name": "renamed_for_the_bench"}
            call(base, "POST", f"/api/models/{mid}/edits", {"base": 0, "ops": [op]})
            first, answer = call(base, "GET", f"/api/models/{mid}/diff?from=0&to=1")
            again = [call(base, "GET", f"/api/models/{mid}/diff?from=0&to=1")[0] for _ in range(repeat)]
        finally:
            proc.terminate()
            proc.wait(60)
    return {
        "model": name,
        "nodes": nodes,
        "first_s": round(first, 3),
        "again_s": round(statistics.median(again), 3),
        "server_ms": answer["ms"],
        "counts": answer["counts"],
        "floor_onnx_load_s": round(floor, 3),
    }


def bench_run(name: str, repeat: int) -> dict:
    import onnxruntime as ort

    path = CORPUS / f"{name}.onnx"
    t = time.perf_counter()
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {}
    for arg in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in arg.shape]
        feeds[arg.name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    sess.run(None, feeds)
    floor = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as data_dir:
        proc, base = serve(data_dir)
        try:
            mid = upload(base, path)
            dims = {d: 1 for arg in sess.get_inputs() for d in arg.shape if isinstance(d, str)}
            body = {"inputs": {k: {"random": {"seed": 0}} for k in feeds}, "dims": dims}
            runs = [call(base, "POST", f"/api/models/{mid}/run", body) for _ in range(repeat)]
            compared = call(base, "POST", f"/api/models/{mid}/run", {**body, "compare_to": 0})
        finally:
            proc.terminate()
            proc.wait(60)
    return {
        "model": name,
        "run_s": round(statistics.median(r[0] for r in runs), 3),
        "ort_run_ms": runs[0][1]["ms"],
        "with_compare_s": round(compared[0], 3),
        "floor_session_and_run_s": round(floor, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--diff", nargs="*", default=["llama_deep"])
    ap.add_argument("--run", nargs="*", default=["resnet50"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for name in args.diff:
        print(json.dumps({"diff": bench_diff(name, args.repeat)}), flush=True)
    for name in args.run:
        print(json.dumps({"run": bench_run(name, args.repeat)}), flush=True)


if __name__ == "__main__":
    main()
