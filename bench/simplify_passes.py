"""Simplify through the HTTP API (onnxruntime's basic optimizations, repeated while a pass finds
more: up to 3, session 58) against one bare onnxruntime pass in the same run — a session with
ORT_ENABLE_BASIC saving its optimized model, on the same file — on the onnx wheel's light models
(real architectures whose weights are ConstantOfShape: folding makes them) and an exported-style
transformer block with its dims fixed (tests/encoder_block.py, the QA37 case where a second pass
found more).

For each model: a fresh upload to one `onnx-studio serve`, its checks settled, simplify timed
(checks and onnxruntime's gate included), then undone; the bare pass timed on the same file. Each
the median of `--repeat` runs.

  .venv/bin/python bench/simplify_passes.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from bench.store_edits import Server, post  # noqa: E402

LIGHT = ROOT / ".venv/lib/python3.11/site-packages/onnx/backend/test/data/light"
MODELS = ["light_resnet50", "light_inception_v2", "light_densenet121", "light_vgg19", "light_squeezenet"]


def bare_pass(path: Path) -> float:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.intra_op_num_threads = 1
    with tempfile.TemporaryDirectory() as tmp:
        so.optimized_model_filepath = str(Path(tmp) / "out.onnx")
        t = time.perf_counter()
        ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        return time.perf_counter() - t


def encoder_file(folder: Path) -> Path:
    from encoder_block import encoder_block

    model = encoder_block()  # its batch and sequence fixed, as Make static leaves them
    for v in (*model.graph.input, *model.graph.output):
        for d, size in zip(v.type.tensor_type.shape.dim, (1, 128), strict=False):
            d.dim_value = size
    path = folder / "encoder_static.onnx"
    onnx.save(model, path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    (ROOT / "bench" / "corpus").mkdir(exist_ok=True)
    server = Server()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            paths = [LIGHT / f"{name}.onnx" for name in MODELS] + [encoder_file(Path(tmp))]
            for path in paths:
                summary = server.upload(path)
                mid = summary["id"]
                server.settled(mid)
                ours, nodes = [], None
                for _ in range(args.repeat):
                    seconds, answer = post(
                        f"{server.base}/api/models/{mid}/edits", {"base": 0, "ops": [{"op": "simplify"}]}
                    )
                    ours.append(seconds)
                    nodes = answer["changes"][0].split(": ", 1)[1].split(" nodes")[0] if answer.get("changes") else "-"
                    post(f"{server.base}/api/models/{mid}/undo", {})
                bare = [bare_pass(path) for _ in range(args.repeat)]
                api_s, bare_s = statistics.median(ours), statistics.median(bare)
                row = {
                    "model": path.stem,
                    "nodes": nodes,
                    "api_s": round(api_s, 3),
                    "bare_pass_s": round(bare_s, 3),
                    "ratio": round(api_s / bare_s, 2),
                }
                rows.append(row)
                print(row, file=sys.stderr)
    finally:
        server.close()
    print("| model | nodes | simplify through the API | one bare onnxruntime pass | ratio |")
    print("| --- | --- | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['model']} | {r['nodes']} | {r['api_s']} s | {r['bare_pass_s']} s | {r['ratio']}× |")


if __name__ == "__main__":
    main()
