"""Run (issue 15): POST .../run runs a revision with onnxruntime in a worker process on uploaded
or random inputs; outputs equal onnxruntime's own, intermediate tensors can be asked for, and
compare_to runs another revision on the same inputs and says how far each output moved."""

from __future__ import annotations

import io
import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from browser.browser_models import loop_model, tiny_cnn, zipmap_model
from onnx import helper
from testkit import ONNX_DATA, node_testcases, npy_blob, upload

F = onnx.TensorProto.FLOAT


def run(client, mid: str, body: dict, status: int = 200) -> dict:
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == status, r.get_json()
    return r.get_json()


def reference(model_bytes: bytes, feeds: dict) -> dict:
    so = ort.SessionOptions()
    so.log_severity_level = 3  # old opsets warn at every load
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds), strict=True))


PYTORCH = sorted(p.parent for p in (ONNX_DATA / "pytorch-converted").glob("*/model.onnx"))


@pytest.mark.models
@pytest.mark.parametrize("folder", PYTORCH, ids=lambda p: p.name)
def test_outputs_equal_onnxruntimes_own_on_the_wheels_pytorch_models(client, folder):
    data = (folder / "model.onnx").read_bytes()
    model = onnx.load_from_string(data)
    inputs_pb = sorted((folder / "test_data_set_0").glob("input_*.pb"))
    feeds, blobs = {}, {}
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    for name, pb in zip(names, inputs_pb, strict=False):
        arr = onnx.numpy_helper.to_array(onnx.load_tensor(str(pb)))
        feeds[name] = arr
        blobs[name] = {"npy": npy_blob(client, arr)}
    mid = upload(client, data).get_json()["id"]
    try:
        expected = reference(data, feeds)
    except Exception as exc:  # an opset onnxruntime no longer implements: the run says so too
        refused = run(client, mid, {"inputs": blobs}, 422)
        assert (
            refused["error"]["code"] == "run_failed" and str(exc).split(":")[-1].strip() in refused["error"]["message"]
        )
        return
    answer = run(client, mid, {"inputs": blobs})
    for name, value in expected.items():
        got = answer["outputs"][name]
        assert got["shape"] == list(value.shape)
        # named as ONNX names it (as GET .../tensors does): the page formats values by it
        assert got["dtype"] == onnx.helper.tensor_dtype_to_string(
            onnx.helper.np_dtype_to_tensor_dtype(value.dtype)
        ).removeprefix("TensorProto.")
        if value.size <= len(got["values"]):
            np.testing.assert_allclose(
                np.array(got["values"], dtype=np.float64).reshape(value.shape), value, rtol=1e-5, atol=1e-6
            )
        # whole, as the run kept it (GET /api/blobs/<its npy>)
        whole = np.load(io.BytesIO(client.get(f"/api/blobs/{got['npy']}").data), allow_pickle=False)
        assert whole.dtype == value.dtype
        np.testing.assert_allclose(whole, value, rtol=1e-5, atol=1e-6)


def test_random_inputs_an_intermediate_tensor_and_compare_to(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    body = {"inputs": {"input": {"random": {"seed": 3}}}, "outputs": ["p1", "probs"]}
    first = run(client, mid, body)
    assert set(first["outputs"]) == {"p1", "probs"}
    assert first["outputs"]["p1"]["shape"] == [1, 8, 16, 16] and first["ms"] > 0
    assert first["inputs"]["input"]["shape"] == [1, 3, 32, 32]
    again = run(client, mid, body)
    assert again["outputs"]["probs"]["values"] == first["outputs"]["probs"]["values"]  # the seed makes the inputs
    # the stored model is untouched: p1 is an output for that run only
    assert [o.name for o in onnx.load_from_string(client.get(f"/api/models/{mid}/download").data).graph.output] == [
        "probs"
    ]

    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.5}]},
    )
    assert r.status_code == 200
    compared = run(client, mid, {"inputs": {"input": {"random": {"seed": 3}}}, "compare_to": 0})
    c = compared["compare"]
    assert c["revision"] == 0 and set(c["outputs"]) == {"probs"}
    assert c["outputs"]["probs"]["equal"] is False and c["outputs"]["probs"]["max_abs"] > 0
    same = run(client, mid, {"revision": 0, "inputs": {"input": {"random": {"seed": 3}}}, "compare_to": 0})
    assert same["compare"]["outputs"]["probs"] == {
        "equal": True,
        "close": True,
        "max_abs": 0.0,
        "max_rel": 0.0,
        "max_rel_to_range": 0.0,
        "tolerance_needed": 0.0,
        "rel_error": 0.0,
        "sqnr_db": None,
        "shape": [1, 10],
    }


def test_compare_to_feeds_a_renamed_input_its_old_self_and_says_what_it_could_not_feed(client):
    """tiny_cnn's input renamed: compared with revision 0, the old input gets the same values and
    the outputs are equal. Made a batch of 2 (dynamic) and run at 2: revision 0, fixed at 1,
    can't take those values, and the answer says so rather than "the same inputs"."""
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "rename_tensor", "from": "input", "to": "image"}]}
    )
    assert r.status_code == 200, r.get_json()
    body = {"inputs": {"image": {"random": {"seed": 3}}}, "compare_to": 0, "locate": True}
    c = run(client, mid, body)["compare"]
    assert c["outputs"]["probs"]["equal"] is True, c["outputs"]
    assert c["inputs_renamed"] == {"image": "input"} and c["other_inputs"] == []
    assert c["diverges"] is None


def test_compare_to_says_which_inputs_the_other_revision_could_not_take(client):
    """x @ w fixed at a batch of 1, then made dynamic: run at 2, revision 0 can't take those
    values, and the answer says so rather than "the same inputs"."""
    w = onnx.numpy_helper.from_array(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
        "fc",
        [helper.make_tensor_value_info("x", F, [1, 4])],
        [helper.make_tensor_value_info("y", F, [1, 5])],
        [w],
    )
    mid = upload(client, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    mid = mid.get_json()["id"]
    shape = {"op": "set_io_shape", "name": "x", "shape": ["batch", 4], "update_types": True}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [shape]})
    assert r.status_code == 200, r.get_json()
    c = run(client, mid, {"dims": {"batch": 1}, "compare_to": 0})["compare"]
    assert c["other_inputs"] == [] and c["outputs"]["y"]["equal"] is True  # at batch 1 both take the same values
    arr = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    answer = run(client, mid, {"inputs": {"x": {"npy": npy_blob(client, arr)}}, "compare_to": 0})
    assert answer["outputs"]["y"]["shape"] == [2, 5]  # this run stands
    assert answer["compare"] == {
        "revision": 0,
        "refused": "revision 0 can't take this run's inputs: input \"x\" is 2×4: its dim 0 is 2,"
        " but the model fixes it at 1",
    }
    # an input only the other revision has is made up for it, and said
    added = {"op": "add_input", "name": "flag", "dtype": "FLOAT", "shape": [1]}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [added]})
    assert r.status_code == 200, r.get_json()
    c = run(client, mid, {"revision": 1, "dims": {"batch": 1}, "compare_to": 2})["compare"]
    assert c["other_inputs"] == ["flag"] and c["outputs"]["y"]["equal"] is True


