"""The onnxruntime gate: an edit onnx.checker and strict inference accept but onnxruntime can't
run is refused at once (422, one line naming the node) when onnxruntime ran the base."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from browser.browser_models import reflect_padded, reshaped_to
from onnx import TensorProto, helper, numpy_helper
from testkit import ONNX_DATA, upload

from app.onnx_io import runtime_check

CONVERTED = sorted((ONNX_DATA / "pytorch-converted").glob("*/model.onnx"))


def classifier() -> onnx.ModelProto:
    """The shape of the PaddleOCR-like classifier of the findings: a Conv with 3x3 weights on
    3 -> 8 channels, and a Softmax on a 2-D tensor whose rank onnx's inference can't know
    (a Squeeze without axes on a symbolic batch), so only onnxruntime sees a bad axis."""
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.random((8, 3, 3, 3), np.float32), "conv1.w"),
        numpy_helper.from_array(rng.random((8, 2), np.float32), "fc.w"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv1.w"], ["c"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
        helper.make_node("Squeeze", ["p"], ["f"], name="squeeze"),
        helper.make_node("MatMul", ["f", "fc.w"], ["logits"], name="fc"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "cls",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 48, 192])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model, full_check=True)
    return model


def _upload(client, model: onnx.ModelProto) -> str:
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def _edit(client, mid: str, ops: list, base: int = 0, **extra):
    return client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": ops, **extra})


def _attr(node: str, name: str, value) -> dict:
    return {"op": "set_attribute", "node": node, "name": name, "value": value}


FINDINGS = [
    # refused before anything runs (edits/attribute_rules.py), in the spec's words
    pytest.param(
        _attr("conv1", "kernel_shape", [5, 5]),
        "the edit breaks its operator's spec: attribute 'kernel_shape' of node \"conv1\" (Conv) must be [3, 3],"
        " the last 2 dims of its weight 'conv1.w'",
        id="kernel_shape",
    ),
    pytest.param(
        _attr("conv1", "group", 3),
        "onnxruntime can't run the edited model: "
        'node "conv1" (Conv) in the main graph: Input channels C is not equal to kernel channels * group',
        id="group",
    ),
    pytest.param(
        _attr("softmax", "axis", 7),
        'onnxruntime can\'t run the edited model: node "softmax" (Softmax) in the main graph: ',
        id="softmax_axis",
    ),
]
# an edit onnx's checks pass and only onnxruntime's run refuses: what the gate's own tests make
RUNTIME_ONLY = _attr("conv1", "group", 3)


@pytest.mark.parametrize(("op", "names"), FINDINGS)
def test_the_three_findings_are_refused_at_once_in_one_line(client, op, names):
    model = classifier()
    edited = onnx.ModelProto.FromString(model.SerializeToString())
    node = next(n for n in edited.graph.node if n.name == op["node"])
    attr = next((a for a in node.attribute if a.name == op["name"]), None) or node.attribute.add(name=op["name"])
    if isinstance(op["value"], list):
        del attr.ints[:]
        attr.ints.extend(op["value"])
        attr.type = onnx.AttributeProto.INTS
    else:
        attr.i, attr.type = op["value"], onnx.AttributeProto.INT
    onnx.checker.check_model(edited, full_check=True)  # onnx's checks see nothing wrong: the gate must
    mid = _upload(client, model)
    r = _edit(client, mid, [op])
    assert r.status_code == 422, r.get_json()
    error = r.get_json()["error"]
    assert error["code"] == "invalid_result"
    assert "\n" not in error["message"]
    assert error["message"].startswith(names), error["message"]
    # the node it is about, by its id in the revision on screen: the page links it
    assert error["node"] == f"n{[n.name for n in model.graph.node].index(op['node'])}"
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0  # nothing stored


def test_edits_that_keep_the_model_runnable_are_accepted(client):
    mid = _upload(client, classifier())
    ops = [
        [{"op": "rename_node", "node": "conv1", "name": "stem"}],
        [{"op": "set_metadata", "key": "source", "value": "test"}],
        [_attr("stem", "pads", [0, 0, 0, 0])],  # smaller feature map, still valid for the pooling after it
        [_attr("softmax", "axis", 0)],
    ]
    for base, batch in enumerate(ops):
        r = _edit(client, mid, batch, base)
        assert r.status_code == 200, r.get_json()
        assert r.get_json()["validation"]["runtime"]["status"] == "ok"
        assert r.get_json()["summary"]["validation"]["runtime"]["status"] == "ok"


def test_the_summary_and_the_history_carry_the_three_verdicts(client):
    mid = _upload(client, classifier())
    v = client.get(f"/api/models/{mid}").get_json()["validation"]
    assert v["ok"] is True and v["full"]["ok"] is True
    assert v["runtime"]["status"] == "ok" and v["runtime"]["ok"] is True
    assert v["runtime"]["onnxruntime"] == ort.__version__
    assert v["invalid"] == []
    assert client.get(f"/api/models/{mid}/validation").get_json()["runtime"]["status"] == "ok"
    assert _edit(client, mid, [{"op": "set_metadata", "key": "k", "value": "v"}]).status_code == 200
    history = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    assert [r["validation"]["runtime"]["status"] for r in history] == ["ok", "ok"]


def _plain_onnxruntime(path) -> str | None:
    """None when onnxruntime runs the model on its own test data, else why not."""
    ort.set_default_logger_severity(3)  # opset 6 models warn on load
    try:
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        feeds = {}
        for k, arg in enumerate(sess.get_inputs()):
            t = onnx.TensorProto.FromString((path.parent / "test_data_set_0" / f"input_{k}.pb").read_bytes())
            feeds[arg.name] = numpy_helper.to_array(t)
        sess.run(None, feeds)
    except Exception as exc:
        return str(exc)
    return None


@pytest.mark.models
@pytest.mark.parametrize("path", CONVERTED, ids=[p.parent.name for p in CONVERTED])
def test_every_pytorch_converted_model_gets_onnxruntimes_own_verdict_and_a_harmless_edit(client, path, gates_wait):
    # a third of them are opset 6, whose kernels onnxruntime no longer has: those fail as they
    # do plainly, and the rest run
    mid = _upload(client, onnx.load(path))
    v = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    plain = _plain_onnxruntime(path)
    if plain is None:
        assert v["status"] == "ok", v
    else:
        assert v["status"] == "fails" and v["message"] in plain, (v, plain)
    r = _edit(client, mid, [{"op": "set_metadata", "key": "checked", "value": "yes"}])
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["status"] == v["status"]


def test_allow_invalid_stores_marks_and_the_next_edit_is_gated_against_that_state(client):
    mid = _upload(client, classifier())
    r = _edit(client, mid, [RUNTIME_ONLY], allow_invalid=True)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["validation"]["runtime"]["status"] == "fails"
    (why,) = body["validation"]["invalid"]
    assert why.startswith('onnxruntime can\'t run the edited model: node "conv1" (Conv)')
    summary = client.get(f"/api/models/{mid}").get_json()["validation"]
    assert summary["invalid"] == [why] and summary["runtime"]["node"] == "n0"
    history = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    assert history[1]["validation"]["invalid"] == [why]
    # onnxruntime can't run the base any more: its check no longer gates
    r = _edit(client, mid, [_attr("softmax", "axis", 7)], base=1)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["invalid"] == []
    # the checker still gates: the base passes it
    unknown = {**_attr("conv1", "studio_flag", 1), "type": "INT"}
    r = _edit(client, mid, [unknown], base=2)
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"].startswith("the edit would make the model invalid")
    # and allow_invalid stores past it too, saying why
    r = _edit(client, mid, [unknown], base=2, allow_invalid=True)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["invalid"][0].startswith("the edit would make the model invalid")
    assert _edit(client, mid, [], base=3, allow_invalid="yes").status_code == 400


def test_a_model_onnxruntime_cant_run_is_not_refused_an_edit(client):
    model = classifier()
    model.graph.node[1].domain = "studio.custom"  # an op onnxruntime has no kernel for
    model.opset_import.append(helper.make_opsetid("studio.custom", 1))
    mid = _upload(client, model)
    v = client.get(f"/api/models/{mid}").get_json()["validation"]
    assert v["runtime"]["status"] == "fails" and "studio.custom" in v["runtime"]["message"]
    r = _edit(client, mid, [RUNTIME_ONLY])
    assert r.status_code == 200, r.get_json()


def test_inputs_it_cant_feed_skip_the_check(client):
    optional = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    graph = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["n"], name="same")],
        "g",
        [helper.make_value_info("s", optional)],
        [helper.make_value_info("n", optional)],
    )
    mid = _upload(client, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    v = client.get(f"/api/models/{mid}").get_json()["validation"]
    assert v["runtime"] == {**v["runtime"], "status": "skipped", "ok": None}
    assert v["runtime"]["message"] == "input \"s\" is an optional(tensor(float)) whose tensor's shape isn't declared"
    assert _edit(client, mid, [{"op": "rename_node", "node": "same", "name": "again"}]).status_code == 200


def test_a_sequence_whose_tensors_have_no_declared_shape_is_fed_empty():
    graph = helper.make_graph(
        [helper.make_node("SequenceLength", ["s"], ["n"], name="len")],
        "g",
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
    )
    verdict = runtime_check.check_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert verdict["status"] == "ok", verdict


# official node tests whose inputs are sequences or optionals of tensors
SEQUENCE_INPUT_TESTS = (
    "test_loop13_seq",
    "test_sequence_insert_at_back",  # its tensors' shape undeclared: an empty sequence
    "test_loop16_seq_none",
    "test_identity_opt",
    "test_sequence_map_add_2_sequences",
    "test_sequence_map_extract_shapes_expanded",
    "test_sequence_map_identity_1_sequence_1_tensor",
)


@pytest.fixture(scope="module")
def sequence_input_models():
    from onnx.backend.test.case.node import collect_testcases

    return {c.name: c.model for c in collect_testcases(None) if c.name in SEQUENCE_INPUT_TESTS}


@pytest.mark.parametrize("name", SEQUENCE_INPUT_TESTS)
def test_sequence_and_optional_inputs_are_fed(sequence_input_models, name):
    model = sequence_input_models[name]
    assert any(i.type.WhichOneof("value") != "tensor_type" for i in model.graph.input)
    verdict = runtime_check.check_model(model)
    assert verdict["status"] == "ok", verdict


def test_a_sequence_inputs_length_is_tried_as_a_dynamic_dim(client):
    """SequenceAt of item 3 fails on a made-up sequence of one tensor and runs on a longer one:
    the model gets onnxruntime's "ok", and so does an edit to item 300 (no refusal)."""
    graph = helper.make_graph(
        [helper.make_node("SequenceAt", ["s", "at"], ["y"], name="pick")],
        "g",
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])],
        initializer=[numpy_helper.from_array(np.array(3, np.int64), "at")],
    )
    mid = _upload(client, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    v = client.get(f"/api/models/{mid}").get_json()["validation"]
    assert v["runtime"]["status"] == "ok", v["runtime"]
    value = {"dtype": "INT64", "shape": [], "values": [300]}
    r = _edit(client, mid, [{"op": "set_initializer", "name": "at", "value": value}])
    assert r.status_code == 200, r.get_json()
    assert client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]["status"] == "ok"


