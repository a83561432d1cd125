"""What telling a model's external data files costs (onnx_io/external.py), on a synthetic deep
graph: a chain of N nodes, every 44th an Add reading a weight kept in one external file.

- `missing_data`: which files a model's tensors name that it lacks (every summary of a revision
  not known to have its weights; an edit of one that has them inherits the answer);
- `files_in_use`: which of its files an edit's result still names (every edit of a model with
  external data files; the main graph's initializers first, the whole walk only when they name
  too few).

Each against the floor of walking every tensor of the model (traverse.tensors), in the same run.

    .venv/bin/python bench/external_walk.py [--nodes 44000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.onnx_io.external import ExternalFiles, files_in_use, missing_data
from app.onnx_io.traverse import tensors


def chain(n: int) -> onnx.ModelProto:
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        if i % 44 == 0:
            t = numpy_helper.from_array(np.zeros(4, np.float32), f"w{i}")
            t.data_location = onnx.TensorProto.EXTERNAL
            t.ClearField("raw_data")
            for k, v in (("location", "w.bin"), ("offset", str(16 * i)), ("length", "16")):
                t.external_data.add(key=k, value=v)
            inits.append(t)
            nodes.append(helper.make_node("Add", [prev, f"w{i}"], [f"t{i}"]))
        else:
            nodes.append(helper.make_node("Relu", [prev], [f"t{i}"]))
        prev = f"t{i}"
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(prev, onnx.TensorProto.FLOAT, [4])],
        inits,
    )
    return helper.make_model(g)


def best(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=44_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    model = chain(args.nodes)
    present = ExternalFiles({"w.bin": "d"}, lambda e: Path("/dev/null"), lambda e: 16 * args.nodes)
    absent = ExternalFiles({}, lambda e: Path("/dev/null"))
    floor = best(lambda: sum(1 for _ in tensors(model)), args.rounds)
    rows = [
        ("every tensor walked (floor)", floor),
        ("missing_data, file present", best(lambda: missing_data(model, present), args.rounds)),
        ("missing_data, file absent", best(lambda: missing_data(model, absent), args.rounds)),
        ("files_in_use", best(lambda: files_in_use(model, present), args.rounds)),
    ]
    print(f"{args.nodes:,} nodes, {len(model.graph.initializer):,} external weights, median of {args.rounds}")
    print("| measure | ms | × floor |")
    print("| --- | ---: | ---: |")
    for name, t in rows:
        print(f"| {name} | {1000 * t:.1f} | {t / floor:.2f} |")


if __name__ == "__main__":
    main()