def test_a_float16_conversion_compares_close_not_equal(client):
    """The verdict a conversion needs: not bit for bit, but within 0.1 % of the output's range —
    where the element-wise relative error of a near-zero probability says nothing."""
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_float16"}]})
    assert r.status_code == 200, r.get_json()
    c = run(client, mid, {"inputs": {"input": {"random": {"seed": 5}}}, "compare_to": 0})["compare"]
    probs = c["outputs"]["probs"]
    assert c["close_tolerance"] == 1e-3
    assert probs["equal"] is False and probs["close"] is True
    assert probs["max_rel_to_range"] < 1e-3 <= probs["max_rel"] or probs["max_rel"] < 1e-3
    # a real change is not close
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 1, "ops": [{"op": "set_attribute", "node": "softmax", "name": "axis", "value": 0}]},
    )
    assert r.status_code == 200, r.get_json()
    moved = run(client, mid, {"inputs": {"input": {"random": {"seed": 5}}}, "compare_to": 0})["compare"]
    assert moved["outputs"]["probs"]["close"] is False


def test_symbolic_dims_and_bad_requests(client):
    g = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 4])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", 4])],
    )
    data = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17)]).SerializeToString()
    mid = upload(client, data).get_json()["id"]
    refused = run(client, mid, {"inputs": {"x": {"random": {"seed": 1}}}}, 400)
    assert 'dim "batch"' in refused["error"]["message"] and "dims" in refused["error"]["message"]
    ok = run(client, mid, {"inputs": {"x": {"random": {"seed": 1}}}, "dims": {"batch": 3}})
    assert ok["outputs"]["y"]["shape"] == [3, 4]
    values = np.array(ok["outputs"]["y"]["values"])
    assert (values >= 0).all() and ok["outputs"]["y"]["stats"] is not None
    x = np.full((2, 4), -1.5, np.float32)
    given = run(client, mid, {"inputs": {"x": {"npy": npy_blob(client, x)}}})
    assert given["outputs"]["y"]["values"] == [0.0] * 8
    # 0 is a size (a decoder's first step has no past): an empty batch runs and says so
    empty = run(client, mid, {"inputs": {"x": {"random": {"seed": 1}}}, "dims": {"batch": 0}})
    assert empty["outputs"]["y"]["shape"] == [0, 4] and empty["outputs"]["y"]["size"] == 0
    for body, code in [
        ({"inputs": {"nope": {"random": {}}}}, "unknown_input"),
        ({"inputs": {"x": {"npy": "ab" * 32}}}, "unknown_blob"),
        ({"inputs": {"x": 3}}, "bad_request"),
        ({"outputs": ["nothing"]}, "unknown_tensor"),
        ({"dims": {"batch": -1}}, "bad_request"),
        ({"compare_to": 9}, "unknown_revision"),
    ]:
        r = client.post(f"/api/models/{mid}/run", json=body)
        assert r.status_code in (400, 404) and r.get_json()["error"]["code"] == code, (body, r.get_json())
    assert json.loads(client.get(f"/api/models/{mid}").data)["revision"] == 0


def test_locate_names_the_first_node_whose_output_differs(client):
    """An edit deep in the graph: everything before it computes the same, the node after it is
    the first whose output moves."""
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "n6", "name": "alpha", "value": 0.5}]},
    )
    assert r.status_code == 200
    body = {"inputs": {"input": {"random": {"seed": 1}}}, "compare_to": 0, "locate": True}
    answer = run(client, mid, body)
    diverges = answer["compare"]["diverges"]
    assert (diverges["node"], diverges["op_type"], diverges["tensor"]) == ("n6", "Gemm", "logits")
    assert set(answer["outputs"]) == {"probs"}  # the probes are compared, not sent
    same = run(client, mid, {**body, "compare_to": 1})
    assert same["compare"]["diverges"] is None
    assert client.post(f"/api/models/{mid}/run", json={"locate": True}).status_code == 400


def test_locate_measures_each_nodes_error_against_the_other_revision(client):
    """Every node's output against revision 0's: nodes before the edit equal (error 0), the
    edited node and those after it off by exactly what numpy says of the two outputs."""
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    edit = {"op": "set_attribute", "node": "n6", "name": "alpha", "value": 0.5}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [edit]}).status_code == 200
    body = {"inputs": {"input": {"random": {"seed": 1}}}, "compare_to": 0, "locate": True, "outputs": ["logits"]}
    nodes = run(client, mid, body)["compare"]["nodes"]
    by_op = {n["op_type"]: n for n in nodes}
    assert [n["node"] for n in nodes] == sorted((n["node"] for n in nodes), key=lambda i: int(i[1:]))
    for op in ("Conv", "LeakyRelu", "MaxPool", "GlobalAveragePool", "Reshape"):
        assert by_op[op]["equal"] and by_op[op]["rel_error"] == 0.0 and by_op[op]["sqnr_db"] is None, op
    gemm = by_op["Gemm"]
    assert not gemm["equal"] and gemm["tensor"] == "logits"
    mine = np.array(run(client, mid, {**body, "compare_to": None, "locate": False})["outputs"]["logits"]["values"])
    body0 = {"inputs": body["inputs"], "outputs": ["logits"], "revision": 0}
    theirs = np.array(client.post(f"/api/models/{mid}/run", json=body0).get_json()["outputs"]["logits"]["values"])
    want = np.linalg.norm(mine - theirs) / np.linalg.norm(theirs)
    assert gemm["rel_error"] == pytest.approx(want, rel=1e-3)
    assert gemm["sqnr_db"] == pytest.approx(-20 * np.log10(want), rel=1e-3)


def test_a_qdq_models_nodes_are_measured_on_what_their_readers_read(client):
    """Static quantization drops the Relu after the Conv (its QuantizeLinear clips at 0) and the
    Conv's output takes the Relu's name: read raw, it would be the Conv's unclipped output
    against the float model's Relu output. Each node is measured on the DequantizeLinear's
    output its readers read, so the Conv is as close as int8 makes it."""
    from test_model_tools import conv_net

    mid = upload(client, conv_net().SerializeToString()).get_json()["id"]
    samples = np.random.default_rng(0).standard_normal((8, 1, 16, 8, 8)).astype(np.float32)
    buf = io.BytesIO()
    np.save(buf, samples)
    blob = client.post("/api/blobs", data={"file": (io.BytesIO(buf.getvalue()), "c.npy")}).get_json()["blob"]
    op = {"op": "quantize_static", "calibration": {"x": {"npy": blob}}}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    quantized = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert "Relu" not in {n.op_type for n in quantized.graph.node}
    body = {"inputs": {"x": {"random": {"seed": 2}}}, "dims": {"N": 1}, "compare_to": 0, "locate": True}
    nodes = {n["op_type"]: n for n in run(client, mid, body)["compare"]["nodes"]}
    assert nodes["Conv"]["tensor"] == "r" and 0 < nodes["Conv"]["rel_error"] < 0.05, nodes["Conv"]
    assert nodes["Gemm"]["rel_error"] < 0.05 and nodes["Gemm"]["sqnr_db"] > 25


