"""FLOPs and parameters of ai.onnx.ml's classical-ML operators, what scikit-learn, LightGBM and
XGBoost exports are made of: without them a random forest counted 0 parameters and unknown
FLOPs. Same conventions as costs.py (a multiply-accumulate is 2); N is X's rows (1 for a 1-D X),
F its features (last dim):

  LinearClassifier, LinearRegressor   2 · N · F · E + N · E with intercepts (E scores: the
                      coefficients' rows), + the post_transform per score, + N · E for a
                      classifier's argmax
  SVMClassifier       linear (no support vectors): as LinearClassifier; otherwise
                      N · V · kernel (LINEAR 2F, RBF 3F + 2, POLY and SIGMOID 2F + 3) for the V
                      support vectors, + N · (2 · (C − 1) · V + 2 · P) for the P = C(C−1)/2 pairs'
                      sums and votes, + 4 per pair with probabilities (the pairs' sigmoids;
                      the coupling into C probabilities not counted), + the post_transform
  SVMRegressor        N · V · kernel + 2 · N · V + N (linear: 2 · N · F + N)
  TreeEnsembleClassifier, TreeEnsembleRegressor, TreeEnsemble
                      N · Σ over trees (depth + weights per leaf): a comparison per level down
                      each tree's longest path, then its leaf's additions (an upper bound: a row
                      may stop at a shallower leaf), + the post_transform per score
  Scaler 2, Normalizer 3, Binarizer 1, Imputer 1 per element
  ZipMap, ArrayFeatureExtractor, DictVectorizer, FeatureVectorizer, CastMap, OneHotEncoder,
  LabelEncoder, CategoryMapper   0 (data movement and lookups)
post_transform per score: SOFTMAX / SOFTMAX_ZERO 3 (as Softmax), LOGISTIC / PROBIT 1.

Parameters: the elements of every float or tensor attribute of an ai.onnx.ml node (coefficients,
intercepts, support vectors, rho, thresholds, leaf weights, base values, a Scaler's scale and
offset); ids, modes and labels are a model's structure, not counted.
"""

from __future__ import annotations

import math

import onnx
from onnx import AttributeProto

from ..onnx_io.ml_types import class_labels, node_attrs
from ..onnx_io.sizes import data_bytes
from .costs import Values, node_attr, node_input, tensor_elements
from .trees import BadTrees, is_ensemble, read_forest, tree_shapes

PER_ELEMENT = {"Scaler": 2, "Normalizer": 3, "Binarizer": 1, "Imputer": 1}
MOVEMENT = frozenset(
    {
        "ZipMap",
        "ArrayFeatureExtractor",
        "DictVectorizer",
        "FeatureVectorizer",
        "CastMap",
        "OneHotEncoder",
        "LabelEncoder",
        "CategoryMapper",
    }
)
POST_TRANSFORM = {"NONE": 0, "SOFTMAX": 3, "SOFTMAX_ZERO": 3, "LOGISTIC": 1, "PROBIT": 1}
KERNEL = {"LINEAR": (2, 0), "RBF": (3, 2), "POLY": (2, 3), "SIGMOID": (2, 3)}  # (per feature, once)
ENSEMBLES = frozenset({"TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble"})


def ml_flops(node: onnx.NodeProto, v: Values) -> int | None:
    """FLOPs of one ai.onnx.ml node (the formulas above), or None when unknown."""
    op = node.op_type
    if op in MOVEMENT:
        return 0
    if op in PER_ELEMENT:
        out = v.elements(node.output[0]) if node.output else None
        return None if out is None else PER_ELEMENT[op] * out
    x = v.shape(node_input(node, 0))
    if not x:
        return None
    rows, features = (1, x[0]) if len(x) == 1 else (x[0], x[-1])
    scores = _scores(node, v)
    post = 0 if scores is None else rows * scores * _post(node)
    if op in ("LinearClassifier", "LinearRegressor"):
        return _linear(node, rows, features, post, classifier=op == "LinearClassifier")
    if op == "SVMClassifier":
        return _svm_classifier(node, rows, features, post)
    if op == "SVMRegressor":
        return _svm_regressor(node, rows, features)
    if op in ENSEMBLES:
        per_row = _per_row_in_trees(node)
        return None if per_row is None else rows * per_row + post
    return None


