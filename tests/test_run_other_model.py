"""Run compared with another stored model (QA24 #10): a model quantized or converted outside the
app, uploaded beside its float source, runs against it on the very same inputs — outputs
compared, and with locate the node where they part — as a revision of the same model does."""

from __future__ import annotations

import numpy as np
from browser.browser_models import tiny_cnn
from test_run import run
from testkit import npy_blob, upload


def test_a_model_converted_elsewhere_runs_against_its_source(client):
    source = upload(client, tiny_cnn().SerializeToString(), "cnn_fp32.onnx").get_json()["id"]
    converted = upload(client, tiny_cnn().SerializeToString(), "cnn_fp16.onnx").get_json()["id"]
    r = client.post(f"/api/models/{converted}/edits", json={"base": 0, "ops": [{"op": "convert_float16"}]})
    assert r.status_code == 200, r.get_json()
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    body = {"inputs": {"input": {"npy": npy_blob(client, x)}}, "compare_model": source, "locate": True}
    c = run(client, converted, body)["compare"]
    assert c["model"] == {"id": source, "name": "cnn_fp32.onnx"} and c["revision"] == 0
    assert c["outputs"]["probs"]["close"] is True and c["outputs"]["probs"]["equal"] is False
    assert c["nodes"] and c["diverges"] is not None  # float16 rounds from the first node on
    # a revision of the other model: compare_to picks it
    r = client.post(
        f"/api/models/{source}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "softmax", "name": "axis", "value": 0}]},
    )
    assert r.status_code == 200, r.get_json()
    head = run(client, converted, {**body, "locate": False})["compare"]
    assert head["revision"] == 1 and head["outputs"]["probs"]["close"] is False
    first = run(client, converted, {**body, "locate": False, "compare_to": 0})["compare"]
    assert first["revision"] == 0 and first["outputs"]["probs"]["close"] is True


def test_another_model_that_does_not_exist_or_is_no_model(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    inputs = {"input": {"random": {"seed": 0}}}
    error = run(client, mid, {"inputs": inputs, "compare_model": "nope"}, 404)["error"]
    assert error["code"] in ("unknown_model", "not_found")
    error = run(client, mid, {"inputs": inputs, "compare_model": 3}, 400)["error"]
    assert '"compare_model"' in error["message"]


def _torch_like(*steps: tuple[str, str, float | None]) -> bytes:
    """A chain x -> steps -> y, each (op, name, alpha): its output named torch's way, <name>_output_0."""
    from onnx import TensorProto, helper

    nodes, src = [], "x"
    for k, (op, name, alpha) in enumerate(steps):
        dst = "y" if k == len(steps) - 1 else f"{name}_output_0"
        attrs = {"alpha": alpha} if alpha is not None else {}
        nodes.append(helper.make_node(op, [src], [dst], name=name, **attrs))
        src = dst
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_the_next_export_whose_names_shifted_parts_where_it_really_does(client):
    """QA27: week 2 adds a no-op LeakyRelu at the top, shifting torch's names: its
    `/LeakyRelu_output_0` (the input passed on) was compared with week 1's conv1 activation and
    named the first divergence. Paired by what they are, the runs part at conv2's activation,
    whose alpha week 1 fixed to 0.2."""
    week1 = _torch_like(
        ("Neg", "/b1/Neg", None),
        ("LeakyRelu", "/LeakyRelu", 0.1),
        ("Neg", "/b2/Neg", None),
        ("LeakyRelu", "/LeakyRelu_1", 0.2),
    )
    week2 = _torch_like(
        ("LeakyRelu", "/LeakyRelu", 1.0),
        ("Neg", "/b1/Neg", None),
        ("LeakyRelu", "/LeakyRelu_1", 0.1),
        ("Neg", "/b2/Neg", None),
        ("LeakyRelu", "/LeakyRelu_2", 0.1),
    )
    old = upload(client, week1, "week1.onnx").get_json()["id"]
    new = upload(client, week2, "week2.onnx").get_json()["id"]
    x = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], np.float32)
    body = {"inputs": {"x": {"npy": npy_blob(client, x)}}, "compare_model": old, "locate": True}
    c = run(client, new, body)["compare"]
    assert c["diverges"]["name"] == "/LeakyRelu_2" and c["diverges"]["other_name"] == "/LeakyRelu_1", c["diverges"]
    rows = {n["name"]: n for n in c["nodes"]}
    assert "/LeakyRelu" not in rows  # nothing of week 1 is it
    assert rows["/LeakyRelu_1"]["equal"] and rows["/LeakyRelu_1"]["other_name"] == "/LeakyRelu"