def test_big_weights_are_read_from_a_sparse_file_of_zeros(tmp_path):
    model = classifier()
    big = numpy_helper.from_array(np.ones((1024, 1024), np.float32), "big")  # 4 MiB
    model.graph.initializer.append(big)
    model.graph.node.append(helper.make_node("MatMul", ["x", "big"], ["z"], name="mm", domain=""))
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_value = 1024
    model.graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, None))
    from app.onnx_io.smoke_model import write_stand_in

    path, zeros = write_stand_in(model, tmp_path)
    assert zeros == 4 * 2**20
    light = onnx.load(path, load_external_data=False)
    assert path.stat().st_size < 64 * 1024
    stub = next(t for t in light.graph.initializer if t.name == "big")
    assert {e.key: e.value for e in stub.external_data}["location"] == "zeros.bin"
    zeros = tmp_path / "zeros.bin"
    assert zeros.stat().st_size == 4 * 2**20 and zeros.stat().st_blocks == 0  # a hole
    assert runtime_check.check_model(model)["status"] == "ok"


def _spinning_model() -> onnx.ModelProto:
    """A Loop of 10^12 Adds: it runs until something stops it."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond"], ["cond_out"]),
            helper.make_node("Add", ["acc", "acc"], ["acc_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [1]),
        ],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "x"], ["y"], body=body)],
        "spin",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array(10**12, np.int64), "trips")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_run_past_the_wall_clock_is_a_verdict_and_the_worker_is_replaced():
    start = time.monotonic()
    verdict = runtime_check.check_model(_spinning_model(), wall=1.0)
    assert verdict["status"] == "skipped" and "ran out of time" in verdict["message"]
    assert time.monotonic() - start < 10
    assert runtime_check.check_model(classifier())["status"] == "ok"


def test_the_cpu_limit_is_a_verdict(monkeypatch):
    monkeypatch.setattr(runtime_check, "CPU_SECONDS", 1)
    verdict = runtime_check.check_model(_spinning_model(), wall=30.0)
    assert verdict["status"] == "skipped" and "CPU time" in verdict["message"]


def test_a_crash_is_a_verdict_not_a_dead_server():
    found: dict = {}
    worker = threading.Thread(target=lambda: found.update(runtime_check.check_model(_spinning_model(), wall=30.0)))
    worker.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the worker that took the job, once it has it (jobs > 0:
        # started, which takes seconds on a loaded machine; a signal before that is no crash of a run)
        busy = [w for w in runtime_check._all_workers if w.busy and w.proc is not None and w.jobs > 0]
        if busy:
            time.sleep(0.5)
            busy[0].proc.send_signal(11)  # SIGSEGV, as a native crash
            break
        time.sleep(0.05)
    worker.join(30)
    assert found["status"] == "fails" and found["message"] == "onnxruntime crashed (SIGSEGV)", found


def test_the_memory_limit_is_a_verdict(monkeypatch):
    monkeypatch.setattr(runtime_check, "MEMORY_ALLOWANCE", 256 * 2**20)
    graph = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["shape"], ["y"], value=helper.make_tensor("v", 1, [1], [1.0]))],
        "alloc",
        [helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    # fed zeros, the shape input asks for nothing: make it a constant 1 GiB
    model.graph.ClearField("input")
    model.graph.initializer.append(numpy_helper.from_array(np.array([1 << 14, 1 << 14], np.int64), "shape"))
    verdict = runtime_check.check_model(model)
    assert verdict["status"] == "skipped" and "memory" in verdict["message"], verdict


def test_external_data_small_tensors_keep_their_values_and_the_gate_still_refuses(client, tmp_path):
    model = classifier()
    # a shape read from the model's external file: zeros there would break the Reshape
    model.graph.initializer.append(numpy_helper.from_array(np.array([-1, 8], np.int64), "flat"))
    model.graph.node.insert(4, helper.make_node("Reshape", ["f", "flat"], ["f2"], name="flatten"))
    model.graph.node[5].input[0] = "f2"
    from onnx.external_data_helper import convert_model_to_external_data

    convert_model_to_external_data(model, location="weights.bin", size_threshold=0)
    onnx.save(model, tmp_path / "m.onnx")
    data = (tmp_path / "m.onnx").read_bytes()
    r = upload(client, data, "m.onnx", [((tmp_path / "weights.bin").read_bytes(), "weights.bin")])
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    assert r.get_json()["validation"]["runtime"]["status"] == "ok", r.get_json()["validation"]["runtime"]
    r = _edit(client, mid, [RUNTIME_ONLY])
    assert r.status_code == 422 and "kernel channels * group" in r.get_json()["error"]["message"]
    assert _edit(client, mid, [_attr("conv1", "pads", [0, 0, 0, 0])]).status_code == 200


def test_a_model_too_big_to_wait_for_is_stored_then_marked(client, monkeypatch):
    from app.api import runtime

    mid = _upload(client, classifier())  # its own verdict while it is small
    monkeypatch.setattr(runtime, "GATE_WAITS_SECONDS", 0)  # the base's run now counts as slow: the gate can't wait
    monkeypatch.setattr(runtime, "SYNC_BYTES", 0)  # nor the summary
    r = _edit(client, mid, [RUNTIME_ONLY])
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["status"] == "pending"
    v = client.get(f"/api/models/{mid}/validation").get_json()  # waits for the check
    assert v["runtime"]["status"] == "fails"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        history = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
        if history[1]["validation"]["invalid"]:
            break
        time.sleep(0.05)
    (why,) = history[1]["validation"]["invalid"]
    assert why.startswith('onnxruntime can\'t run the edited model: node "conv1" (Conv)')
    summary = client.get(f"/api/models/{mid}").get_json()["validation"]
    assert summary["runtime"]["status"] == "fails" and summary["invalid"] == [why]


def test_a_model_of_many_nodes_is_checked_in_the_background(client, monkeypatch):
    """onnxruntime's session for a 31k-node graph took 8 s of its upload's answer: past
    SYNC_NODES the upload answers at once, "pending", and the verdict follows."""
    from app.api import runtime

    monkeypatch.setattr(runtime, "SYNC_NODES", 3)
    r = upload(client, classifier().SerializeToString())
    assert r.status_code == 201
    assert r.get_json()["validation"]["runtime"]["status"] == "pending"
    mid = r.get_json()["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]["status"]
        if status != "pending":
            break
        time.sleep(0.05)
    assert status == "ok"


def test_without_onnxruntime_the_verdict_is_skipped_and_nothing_is_refused(client, monkeypatch):
    monkeypatch.setattr(runtime_check, "ort_version", lambda: None)
    monkeypatch.setattr("app.api.runtime.ort_version", lambda: None)
    mid = _upload(client, classifier())
    v = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert v["status"] == "skipped" and v["message"] == "onnxruntime is not installed"
    assert _edit(client, mid, [RUNTIME_ONLY]).status_code == 200


@pytest.mark.parametrize("dtype", ["FLOAT16", "DOUBLE", "BOOL", "STRING", "UINT64", "INT8", "BFLOAT16", "FLOAT8E4M3FN"])
def test_inputs_of_every_type_onnxruntime_takes_are_fed(dtype):
    t = TensorProto.DataType.Value(dtype)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", t, ["batch", 3])],
        [helper.make_tensor_value_info("y", t, ["batch", 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    assert runtime_check.check_model(model)["status"] == "ok"


def test_a_failure_only_at_symbolic_dims_of_1_is_no_refusal(client):
    # the Squeeze drops the batch dim too when it is 1: a Softmax axis of 1 then fails, though
    # any batch of 2 or more runs
    mid = _upload(client, classifier())
    r = _edit(client, mid, [_attr("softmax", "axis", 1)])
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["status"] == "ok"


SERVER = """
import sys
from app.onnx_io import runtime_check
import onnx
verdict = runtime_check.check_model(onnx.load(sys.argv[1]))
print(verdict["status"], *[w.proc.pid for w in runtime_check._all_workers if w.proc], flush=True)
sys.stdin.read()  # until killed
"""


def test_the_worker_leaves_with_the_server(tmp_path):
    import signal
    import subprocess
    import sys

    from test_offload import ROOT, _alive

    path = tmp_path / "m.onnx"
    onnx.save(classifier(), path)
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(path)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        status, *workers = server.stdout.readline().split()
        assert status == "ok" and workers
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(int(p)) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(int(p)) for p in workers), "the worker outlived the server"
    finally:
        server.kill()


def test_a_session_onnxruntime_refuses_is_made_once(tmp_path, capfd, monkeypatch):
    """onnxruntime's Python retries a session that fails to load with its fallback providers
    (printing "EP Error" to stdout): with the CPU provider only, the same model again, twice the
    time and memory for one verdict. The worker asks for no fallback."""
    from app.onnx_io import ort_worker

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    data = bytearray(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    at = data.index(b"Relu")
    data[at : at + 4] = b"R\xfflu"  # onnxruntime's error message can't be decoded: a ValueError
    path = tmp_path / "m.onnx"
    path.write_bytes(bytes(data))
    made = []
    real = ort.InferenceSession._create_inference_session

    def counted(self, *args, **kwargs):
        made.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ort.InferenceSession, "_create_inference_session", counted)
    out = ort_worker.check({"path": str(path)})
    assert out["status"] == "fails" and out["stage"] == "load", out
    assert len(made) == 2  # optimised, then plain for a message naming the model's own node
    assert "EP Error" not in capfd.readouterr().out


def test_a_valid_model_that_divides_by_an_input_is_not_marked_failing(client):
    """Zeros fail a valid model that divides by, steps by or unsqueezes at an integer input: the
    smoke run tries counting values, then ones, and fails only when none runs (the page showed
    "onnxruntime fails" on 100 of the official node tests that run on their own data)."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = {c.name: c.model for c in collect_testcases(None) if c.model is not None}
    for name in ("test_div_int8", "test_slice", "test_unsqueeze_two_axes", "test_mod_mixed_sign_int8"):
        mid = upload(client, cases[name].SerializeToString(), f"{name}.onnx").get_json()["id"]
        runtime = client.get(f"/api/models/{mid}/validation").get_json()["runtime"]
        assert runtime["status"] == "ok", (name, runtime)
    # a model no values make run still fails, with the zeros' message
    g = onnx.helper.make_graph(
        [onnx.helper.make_node("Reshape", ["x", "s"], ["y"])],
        "g",
        [
            onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3]),
            onnx.helper.make_tensor_value_info("s", onnx.TensorProto.INT64, [4]),  # no 4 dims hold 6 of 1..4 or ones
        ],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
    )
    model = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "reshape.onnx").get_json()["id"]
    runtime = client.get(f"/api/models/{mid}/validation").get_json()["runtime"]
    assert runtime["status"] == "fails" and "Reshape" in runtime["message"], runtime


