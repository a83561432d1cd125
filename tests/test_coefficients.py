"""A linear model's weights as a table (GET .../coefficients, app/views/linear_models.py): the
rows and intercepts read off the flat lists are the ones onnxruntime computes with — X times the
table's weights plus its intercepts gives the scores onnxruntime returns — and lists that make no
table are refused naming why."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from test_ml_types import FEATURES, _ml, _model, _svm
from testkit import upload

RNG = np.random.default_rng(7)


def _get(client, model, node: str = "n0", status: int = 200) -> dict:
    model.graph.node[0].name = "n0"
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.get(f"/api/models/{mid}/coefficients?node={node}")
    assert r.status_code == status, r.get_json()
    return r.get_json()


def _scores(model, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x})[-1]


def _from_table(answer: dict) -> tuple[np.ndarray, np.ndarray]:
    """(weights rows × features, intercepts) rebuilt from the answer's feature rows."""
    w = np.zeros((answer["rows_shown"], answer["features"]))
    for f in answer["by_feature"]:
        w[:, f["feature"]] = f["weights"]
    return w, np.array([r["intercept"] or 0.0 for r in answer["rows"]])


CASES = {
    "logistic regression, 3 classes": lambda: _ml(
        "LinearClassifier", ["label", "scores"], classlabels_ints=[4, 5, 6],
        coefficients=RNG.normal(size=3 * FEATURES).tolist(), intercepts=[0.5, -1.0, 2.0]),
    "linear regression, 2 targets": lambda: _ml(
        "LinearRegressor", ["y"], targets=2, coefficients=RNG.normal(size=2 * FEATURES).tolist(), intercepts=[1.0, 3.0]),
    "linear SVM (liblinear), 3 classes": lambda: _svm(3, prob=False, linear=True),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_the_table_is_what_onnxruntime_computes_with(client, case):
    model = _model([CASES[case]()])
    answer = _get(client, model)
    w, b = _from_table(answer)
    x = RNG.normal(size=(5, FEATURES)).astype(np.float32)
    np.testing.assert_allclose(x @ w.T + b, _scores(model, x), rtol=1e-5, atol=1e-5)
    norms = [f["norm"] for f in answer["by_feature"]]
    assert norms == sorted(norms, reverse=True) and len(norms) == FEATURES


def test_class_labels_and_the_binary_case(client):
    answer = _get(client, _model([CASES["logistic regression, 3 classes"]()]))
    assert [r["label"] for r in answer["rows"]] == [4, 5, 6]
    assert [r["intercept"] for r in answer["rows"]] == [0.5, -1.0, 2.0]
    binary = _ml(
        "LinearClassifier",
        ["label", "scores"],
        classlabels_strings=["no", "yes"],
        coefficients=[1.0, -2.0, 0.0, 3.0],
        intercepts=[0.25],
        post_transform="LOGISTIC",
    )
    answer = _get(client, _model([binary]))
    assert answer["rows"] == [{"label": "yes", "intercept": 0.25}] and answer["post_transform"] == "LOGISTIC"
    assert [f["feature"] for f in answer["by_feature"]] == [3, 1, 0, 2]


def test_what_makes_no_table_is_refused(client):
    rbf = _get(client, _model([_svm(3, prob=False)]), status=400)
    assert rbf["error"]["code"] == "not_linear"
    odd = _ml(
        "LinearClassifier",
        ["label", "scores"],
        classlabels_ints=[0, 1, 2],
        coefficients=[1.0] * 7,
        intercepts=[0.0] * 3,
    )
    bad = _get(client, _model([odd]), status=422)
    assert bad["error"]["code"] == "bad_coefficients" and "7 coefficients" in bad["error"]["message"]
    labels = _ml(
        "LinearClassifier", ["label", "scores"], classlabels_ints=[0, 1], coefficients=[1.0] * 12, intercepts=[0.0] * 3
    )
    assert "2 class labels for 3 rows" in _get(client, _model([labels]), status=422)["error"]["message"]


def test_non_finite_weights_are_null(client):
    weights = [float("nan"), 1.0, float("inf"), 2.0]
    answer = _get(client, _model([_ml("LinearRegressor", ["y"], coefficients=weights, intercepts=[0.0])]))
    assert {f["feature"]: f["weights"][0] for f in answer["by_feature"]} == {0: None, 1: 1.0, 2: None, 3: 2.0}