def _scores(node: onnx.NodeProto, v: Values) -> int | None:
    """The width of the scores the post_transform runs on: the last dim of the scores output."""
    out = node.output[-1] if node.output else ""
    shape = v.shape(out)
    return shape[-1] if shape else None


def _post(node: onnx.NodeProto) -> int:
    transform = node_attr(node, "post_transform", b"NONE")
    transform = transform.decode() if isinstance(transform, bytes) else str(transform)
    return POST_TRANSFORM.get(transform, 0)


def _linear(node: onnx.NodeProto, rows: int, features: int, post: int, classifier: bool) -> int | None:
    coefficients = len(node_attr(node, "coefficients", []))
    if not features or coefficients % features:
        return None
    targets = coefficients // features
    intercepts = rows * targets if node_attr(node, "intercepts", []) else 0
    return 2 * rows * features * targets + intercepts + post + (rows * targets if classifier else 0)


def _kernel(node: onnx.NodeProto, features: int) -> int:
    kind = node_attr(node, "kernel_type", b"LINEAR")
    per_feature, once = KERNEL.get(kind.decode() if isinstance(kind, bytes) else str(kind), KERNEL["LINEAR"])
    return per_feature * features + once


def _svm_classifier(node: onnx.NodeProto, rows: int, features: int, post: int) -> int | None:
    per_class = node_attr(node, "vectors_per_class", [])
    if any(n < 0 for n in per_class):  # no SVM's: not ours to count
        return None
    vectors = sum(per_class)
    if not vectors:  # liblinear: one row of coefficients per class
        return _linear(node, rows, features, post, classifier=True)
    classes = len(class_labels(node_attrs(node)))
    pairs = classes * (classes - 1) // 2
    probabilities = 4 * pairs if node_attr(node, "prob_a", []) else 0
    per_row = vectors * _kernel(node, features) + 2 * (classes - 1) * vectors + 2 * pairs + probabilities
    return rows * per_row + post


def _svm_regressor(node: onnx.NodeProto, rows: int, features: int) -> int | None:
    vectors = node_attr(node, "n_supports", 0)
    if vectors < 0:
        return None
    if not vectors:
        return rows * (2 * features + 1)
    return rows * (vectors * _kernel(node, features) + 2 * vectors + 1)


def _per_row_in_trees(node: onnx.NodeProto) -> int | None:
    """Σ over trees of depth + weights per leaf (rounded up), for one row."""
    try:
        forest = read_forest(node)
        shapes = tree_shapes(forest)
    except (BadTrees, ValueError, TypeError, IndexError):
        return None
    leaves = int(shapes.leaves.sum())
    per_leaf = math.ceil(len(forest.weight_value) / leaves) if leaves else 0
    return int(shapes.depth.sum()) + per_leaf * len(forest.roots)


def ml_params(node: onnx.NodeProto) -> tuple[int, int]:
    """(elements, bytes) of an ai.onnx.ml node's float and tensor attributes; a tree ensemble's:
    its splits' thresholds, its leaves' weights and its base values — not the placeholder
    thresholds its leaves carry in the node lists, nor the hit rates (QA21 F9: +75 %)."""
    if is_ensemble(node):
        learned = _ensemble_params(node)
        if learned is not None:
            return learned, 4 * learned
    elements = size = 0
    for a in node.attribute:
        if a.type == AttributeProto.FLOATS:
            elements, size = elements + len(a.floats), size + 4 * len(a.floats)
        elif a.type == AttributeProto.FLOAT:
            elements, size = elements + 1, size + 4
        elif a.type == AttributeProto.TENSOR and a.t.data_type != onnx.TensorProto.STRING:
            n = tensor_elements(a.t)
            elements, size = elements + n, size + (data_bytes(a.t.data_type, n) or 0)
    return elements, size


def _ensemble_params(node: onnx.NodeProto) -> int | None:
    try:
        forest = read_forest(node)
    except (BadTrees, ValueError, TypeError, IndexError):
        return None  # a forest the reader can't walk: every float attribute counted
    base = sum(len(a.floats) for a in node.attribute if a.name == "base_values")
    base += sum(tensor_elements(a.t) for a in node.attribute if a.name == "base_values_as_tensor")
    return int((~forest.leaf).sum()) + len(forest.weight_value) + base
