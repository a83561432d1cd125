"""Quantization sensitivity (POST .../sensitivity): a QDQ revision's quantization put on its float
base behind one switch per node (onnx_io/quant_switches.py) — all off runs the float model, all
on the quantization — and each node measured alone; the node whose quantization ruins the
model ranks first."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload

from app.onnx_io.quant_switches import switchable


def three_convs(names: bool = True) -> onnx.ModelProto:
    """x -> conv1 -> relu -> conv2 -> relu -> conv3 -> + x -> y; conv2's weights hold one value 1000x
    the others (on a channel conv1 leaves at 0, so it adds nothing), and per-tensor int8 weights
    keep that one and round every other to 0."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((8, 4, 3, 3)).astype(np.float32) * 0.3
    w1[0] = 0
    w2 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.1
    w2[0, 0, 0, 0] = 100.0
    weights = {
        "w1": w1,
        "w2": w2,
        "w3": rng.standard_normal((4, 8, 3, 3)).astype(np.float32) * 0.3,
    }
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [
        h.make_node("Conv", ["x", "w1"], ["c1"], name="conv1" if names else "", **conv),
        h.make_node("Relu", ["c1"], ["r1"], name="relu1" if names else ""),
        h.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2" if names else "", **conv),
        h.make_node("Relu", ["c2"], ["r2"], name="relu2" if names else ""),
        h.make_node("Conv", ["r2", "w3"], ["c3"], name="conv3" if names else "", **conv),
        h.make_node("Add", ["c3", "x"], ["y"], name="add" if names else ""),
    ]
    graph = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 8, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 8, 8])],
        [nh.from_array(v, k) for k, v in weights.items()],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def npy(client, arr: np.ndarray) -> str:
    buf = io.BytesIO()
    np.save(buf, arr)
    r = client.post("/api/blobs", data={"file": (io.BytesIO(buf.getvalue()), "a.npy")})
    assert r.status_code == 201
    return r.get_json()["blob"]


def quantized(client, model: onnx.ModelProto, **options) -> str:
    """The model uploaded and quantized (QDQ unless told) on 8 samples: revision 1 of its id."""
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    samples = np.random.default_rng(1).standard_normal((8, 1, 4, 8, 8)).astype(np.float32)
    op = {"op": "quantize_static", "calibration": {"x": {"npy": npy(client, samples)}}, **options}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    return mid


def sweep(client, mid: str, body: dict, status: int = 200) -> dict:
    r = client.post(f"/api/models/{mid}/sensitivity", json=body)
    assert r.status_code == status, r.get_json()
    return r.get_json()


def test_the_node_whose_quantization_ruins_the_model_ranks_first(client):
    mid = quantized(client, three_convs())
    answer = sweep(client, mid, {"base": 0, "inputs": {"x": {"random": {"seed": 3}}}})
    assert answer["revision"] == 1 and answer["base"] == 0 and answer["mode"] == "alone"
    assert answer["outputs"] == ["y"] and answer["runs"] == 2 + 4
    names = [n["name"] for n in answer["nodes"]]
    assert sorted(names) == ["add", "conv1", "conv2", "conv3"]
    first, *rest = answer["nodes"]
    assert first["name"] == "conv2" and first["op_type"] == "Conv" and first["inputs"] == 2  # activation + weight
    assert first["rel_error"] > 0.5 and all(n["rel_error"] < 0.1 for n in rest), answer["nodes"]
    assert first["sqnr_db"] < min(n["sqnr_db"] for n in rest)
    # node ids are the quantized revision's: each names the node it says
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    by_id = {n["id"]: n for n in graph["nodes"]}
    assert all(by_id[n["node"]]["name"] == n["name"] for n in answer["nodes"])
    # the whole quantization at least as far off as its worst node alone
    assert answer["all"]["rel_error"] >= 0.5 * first["rel_error"]


def test_without_ranks_the_node_whose_leaving_out_saves_the_most_first(client):
    mid = quantized(client, three_convs())
    answer = sweep(client, mid, {"base": 0, "mode": "without"})
    assert answer["mode"] == "without"
    first, *rest = answer["nodes"]
    assert first["name"] == "conv2" and first["rel_error"] < 0.1 < min(n["rel_error"] for n in rest)


def test_op_types_measures_only_their_nodes(client):
    mid = quantized(client, three_convs())
    answer = sweep(client, mid, {"base": 0, "op_types": ["Conv"]})
    assert sorted(n["name"] for n in answer["nodes"]) == ["conv1", "conv2", "conv3"] and answer["runs"] == 5
    r = client.post(f"/api/models/{mid}/sensitivity", json={"base": 0, "op_types": ["MatMul"]})
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "no_nodes"


def test_unnamed_nodes_are_matched_by_what_they_make(client):
    """Without names, a Conv whose Relu the quantizer dropped makes the Relu's output: still the
    float model's Conv."""
    mid = quantized(client, three_convs(names=False))
    answer = sweep(client, mid, {"base": 0})
    assert len(answer["nodes"]) == 4 and {n["op_type"] for n in answer["nodes"]} == {"Conv", "Add"}
    assert answer["nodes"][0]["rel_error"] > 0.5


def test_all_off_is_the_float_model_and_all_on_its_quantization(client):
    """The switched model run by onnxruntime directly: every switch off gives the float model's
    outputs, every switch on the QDQ model's (simulated: the quantized kernels round a little
    differently)."""
    mid = quantized(client, three_convs(), per_channel=True)
    base = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=0").data)
    qdq = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)
    model, switches = switchable(base, qdq)
    assert [s.name for s in switches] == ["conv1", "conv2", "conv3", "add"]
    x = np.random.default_rng(5).standard_normal((1, 4, 8, 8)).astype(np.float32)
    so = ort.SessionOptions()
    so.log_severity_level = 3

    def outputs(data: bytes, **flags) -> np.ndarray:
        return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"]).run(None, {"x": x, **flags})[0]

    switched = model.SerializeToString()
    off = outputs(switched, **{s.flag: np.array(False) for s in switches})
    on = outputs(switched, **{s.flag: np.array(True) for s in switches})
    np.testing.assert_allclose(off, outputs(base.SerializeToString()), rtol=1e-5, atol=1e-5)
    real = outputs(qdq.SerializeToString())
    noise = np.linalg.norm(on - real) / np.linalg.norm(real)
    assert noise < 0.05 and np.linalg.norm(off - real) / np.linalg.norm(real) > noise


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "bad_request"),  # no base
        ({"base": 0, "mode": "each"}, "bad_request"),
        ({"base": "0"}, "bad_request"),
        ({"base": 0, "inputs": {"nope": {"random": {"seed": 1}}}}, "unknown_input"),
        ({"base": 7}, "unknown_revision"),
        ({"base": 0, "op_types": "Conv"}, "bad_request"),
    ],
)
def test_wrong_requests_are_refused_naming_the_problem(client, body, code):
    mid = quantized(client, three_convs())
    r = client.post(f"/api/models/{mid}/sensitivity", json=body)
    assert 400 <= r.status_code < 500 and r.get_json()["error"]["code"] == code, r.get_json()


def test_a_revision_without_qdq_pairs_is_refused(client):
    """The float model against itself, and a QOperator quantization (QLinearConv: no float node
    left to switch): nothing to measure, said in one line."""
    mid = quantized(client, three_convs(), quant_format="QOperator")
    for body in ({"base": 0, "revision": 0}, {"base": 0}):
        r = client.post(f"/api/models/{mid}/sensitivity", json=body)
        assert r.status_code == 422 and r.get_json()["error"]["code"] == "not_quantized", r.get_json()
