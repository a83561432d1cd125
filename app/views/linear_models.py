"""A linear model's coefficients as a person reads them (GET .../coefficients): ai.onnx.ml's
LinearClassifier and LinearRegressor, and an SVM without support vectors (liblinear's), hold a
flat list of rows × features weights; this makes them a table — one row of weights per class or
target with its intercept, and the features ranked by how much they weigh across the rows (the
L2 norm of their column), which is what a person asks of a logistic regression first.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from ..onnx_io.ml_types import class_labels, node_attrs
from ..onnx_io.traverse import standard_domain

LINEAR_OPS = frozenset({"LinearClassifier", "LinearRegressor", "SVMClassifier", "SVMRegressor"})
MAX_FEATURES = 200  # features listed, the heaviest first
MAX_ROWS = 64  # classes or targets whose weights each feature row carries


class BadLinear(ValueError):
    """The node's attributes don't make rows × features weights (the message says why)."""


def is_linear(node: onnx.NodeProto) -> bool:
    """A linear model: LinearClassifier/LinearRegressor, or an SVM with no support vectors."""
    if standard_domain(node.domain) != "ai.onnx.ml" or node.op_type not in LINEAR_OPS:
        return False
    a = node_attrs(node)
    return not (a.get("vectors_per_class") or a.get("n_supports") or a.get("support_vectors"))


def _text(v) -> str | int:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _rows(node: onnx.NodeProto, a: dict, count: int) -> tuple[list, list[float | None]]:
    """(labels of the rows: a class, a target's index; intercepts, None where there are none)."""
    labels = [_text(x) for x in class_labels(a)]
    if node.op_type.endswith("Classifier"):
        if count == 1 and len(labels) == 2:  # one score, for the second class (the first's its complement)
            labels = [labels[1]]
        elif len(labels) != count:
            raise BadLinear(f"{len(labels)} class labels for {count} rows of coefficients")
    else:
        labels = list(range(count))
    if node.op_type.startswith("SVM"):  # liblinear: rho[0] added to every row
        rho = a.get("rho") or []
        return labels, [float(rho[0]) if rho else None] * count
    intercepts = a.get("intercepts") or []
    if intercepts and len(intercepts) != count:
        raise BadLinear(f"{len(intercepts)} intercepts for {count} rows of coefficients")
    return labels, [float(x) for x in intercepts] or [None] * count


def _row_count(node: onnx.NodeProto, a: dict) -> int:
    if node.op_type == "LinearRegressor":
        return int(a.get("targets", 1))
    if node.op_type == "SVMRegressor":
        return 1
    if node.op_type == "LinearClassifier" and a.get("intercepts"):
        return len(a["intercepts"])
    return len(class_labels(a))


def linear_summary(node: onnx.NodeProto) -> dict:
    """{"op_type", "rows": [{"label", "intercept"}], "features", "post_transform", "by_feature":
    [{"feature", "weights": [one per row, the first MAX_ROWS], "norm"}] the heaviest first (at
    most MAX_FEATURES), "rows_shown"}. BadLinear when the lists don't make a table."""
    a = node_attrs(node)
    coefficients = np.asarray(a.get("coefficients") or [], dtype=np.float64)
    count = _row_count(node, a)
    if count < 1 or not len(coefficients) or len(coefficients) % count:
        raise BadLinear(f"{len(coefficients)} coefficients don't make {count} rows of features")
    weights = coefficients.reshape(count, -1)
    labels, intercepts = _rows(node, a, count)
    norms = np.sqrt((weights**2).sum(axis=0))
    order = np.argsort(-norms, kind="stable")[:MAX_FEATURES]
    shown = weights[:MAX_ROWS]
    return {
        "op_type": node.op_type,
        "rows": [{"label": lab, "intercept": _number(b)} for lab, b in zip(labels, intercepts, strict=True)],
        "features": int(weights.shape[1]),
        "post_transform": _text(a.get("post_transform", "NONE")),
        "rows_shown": len(shown),
        "by_feature": [
            {"feature": int(j), "weights": [_number(w) for w in shown[:, j]], "norm": _number(norms[j])} for j in order
        ],
    }


def _number(x) -> float | None:
    """A float as JSON takes it: NaN and infinities (a hostile list) as null."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None
