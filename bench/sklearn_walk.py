"""Classical ML models through the app, as a scikit-learn user brings them: pipelines converted
by skl2onnx, LightGBM and XGBoost by onnxmltools (ai.onnx.ml's LinearClassifier, TreeEnsemble*,
SVMClassifier, Scaler, OneHotEncoder, DictVectorizer, ZipMap; text through StringNormalizer,
Tokenizer and TfIdfVectorizer). Each model is trained here on a small dataset, converted,
uploaded to a fresh store and walked as a person would: the runtime gate's verdict, a run on
random inputs (one click: categorical ones drawn from their encoder's vocabulary) checked
against onnxruntime run directly on the same values, the costs with the batch given (FLOPs,
parameters, what is left unknown), a tree ensemble's trees, and deleting the ZipMap a
classifier ends in (its probabilities left as a tensor output: the runtime gate's verdict).

    .venv/bin/pip install -r bench/requirements.txt
    .venv/bin/python bench/sklearn_walk.py [--only NAME]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import onnx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BATCH = 5


def pipelines() -> dict[str, onnx.ModelProto]:
    """name -> converted model, each trained on a dataset scikit-learn ships."""
    import lightgbm
    import onnxmltools
    import pandas as pd
    import xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType as MlFloat
    from skl2onnx import convert_sklearn, to_onnx
    from skl2onnx.common.data_types import DictionaryType, FloatTensorType, StringTensorType
    from sklearn.cluster import KMeans
    from sklearn.compose import ColumnTransformer
    from sklearn.datasets import load_diabetes, load_iris
    from sklearn.decomposition import PCA
    from sklearn.ensemble import GradientBoostingRegressor, IsolationForest, RandomForestClassifier
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    from sklearn.svm import SVC

    warnings.filterwarnings("ignore")
    x, y = load_iris(return_X_y=True)
    x = x.astype(np.float32)
    xd, yd = load_diabetes(return_X_y=True)
    xd = xd.astype(np.float32)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "a": rng.normal(size=200).astype(np.float32),
            "b": rng.normal(size=200).astype(np.float32),
            "color": rng.choice(["red", "green", "blue"], size=200),
        }
    )
    columns = ColumnTransformer(
        [
            ("num", make_pipeline(SimpleImputer(), StandardScaler()), ["a", "b"]),
            ("cat", OneHotEncoder(handle_unknown="error"), ["color"]),
        ]
    )
    mixed = Pipeline([("prep", columns), ("clf", LogisticRegression())]).fit(frame, frame["a"] > 0)
    texts = ["the cat sat", "a dog barked", "the cat ran", "dogs and cats", "a bird sang", "the bird flew"] * 5
    text = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, [0, 1, 0, 1, 2, 2] * 5)
    dicts = make_pipeline(DictVectorizer(sparse=False), LogisticRegression()).fit(
        [{"x": 1.0, "y": 2.0}, {"x": 3.0, "z": 1.0}, {"y": 1.0}] * 4, [0, 1, 0] * 4
    )
    return {
        "logistic regression": to_onnx(LogisticRegression(max_iter=500).fit(x, y), x[:1]),
        "random forest": to_onnx(RandomForestClassifier(n_estimators=30, max_depth=6).fit(x, y), x[:1]),
        "gradient boosting": to_onnx(GradientBoostingRegressor(n_estimators=50).fit(xd, yd), xd[:1]),
        "isolation forest": to_onnx(
            IsolationForest(n_estimators=20).fit(x), x[:1], target_opset={"": 17, "ai.onnx.ml": 3}
        ),
        "SVC": to_onnx(SVC(probability=True).fit(x, y), x[:1]),
        "k-means": to_onnx(KMeans(3, n_init=3).fit(x), x[:1]),
        "MLP": to_onnx(MLPClassifier((32, 16), max_iter=300).fit(x, y), x[:1]),
        "PCA + kNN": to_onnx(make_pipeline(PCA(2), KNeighborsClassifier(3)).fit(x, y), x[:1]),
        "columns (number + category)": convert_sklearn(
            mixed,
            initial_types=[
                ("a", FloatTensorType([None, 1])),
                ("b", FloatTensorType([None, 1])),
                ("color", StringTensorType([None, 1])),
            ],
            target_opset=18,
        ),
        "tf-idf text": convert_sklearn(
            text,
            initial_types=[("text", StringTensorType([None, 1]))],
            options={TfidfVectorizer: {"tokenexp": r"\w+"}},
        ),
        "dict features": convert_sklearn(
            dicts, initial_types=[("feats", DictionaryType(StringTensorType([]), FloatTensorType([])))]
        ),
        "LightGBM": onnxmltools.convert_lightgbm(
            lightgbm.LGBMClassifier(n_estimators=30, verbose=-1).fit(x, y),
            initial_types=[("input", MlFloat([None, 4]))],
            zipmap=False,
        ),
        "XGBoost": onnxmltools.convert_xgboost(
            xgboost.XGBRegressor(n_estimators=30).fit(xd, yd), initial_types=[("input", MlFloat([None, 10]))]
        ),
    }


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