@pytest.mark.parametrize("links", [True, False], ids=["hard-linked", "mapped-by-the-worker"])
@pytest.mark.parametrize("location", ["weights/w.bin", "./w.bin"])
def test_runs_read_external_data_files_and_the_stores_tensors_in_place(client, tmp_path, monkeypatch, location, links):
    """The weights a run reads are the store's own files, never copied: hard-linked beside the
    run's graph, or where a link can't be made (another file system), mapped into the worker's
    memory by the location the graph names (onnxruntime refuses external data reached through a
    symlink). A model uploaded with its data file, and its edited revision (whose weights are
    the store's tensor blobs), both give numpy's answer."""
    from onnx import numpy_helper

    if not links:

        def cross_device(src, dst):
            raise OSError(18, "Invalid cross-device link")

        monkeypatch.setattr("app.api.run.os.link", cross_device)

    w = np.arange(64 * 300, dtype=np.float32).reshape(64, 300) / 1000
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 64])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 300])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (tmp_path / "weights").mkdir()
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location=location, size_threshold=1024)
    buf = io.BytesIO()
    with __import__("zipfile").ZipFile(buf, "w") as z:
        z.write(tmp_path / "m.onnx", "m.onnx")
        z.write(tmp_path / location, location.removeprefix("./"))
    summary = upload(client, buf.getvalue(), "bundle.zip").get_json()
    assert summary["external_files"], summary
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(2, 64)
    inputs = {"x": {"npy": npy_blob(client, x)}}
    got = run(client, summary["id"], {"inputs": inputs})["outputs"]["y"]
    np.testing.assert_allclose(np.array(got["values"], np.float32).reshape(2, 300), x @ w, rtol=1e-5)

    # an edit that embeds the weights: revision 1's graph references the store's tensor blob
    r = client.post(
        f"/api/models/{summary['id']}/edits",
        json={"base": 0, "ops": [{"op": "set_initializer", "name": "w", "value": {"npy": npy_blob(client, w * 2)}}]},
    )
    assert r.status_code == 200, r.get_json()
    got = run(client, summary["id"], {"inputs": inputs, "revision": 1, "compare_to": 0})
    np.testing.assert_allclose(
        np.array(got["outputs"]["y"]["values"], np.float32).reshape(2, 300), x @ (w * 2), rtol=1e-5
    )
    assert got["compare"]["outputs"]["y"]["equal"] is False


def test_each_node_timed_by_onnxruntimes_profiler(client):
    """ "profile": every node of the main graph timed (the median of 3 runs after a warm-up),
    under its own id and op; an If's branch nodes never taken for the main graph's."""
    model = tiny_cnn()
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"inputs": {"input": {"random": {"seed": 1}}}, "profile": True})
    profile = answer["profile"]
    assert profile["runs"] == 3 and profile["ms"] > 0 and profile["optimized"] is False
    # every node but the Constant (onnxruntime makes it an initializer: nothing runs)
    assert [(n["node"], n["op_type"]) for n in profile["nodes"]] == [
        (f"n{i}", node.op_type) for i, node in enumerate(model.graph.node) if node.op_type != "Constant"
    ]
    assert all(n["time_us"] >= 0 for n in profile["nodes"]) and any(n["time_us"] > 0 for n in profile["nodes"])
    conv = next(n for n in profile["nodes"] if n["op_type"] == "Conv")
    reshape = next(n for n in profile["nodes"] if n["op_type"] == "Reshape")
    assert conv["time_us"] > reshape["time_us"]  # a 3x3 conv over 32x32 against a view
    # and as onnxruntime runs it by default: its own graph, the LeakyRelu fused into the Conv
    fused = profile["optimized_run"]
    assert fused["ms"] > 0 and fused["nodes"] > 0
    ops = [o["op_type"] for o in fused["ops"]]
    assert "Conv" in ops and "LeakyRelu" not in ops, ops
    assert [o["time_us"] for o in fused["ops"]] == sorted((o["time_us"] for o in fused["ops"]), reverse=True)
    assert "profile" not in run(client, mid, {"inputs": {}})  # only when asked

    # an If whose branch holds a nameless Relu, as the main graph's first node is: onnxruntime
    # numbers and names both "Relu_0"; the branch's (over 4M values) runs inside the If's time
    # and is never taken for n0's (over 4)
    big = 4_000_000
    then = helper.make_graph(
        [helper.make_node("Relu", ["big"], ["t"])], "then", [], [helper.make_tensor_value_info("t", F, [big])]
    )
    other = helper.make_graph(
        [helper.make_node("Neg", ["big"], ["e"])], "else", [], [helper.make_tensor_value_info("e", F, [big])]
    )
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", F, [4]),
            helper.make_tensor_value_info("big", F, [big]),
            helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("a", F, [4]), helper.make_tensor_value_info("y", F, [big])],
    )
    branching = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, branching.SerializeToString()).get_json()["id"]
    c = npy_blob(client, np.array(True))
    feeds = {"x": {"random": {"seed": 0}}, "big": {"random": {"seed": 0}}, "c": {"npy": c}}
    profile = run(client, mid, {"inputs": feeds, "profile": True})["profile"]
    timed = {n["node"]: n for n in profile["nodes"]}
    assert [(k, n["op_type"]) for k, n in timed.items()] == [("n0", "Relu"), ("n1", "If")]
    assert timed["n0"]["time_us"] * 20 < timed["n1"]["time_us"], timed
    # the branch taken, timed on its own node, within the If's time; the other never ran
    (inside,) = profile["subgraph_nodes"]
    assert inside["node"] == "n1/then_branch/n0" and inside["op_type"] == "Relu" and inside["within"] == "n1"
    assert timed["n0"]["time_us"] * 20 < inside["time_us"] <= timed["n1"]["time_us"], (inside, timed)


def test_a_loops_body_is_timed_over_its_iterations(client):
    """A Loop running its body (a named Mul over 1M values) 6 times: the body's node timed once
    per run, its 6 kernels summed, within the Loop's own time."""
    mid = upload(client, loop_model().SerializeToString()).get_json()["id"]
    profile = run(client, mid, {"inputs": {"v": {"random": {"seed": 0}}}, "profile": True})["profile"]
    (loop,) = profile["nodes"]
    inside = {n["name"]: n for n in profile["subgraph_nodes"]}
    assert set(inside) == {"keep_going", "double"} and inside["double"]["node"] == "n0/body/n1"
    assert inside["double"]["within"] == "n0" and 0 < inside["double"]["time_us"] <= loop["time_us"]