def test_a_model_needing_longer_inputs_than_one_runs_at_a_bigger_size(client):
    """Reflect-padding by 8 needs 9 samples: the smoke run tries its dynamic dims at 1, 2, then
    16, where the model runs — a valid model is not called broken for a sequence of 1."""
    mid = _upload(client, reflect_padded(8, fixed=False))
    assert client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]["status"] == "ok"


def test_a_failure_on_made_up_sizes_says_so_and_one_on_its_own_sizes_does_not(client):
    """Padding by 2000 fails at every size tried (1 to 1024): the verdict says the sizes were made
    up (`guessed`), so the page doesn't call the model broken outright; the same Pad on a fixed
    [1, 2] input fails on the model's own sizes: no `guessed`."""
    made_up = client.get(f"/api/models/{_upload(client, reflect_padded(2000, fixed=False))}").get_json()["validation"][
        "runtime"
    ]
    assert made_up["status"] == "fails" and made_up["stage"] == "run" and made_up["guessed"] is True
    own = client.get(f"/api/models/{_upload(client, reflect_padded(2000, fixed=True))}").get_json()["validation"][
        "runtime"
    ]
    assert own["status"] == "fails" and own["stage"] == "run" and own["guessed"] is False
    assert 'node "reflect" (Pad)' in own["message"]


