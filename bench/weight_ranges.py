"""Weight ranges (GET .../weight-ranges) on big models: the first answer (every weight tensor
quantized per tensor and per channel) and the next one (kept in the store), against a floor
measured in the same run: onnx.load of the model (its weights read, nothing computed).

  .venv/bin/python bench/weight_ranges.py [--models resnet50 bert_base gpt2_medium]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.store_edits import MODELS, Server, get, measure_each  # noqa: E402


def measure(path: Path) -> dict:
    server = Server()
    try:
        mid = server.upload(path)["id"]
        server.settled(mid)
        first, answer = get(f"{server.base}/api/models/{mid}/weight-ranges")
        again, _ = get(f"{server.base}/api/models/{mid}/weight-ranges")
    finally:
        server.close()
    t = time.perf_counter()
    onnx.load(path)
    floor = time.perf_counter() - t
    weights = answer["weights"]
    risky = [w for w in weights if w["zeroed_per_tensor"] > 0.05]
    return {
        "model": path.stem,
        "tensors": len(weights),
        "first": first,
        "again": again,
        "floor": floor,
        "risky": len(risky),
        "worst": [
            (w["tensor"], round(w["zeroed_per_tensor"], 3), round(w["per_tensor_sqnr_db"] or 0, 1)) for w in weights[:3]
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["resnet50", "bert_base", "gpt2_medium"], choices=list(MODELS))
    args = ap.parse_args()
    rows = measure_each(args.models, measure)
    print(
        "| model | weight tensors | first answer | floor: onnx.load | ratio | again (kept) | over 5 % lost to 0 per tensor |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['model']} | {r['tensors']} | {r['first']:.2f} s | {r['floor']:.2f} s | {r['first'] / r['floor']:.2f}× "
            f"| {1000 * r['again']:.0f} ms | {r['risky']} |"
        )


if __name__ == "__main__":
    main()