def test_profile_must_be_a_boolean(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    assert run(client, mid, {"inputs": {}, "profile": "yes"}, 400)["error"]["code"] == "bad_request"


def test_the_optimised_run_is_timed_even_when_its_graph_cant_be_saved(tmp_path, monkeypatch):
    """Saving the optimised graph (to put its kernels on the model's nodes) fails: its times by
    operator still come, and its kernels are matched by name alone."""
    from app.onnx_io import ort_worker

    real = ort_worker._profiled

    def no_saving(ort, np_, job, feeds, runs, optimize, save=None):
        if save:
            raise RuntimeError("disk full")
        return real(ort, np_, job, feeds, runs, optimize)

    monkeypatch.setattr(ort_worker, "_profiled", no_saving)
    path = tmp_path / "m.onnx"
    onnx.save(tiny_cnn(), path)
    (tmp_path / "out").mkdir()
    job = {"path": str(path), "out": str(tmp_path / "out"), "inputs": {"input": {"seed": 1}}, "profile": 1}
    optimized = ort_worker.run(job)["profile"]["optimized"]
    assert "error" not in optimized and optimized["graph"] == [] and optimized["ops"]
    assert {k["name"] for k in optimized["kernels"]} >= {"pool1", "softmax"}


def test_node_times_stand_when_the_optimised_profile_fails(tmp_path, monkeypatch):
    """The optimised graph's profile is a second session: if onnxruntime can't make or run
    that one, the model's node times still come back, and the part missing says why."""
    from app.onnx_io import ort_worker

    real = ort_worker._profiled

    def plain_only(ort, np_, job, feeds, runs, optimize, save=None):
        if optimize:
            raise RuntimeError("no optimised session today")
        return real(ort, np_, job, feeds, runs, optimize, save)

    monkeypatch.setattr(ort_worker, "_profiled", plain_only)
    path = tmp_path / "m.onnx"
    onnx.save(tiny_cnn(), path)
    (tmp_path / "out").mkdir()
    job = {"path": str(path), "out": str(tmp_path / "out"), "inputs": {"input": {"seed": 1}}, "profile": 1}
    answer = ort_worker.run(job)
    assert answer["status"] == "ok"
    assert len(answer["profile"]["nodes"]) == 7 and answer["profile"]["runs"] == 1
    assert answer["profile"]["optimized"] == {"error": "no optimised session today"}


def pb_blob(client, path) -> dict:
    """A TensorProto file (a test data set's input_0.pb) uploaded: {"blob", "dtype", "shape", "name"}."""
    r = client.post("/api/blobs", data={"file": (io.BytesIO(path.read_bytes()), path.name)})
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def test_a_test_data_set_runs_and_its_outputs_are_checked(client):
    """An ONNX test data set (input_0.pb, output_0.pb): the inputs uploaded as TensorProto files,
    the run's outputs compared with the expected ones — close on the model; after an edit that
    changes what it computes (the weights negated), said to differ."""
    folder = ONNX_DATA / "pytorch-converted" / "test_Conv2d"
    model = onnx.load(folder / "model.onnx")
    mid = upload(client, (folder / "model.onnx").read_bytes(), "conv.onnx").get_json()["id"]
    given = pb_blob(client, folder / "test_data_set_0" / "input_0.pb")
    want = onnx.numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0" / "input_0.pb")))
    assert given["shape"] == list(want.shape) and given["dtype"] == "float32"
    expected = pb_blob(client, folder / "test_data_set_0" / "output_0.pb")
    first_input = model.graph.input[0].name
    output = model.graph.output[0].name
    body = {"inputs": {first_input: {"npy": given["blob"]}}, "expected": {output: {"npy": expected["blob"]}}}
    answer = run(client, mid, body)
    check = answer["expected"]["outputs"][output]
    assert check["close"] and check["max_abs"] < 1e-4, check
    weights = next(t for t in model.graph.initializer if len(t.dims) == 4)
    negated = -onnx.numpy_helper.to_array(weights)
    op = {"op": "set_initializer", "name": weights.name, "value": {"npy": npy_blob(client, negated)}}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    check = run(client, mid, body)["expected"]["outputs"][output]
    assert not check["close"] and not check["equal"] and check["max_abs"] > 0.1


def _external_tensor() -> bytes:
    t = onnx.TensorProto(name="e", data_type=onnx.TensorProto.FLOAT, dims=[1])
    t.data_location = onnx.TensorProto.EXTERNAL
    t.external_data.add(key="location", value="e.bin")
    return t.SerializeToString()


@pytest.mark.parametrize(
    ("data", "name", "code"),
    [
        (b"\xff\xff\xff garbage", "input_0.pb", "bad_npy"),
        (_external_tensor(), "e.pb", "bad_npy"),  # its values in a file nobody sent
        # float6: onnx has it, onnxruntime has no such type to feed (float8 and the rest: below)
        (
            onnx.helper.make_tensor("f6", onnx.TensorProto.FLOAT6E2M3, [2], [1.0, 2.0]).SerializeToString(),
            "f6.pb",
            "bad_npy",
        ),
        (onnx.TensorProto(name="nothing").SerializeToString(), "t.pb", "bad_npy"),  # no data type
    ],
)
def test_tensor_files_that_cant_be_inputs_are_refused(client, data, name, code):
    r = client.post("/api/blobs", data={"file": (io.BytesIO(data), name)})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == code, r.get_json()


def test_expected_outputs_must_be_outputs_of_the_run(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    blob = npy_blob(client, np.zeros(3, np.float32))
    r = client.post(f"/api/models/{mid}/run", json={"expected": {"nope": {"npy": blob}}})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "unknown_output"
    r = client.post(f"/api/models/{mid}/run", json={"expected": {"probs": blob}})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_request"
    answer = run(client, mid, {"expected": {"probs": {"npy": blob}}})  # another shape: differs, says how
    assert (
        answer["expected"]["outputs"]["probs"]["equal"] is False
        and len(answer["expected"]["outputs"]["probs"]["shape"]) == 2
    )


@pytest.mark.corpus
def test_subgraph_nodes_of_the_node_test_models_are_timed_on_their_own_nodes(client):
    """Every official node-test model with a subgraph that onnxruntime runs on its own inputs
    (If, Loop, Scan, sequence ops…), profiled: each node timed inside a subgraph is a node of that
    subgraph, of the op onnxruntime ran, within the main-graph node holding it, its time within
    that node's."""
    from onnx.backend.test.case.node import collect_testcases

    from app.onnx_io.address import resolve_node

    timed = ran = 0
    for case in collect_testcases(None):
        model = case.model
        if not any(
            a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
            for n in model.graph.node
            for a in n.attribute
        ):
            continue
        initialized = {t.name for t in model.graph.initializer}
        names = [v.name for v in model.graph.input if v.name not in initialized]
        arrays = list(case.data_sets[0][0])
        if not all(isinstance(a, np.ndarray) and a.dtype.kind in "biuf" for a in arrays):
            continue  # sequences, optionals, bfloat16…: no .npy for them
        mid = upload(client, model.SerializeToString()).get_json()["id"]
        feeds = {name: {"npy": npy_blob(client, a)} for name, a in zip(names, arrays, strict=False)}
        r = client.post(f"/api/models/{mid}/run", json={"inputs": feeds, "profile": True})
        if r.status_code == 422:
            continue  # onnxruntime can't run it (a newer operator)
        assert r.status_code == 200, r.get_json()
        ran += 1
        profile = r.get_json()["profile"]
        main = {n["node"]: n for n in profile["nodes"]}
        for n in profile["subgraph_nodes"]:
            _, _, node = resolve_node(model, n["node"])
            assert node.op_type == n["op_type"] and node.name == n["name"], (case.name, n)
            assert n["node"].split("/")[0] == n["within"] and n["time_us"] <= main[n["within"]]["time_us"] + 1, (
                case.name,
                n,
            )
            timed += 1
    assert ran >= 20 and timed >= 300, (ran, timed)


def test_a_constant_the_store_keeps_as_a_blob_runs(tmp_path):
    """A Constant's value kept as a blob of its own (every tensor is, here) goes back into the
    graph a run loads: onnxruntime reads only initializers from files, and a Reshape's shape from
    a Constant it must have in the graph."""
    from app import create_app

    client = create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "STORE_SPLIT_MIN_BYTES": 1}).test_client()
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"inputs": {"input": {"random": {"seed": 1}}}})
    assert answer["outputs"]["probs"]["shape"] == [1, 10]


