"""Tensor previews equal onnx.numpy_helper.to_array for every initializer and tensor attribute
of every official test model."""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from protowalk import graph_paths
from testkit import ONNX_DATA, corpus_app, node_testcase_names, node_testcases, upload, wheel_models

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return corpus_app(tmp_path_factory)


WINDOW = 64


def _json_expected(arr: np.ndarray) -> list:
    flat = arr.reshape(-1)[:WINDOW]
    if flat.dtype.kind == "c":
        return [[_num(v.real), _num(v.imag)] for v in flat]
    if flat.dtype.kind in "OSU":
        return [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in flat]
    if flat.dtype.kind == "b":
        return [bool(v) for v in flat]
    if flat.dtype.kind in "iu" or flat.dtype.name.startswith(("int", "uint")):
        return [int(v) for v in flat.astype(np.int64)]
    return [_num(v) for v in flat.astype(np.float64)]


def _num(v):
    v = float(v)
    return "NaN" if np.isnan(v) else ("Infinity" if v == np.inf else "-Infinity" if v == -np.inf else v)


def tensors_with_refs(model: onnx.ModelProto):
    for path, g in graph_paths(model):
        if isinstance(g, onnx.GraphProto):
            for t in g.initializer:
                yield (t.name if path == "" else f"@{path}:{t.name}"), t
        for i, n in enumerate(g.node):
            nid = f"{path}/n{i}" if path else f"n{i}"
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    yield f"@{nid}#{a.name}", a.t
                elif a.type == onnx.AttributeProto.TENSORS:
                    for k, t in enumerate(a.tensors):
                        yield f"@{nid}#{a.name}[{k}]", t


def check_histogram(preview: dict, arr: np.ndarray, ref: str) -> None:
    """The histogram counts every finite value once, between the min and max the stats give."""
    stats = preview["stats"]
    if stats is None or arr.dtype.kind == "b" or stats["min"] is None:
        assert stats is None or "histogram" not in stats, ref
        return
    h = stats["histogram"]
    values = np.abs(arr) if arr.dtype.kind == "c" else arr.astype(np.float64)
    finite = values[np.isfinite(values)]
    assert sum(h["counts"]) == finite.size and (h["lo"], h["hi"]) == (stats["min"], stats["max"]), ref
    assert h["counts"][0] > 0 and h["counts"][-1] > 0, ref  # the bins span exactly min to max
    assert stats["zeros"] == int(np.count_nonzero(finite == 0)), ref


def check_previews(client, model: onnx.ModelProto) -> int:
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    seen = 0
    for ref, t in tensors_with_refs(model):
        r = client.get(f"/api/models/{mid}/tensors/{quote(ref, safe='')}", query_string={"count": WINDOW})
        assert r.status_code == 200, (ref, r.get_json())
        p = r.get_json()
        assert p["dtype"] == onnx.TensorProto.DataType.Name(t.data_type) and p["shape"] == list(t.dims)
        arr = numpy_helper.to_array(t)
        assert p["values"] == _json_expected(arr), ref
        check_histogram(p, arr, ref)
        seen += 1
    return seen


@pytest.mark.parametrize("path", wheel_models(), ids=lambda p: str(p.relative_to(ONNX_DATA)))
def test_wheel_model_tensors(client, path):
    check_previews(client, onnx.load(path))


def test_node_testcase_tensors(client):
    """All node-test models in one test (one upload each): every dtype the corpus holds."""
    dtypes, total = set(), 0
    for name in node_testcase_names():
        model = node_testcases()[name].model
        total += check_previews(client, model)
        dtypes |= {t.data_type for _, t in tensors_with_refs(model)}
    assert total > 1000
    # the corpus keeps float8/int4/bfloat16 only in its data sets; test_api builds models for those
    T = onnx.TensorProto
    assert {T.FLOAT, T.DOUBLE, T.INT16, T.INT64, T.INT32, T.UINT8, T.BOOL, T.STRING} <= dtypes
