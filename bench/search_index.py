"""How long Find's index of a big graph takes to build (views/search.py SearchIndex), against
loading the same model with onnx.load in the same run: a LLaMA-like graph of --layers layers
(tests/browser/scale_models.py; 19k nodes at 200), medians of --runs alternated runs.

    .venv/bin/python bench/search_index.py [--layers 200] [--runs 6]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import onnx

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=200)
    parser.add_argument("--runs", type=int, default=6)
    args = parser.parse_args()
    from browser.scale_models import llama_like

    from app.views.search import SearchIndex

    model = llama_like(args.layers)
    data = model.SerializeToString()
    index, load = [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        onnx.load_from_string(data)
        load.append(time.perf_counter() - t)
        t = time.perf_counter()
        SearchIndex(model)
        index.append(time.perf_counter() - t)
    ms = statistics.median(index) * 1000
    floor = statistics.median(load) * 1000
    print(f"{len(model.graph.node):,} nodes: index {ms:.0f} ms, onnx.load {floor:.1f} ms, ratio {ms / floor:.1f}x")


if __name__ == "__main__":
    main()
