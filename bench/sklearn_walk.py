"""Classical ML models through the app, as a scikit-learn user brings them (tests/sklearn_exports.py:
pipelines converted by skl2onnx, LightGBM and XGBoost by onnxmltools — ai.onnx.ml's
LinearClassifier, TreeEnsemble*, SVMClassifier, Scaler, OneHotEncoder, DictVectorizer, ZipMap;
text through StringNormalizer, Tokenizer and TfIdfVectorizer). Each model is trained here on a
small dataset, converted, uploaded to a fresh store and walked as a person would: the runtime gate's verdict, a run on
random inputs (one click: categorical ones drawn from their encoder's vocabulary) checked
against onnxruntime run directly on the same values, the costs with the batch given (FLOPs,
parameters, what is left unknown), a tree ensemble's trees, and deleting the ZipMap a
classifier ends in (its probabilities left as a tensor output: the runtime gate's verdict).

    .venv/bin/pip install xgboost   # optional: the XGBoost export (bench/requirements.txt)
    .venv/bin/python bench/sklearn_walk.py [--only NAME]
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
from tests.sklearn_exports import pipelines  # noqa: E402  (the tests' exports: one home)

BATCH = 5


def _fed(client, mid: str, answer: dict) -> dict:
    """The values the run fed, as onnxruntime takes them (read back from the run's previews)."""
    feeds = {}
    for name, preview in answer["inputs"].items():
        if preview.get("kind") == "map":
            feeds[name] = dict(zip(preview["keys"]["values"], preview["values"]["values"], strict=True))
        else:
            dtype = {"FLOAT": np.float32, "STRING": object, "INT64": np.int64}[preview["dtype"]]
            feeds[name] = np.array(preview["values"], dtype=dtype).reshape(preview["shape"])
    return feeds


def _same(ours: dict, theirs) -> bool:
    if "values" in ours and isinstance(ours["values"], list):
        return np.allclose(np.asarray(ours["values"], dtype=np.float64), np.asarray(theirs, np.float64).reshape(-1))
    return ours.get("kind") == "sequence" and ours["count"] == len(theirs)


def walk(name: str, model: onnx.ModelProto, client) -> dict:
    import onnxruntime as ort

    data = model.SerializeToString()
    start = time.perf_counter()
    r = client.post("/api/models", data={"file": (io.BytesIO(data), f"{name}.onnx")})
    row: dict = {
        "model": name,
        "nodes": len(model.graph.node),
        "upload_ms": round((time.perf_counter() - start) * 1000),
    }
    mid = r.get_json()["id"]
    runtime = client.get(f"/api/models/{mid}/validation").get_json()["runtime"]
    row["gate"] = runtime["status"]
    stats0 = client.get(f"/api/models/{mid}/stats").get_json()
    dims = {d: BATCH for d in stats0["input_dims"]}
    query = ",".join(f"{d}={n}" for d, n in dims.items())
    stats = client.get(f"/api/models/{mid}/stats?dims={query}").get_json() if dims else stats0
    row["flops"] = stats["totals"]["flops"]
    row["unknown_flops"] = stats["unknown"]["flops_nodes"]
    row["unknown_outputs"] = stats["unknown"]["output_nodes"]
    row["params"] = stats["totals"]["params"]
    answer = client.post(f"/api/models/{mid}/run", json={"dims": dims})
    if answer.status_code != 200:
        row["run"] = f"{answer.status_code}: {answer.get_json()['error']['message'][:80]}"
    else:
        got = answer.get_json()
        sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        theirs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, _fed(client, mid, got)), strict=True))
        same = all(_same(got["outputs"][k], v) for k, v in theirs.items())
        row["run"] = "ok, = onnxruntime" if same else "ok, DIFFERS from onnxruntime"
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    ensembles = [n["id"] for n in graph["nodes"] if n["op_type"].startswith("TreeEnsemble")]
    if ensembles:
        t = client.get(f"/api/models/{mid}/trees?node={ensembles[0]}").get_json()
        row["trees"] = f"{t['trees']} trees, {t['splits']} splits, depth {t['depth']['min']}–{t['depth']['max']}"
    zipmap = next((n for n in graph["nodes"] if n["op_type"] == "ZipMap"), None)
    if zipmap is not None:
        op = {"op": "delete_node", "node": zipmap["id"], "reconnect": True}
        edited = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
        verdict = edited.get_json()
        row["zipmap"] = (
            f"{edited.status_code}: {verdict['error']['message'][:60]}"
            if edited.status_code != 200
            else f"deleted, gate {verdict['validation']['runtime']['status']}"
        )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="models whose name holds this")
    args = parser.parse_args()
    from app import create_app

    models = pipelines()
    rows = []
    with tempfile.TemporaryDirectory(prefix="sklearn-walk-") as tmp:
        client = create_app({"DATA_DIR": tmp, "TESTING": True}).test_client()
        for name, model in models.items():
            if args.only and args.only not in name:
                continue
            rows.append(walk(name, model, client))
            print(rows[-1], flush=True)
    print(
        "\n| model | nodes | gate | run on random inputs | FLOPs | unknown FLOPs / outputs | params | trees"
        " | ZipMap deleted |"
    )
    print("|---|---:|---|---|---:|---:|---:|---|---|")
    for r in rows:
        print(
            f"| {r['model']} | {r['nodes']} | {r['gate']} | {r['run']} | {r['flops']:,} |"
            f" {r['unknown_flops']} / {r['unknown_outputs']} | {r['params']:,} | {r.get('trees', '')}"
            f" | {r.get('zipmap', '')} |"
        )


if __name__ == "__main__":
    main()
