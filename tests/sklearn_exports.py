"""Classical ML models as a scikit-learn user brings them, trained here on datasets scikit-learn
ships and converted by skl2onnx (pipelines: scaling, imputing, one-hot encoding, tf-idf text,
dict features; linear models, forests, boosting, SVMs, k-means, an MLP, kNN) and onnxmltools
(LightGBM; XGBoost where it is installed). tests/test_sklearn_exports.py holds the app to them;
bench/sklearn_walk.py walks them through it.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import onnx


def pipelines() -> dict[str, onnx.ModelProto]:
    """name -> converted model, each trained on a dataset scikit-learn ships."""
    import lightgbm
    import onnxmltools
    import pandas as pd
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
    found = {
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
    }
    with contextlib.suppress(ImportError):  # a benchmark's extra (bench/requirements.txt), not a test's
        import xgboost

        found["XGBoost"] = onnxmltools.convert_xgboost(
            xgboost.XGBRegressor(n_estimators=30).fit(xd, yd), initial_types=[("input", MlFloat([None, 10]))]
        )
    return found
