"""How long a big gradient-boosted model's trees take to read (GET .../trees), against loading
the model with onnx.load in the same run: a LightGBM regressor of --trees trees with up to
--leaves leaves each, trained here on synthetic data and converted by onnxmltools.

    .venv/bin/pip install -r bench/requirements.txt
    .venv/bin/python bench/tree_read.py [--trees 1000] [--leaves 255]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def lightgbm_model(trees: int, leaves: int) -> bytes:
    import lightgbm
    import onnxmltools
    from onnxmltools.convert.common.data_types import FloatTensorType

    rng = np.random.default_rng(0)
    x = rng.normal(size=(20_000, 32)).astype(np.float32)
    y = x @ rng.normal(size=32) + np.sin(3 * x[:, 0]) + rng.normal(scale=0.1, size=len(x))
    fitted = lightgbm.LGBMRegressor(n_estimators=trees, num_leaves=leaves, min_child_samples=5, verbose=-1).fit(x, y)
    model = onnxmltools.convert_lightgbm(fitted, initial_types=[("input", FloatTensorType([None, 32]))])
    return model.SerializeToString()


def best(f, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--leaves", type=int, default=255)
    args = parser.parse_args()
    from app import create_app

    data = lightgbm_model(args.trees, args.leaves)
    node_count = sum(
        len(a.ints) for n in onnx.load_from_string(data).graph.node for a in n.attribute if a.name == "nodes_nodeids"
    )
    with tempfile.TemporaryDirectory(prefix="tree-read-") as tmp:
        client = create_app({"DATA_DIR": tmp, "TESTING": True}).test_client()
        mid = client.post("/api/models", data={"file": (io.BytesIO(data), "lgbm.onnx")}).get_json()["id"]
        graph = client.get(f"/api/models/{mid}/graph").get_json()
        nid = next(n["id"] for n in graph["nodes"] if n["op_type"].startswith("TreeEnsemble"))
        load = best(lambda: onnx.load_from_string(data))
        summary = best(lambda: client.get(f"/api/models/{mid}/trees?node={nid}"))
        one = best(lambda: client.get(f"/api/models/{mid}/trees?node={nid}&tree={args.trees // 2}"))
        got = client.get(f"/api/models/{mid}/trees?node={nid}").get_json()
    print(f"{args.trees} trees, {node_count:,} nodes, {len(data) / 1e6:.1f} MB; depth {got['depth']}")
    print(f"onnx.load        {load * 1000:8.1f} ms (floor)")
    print(
        f"GET .../trees    {summary * 1000:8.1f} ms  {summary / load:5.2f}x onnx.load (the model is loaded from the store too)"
    )
    print(f"... &tree=K      {one * 1000:8.1f} ms  {one / load:5.2f}x")


if __name__ == "__main__":
    main()
