"""Reference checks on big models: keeping a case (one run of the head, its inputs and outputs
stored), the verdict on an edited revision (one run per case: in the edit's answer for a
model whose case runs quickly, else awaited after it), and an edit's answer without a case,
with one, and with the cases gating edits — each against a floor measured in the same run:
onnxruntime making a session of the model and running it once on the same inputs, in this
process.

  .venv/bin/python bench/reference.py [--models resnet50 bert_base gpt2_medium]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from app.store.blobs import BlobStore  # noqa: E402
from bench.store_edits import MODELS, Server, get, measure_each, post  # noqa: E402


def edit(server: Server, mid: str, value: str) -> float:
    base = get(f"{server.base}/api/models/{mid}")[1]["revision"]
    op = {"op": "set_metadata", "key": "bench", "value": value}
    return post(f"{server.base}/api/models/{mid}/edits", {"base": base, "ops": [op]})[0]


def floor(path: Path, blobs: Path, case: dict) -> float:
    """onnxruntime's own session and run on the case's inputs (as the server's worker runs it)."""
    store = BlobStore(blobs)
    feeds = {name: np.load(store.path(a["npy"])) for name, a in case["inputs"].items()}
    t = time.perf_counter()
    so = ort.SessionOptions()
    so.log_severity_level = 3
    ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)
    return time.perf_counter() - t


def measure(path: Path) -> dict:
    server = Server()
    try:
        mid = server.upload(path)["id"]
        server.settled(mid)
        dims = {
            d.dim_param: 1
            for i in onnx.load(path, load_external_data=False).graph.input
            for d in i.type.tensor_type.shape.dim
            if d.dim_param
        }
        edit_without = min(edit(server, mid, f"a{i}") for i in range(3))
        keep, added = post(f"{server.base}/api/models/{mid}/checks", {"dims": dims})
        edits, verdicts = [], []
        for i in range(3):  # each edit's verdict awaited before the next edit: no run competes with it
            edits.append(edit(server, mid, f"b{i}"))
            verdict, answer = get(f"{server.base}/api/models/{mid}/checks/verdict")
            verdicts.append(verdict)
        again, _ = get(f"{server.base}/api/models/{mid}/checks/verdict")
        req = urllib.request.Request(
            f"{server.base}/api/models/{mid}/checks",
            data=json.dumps({"gate": True}).encode(),
            headers={"Content-Type": "application/json"},
            method="PATCH",
        )
        urllib.request.urlopen(req, timeout=60).read()
        gated = []
        for i in range(3):
            gated.append(edit(server, mid, f"c{i}"))
            get(f"{server.base}/api/models/{mid}/checks/verdict")
        run_floor = min(floor(path, server.data / "blobs", added["case"]) for _ in range(2))
    finally:
        server.close()
    return {
        "model": path.stem,
        "keep": keep,
        "verdict": min(verdicts),
        "again": again,
        "floor": run_floor,
        "edit_without": edit_without,
        "edit_with": min(edits),
        "edit_gated": min(gated),
        "status": answer["status"],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["resnet50", "bert_base", "gpt2_medium"], choices=list(MODELS))
    args = ap.parse_args()
    rows = measure_each(args.models, measure)
    print(
        "| model | keep a case (one run, stored) | floor: ORT session + run | ratio | edit without a case | edit with one "
        "| its verdict after the answer | verdict again (kept) | edit with the cases gating |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['model']} | {r['keep']:.2f} s | {r['floor']:.2f} s | {r['keep'] / r['floor']:.2f}× "
            f"| {r['edit_without']:.2f} s | {r['edit_with']:.2f} s | {r['verdict']:.2f} s | {1000 * r['again']:.0f} ms "
            f"| {r['edit_gated']:.2f} s |"
        )


if __name__ == "__main__":
    main()