def speech_front(fixed_length: int | None = None) -> onnx.ModelProto:
    """A speech encoder's front as torch's dynamo exports one (QA23 F1): the batch squeezed away
    (fixed at 1 inside, declared dynamic), the audio reflect-padded by 200 (a 400-sample window
    centred), then — with `fixed_length` — reshaped to the length it was exported at (its
    attention's Reshapes), and a projection of that length."""
    pads = numpy_helper.from_array(np.array([200, 200], np.int64), "pads")
    nodes = [
        helper.make_node("Squeeze", ["x", "zero"], ["audio"], name="squeeze_batch"),
        helper.make_node("Pad", ["audio", "pads"], ["padded"], name="center", mode="reflect"),
    ]
    inits = [pads, numpy_helper.from_array(np.array([0], np.int64), "zero")]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    if fixed_length is None:
        nodes.append(helper.make_node("ReduceMean", ["padded"], ["y"], name="pool", keepdims=0))
    else:
        nodes += [
            helper.make_node("Reshape", ["padded", "frames"], ["framed"], name="frame"),
            helper.make_node("MatMul", ["framed", "W"], ["y"], name="project"),
        ]
        inits += [
            numpy_helper.from_array(np.array([1, fixed_length + 400], np.int64), "frames"),
            numpy_helper.from_array(np.ones((fixed_length + 400, 4), np.float32), "W"),
        ]
    graph = helper.make_graph(
        nodes, "speech", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "samples"])], [out], inits
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_model_fixed_at_batch_1_needing_long_audio_runs_at_the_smoke_runs_sizes(client):
    """At every size alike (1, 2 … 512) it fails (a batch of 1 only, 201 samples and more): the
    batch held at 1 while the rest grow, it runs — at samples 512, said in the verdict's sizes
    (the Run panel starts from them)."""
    mid = _upload(client, speech_front())
    runtime = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert runtime["status"] == "ok", runtime
    assert runtime["sizes"] == {"batch": 1, "samples": 512}


