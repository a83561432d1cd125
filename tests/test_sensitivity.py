"""Quantization sensitivity (POST .../sensitivity): a QDQ revision's quantization put on its float
base behind one switch per point — an activation tensor, a node's weights —
(onnx_io/quant_switches.py): all off runs the float model, all on the quantization; each point
measured alone, the one that ruins the model first, with the nodes that own it."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from browser.browser_models import three_convs
from testkit import npy_blob, upload

from app.onnx_io.quant_switches import switchable


def quantized(client, model: onnx.ModelProto, **options) -> str:
    """The model uploaded and quantized (QDQ unless told) on 8 samples: revision 1 of its id."""
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    samples = np.random.default_rng(1).standard_normal((8, 1, 4, 8, 8)).astype(np.float32)
    op = {"op": "quantize_static", "calibration": {"x": {"npy": npy_blob(client, samples)}}, **options}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    return mid


def sweep(client, mid: str, body: dict, status: int = 200) -> dict:
    r = client.post(f"/api/models/{mid}/sensitivity", json=body)
    assert r.status_code == status, r.get_json()
    return r.get_json()


def owners(point: dict) -> list[str]:
    return sorted(o["name"] for o in point["owners"])


def test_the_point_whose_quantization_ruins_the_model_ranks_first(client):
    """conv2's int8 weights lose every value but the outlier: they rank first. Every activation
    tensor names the nodes that read it quantized (a graph output, the node making it), a
    node's weights that node."""
    mid = quantized(client, three_convs())
    answer = sweep(client, mid, {"base": 0, "inputs": {"x": {"random": {"seed": 3}}}})
    assert answer["revision"] == 1 and answer["base"] == 0 and answer["mode"] == "alone"
    points = answer["points"]
    assert answer["outputs"] == ["y"] and answer["runs"] == 2 + len(points)
    first, *rest = points
    assert first["kind"] == "weights" and first["tensors"] == ["w2"] and owners(first) == ["conv2"]
    assert first["dtype"] == "INT8" and first["rel_error"] > 0.5 and all(p["rel_error"] < 0.1 for p in rest), points
    assert first["sqnr_db"] < min(p["sqnr_db"] for p in rest)
    weights = {tuple(p["tensors"]): owners(p) for p in points if p["kind"] == "weights"}
    assert weights == {("w1",): ["conv1"], ("w2",): ["conv2"], ("w3",): ["conv3"]}
    assert {p["of"]["name"] for p in points if p["kind"] == "weights"} == {"conv1", "conv2", "conv3"}
    activations = {p["tensors"][0]: owners(p) for p in points if p["kind"] == "activation"}
    # x read by conv1 and the Add; r1, r2 made by the Convs whose Relu the quantizer dropped;
    # the graph output y quantized too
    assert activations == {"x": ["add", "conv1"], "r1": ["conv2"], "r2": ["conv3"], "c3": ["add"], "y": ["add"]}
    assert {p["dtype"] for p in points if p["kind"] == "activation"} == {"UINT8"}
    # owners' ids are the quantized revision's: each names the node it says
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    by_id = {n["id"]: n for n in graph["nodes"]}
    assert all(by_id[o["node"]]["name"] == o["name"] for p in points for o in p["owners"])
    # the whole quantization at least as far off as its worst point alone
    assert answer["all"]["rel_error"] >= 0.5 * first["rel_error"]


def test_leaving_a_points_owners_out_turns_it_float(client):
    """The sweep's promise: quantizing again without a point's owners removes that point — the
    model's error, as onnxruntime runs it, falls to what the sweep said ("without" conv2's
    weights: what is left). A node left out reads float values: onnxruntime's quantizer left
    conv2 reading the pair made for conv1's output, and its runtime then quantized conv2's float
    weights itself (62 % error left)."""
    mid = quantized(client, three_convs())
    without = sweep(client, mid, {"base": 0, "mode": "without"})
    assert without["mode"] == "without"
    first, *rest = without["points"]
    assert first["tensors"] == ["w2"] and first["rel_error"] < 0.1 < min(p["rel_error"] for p in rest)
    op = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"][-1]["ops"][0]
    assert client.post(f"/api/models/{mid}/undo", json={"base": 1}).status_code == 200
    again = {**op, "nodes_to_exclude": owners(first)}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [again]}).status_code == 200
    r = client.post(f"/api/models/{mid}/run", json={"compare_to": 0}).get_json()
    assert r["compare"]["outputs"]["y"]["rel_error"] < 0.05
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    conv2 = next(n for n in model.graph.node if n.name == "conv2")
    makers = {o: n for n in model.graph.node for o in n.output}
    assert [makers[x].op_type for x in conv2.input if x in makers] == ["Relu"]  # conv1's, put back
    assert conv2.input[1] == "w2"  # float weights


