"""Compare and run (issue 15), over HTTP on a fresh `onnx-studio serve`: the diff of two
revisions of a big graph (one rename apart) the first time it is asked for (both revisions
parsed) and again, against the floor of a bare onnx.load of the model's graph; a run of a model
on random inputs (POST .../run: the model written out, a session made, one run, the outputs
previewed), with compare_to, and with each node timed ("profile"), against a bare onnxruntime
session + run in this process (and two profiled sessions + 4 runs each, optimisations off and
on, for the timed one).

  .venv/bin/python bench/compare_run.py [--diff llama_deep] [--run resnet50] [--repeat 3]

Models: bench/corpus (make_corpus.py); `--run matmul_2gib` builds a model of 2.26 GiB here (two
MatMuls, weights in a data file beside it: no single .onnx can hold them) and uploads it with
its data file.
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


def upload(base: str, path: Path, *data_files: Path) -> str:
    files = [arg for p in (path, *data_files) for arg in ("-F", f"file=@{p}")]
    out = subprocess.run(
        ["curl", "-s", *files, f"{base}/api/models"], capture_output=True, check=True, text=True
    ).stdout
    return json.loads(out)["id"]


def matmul_2gib(folder: Path) -> tuple[Path, list[Path]]:
    """x[1, n] @ w0 @ w1 with n = 17408: two float32 weights of 1.13 GiB each, in big.bin."""
    from onnx import TensorProto, helper

    n = 17408
    row = np.full(n, 1.0 / n, np.float32).tobytes()
    weights = []
    with (folder / "big.bin").open("wb") as f:
        for k in range(2):
            for _ in range(n):
                f.write(row)
            t = TensorProto(name=f"w{k}", data_type=TensorProto.FLOAT, dims=[n, n], data_location=TensorProto.EXTERNAL)
            for key, value in (("location", "big.bin"), ("offset", str(k * n * n * 4)), ("length", str(n * n * 4))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
            weights.append(t)
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["h"]), helper.make_node("MatMul", ["h", "w1"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])
    graph = helper.make_graph(nodes, "matmul_2gib", [x], [y], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (folder / "matmul_2gib.onnx").write_bytes(model.SerializeToString())
    return folder / "matmul_2gib.onnx", [folder / "big.bin"]


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

    with tempfile.TemporaryDirectory() as built:
        if name == "matmul_2gib":
            path, data_files = matmul_2gib(Path(built))
        else:
            path, data_files = CORPUS / f"{name}.onnx", []
        return _bench_run(ort, name, path, data_files, repeat)


def _bench_run(ort, name: str, path: Path, data_files: list[Path], repeat: int) -> dict:
    t = time.perf_counter()
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {}
    for arg in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in arg.shape]
        if "float" in arg.type:
            feeds[arg.name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        else:  # token ids and the like: 0 is always a valid one
            feeds[arg.name] = np.zeros(shape, np.int64)
    sess.run(None, feeds)
    floor = time.perf_counter() - t
    dims = {d: 1 for arg in sess.get_inputs() for d in arg.shape if isinstance(d, str)}
    del sess  # its weights: 2 GiB and more
    with tempfile.TemporaryDirectory() as traces:  # the profiler's own cost, as the run asks for it
        t = time.perf_counter()
        # the nodes as written (optimisations off), then the graph onnxruntime optimises it into
        for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
            so = ort.SessionOptions()
            so.enable_profiling = True
            so.profile_file_prefix = str(Path(traces) / f"p{int(level)}")
            so.graph_optimization_level = level
            sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            for _ in range(4):
                sess.run(None, feeds)
            sess.end_profiling()
            del sess
        profile_floor = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as data_dir:
        proc, base = serve(data_dir)
        try:
            mid = upload(base, path, *data_files)
            body = {"inputs": {k: {"random": {"seed": 0}} for k in feeds}, "dims": dims}
            runs = [call(base, "POST", f"/api/models/{mid}/run", body) for _ in range(repeat)]
            compared = call(base, "POST", f"/api/models/{mid}/run", {**body, "compare_to": 0})
            profiled = call(base, "POST", f"/api/models/{mid}/run", {**body, "profile": True})
        finally:
            proc.terminate()
            proc.wait(60)
    return {
        "model": name,
        "run_s": round(statistics.median(r[0] for r in runs), 3),
        "ort_run_ms": runs[0][1]["ms"],
        "with_compare_s": round(compared[0], 3),
        "floor_session_and_run_s": round(floor, 3),
        "with_node_times_s": round(profiled[0], 3),
        "nodes_timed": len(profiled[1]["profile"]["nodes"]),
        "profiled_run_ms": profiled[1]["profile"]["ms"],
        "optimized_run_ms": profiled[1]["profile"]["optimized_run"]["ms"],
        "optimized_nodes": profiled[1]["profile"]["optimized_run"]["nodes"],
        **deployed(profiled[1]["profile"]["optimized_run"]),
        "floor_two_profiled_sessions_4_runs_each_s": round(profile_floor, 3),
    }


def deployed(run: dict) -> dict:
    """How much of the optimised run's kernel time landed on the model's own nodes (by_node)."""
    by_node, total = run.get("by_node") or [], sum(o["time_us"] for o in run["ops"]) or 1
    return {
        "deployed_nodes_with_a_kernel": sum(1 for n in by_node if n["time_us"] > 0),
        "deployed_nodes_fused": sum(1 for n in by_node if "fused_into" in n),
        "deployed_share_on_model_nodes": round(sum(n["time_us"] for n in by_node) / total, 4),
        "deployed_other_kernels": len(run.get("other") or []),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--diff", nargs="*", default=["llama_deep"])
    ap.add_argument("--run", nargs="*", default=["resnet50", "bert_base"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for name in args.diff:
        print(json.dumps({"diff": bench_diff(name, args.repeat)}), flush=True)
    for name in args.run:
        print(json.dumps({"run": bench_run(name, args.repeat)}), flush=True)


if __name__ == "__main__":
    main()
