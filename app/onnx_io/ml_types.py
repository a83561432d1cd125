"""Types of what ai.onnx.ml's classical-ML operators make, as onnxruntime makes them, where onnx's
inference gives less: a TreeEnsembleClassifier's or SVMClassifier's scores not at all, a
Normalizer's or Scaler's outputs untyped (so a skl2onnx pipeline's probabilities were unknown),
every classifier's labels and scores sized unk__N instead of by the batch. What scikit-learn,
LightGBM and XGBoost exports are made of; type_rules.py walks the graph with these.

Each rule takes the node and its inputs' types and gives its outputs' (None where it can't say).
The batch N is X's first dim, or 1 for a 1-D X (onnxruntime's kernels read a 1-D X as one row).
"""

from __future__ import annotations

import math

import onnx
from onnx import TensorProto, TypeProto, helper

from .type_rules import Rule, dims_of, elem_of, tensor_type


def node_attrs(node: onnx.NodeProto) -> dict:
    """The node's attributes by name, as onnx.helper reads them."""
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def class_labels(a: dict) -> list:
    """A classifier's class labels (its `node_attrs`): strings, or integers under the name its
    operator gives them (classlabels_int64s for the tree ensembles, classlabels_ints otherwise)."""
    return list(a.get("classlabels_strings") or a.get("classlabels_int64s") or a.get("classlabels_ints") or [])


def _batch(x: TypeProto | None) -> tuple[bool, object]:
    """(known, N): N is X's first dim, or 1 when X is 1-D; not known without X's rank."""
    dims = dims_of(x)
    if not dims:
        return False, None
    return True, 1 if len(dims) == 1 else dims[0]


def _rows(x: TypeProto | None, width, elem: int) -> TypeProto | None:
    """[N, width] of `elem` (None for a width no attribute makes sense of: negative, not a number)."""
    known, n = _batch(x)
    if not known or not isinstance(width, int) or width < 0:
        return None
    return tensor_type(elem, [n, width])


def _labels(x: TypeProto | None, a: dict) -> TypeProto | None:
    """A classifier's Y: one label per row, of the labels' kind."""
    known, n = _batch(x)
    elem = TensorProto.STRING if a.get("classlabels_strings") else TensorProto.INT64
    return tensor_type(elem, [n]) if known else None


def _class_count(a: dict) -> int:
    return len(class_labels(a))


def _linear_classifier(node, ins):
    a = node_attrs(node)
    classes, targets = _class_count(a), len(a.get("intercepts") or []) or _class_count(a)
    width = 2 if targets == 1 and classes == 2 else targets  # one score, its complement added
    return [_labels(ins[0], a), _rows(ins[0], width, TensorProto.FLOAT)]


def _svm_classifier(node, ins):
    a = node_attrs(node)
    classes = _class_count(a)
    width = classes
    if sum(a.get("vectors_per_class") or []) > 0 and not a.get("prob_a"):  # votes: one per pair
        width = classes * (classes - 1) // 2 if classes > 2 else 2
    return [_labels(ins[0], a), _rows(ins[0], width, TensorProto.FLOAT)]


def _tree_classifier(node, ins):
    a = node_attrs(node)
    return [_labels(ins[0], a), _rows(ins[0], _class_count(a), TensorProto.FLOAT)]


def _linear_regressor(node, ins):
    return [_rows(ins[0], node_attrs(node).get("targets", 1), TensorProto.FLOAT)]


def _tree_regressor(node, ins):
    return [_rows(ins[0], node_attrs(node).get("n_targets", 1), TensorProto.FLOAT)]


def _tree_ensemble(node, ins):  # ai.onnx.ml 5: of X's type
    return [_rows(ins[0], node_attrs(node).get("n_targets"), elem_of(ins[0]))]


def _svm_regressor(node, ins):  # one target only
    return [_rows(ins[0], 1, TensorProto.FLOAT)]


def _as_float(node, ins):  # Scaler, Normalizer: X's shape, as floats
    return [tensor_type(TensorProto.FLOAT, dims_of(ins[0]))]


def _same_as_x(node, ins):  # Binarizer, Imputer
    return [ins[0]]


def _array_feature_extractor(node, ins):
    x, y = dims_of(ins[0]), dims_of(ins[1]) if len(ins) > 1 else None
    if not x or y is None:
        return [None]
    count: int | str | None
    if all(isinstance(d, int) for d in y):
        count = math.prod(y)  # past int64, the dim can't be set: the rule gives nothing
    else:  # a count of indices known only as one named dim of theirs (an argmax's batch)
        unsized = [d for d in y if d != 1]
        count = unsized[0] if len(unsized) == 1 else None
    if count is None:
        return [None]
    return [tensor_type(elem_of(ins[0]), [1, count] if len(x) == 1 else [*x[:-1], count])]


def _dict_vectorizer(node, ins):  # one row of the vocabulary's width, of the map's values
    m = ins[0]
    if m is None or not m.HasField("map_type"):
        return [None]
    a = node_attrs(node)
    width = len(a.get("string_vocabulary") or a.get("int64_vocabulary") or [])
    return [tensor_type(elem_of(m.map_type.value_type), [1, width])]


def _feature_vectorizer(node, ins):
    return [_rows(ins[0] if ins else None, sum(node_attrs(node).get("inputdimensions") or []), TensorProto.FLOAT)]


def _string_normalizer(node, ins):  # onnx sizes it unknown: only stopwords removed change X's shape
    return [None if "stopwords" in node_attrs(node) else ins[0]]


# standard (ai.onnx) operators of text pipelines (skl2onnx's TfidfVectorizer)
TEXT_RULES: dict[str, Rule] = {"StringNormalizer": _string_normalizer}

RULES: dict[str, Rule] = {
    "LinearClassifier": _linear_classifier,
    "SVMClassifier": _svm_classifier,
    "TreeEnsembleClassifier": _tree_classifier,
    "LinearRegressor": _linear_regressor,
    "SVMRegressor": _svm_regressor,
    "TreeEnsembleRegressor": _tree_regressor,
    "TreeEnsemble": _tree_ensemble,
    "Scaler": _as_float,
    "Normalizer": _as_float,
    "Binarizer": _same_as_x,
    "Imputer": _same_as_x,
    "ArrayFeatureExtractor": _array_feature_extractor,
    "DictVectorizer": _dict_vectorizer,
    "FeatureVectorizer": _feature_vectorizer,
}