def _runtime_when_settled(client, mid: str, rev: int, status: str) -> dict:
    """The revision's verdict once it has `status` (a background check), or as it is after 60 s."""
    deadline = time.monotonic() + 60
    while True:
        runtime = client.get(f"/api/models/{mid}/validation?revision={rev}").get_json()["runtime"]
        if runtime.get("status") == status or time.monotonic() > deadline:
            return runtime
        time.sleep(0.2)


def test_a_run_at_the_models_own_sizes_makes_its_verdict_and_gate_go_by_them(client):
    """A model that runs only at the length it was exported at fails every size the smoke run
    makes up, and any edit of it then passed the gate (QA23 F1: an STFT made two-sided, stored
    without a word). A Run at its own length works: the verdict is checked again at those sizes
    and kept (sizes_from "run"), and an edit that breaks it at every size is refused."""
    mid = _upload(client, speech_front(fixed_length=1000))
    runtime = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert runtime["status"] == "fails" and runtime["guessed"] is True
    r = client.post(f"/api/models/{mid}/run", json={"dims": {"batch": 1, "samples": 1000}})
    assert r.status_code == 200, r.get_json()
    runtime = _runtime_when_settled(client, mid, 0, "ok")
    assert runtime["status"] == "ok" and runtime["sizes_from"] == "run", runtime
    assert runtime["sizes"] == {"batch": 1, "samples": 1000}
    # the window's padding 700 a side: the framing then fits no length — refused, the model untouched
    pads = {"dtype": "INT64", "shape": [2], "values": [700, 700]}
    r = _edit(client, mid, [{"op": "set_initializer", "name": "pads", "value": pads}])
    assert r.status_code == 422, r.get_json()
    assert 'node "frame" (Reshape)' in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0
    # an edit that keeps it running is stored, its verdict at those sizes
    r = _edit(client, mid, [{"op": "rename_node", "node": "project", "name": "projection"}])
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["status"] == "ok"