def test_a_node_left_out_reads_float_values_and_the_unread_pairs_go(client):
    """conv3 and the Add left out: each reads the float tensors (conv2's Relu, dropped by the
    quantizer, put back for conv3), the pair no node reads any more (c3's) is gone with its
    scale, and the model runs as close to the float one as its other quantized nodes allow."""
    mid = quantized(client, three_convs(), nodes_to_exclude=["conv3", "add"])
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(model)
    nodes = {n.name: n for n in model.graph.node}
    makers = {o: n for n in model.graph.node for o in n.output}
    assert makers[nodes["conv3"].input[0]].op_type == "Relu" and nodes["conv3"].input[1] == "w3"
    assert nodes["add"].input[:] == ["c3", "x"]
    assert not any(n.op_type == "DequantizeLinear" and n.input[0].startswith("c3") for n in model.graph.node)
    assert "c3_scale" not in {t.name for t in model.graph.initializer}
    r = client.post(f"/api/models/{mid}/run", json={"compare_to": 0}).get_json()
    assert r["compare"]["outputs"]["y"]["rel_error"] > 0.5  # conv2's ruined weights are still quantized


def test_samples_measure_each_configuration_on_several_inputs(client):
    """The calibration set (10 samples along the first axis): the first 8 run for each point."""
    mid = quantized(client, three_convs())
    data = np.random.default_rng(9).standard_normal((10, 1, 4, 8, 8)).astype(np.float32)
    answer = sweep(client, mid, {"base": 0, "samples": {"x": {"npy": npy_blob(client, data)}}})
    assert answer["samples"] == 8 and answer["runs"] == 8 * (2 + len(answer["points"]))
    assert answer["points"][0]["tensors"] == ["w2"] and answer["points"][0]["rel_error"] > 0.5
    one = sweep(client, mid, {"base": 0})
    assert one["samples"] == 1 and one["runs"] == 2 + len(one["points"])
    both = {"base": 0, "samples": {"x": {"npy": npy_blob(client, data)}}, "inputs": {}}
    r = client.post(f"/api/models/{mid}/sensitivity", json=both)
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_request"
    wrong = np.zeros((2, 1, 3, 8, 8), np.float32)
    r = client.post(
        f"/api/models/{mid}/sensitivity", json={"base": 0, "samples": {"x": {"npy": npy_blob(client, wrong)}}}
    )
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "shape_mismatch"
    assert r.get_json()["error"]["message"].startswith("samples for 'x'")


def test_a_sweep_foreseen_past_the_limit_is_refused_at_once(client, monkeypatch):
    """After its first two configurations the worker knows what the rest will take: past the
    limit, it says so with the numbers instead of running until killed."""
    mid = quantized(client, three_convs())
    monkeypatch.setattr("app.onnx_io.runtime_check.SWEEP_SECONDS", 1e-6)
    r = client.post(f"/api/models/{mid}/sensitivity", json={"base": 0})
    error = r.get_json()["error"]
    assert r.status_code == 422 and error["code"] == "too_long", error
    assert "8 points × 1 sample(s) would take about" in error["message"] and "op_types" in error["message"]


def test_a_sweep_counts_its_runs_where_its_token_finds_them(client, tmp_path):
    """The worker keeps "DONE TOTAL" in the progress file it is given (the last write: all
    done); GET /api/sweeps/<token> reads a running sweep's, 404 for one that isn't running."""
    from app.onnx_io.runtime_check import sweep_model

    mid = quantized(client, three_convs())
    base = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=0").data)
    qdq = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)
    model, points = switchable(base, qdq)
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    flags = [p.flag for p in points]
    answer = sweep_model(path, {}, {}, flags, list(range(3)), "alone", 0, {}, progress=str(tmp_path / "progress"))
    assert answer["status"] == "ok" and answer["runs"] == 5
    assert (tmp_path / "progress").read_text() == "5 5"
    r = client.get("/api/sweeps/abcdefgh12")
    assert r.status_code == 404 and r.get_json()["error"]["code"] == "unknown_sweep"
    assert client.get("/api/sweeps/x").status_code == 400
    assert sweep(client, mid, {"base": 0, "progress": "page-token-1"})["points"]  # accepted, and gone after
    assert client.get("/api/sweeps/page-token-1").status_code == 404


def test_op_types_measures_only_points_their_nodes_own(client):
    mid = quantized(client, three_convs())
    every = sweep(client, mid, {"base": 0})["points"]
    convs = sweep(client, mid, {"base": 0, "op_types": ["Conv"]})["points"]
    assert len(convs) == len(every) - 2  # c3 and y: the Add's alone
    assert all(any(o["op_type"] == "Conv" for o in p["owners"]) for p in convs)
    r = client.post(f"/api/models/{mid}/sensitivity", json={"base": 0, "op_types": ["MatMul"]})
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "no_nodes"


def test_unnamed_nodes_are_matched_by_what_they_make(client):
    """Without names, a Conv whose Relu the quantizer dropped makes the Relu's output, and the
    Add whose output is the graph's makes the pair's input: still the float model's nodes."""
    mid = quantized(client, three_convs(names=False))
    points = sweep(client, mid, {"base": 0})["points"]
    assert sorted(tuple(p["tensors"]) for p in points if p["kind"] == "weights") == [("w1",), ("w2",), ("w3",)]
    assert points[0]["tensors"] == ["w2"] and points[0]["rel_error"] > 0.5


