"""The "as stored" download of a model whose weights are in an external data file, after edits:
one that replaced no weight (the data file copied as it came) and one that replaced a weight
(its old bytes zeroed on the way out, api/shipped_data.py) — against floors measured in the
same run: the download of the upload itself, and a plain copy of the data file on this disk.

  .venv/bin/python bench/external_download.py [--mib 512] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.bench_models import free_port, wait_http  # noqa: E402

SIDE = 1024  # each weight 1024 x 1024 float32: 4 MiB


def build(folder: Path, mib: int) -> Path:
    """A chain of MatMuls whose weights (4 MiB each) are all in model.data."""
    count = max(1, mib // 4)
    rng = np.random.default_rng(0)
    nodes, weights = [], []
    for i in range(count):
        nodes.append(helper.make_node("MatMul", [f"h{i}", f"w{i}"], [f"h{i + 1}"], name=f"mm{i}"))
        weights.append(numpy_helper.from_array(rng.standard_normal((SIDE, SIDE), dtype=np.float32) / 32, f"w{i}"))
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("h0", onnx.TensorProto.FLOAT, [1, SIDE])],
        [helper.make_tensor_value_info(f"h{count}", onnx.TensorProto.FLOAT, [1, SIDE])],
        weights,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    path = folder / "model.onnx"
    onnx.save(model, path, save_as_external_data=True, location="model.data", size_threshold=0)
    return path


def post(base: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(
        base + path, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def timed_download(base: str, mid: str, rev: int, dest: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        url = f"{base}/api/models/{mid}/download?revision={rev}"
        subprocess.run(["curl", "-sf", "-o", str(dest), url], check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ext-download-", dir=ROOT / "bench"))
    port = free_port()
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/onnx-studio"), "serve", "--port", str(port), "--data-dir", str(work / "store")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        path = build(work, args.mib)
        data = work / "model.data"
        wait_http(base + "/api/models")
        out = subprocess.run(
            ["curl", "-sf", "-F", f"file=@{path}", "-F", f"file=@{data}", f"{base}/api/models"],
            capture_output=True,
            check=True,
        ).stdout
        mid = json.loads(out)["id"]
        post(base, f"/api/models/{mid}/edits", {"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]})
        zeros = {"dtype": "FLOAT", "shape": [SIDE, SIDE], "values": [0.0] * SIDE * SIDE}
        answer = post(
            base,
            f"/api/models/{mid}/edits",
            {"base": 1, "ops": [{"op": "set_initializer", "name": "w0", "value": zeros}]},
        )
        dest = work / "download.zip"
        t_copy = []
        for _ in range(args.runs):
            t = time.perf_counter()
            shutil.copyfile(data, work / "copy.data")
            t_copy.append(time.perf_counter() - t)
        rows = {
            "upload (rev 0)": timed_download(base, mid, 0, dest, args.runs),
            "metadata edit (rev 1): file as it came": timed_download(base, mid, 1, dest, args.runs),
            "weight replaced (rev 2): 4 MiB zeroed": timed_download(base, mid, 2, dest, args.runs),
        }
        floor = statistics.median(t_copy)
        size = data.stat().st_size
        print(f"data file {size / 2**20:,.0f} MiB; disk copy {floor:.2f} s ({size / floor / 2**20:,.0f} MiB/s)")
        print(f"edit line: {answer['changes'][-1]}")
        print("| download (as stored) | seconds | ÷ upload's download | ÷ disk copy |")
        print("|---|---|---|---|")
        first = rows["upload (rev 0)"]
        for name, seconds in rows.items():
            print(f"| {name} | {seconds:.2f} | {seconds / first:.2f} | {seconds / floor:.2f} |")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