def test_fixing_a_flag_that_needs_longer_inputs_is_not_refused(client):
    """A flag input choosing a branch that reflect-pads by 200 (as silero VAD's sample rate picks
    its 16 kHz path, which takes chunks of 512): the base runs on the made-up flag (false); fixed
    to true, the model runs only past 200 samples — at the smoke run's 512, so the edit is
    accepted, not refused for the sizes the run made up."""
    pads = numpy_helper.from_array(np.array([0, 200, 0, 200], np.int64), "pads")
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    then = helper.make_graph([helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")], "then", [], [out], [pads])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "else", [], [out])
    graph = helper.make_graph(
        [helper.make_node("If", ["long"], ["out"], name="choose", then_branch=then, else_branch=other)],
        "flagged",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "samples"]),
            helper.make_tensor_value_info("long", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", None])],
    )
    mid = _upload(client, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    assert client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]["status"] == "ok"
    op = {"op": "freeze_input", "name": "long", "value": {"dtype": "BOOL", "shape": [], "values": [True]}}
    r = _edit(client, mid, [op])
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["status"] == "ok"


def flattener(shape: list[int]) -> onnx.ModelProto:
    """x [batch, 2, 3] reshaped to `shape`: [-1, 6] takes any batch, [1, 6] only a batch of 1
    (what a trace at batch 1 or an edit hard-coding it leaves, the batch still declared dynamic)."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="flatten")],
        "flat",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 6])],
        [numpy_helper.from_array(np.array(shape, np.int64), "shape")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _shape_op(values: list[int]) -> dict:
    return {"op": "set_initializer", "name": "shape", "value": {"dtype": "INT64", "shape": [2], "values": values}}


def test_the_smoke_run_tries_dynamic_dims_at_two_once_they_run_at_one(client):
    verdict = client.get(f"/api/models/{_upload(client, flattener([-1, 6]))}").get_json()["validation"]["runtime"]
    assert verdict["status"] == "ok"
    assert verdict["other_size"] == {**verdict["other_size"], "status": "ok", "size": 2, "dims": ["batch"]}
    fixed = client.get(f"/api/models/{_upload(client, classifier())}").get_json()["validation"]["runtime"]
    assert fixed["other_size"]["status"] == "ok"  # N, as named
    light = onnx.load(ONNX_DATA / "light" / "light_squeezenet.onnx")  # fixed sizes: nothing to try again
    assert "other_size" not in runtime_check.check_model(light)


def test_an_edit_that_hard_codes_a_dynamic_batch_is_refused(client):
    """The base runs with its batch at 1 and at 2; the edit's Reshape to [1, 6] still runs at 1
    but no longer at 2: refused in one line naming the node, nothing stored."""
    mid = _upload(client, flattener([-1, 6]))
    r = _edit(client, mid, [_shape_op([1, 6])])
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert message.startswith("onnxruntime can't run the edited model: it runs with batch at 1 but no longer at 2")
    assert 'node "flatten" (Reshape) in the main graph' in message and "\n" not in message
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0
    # stored anyway, the revision's own verdict says why it fails
    r = _edit(client, mid, [_shape_op([1, 6])], allow_invalid=True)
    assert r.status_code == 200, r.get_json()
    runtime = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert runtime["status"] == "fails" and runtime["node"] == "n0" and "no longer at 2" in runtime["message"]


def test_a_model_that_runs_only_at_batch_one_is_warned_and_still_edited(client):
    """Exported with its batch hard-coded: the verdict says it runs, and that it fails with the
    batch at 2 (the page badges it "runs at size 1 only"); edits aren't held to what the base
    never did."""
    mid = _upload(client, flattener([1, 6]))
    runtime = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert runtime["status"] == "ok" and runtime["other_size"]["status"] == "fails"
    assert 'node "flatten" (Reshape)' in runtime["other_size"]["message"]
    r = _edit(client, mid, [{"op": "rename_node", "node": "flatten", "name": "flat"}])
    assert r.status_code == 200, r.get_json()
    # and fixing it clears the warning
    r = _edit(client, mid, [_shape_op([-1, 6])], base=1)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["other_size"]["status"] == "ok"


def test_outputs_declared_in_another_shape_than_they_come_back_are_named(client):
    """y declared [1, 3] on a batch-dynamic input: at batch 1 it fits, at 2 it comes back
    [2, 3]; onnxruntime only warns, the verdict names it (a warning, not a failure)."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
    )
    mid = _upload(client, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    runtime = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert runtime["status"] == "ok" and "declared_mismatches" not in runtime
    assert runtime["other_size"]["declared_mismatches"] == [{"output": "y", "declared": [1, 3], "shape": [2, 3]}]
    r = _edit(client, mid, [{"op": "set_io_shape", "name": "y", "shape": [None, 3]}])  # the page's fix
    assert r.status_code == 200, r.get_json()
    assert "declared_mismatches" not in r.get_json()["validation"]["runtime"]["other_size"]


def test_a_model_failing_with_its_dims_at_two_says_which_dim_alone_fails(client):
    """x [batch, sequence] reshaped to [0, 1] (its batch kept, its sequence fixed at the export's
    1): with both at 2 it fails, and only sequence is to blame — batch alone at 2 runs (QA14 #8:
    both were blamed)."""
    model = reshaped_to(["batch", "sequence"], [0, 1], ["batch", 1])
    verdict = client.get(f"/api/models/{_upload(client, model)}").get_json()["validation"]["runtime"]
    assert verdict["status"] == "ok", verdict
    other = verdict["other_size"]
    assert other["status"] == "fails" and other["dims"] == ["batch", "sequence"]
    assert other["alone"] == {"batch": "ok", "sequence": "fails"}


def test_an_output_whose_named_dim_comes_back_at_another_size_is_said(client):
    """At batch 2 y came back [1, 4, 16]: every check passed and nothing was said (QA16 #1)."""
    mid = _upload(client, reshaped_to(["batch", "seq", 16], [1, -1, 16], ["batch", "seq", 16]))
    verdict = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    other = verdict["other_size"]
    assert other["status"] == "ok"
    assert other["declared_mismatches"] == [{"output": "y", "declared": ["batch", "seq", 16], "shape": [1, 4, 16]}]
    # a run says it too, at the sizes it was given
    r = client.post(f"/api/models/{mid}/run", json={"dims": {"batch": 2, "seq": 3}})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["declared_mismatches"] == [
        {"output": "y", "declared": ["batch", "seq", 16], "shape": [1, 6, 16]}
    ]


def test_a_size_no_run_can_be_given_is_refused_where_the_base_ran(client):
    """QA33 #1: an input fixed at 10^9 (or 2^62) was stored "valid" with the runtime check
    skipped, and every later edit went unchecked: a Conv kernel onnxruntime refuses was stored."""
    mid = _upload(client, classifier())
    r = _edit(client, mid, [{"op": "set_io_shape", "name": "x", "shape": [10**9, 3, 48, 192]}])
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"] == {
        **r.get_json()["error"],
        "code": "invalid_result",
        "message": 'onnxruntime can\'t run the edited model: input "x" would hold 2.76e+13 values'
        " (1000000000×3×48×192): too many to make up for a run, where it ran before this edit",
    }
    # past any size a run is given: the op's own value is wrong
    r = _edit(client, mid, [{"op": "set_io_shape", "name": "x", "shape": [2**62, 3, 48, 192]}])
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_value", r.get_json()
    assert "dim 0 is too big a size: 4.61e+18 (at most 1e+12)" in r.get_json()["error"]["message"]
    r = _edit(client, mid, [{"op": "fix_dims", "dims": {"N": 2**62}}])
    assert r.status_code == 400 and "'N' is too big a size" in r.get_json()["error"]["message"], r.get_json()
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0
    # stored anyway on ask, marked: the next edit is not gated against a run that never was
    r = _edit(client, mid, [{"op": "set_io_shape", "name": "x", "shape": [10**9, 3, 48, 192]}], allow_invalid=True)
    assert r.status_code == 200 and r.get_json()["validation"]["runtime"]["status"] == "fails", r.get_json()


def test_a_weight_claiming_a_size_without_data_is_judged_as_onnxruntime_does(client):
    """QA34 #1: a 65-byte file declaring a weight of 2^30 floats with no data was run on zeros of
    that size (10 GB of RAM), and badged "loads and runs it"; onnxruntime refuses the file, as it
    does the same defect on a 4-float weight."""
    for count in (4, 2**28):
        w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[count])
        graph = helper.make_graph(
            [helper.make_node("Identity", ["W"], ["y"])],
            "claim",
            [],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [count])],
            [w],
        )
        data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
        assert len(data) < 100
        mid = upload(client, data).get_json()["id"]
        verdict = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
        assert verdict["status"] == "fails", (count, verdict)


def test_a_jobs_memory_is_at_most_half_the_machines():
    machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert runtime_check.job_memory(0) == min(runtime_check.MEMORY_ALLOWANCE, machine // 2)
    assert runtime_check.job_memory(2**50) == int(machine * 0.5)  # a petabyte claimed: half the machine
