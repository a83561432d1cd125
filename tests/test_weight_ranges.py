"""GET .../weight-ranges: how each weight tensor survives integer quantization, from the weights
alone — per tensor and per output channel, SQNR and the share of values rounded to 0 — checked
against the same quantization done here with numpy, and on the onnx wheel's real models."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from browser.browser_models import three_convs
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import ONNX_DATA, upload


def reference(w: np.ndarray, axis: int | None, bits: int) -> tuple[float, float]:
    """Symmetric quantization to `bits` bits as onnxruntime's quantizer does for weights: (SQNR
    in dB, the share of nonzero values that round to 0)."""
    levels = 2 ** (bits - 1) - 1
    reduce = None if axis is None else tuple(k for k in range(w.ndim) if k != axis)
    scale = np.max(np.abs(w), axis=reduce, keepdims=axis is not None) / levels
    q = np.clip(np.round(w / scale), -levels, levels)
    noise = w - q * scale
    return 20 * math.log10(np.linalg.norm(w) / np.linalg.norm(noise)), float(
        ((q == 0) & (w != 0)).sum() / (w != 0).sum()
    )


def ranges(client, model: onnx.ModelProto, **query) -> dict:
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.get(f"/api/models/{mid}/weight-ranges", query_string=query)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def test_an_outlier_that_crushes_a_per_tensor_scale_ranks_first(client):
    """conv2's weights hold one value 1000x the rest: with one int8 scale per tensor nearly all
    of them round to 0 (its SQNR still looks fine: the outlier's own energy dominates); a scale
    per output channel keeps all but the outlier's channel."""
    answer = ranges(client, three_convs())
    assert answer["bits"] == 8 and answer["weights"][0]["tensor"] == "w2"
    w2 = answer["weights"][0]
    assert w2["nodes"] == [{"node": "n2", "name": "conv2", "op_type": "Conv"}] and w2["channel_axis"] == 0
    assert w2["zeroed_per_tensor"] > 0.99 and w2["zeroed_per_channel"] < 0.15 and w2["outlier_ratio"] > 20
    assert w2["per_tensor_sqnr_db"] > 30  # what SQNR alone would say
    values = nh.to_array(next(t for t in three_convs().graph.initializer if t.name == "w2"))
    for axis, sqnr, zeroed in (
        (None, "per_tensor_sqnr_db", "zeroed_per_tensor"),
        (0, "per_channel_sqnr_db", "zeroed_per_channel"),
    ):
        want_sqnr, want_zeroed = reference(values, axis, 8)
        assert w2[sqnr] == pytest.approx(want_sqnr, abs=1e-3) and w2[zeroed] == pytest.approx(want_zeroed)
    assert all(w["zeroed_per_tensor"] < 0.05 for w in answer["weights"][1:])


def matmul_and_gemm() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    mm = rng.standard_normal((4, 6)).astype(np.float32)  # [K, N]: a scale per column
    gemm = rng.standard_normal((6, 4)).astype(np.float32)  # transB: [N, K], a scale per row
    graph = h.make_graph(
        [
            h.make_node("MatMul", ["x", "mm"], ["a"], name="mm"),
            h.make_node("Gemm", ["a", "gemm"], ["y"], name="fc", transB=1),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 6])],
        [nh.from_array(mm, "mm"), nh.from_array(gemm, "gemm")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("bits", [4, 8, 16])
def test_matmul_and_gemm_weights_take_their_output_channel_axis(client, bits):
    model = matmul_and_gemm()
    weights = {w["tensor"]: w for w in ranges(client, model, bits=bits)["weights"]}
    assert weights["mm"]["channel_axis"] == 1 and weights["gemm"]["channel_axis"] == 0
    for name, w in weights.items():
        values = nh.to_array(next(t for t in model.graph.initializer if t.name == name))
        assert w["per_tensor_sqnr_db"] == pytest.approx(reference(values, None, bits)[0], abs=1e-3)
        assert w["per_channel_sqnr_db"] == pytest.approx(reference(values, w["channel_axis"], bits)[0], abs=1e-3)
        assert w["per_channel_sqnr_db"] >= w["per_tensor_sqnr_db"] - 1e-6
        assert 6 * bits - 12 < w["per_tensor_sqnr_db"] < 6 * bits + 6  # ~6 dB a bit


def test_bits_other_than_onnxruntimes_widths_are_refused(client):
    mid = upload(client, three_convs().SerializeToString()).get_json()["id"]
    for bits in ("3", "x", "32"):
        r = client.get(f"/api/models/{mid}/weight-ranges?bits={bits}")
        assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_request"


@pytest.mark.corpus
def test_the_wheels_pytorch_converted_models_have_their_weights_measured(client):
    measured = 0
    for path in sorted((ONNX_DATA / "pytorch-converted").glob("*/model.onnx")):
        model = onnx.load(path)
        for w in ranges(client, model)["weights"]:
            assert w["per_tensor_sqnr_db"] is None or w["per_tensor_sqnr_db"] > 0, (path.parent.name, w)
            assert 0 <= w["zeroed_per_channel"] <= w["zeroed_per_tensor"] <= 1, (path.parent.name, w)
            measured += 1
    assert measured >= 25  # 31: the Conv, Linear and embedding models


@pytest.mark.parametrize(("shape", "axis"), [((300, 70), 1), ((300, 70), 0), ((5, 6, 3, 3), 0), ((40, 7, 2, 2), 1)])
def test_big_tensors_are_quantized_a_block_of_rows_at_a_time_with_the_same_result(monkeypatch, shape, axis):
    """Blocks of 64 elements (a big tensor's rows, a few at a time): the same SQNR and values
    lost to 0 as the whole tensor quantized at once."""
    from app.views import weight_ranges

    monkeypatch.setattr(weight_ranges, "BLOCK", 64)
    w = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    w.flat[3] = 50
    for bits in (4, 8):
        for along in (None, axis):
            sqnr, zeroed = weight_ranges._quantized(w, along, bits)
            want_sqnr, want_zeroed = reference(w, along, bits)
            assert sqnr == pytest.approx(want_sqnr, abs=1e-3) and zeroed == pytest.approx(want_zeroed)