@pytest.mark.parametrize(
    ("to", "kind"),
    [
        (onnx.TensorProto.BFLOAT16, "bfloat16"),
        (onnx.TensorProto.FLOAT8E4M3FN, "float8_e4m3fn"),  # numpy gave its bytes as UINT8
        (onnx.TensorProto.FLOAT8E5M2, "float8_e5m2"),
        (onnx.TensorProto.INT4, "int4"),
        (onnx.TensorProto.UINT4, "uint4"),
    ],
)
def test_outputs_of_types_numpy_lacks_are_shown_as_their_values(client, to, kind):
    """A bfloat16, float8 or 4-bit output ran into "No corresponding Numpy type": it is read from
    onnxruntime's buffer and shown widened, named by its own type."""
    import ml_dtypes

    x = np.array([[-9.0, -2.5, -1.0, 0.0, 0.3], [1.0, 1.5, 2.0, 7.0, 100.0]], np.float32)
    if kind in ("int4", "uint4"):
        x = np.clip(np.round(x), -8 if kind == "int4" else 0, 7)
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Cast", ["x"], ["y"], to=to)],
        "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 5])],
        [onnx.helper.make_tensor_value_info("y", to, [2, 5])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 21)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"x": {"npy": npy_blob(client, x)}}})
    assert r.status_code == 200, r.get_json()
    y = r.get_json()["outputs"]["y"]
    assert y["dtype"] == onnx.TensorProto.DataType.Name(to) and y["converted_from"] == y["dtype"]
    want = x.astype(getattr(ml_dtypes, kind)).astype(np.float32)
    np.testing.assert_array_equal(np.array(y["values"], np.float32).reshape(2, 5), want)


NARROW_INPUTS = [
    (onnx.TensorProto.BFLOAT16, "bfloat16"),
    (onnx.TensorProto.FLOAT8E4M3FN, "float8_e4m3fn"),
    (onnx.TensorProto.FLOAT8E5M2, "float8_e5m2"),
    (onnx.TensorProto.INT4, "int4"),
    (onnx.TensorProto.UINT4, "uint4"),
]


def narrow_input_model(dtype: int) -> onnx.ModelProto:
    """x (of a type numpy lacks) -> Cast -> y (float) -> Cast -> z (its own type again)."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Cast", ["x"], ["y"], to=F), onnx.helper.make_node("Cast", ["y"], ["z"], to=dtype)],
        "g",
        [onnx.helper.make_tensor_value_info("x", dtype, [2, 5])],
        [onnx.helper.make_tensor_value_info("y", F, [2, 5]), onnx.helper.make_tensor_value_info("z", dtype, [2, 5])],
    )
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 21)])


@pytest.mark.parametrize(("dtype", "kind"), NARROW_INPUTS)
def test_inputs_of_types_numpy_lacks_run_from_their_tensor_files_and_at_random(client, dtype, kind):
    """A bfloat16, float8 or 4-bit input: its test data set's .pb is read widened (exactly), the
    run feeds it narrowed back to the input's type (onnxruntime reads the same values), and
    random values are made for it; the inputs fed are shown by their own type."""
    import ml_dtypes

    x = np.array([[-8, -2.5, -1, 0, 0.375], [1, 1.5, 2, 7, 96]], np.float32)
    if kind in ("int4", "uint4"):
        x = np.clip(np.round(x), -8 if kind == "int4" else 0, 7)
    exact = x.astype(getattr(ml_dtypes, kind))
    mid = upload(client, narrow_input_model(dtype).SerializeToString()).get_json()["id"]
    tensor_file = onnx.numpy_helper.from_array(exact, "x").SerializeToString()
    r = client.post("/api/blobs", data={"file": (io.BytesIO(tensor_file), "input_0.pb")})
    assert r.status_code == 201, r.get_json()
    given = r.get_json()
    assert given["converted_from"] == onnx.TensorProto.DataType.Name(dtype) and given["shape"] == [2, 5]
    assert given["dtype"] == ("float32" if kind.startswith(("bfloat", "float")) else str(np.dtype(kind[:-1] + "8")))

    answer = run(client, mid, {"inputs": {"x": {"npy": given["blob"]}}})
    want = exact.astype(np.float32)
    np.testing.assert_array_equal(np.array(answer["outputs"]["y"]["values"], np.float32).reshape(2, 5), want)
    assert answer["outputs"]["z"]["dtype"] == given["converted_from"]
    np.testing.assert_array_equal(np.array(answer["outputs"]["z"]["values"], np.float32).reshape(2, 5), want)
    fed = answer["inputs"]["x"]
    assert fed["dtype"] == fed["converted_from"] == given["converted_from"]
    np.testing.assert_array_equal(np.array(fed["values"], np.float32).reshape(2, 5), want)

    # random values, and the same inputs fed to another revision (saved widened, narrowed again)
    assert (
        client.post(
            f"/api/models/{mid}/edits",
            json={"base": 0, "ops": [{"op": "set_model_field", "field": "doc_string", "value": "again"}]},
        ).status_code
        == 200
    )
    answer = run(client, mid, {"inputs": {"x": {"random": {"seed": 4}}}, "compare_to": 0})
    fed = np.array(answer["inputs"]["x"]["values"], np.float32)
    np.testing.assert_array_equal(fed.astype(getattr(ml_dtypes, kind)).astype(np.float32), fed)  # values of its type
    if kind.startswith(("bfloat", "float")):
        assert len(set(fed.tolist())) > 3  # random, not zeros
    outputs = answer["compare"]["outputs"]
    assert set(outputs) == {"y", "z"} and all(c["equal"] for c in outputs.values()), outputs


def test_a_float_npy_feeds_a_bfloat16_input_rounded_to_it(client):
    mid = upload(client, narrow_input_model(onnx.TensorProto.BFLOAT16).SerializeToString()).get_json()["id"]
    x = np.array([[1.0, 1.001, 3.14159, -2.0, 1e-3]] * 2, np.float32)
    answer = run(client, mid, {"inputs": {"x": {"npy": npy_blob(client, x)}}})
    import ml_dtypes

    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(np.array(answer["outputs"]["y"]["values"], np.float32).reshape(2, 5), want)
    words = npy_blob(client, np.array([["a"] * 5] * 2))
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"x": {"npy": words}}})
    assert r.status_code == 400 and "not numbers" in r.get_json()["error"]["message"]


def pb_file(value, info: onnx.ValueInfoProto) -> bytes:
    """A test data set's .pb of a graph input or output: a TensorProto, a SequenceProto or an
    OptionalProto, as its type says."""
    kind = info.type.WhichOneof("value")
    if kind == "optional_type":
        return onnx.numpy_helper.from_optional(value, info.name).SerializeToString()
    if kind == "sequence_type":
        return onnx.numpy_helper.from_list(value, info.name).SerializeToString()
    return onnx.numpy_helper.from_array(value, info.name).SerializeToString()


@pytest.mark.parametrize(
    "name",
    ["test_sequence_insert_at_back", "test_sequence_map_extract_shapes", "test_identity_opt", "test_loop16_seq_none"],
)
def test_sequence_and_optional_inputs_run_from_their_test_data(client, name):
    """A sequence or optional input: its test data set's .pb (SequenceProto, OptionalProto)
    feeds it, and the run gives onnxruntime's own outputs — checked against the test data's
    expected .pb too."""
    case = node_testcases()[name]
    model, (ins, outs) = case.model, case.data_sets[0]
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    graph_inputs = [i for i in model.graph.input]
    body = {"inputs": {}, "expected": {}}
    for side, infos, values in (("inputs", graph_inputs, ins), ("expected", model.graph.output, outs)):
        for info, value in zip(infos, values, strict=True):
            r = client.post("/api/blobs", data={"file": (io.BytesIO(pb_file(value, info)), f"{side}.pb")})
            assert r.status_code == 201, r.get_json()
            tensor = info.type.HasField("tensor_type")
            assert r.get_json().get("kind", "tensor") == ("tensor" if tensor else "sequence")
            body[side][info.name] = {"npy": r.get_json()["blob"]}
    answer = run(client, mid, body)
    assert all(o["close"] for o in answer["expected"]["outputs"].values()), answer["expected"]
    want = reference(model.SerializeToString(), {i.name: v for i, v in zip(graph_inputs, ins, strict=True)})
    for out_name, value in want.items():
        got = answer["outputs"][out_name]
        if isinstance(value, list):
            assert got["kind"] == "sequence" and got["count"] == len(value)
            for item, v in zip(got["items"], value, strict=True):
                np.testing.assert_array_equal(np.array(item["values"]).reshape(v.shape), v)
        else:
            np.testing.assert_array_equal(np.array(got["values"]).reshape(value.shape), value)


def ort_type(tp: onnx.TypeProto) -> str:
    """onnxruntime's name of a type: seq(tensor(float)), optional(seq(tensor(float)))."""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return f"tensor({onnx.helper.tensor_dtype_to_np_dtype(tp.tensor_type.elem_type).name.replace('float32', 'float').replace('float64', 'double')})"
    if kind == "sequence_type":
        return f"seq({ort_type(tp.sequence_type.elem_type)})"
    return f"optional({ort_type(tp.optional_type.elem_type)})"