def test_all_off_is_the_float_model_and_all_on_its_quantization(client):
    """The switched model run by onnxruntime directly: every switch off gives the float model's
    outputs, every switch on the QDQ model's (simulated: the quantized kernels round a little
    differently)."""
    mid = quantized(client, three_convs(), per_channel=True)
    base = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=0").data)
    qdq = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)
    model, points = switchable(base, qdq)
    assert len(points) == 3 + 5
    x = np.random.default_rng(5).standard_normal((1, 4, 8, 8)).astype(np.float32)
    so = ort.SessionOptions()
    so.log_severity_level = 3

    def outputs(data: bytes, **flags) -> np.ndarray:
        return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"]).run(None, {"x": x, **flags})[0]

    switched = model.SerializeToString()
    off = outputs(switched, **{p.flag: np.array(False) for p in points})
    on = outputs(switched, **{p.flag: np.array(True) for p in points})
    np.testing.assert_allclose(off, outputs(base.SerializeToString()), rtol=1e-5, atol=1e-5)
    real = outputs(qdq.SerializeToString())
    noise = np.linalg.norm(on - real) / np.linalg.norm(real)
    assert noise < 0.01 and np.linalg.norm(off - real) / np.linalg.norm(real) > 5 * noise


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "bad_request"),  # no base
        ({"base": 0, "mode": "each"}, "bad_request"),
        ({"base": "0"}, "bad_request"),
        ({"base": 0, "inputs": {"nope": {"random": {"seed": 1}}}}, "unknown_input"),
        ({"base": 7}, "unknown_revision"),
        ({"base": 0, "op_types": "Conv"}, "bad_request"),
        ({"base": 0, "op_types": [1]}, "bad_request"),
        ({"base": 0, "mode": ["alone"]}, "bad_request"),
        ({"base": 0, "dims": {"N": "1"}}, "bad_request"),
        ({"base": 0, "inputs": {"x": {"npy": "f" * 64}}}, "unknown_blob"),
        ({"base": 0, "inputs": {"x": {"random": {"seed": -1}}}}, "bad_request"),
        ({"base": True}, "bad_request"),
        ({"base": 0, "progress": "short"}, "bad_request"),
        ({"base": 0, "progress": "../../etc/passwd"}, "bad_request"),
        ({"base": 0, "target": 0}, "bad_request"),
        ({"base": 0, "target": -0.1}, "bad_request"),
        ({"base": 0, "target": "1%"}, "bad_request"),
        ({"base": 0, "target": True}, "bad_request"),
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


def test_a_target_finds_the_fewest_nodes_to_leave_out_and_the_real_quantization_keeps_it(client):
    """With "target": the sweep's ranking searched for the fewest nodes whose leaving out brings the
    whole quantization within it — conv2 alone here (its weights and the activation only it
    reads turn float) — and quantizing again without them, as onnxruntime runs it, stays within."""
    mid = quantized(client, three_convs())
    answer = sweep(client, mid, {"base": 0, "target": 0.05})
    plan = answer["plan"]
    assert answer["all"]["rel_error"] > 0.05
    assert plan["reached"] and plan["target"] == 0.05 and [n["name"] for n in plan["nodes"]] == ["conv2"]
    assert plan["rel_error"] <= 0.05 and plan["float"] == 2 and plan["output"] == "y"
    # bisection over the 8 points, then conv2's point tried without: a few runs, counted in all
    assert 2 <= plan["runs"] <= 6 and answer["runs"] == 2 + len(answer["points"]) + plan["runs"]
    op = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"][-1]["ops"][0]
    assert client.post(f"/api/models/{mid}/undo", json={"base": 1}).status_code == 200
    again = {**op, "nodes_to_exclude": [n["name"] for n in plan["nodes"]]}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [again]}).status_code == 200
    real = client.post(f"/api/models/{mid}/run", json={"compare_to": 0}).get_json()["compare"]["outputs"]["y"]
    assert real["rel_error"] <= 0.05, (real, plan)


def test_a_target_the_quantization_already_meets_leaves_nothing_out(client):
    mid = quantized(client, three_convs())
    answer = sweep(client, mid, {"base": 0, "target": 10})
    assert answer["plan"]["reached"] and answer["plan"]["nodes"] == [] and answer["plan"]["runs"] == 0
    assert answer["plan"]["rel_error"] == answer["all"]["rel_error"] and "plan" not in sweep(client, mid, {"base": 0})


def test_a_target_unnamed_nodes_stand_in_the_way_of_is_not_reached(client):
    """nodes_to_exclude names nodes: a point owned by an unnamed one can't be turned float, so a
    target below what it costs is said not reached, with the error the search got down to."""
    mid = quantized(client, three_convs(names=False))
    plan = sweep(client, mid, {"base": 0, "target": 0.05})["plan"]
    assert not plan["reached"] and plan["nodes"] == [] and plan["float"] == 0 and plan["rel_error"] > 0.05
