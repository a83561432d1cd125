"""Composing models (the compose edit op) on big ones: what a post-processing model added after
ResNet-50 / BERT-base costs, against a floor measured in the same run — the same job as a
Python script does it (onnx.load both, onnx.compose.merge_models, onnx.save), which checks
nothing a person would want checked (the studio's edit also runs onnx.checker, the full check and
onnxruntime's smoke run, and stores only the new graph).

For each model: a fresh `onnx-studio serve`, the model uploaded and its checks settled, the
post-processing model (a ReduceMean, an ArgMax and a Softmax over the first output) uploaded
through /api/blobs, then `compose` after the model (median of REPEAT: undone between); the store's
growth per composition; the floor: the script's time (median of REPEAT).

  .venv/bin/python bench/compose.py [--models resnet50 bert_base]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx
from onnx import helper as h

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.store_edits import MODELS, Server, measure_each, post  # noqa: E402

REPEAT = 3


def post_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """Reads a tensor of the model's first output's type and rank: its mean over the last axis,
    the ArgMax and the Softmax of that — names that clash with nothing of the model."""
    out = model.graph.output[0]
    rank = len(out.type.tensor_type.shape.dim)
    elem = out.type.tensor_type.elem_type
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    # ReduceMean's axes: an input from opset 18, an attribute before
    reduce = (
        h.make_node("ReduceMean", ["features", "axes"], ["pooled"], keepdims=0)
        if opset >= 18
        else h.make_node("ReduceMean", ["features"], ["pooled"], keepdims=0, axes=[rank - 1])
    )
    nodes = [
        reduce,
        h.make_node("Softmax", ["pooled"], ["post_probs"], axis=-1),
        h.make_node("ArgMax", ["pooled"], ["post_label"], axis=-1, keepdims=0),
    ]
    axes = h.make_tensor("axes", onnx.TensorProto.INT64, [1], [rank - 1])
    features = onnx.ValueInfoProto(name="features")
    features.type.CopyFrom(out.type)
    graph = h.make_graph(
        nodes,
        "post",
        [features],
        [
            h.make_tensor_value_info("post_probs", elem, [None] * (rank - 1)),
            h.make_tensor_value_info("post_label", onnx.TensorProto.INT64, [None] * (rank - 2)),
        ],
        [axes] if opset >= 18 else [],
    )
    added = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    added.ir_version = model.ir_version
    return added


def floor_script(path: Path, added: Path, connect: dict, out: Path) -> float:
    """The same composition as a script: load both, merge, save."""
    t = time.perf_counter()
    m1, m2 = onnx.load(path), onnx.load(added)
    merged = onnx.compose.merge_models(m1, m2, io_map=[(src, dst) for dst, src in connect.items()])
    onnx.save(merged, out)
    return time.perf_counter() - t


def measure(path: Path) -> dict:
    model = onnx.load(path, load_external_data=False)
    folder = Path(tempfile.mkdtemp(prefix="compose-bench-"))
    added_path = folder / "post.onnx"
    onnx.save(post_model(model), added_path)
    connect = {"features": model.graph.output[0].name}
    row: dict = {"model": path.stem, "size": path.stat().st_size, "nodes": len(model.graph.node)}
    server = Server()
    try:
        mid = server.upload(path)["id"]
        server.settled(mid)
        out = subprocess.run(
            ["curl", "-sf", "-F", f"file=@{added_path}", f"{server.base}/api/blobs"], capture_output=True, check=True
        ).stdout
        blob = json.loads(out)["blob"]
        op = {"op": "compose", "model": {"onnx": blob}, "connect": connect}
        times, growth = [], []
        for _ in range(REPEAT):
            before = server.store_bytes()
            dt, answer = post(f"{server.base}/api/models/{mid}/edits", {"base": 0, "ops": [op]})
            times.append(dt)
            growth.append(server.store_bytes() - before)
            row["changes"] = answer["changes"][0]
            post(f"{server.base}/api/models/{mid}/undo")
        row.update(compose=statistics.median(times), growth=statistics.median(growth))
    finally:
        server.close()
    floors = [floor_script(path, added_path, connect, folder / "merged.onnx") for _ in range(REPEAT)]
    row["floor"] = statistics.median(floors)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["resnet50", "bert_base"], choices=list(MODELS))
    args = ap.parse_args()
    rows = measure_each(args.models, measure)
    print(
        "| model | size | nodes | compose, checks included | floor: load, merge_models, save | ratio | store growth |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['model']} | {r['size'] / 2**20:.0f} MiB | {r['nodes']:,} | {r['compose']:.2f} s | {r['floor']:.2f} s "
            f"| {r['compose'] / r['floor']:.2f}× | {r['growth'] / 2**10:.0f} KiB |"
        )


if __name__ == "__main__":
    main()