def test_a_file_of_no_value_is_refused_and_a_named_empty_one_is_an_empty_optional(client):
    for data in (b"", b"\x08\x01", onnx.TensorProto(name="nothing").SerializeToString()):
        r = client.post("/api/blobs", data={"file": (io.BytesIO(data), "input_0.pb")})
        assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_npy", (data, r.get_json())
    # a name and nothing else: how onnx writes an empty optional (and an empty sequence or map
    # with no element type, the same bytes): fed as None to an optional input
    r = client.post("/api/blobs", data={"file": (io.BytesIO(onnx.SequenceProto(name="s").SerializeToString()), "x.pb")})
    assert r.status_code == 201 and r.get_json()["kind"] == "optional", r.get_json()


def test_a_zipmaps_sequence_of_maps_runs_compares_and_is_kept_as_a_case(client):
    model = zipmap_model()
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    x = np.array([[0.1, 0.7, 0.2], [0.5, 0.25, 0.25]], np.float32)
    answer = run(client, mid, {"inputs": {"X": {"npy": npy_blob(client, x)}}})
    probs = answer["outputs"]["probs"]
    assert probs["kind"] == "sequence" and probs["count"] == 2
    want = reference(model.SerializeToString(), {"X": x})["probs"]
    for item, row in zip(probs["items"], want, strict=True):
        assert item["kind"] == "map" and item["keys"]["values"] == list(row)
        np.testing.assert_allclose(item["values"]["values"], list(row.values()))
    # the same inputs on another revision: equal, map by map
    edit = {"op": "set_model_field", "field": "doc_string", "value": "again"}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [edit]}).status_code == 200
    compared = run(client, mid, {"inputs": {"X": {"npy": npy_blob(client, x)}}, "compare_to": 0})["compare"]
    assert compared["outputs"]["probs"]["equal"] and compared["outputs"]["probs"]["shape"] == [2]
    # kept as a reference case, checked, and downloaded as a test data set onnx reads back
    r = client.post(f"/api/models/{mid}/checks", json={"inputs": {"X": {"npy": npy_blob(client, x)}}})
    assert r.status_code == 201 and r.get_json()["verdict"]["status"] == "passed", r.get_json()
    import zipfile

    with zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{mid}/download?tests=1").data)) as z:
        stored = onnx.SequenceProto.FromString(z.read(next(n for n in z.namelist() if n.endswith("output_0.pb"))))
    rows = onnx.numpy_helper.to_list(stored)
    assert [sorted(r) for r in rows] == [[0, 1, 2]] * 2
    np.testing.assert_allclose([float(r[1]) for r in rows], [0.7, 0.25], rtol=1e-6)


def test_a_sequence_output_shows_each_tensor_as_onnxruntime_gives_it(client):
    case = node_testcases()["test_split_to_sequence_2"]
    data, inputs = case.model.SerializeToString(), case.data_sets[0][0]
    names = [i.name for i in case.model.graph.input]
    mid = upload(client, data).get_json()["id"]
    answer = run(client, mid, {"inputs": {n: {"npy": npy_blob(client, v)} for n, v in zip(names, inputs, strict=True)}})
    got = answer["outputs"]["seq"]
    want = reference(data, dict(zip(names, inputs, strict=True)))["seq"]
    assert got["kind"] == "sequence" and got["count"] == len(want) == len(got["items"])
    for item, value in zip(got["items"], want, strict=True):
        assert item["shape"] == list(value.shape) and item["dtype"] == "FLOAT"
        np.testing.assert_array_equal(np.array(item["values"], np.float32).reshape(value.shape), value)


def test_a_value_file_of_the_wrong_type_is_refused_naming_both_types(client):
    """A sequence of floats fed to a seq(tensor(int64)) input: onnxruntime's own words are a C++
    assertion in TensorSeq.h; the run says what the input is and what the file holds."""
    case = node_testcases()["test_sequence_insert_at_back"]
    model, (ins, _) = case.model, case.data_sets[0]
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    seq_info, tensor_info = model.graph.input
    floats = [np.ones((2, 3), np.float32)]
    body = {"inputs": {}}
    for info, value in ((seq_info, floats), (tensor_info, ins[1])):
        r = client.post("/api/blobs", data={"file": (io.BytesIO(pb_file(value, info)), "input.pb")})
        body["inputs"][info.name] = {"npy": r.get_json()["blob"]}
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"] == (
        f'input "{seq_info.name}" is a seq(tensor(int64)): its file holds a seq(tensor(float))'
    )
    # the right element type runs; so does an empty sequence, which any sequence input takes
    for value in (ins[0], []):
        data = onnx.SequenceProto(name="s", elem_type=onnx.SequenceProto.TENSOR) if not value else None
        blob = data.SerializeToString() if data is not None else pb_file(value, seq_info)
        r = client.post("/api/blobs", data={"file": (io.BytesIO(blob), "input.pb")})
        body["inputs"][seq_info.name] = {"npy": r.get_json()["blob"]}
        assert client.post(f"/api/models/{mid}/run", json=body).status_code == 200


def test_a_refused_run_does_not_say_where_the_server_keeps_its_files(client, app):
    """onnxruntime names the file it could not find (a weight "kept" in pyproject.toml, beside
    the model it was given in the store's scratch folder): the answer leaves the folder out."""
    from onnx import TensorProto, helper

    t = TensorProto(name="w", data_type=TensorProto.UINT8, dims=[16], data_location=TensorProto.EXTERNAL)
    t.external_data.add(key="location", value="pyproject.toml")
    t.external_data.add(key="length", value="16")
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [16])],
        initializer=[t],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/run", json={})
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "pyproject.toml" in message  # onnxruntime's words stay...
    data_dir = str(app.extensions["store"].blobs.scratch().parent)
    assert data_dir not in message and ".scratch" not in message, message  # ...without our folders


def test_sequence_and_optional_inputs_get_random_tensors_of_their_declared_shape(client):
    """Random values for a sequence input: `count` tensors (2 unless said) of the shape its type
    declares, symbolic dims from `dims`; an optional sequence likewise. A sequence whose tensors'
    shape isn't declared, or a count past the bound, is refused saying so."""
    cases = node_testcases()
    model = cases["test_sequence_map_add_2_sequences"].model  # y0 = x0 + x1, item by item
    x0, x1 = (i.name for i in model.graph.input)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    body = {
        "dims": {"N": 3},
        "inputs": {x0: {"random": {"seed": 1, "count": 3}}, x1: {"random": {"seed": 2, "count": 3}}},
    }
    answer = run(client, mid, body)
    fed = answer["inputs"]
    assert fed[x0]["kind"] == fed[x1]["kind"] == "sequence" and fed[x0]["count"] == fed[x1]["count"] == 3
    assert all(item["shape"] == [3] and item["dtype"] == "FLOAT" for item in fed[x0]["items"])
    assert fed[x0]["items"][0]["values"] != fed[x1]["items"][0]["values"]  # their own seeds
    y0 = answer["outputs"][model.graph.output[0].name]
    for a, b, y in zip(fed[x0]["items"], fed[x1]["items"], y0["items"], strict=True):
        np.testing.assert_allclose(np.add(a["values"], b["values"]), y["values"], rtol=1e-6)
    # unsaid: 2 items each
    answer = run(client, mid, {"dims": {"N": 3}})
    assert answer["inputs"][x0]["count"] == 2 and answer["outputs"][model.graph.output[0].name]["count"] == 2
    r = client.post(f"/api/models/{mid}/run", json={"dims": {"N": 3}, "inputs": {x0: {"random": {"count": 1000}}}})
    assert r.status_code == 400 and "at most 256" in r.get_json()["error"]["message"]
    r = client.post(f"/api/models/{mid}/run", json={})
    assert r.status_code == 400 and 'dim "N" of unknown size' in r.get_json()["error"]["message"]

    optional = cases["test_identity_opt"].model  # optional(seq(tensor(float)[5])) -> itself
    mid = upload(client, optional.SerializeToString()).get_json()["id"]
    answer = run(client, mid, {})
    fed, out = answer["inputs"]["opt_in"], answer["outputs"]["opt_out"]
    assert fed["count"] == out["count"] == 2 and [i["values"] for i in fed["items"]] == [
        i["values"] for i in out["items"]
    ]

    undeclared = cases["test_sequence_insert_at_back"].model  # seq(tensor(int64)) of no shape
    mid = upload(client, undeclared.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/run", json={})
    assert r.status_code == 400
    assert r.get_json()["error"]["message"] == (
        "input \"sequence\" (seq(tensor(int64))): its tensors' shape isn't declared; give it a test data set's .pb"
    )


def test_scalar_inputs_of_a_narrow_type_stay_scalars(client):
    """Range over bfloat16 scalars (start, limit, delta): fed as [1] they made a [2, 1] output
    where onnx's test data (and onnxruntime fed scalars) give [2]."""
    case = node_testcases()["test_range_bfloat16_type_positive_delta_expanded"]
    model, (ins, outs) = case.model, case.data_sets[0]
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    body = {"inputs": {}, "expected": {}}
    for side, infos, values in (("inputs", model.graph.input, ins), ("expected", model.graph.output, outs)):
        for info, value in zip(infos, values, strict=True):
            r = client.post("/api/blobs", data={"file": (io.BytesIO(pb_file(value, info)), "x.pb")})
            body[side][info.name] = {"npy": r.get_json()["blob"]}
    answer = run(client, mid, body)
    assert answer["inputs"]["start"]["shape"] == [] and answer["outputs"]["output"]["shape"] == [2]
    assert answer["expected"]["outputs"]["output"]["equal"], answer["expected"]


@pytest.mark.parametrize("initializer", [False, True], ids=["constant", "initializer"])
def test_a_big_constant_inside_a_branch_runs(client, initializer):
    """A 20 MB Constant (or initializer) inside an If branch (past the bound a main-graph
    Constant is read from its file at): put in the graph the run loads, as onnxruntime's loader
    wants it there."""
    from browser.browser_models import constant_in_branch

    model = constant_in_branch(5_000_000, initializer)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    x = np.ones(5_000_000, np.float32)
    r = client.post(
        f"/api/models/{mid}/run",
        json={"inputs": {"x": {"npy": npy_blob(client, x)}, "b": {"npy": npy_blob(client, np.array(True))}}},
    )
    assert r.status_code == 200, r.get_json()
    stats = r.get_json()["outputs"]["out"]["stats"]
    assert stats["min"] == 1 and abs(stats["max"] - 2) < 1e-6


def test_unnamed_dims_are_sized_by_input_and_axis(client):
    """A dim with neither size nor name, and PaddlePaddle's "?", can't be sized by a name of
    their own: the error says which key gives them ("x[0]"), and with it the model runs."""
    from browser.browser_models import unnamed_dims_model

    mid = upload(client, unnamed_dims_model().SerializeToString()).get_json()["id"]
    inputs = {"x": {"random": {"seed": 1}}, "y": {"random": {"seed": 2}}}
    r = client.post(f"/api/models/{mid}/run", json={"inputs": inputs})
    assert r.status_code == 400
    assert (
        r.get_json()["error"]["message"]
        == 'input "x" has an unnamed dim of unknown size at axis 0: give its size in "dims" as "x[0]"'
    )
    r = client.post(f"/api/models/{mid}/run", json={"inputs": inputs, "dims": {"x[0]": 5, "y[0]": 5}})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["outputs"]["z"]["shape"] == [5, 3]


def _declared_one_row() -> onnx.ModelProto:
    """A Relu on float[batch, 2] whose output declares one row, as onnxmltools declares a
    LightGBM classifier's labels [1] whatever the batch."""
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 2])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 2])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_an_output_back_in_another_shape_than_declared_is_named(client):
    mid = upload(client, _declared_one_row().SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"dims": {"batch": 3}})
    assert answer["declared_mismatches"] == [{"output": "y", "declared": [1, 2], "shape": [3, 2]}]
    assert "declared_mismatches" not in run(client, mid, {"dims": {"batch": 1}})


def conv_bn():
    """Conv → BatchNormalization: onnxruntime folds the normalisation into the Conv's weights
    when nothing reads the Conv's own output, which moves the output's last digits."""
    rng = np.random.default_rng(3)
    init = [
        onnx.numpy_helper.from_array(rng.standard_normal((4, 2, 3, 3)).astype(np.float32), "w"),
        *(
            onnx.numpy_helper.from_array(v.astype(np.float32), n)
            for n, v in [
                ("scale", rng.uniform(0.5, 3, 4)),
                ("bias", rng.standard_normal(4)),
                ("mean", rng.standard_normal(4)),
                ("var", rng.uniform(0.01, 0.2, 4)),
            ]
        ),
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
            helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"], name="bn"),
        ],
        "conv_bn",
        [helper.make_tensor_value_info("x", F, [1, 2, 5, 5])],
        [helper.make_tensor_value_info("y", F, [1, 4, 5, 5])],
        init,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_locate_answers_the_outputs_of_the_plain_run(client):
    """Locating saves every shared tensor, which keeps onnxruntime from folding the
    BatchNormalization into the Conv: the outputs and their comparison answered are still
    those of the revision as it runs (what onnxruntime gives for it), not of the located run."""
    data = conv_bn().SerializeToString()
    mid = upload(client, data).get_json()["id"]
    edit = {"op": "set_metadata", "key": "note", "value": "same compute"}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [edit]}).status_code == 200
    body = {"inputs": {"x": {"random": {"seed": 4}}}, "compare_to": 0}
    plain = run(client, mid, body)
    located = run(client, mid, {**body, "locate": True})
    assert located["outputs"]["y"]["values"] == plain["outputs"]["y"]["values"]
    assert located["compare"]["outputs"] == plain["compare"]["outputs"]
    x = np.array(plain["inputs"]["x"]["values"], np.float32).reshape(1, 2, 5, 5)
    ours = reference(data, {"x": x})["y"].ravel()
    assert np.array_equal(np.array(located["outputs"]["y"]["values"], np.float32), ours)
    assert located["compare"]["diverges"] is None


def test_an_output_renamed_since_is_compared_with_its_old_self(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "rename_tensor", "from": "probs", "to": "scores"}]}
    )
    assert r.status_code == 200, r.get_json()
    c = run(client, mid, {"inputs": {"input": {"random": {"seed": 2}}}, "compare_to": 0})["compare"]
    assert set(c["outputs"]) == {"scores"} and c["renamed"] == {"scores": "probs"}
    assert c["outputs"]["scores"]["equal"] is True


def test_a_zero_reference_gives_no_relative_error_and_no_overflow():
    import warnings

    from app.onnx_io.output_compare import compare_arrays

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "overflow encountered in divide" was one
        c = compare_arrays(np.array([1e300, 2.0], np.float64), np.array([0.0, 2.0], np.float64))
        assert c["max_abs"] == 1e300 and c["max_rel"] is None
        c = compare_arrays(np.array([3.0, 1.0]), np.array([2.0, 0.0]))  # relative where the reference isn't 0
        assert c["max_rel"] == 0.5 and c["max_abs"] == 1.0
        assert compare_arrays(np.zeros(3), np.zeros(3))["max_rel"] == 0.0


def test_each_nodes_error_names_the_node_of_the_other_revision_writing_that_tensor(client):
    """After a dynamic quantization, a Conv's output is written by an Add the quantizer made (its
    bias): the row names the float model's Conv, the node to leave out to quantize again, and
    quantizing again without it leaves it a Conv."""
    from test_model_tools import conv_net

    model = conv_net()
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_dynamic"}]})
    assert r.status_code == 200, r.get_json()
    body = {"inputs": {"x": {"random": {"seed": 2}}}, "dims": {"N": 1}, "compare_to": 0, "locate": True}
    rows = run(client, mid, body)["compare"]["nodes"]
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    (row,) = [n for n in rows if n["tensor"] == conv.output[0]]
    assert (row["other_name"], row["other_op"]) == (conv.name, "Conv") and row["name"] != conv.name
    again = {"op": "quantize_dynamic", "nodes_to_exclude": [row["other_name"]]}
    assert client.post(f"/api/models/{mid}/undo").status_code == 200  # as the page does
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [again]})
    assert r.status_code == 200, r.get_json()
    requantized = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert conv.name in {n.name for n in requantized.graph.node if n.op_type == "Conv"}


def test_sizes_too_big_to_run_and_weights_asked_as_outputs_say_so(client):
    """QA: dims of 10**40 were "an input's .npy can't be read" (none was sent), 10**12 a MemoryError
    blamed on the model (422 run_failed), and an initializer asked as an output "no tensor"."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", F, ["batch", 4])],
        [helper.make_tensor_value_info("y", F, ["batch", 3])],
        [onnx.numpy_helper.from_array(np.ones((4, 3), np.float32), "W")],
    )
    mid = upload(client, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    mid = mid.get_json()["id"]
    huge = run(client, mid, {"dims": {"batch": 10**40}}, 400)["error"]
    assert huge["code"] == "bad_dims" and huge["message"] == "'batch': 1e+40 is too big a size (at most 1e+12)"
    big = run(client, mid, {"dims": {"batch": 10**12}}, 400)["error"]
    assert big["code"] == "bad_inputs" and big["message"] == (
        "the inputs at these sizes (batch=1000000000000) take more memory than a run may use; give smaller dims"
    )
    weight = run(client, mid, {"dims": {"batch": 1}, "outputs": ["W"]}, 400)["error"]
    assert weight["message"] == "'W' is a weight, not computed by a run: its values are in its tensor panel"
