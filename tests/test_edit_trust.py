"""Edits you can trust (issue 11): no-ops make no revision, node names stay unique in a graph,
a refused edit says its first cause in one line, set_io_shape keeps the dims it isn't asked to
change and names the nodes that still hard-code a changed dim."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper
from testkit import upload


def _post(client, mid, base, ops):
    return client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": ops})


def _stored(client, mid) -> onnx.ModelProto:
    return onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)


def chain_model() -> onnx.ModelProto:
    """x[1,3,4] -> Softmax(axis 1, "soft") -> Reshape to [1, -1] ("flatten") -> Relu x4."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["a"], name="soft", axis=1),
        helper.make_node("Reshape", ["a", "shp"], ["b"], name="flatten"),
    ]
    prev = "b"
    for i in range(4):
        nodes.append(helper.make_node("Relu", [prev], [f"r{i}"], name=f"relu{i}"))
        prev = f"r{i}"
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 12])],
        [helper.make_tensor("shp", TensorProto.INT64, [2], [1, -1])],
        value_info=[helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 3, 4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _upload(client, model) -> str:
    return upload(client, model.SerializeToString()).get_json()["id"]


def test_an_edit_that_changes_nothing_makes_no_revision(client):
    mid = _upload(client, chain_model())
    r = _post(client, mid, 0, [{"op": "set_attribute", "node": "soft", "name": "axis", "value": 1}])
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["revision"] == 0 and body["unchanged"] is True and body["message"] == "nothing changed"
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 0
    # a real change still makes one
    r = _post(client, mid, 0, [{"op": "set_attribute", "node": "soft", "name": "axis", "value": 2}])
    assert r.status_code == 200 and r.get_json()["revision"] == 1


def test_renaming_a_node_to_a_name_its_graph_has_is_refused(client):
    mid = _upload(client, chain_model())
    r = _post(client, mid, 0, [{"op": "rename_node", "node": "relu0", "name": "relu1"}])
    assert r.status_code == 400
    assert r.get_json()["error"]["code"] == "duplicate_name" and "relu1" in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 0
    # empty names may repeat
    r = _post(
        client,
        mid,
        0,
        [{"op": "rename_node", "node": "relu0", "name": ""}, {"op": "rename_node", "node": "relu1", "name": ""}],
    )
    assert r.status_code == 200, r.get_json()
    assert [n.name for n in _stored(client, mid).graph.node][2:4] == ["", ""]


def test_a_refused_edit_says_its_first_cause_in_one_line(client):
    mid = _upload(client, chain_model())
    # Softmax over axis 7 of a 3-D tensor: the Softmax is the cause; every node after it only
    # loses its input type (onnx says so once per node)
    r = _post(client, mid, 0, [{"op": "set_attribute", "node": "soft", "name": "axis", "value": 7}])
    assert r.status_code == 422, r.get_json()
    err = r.get_json()["error"]
    assert "\n" not in err["message"]
    assert 'node "soft" (Softmax) in the main graph' in err["message"], err["message"]
    assert "expected to have type" not in err["message"]
    assert "details" not in err
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 0


def test_set_io_shape_keeps_the_dims_it_is_not_asked_to_change(client):
    model = chain_model()
    x = model.graph.input[0]
    x.type.tensor_type.shape.Clear()
    x.type.tensor_type.shape.dim.add().dim_value = -1  # PaddlePaddle writes -1 and "?" both
    x.type.tensor_type.shape.dim.add().dim_value = 3
    d = x.type.tensor_type.shape.dim.add()
    d.dim_param = "?"
    d.denotation = "DATA_FEATURE"
    del model.graph.value_info[:]
    mid = _upload(client, model)
    r = _post(client, mid, 0, [{"op": "set_io_shape", "name": "x", "shape": ["batch", 3, "?"]}])
    assert r.status_code == 200, r.get_json()
    dims = _stored(client, mid).graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch"
    assert dims[1].dim_value == 3
    assert dims[2].dim_param == "?" and dims[2].denotation == "DATA_FEATURE"
    # a new dim is still checked
    r = _post(client, mid, 1, [{"op": "set_io_shape", "name": "x", "shape": ["batch", "?!", "?"]}])
    assert r.status_code == 400


def test_a_dynamic_batch_names_the_reshape_that_hard_codes_it_and_can_re_infer(client):
    mid = _upload(client, chain_model())
    op = {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 4], "update_types": True}
    r = _post(client, mid, 0, [op])
    assert r.status_code == 200, r.get_json()
    said = r.get_json()["changes"][0]
    assert 'still hard-coded (dim 0 = 1) in the constant input of node "flatten" (Reshape)' in said
    stored = _stored(client, mid)
    a = next(v for v in stored.graph.value_info if v.name == "a")
    assert a.type.tensor_type.shape.dim[0].dim_param == "batch"  # value_info no longer says 1
    onnx.checker.check_model(stored, full_check=True)


def test_downstream_consequences_fold_behind_the_first_cause():
    """onnx's own message for an Add of [2, 3] and [4, 5] feeding four Relus: five lines."""
    from app.onnx_io.causes import causes_of

    nodes = [helper.make_node("Add", ["x", "y"], ["a"], name="add0")]
    nodes += [helper.make_node("Relu", ["a" if i == 0 else f"c{i - 1}"], [f"c{i}"], name=f"r{i}") for i in range(4)]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 5]),
        ],
        [helper.make_tensor_value_info("c3", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        raise AssertionError("inference accepted an impossible Add")
    except onnx.shape_inference.InferenceError as exc:
        message = str(exc)
    assert message.count("\n") >= 4
    causes = causes_of(message, model)
    assert causes.first == 'node "add0" (Add) in the main graph: Incompatible dimensions'
    assert len(causes.more) == 4 and all("expected to have type" in m for m in causes.more)
    assert causes.line() == f"{causes.first} (+4 more)"


def test_a_batch_of_many_whole_model_ops_is_refused_before_running(client):
    mid = _upload(client, chain_model())
    ops = [{"op": "convert_opset", "version": 17 + (k % 2)} for k in range(1000)]
    r = _post(client, mid, 0, ops)
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "batch_too_heavy"
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 0
    assert _post(client, mid, 0, [{"op": "infer_shapes"}] * 2).status_code == 200


def test_a_json_body_past_its_limit_is_refused_unread(tmp_path):
    from app import create_app

    client = create_app({"DATA_DIR": str(tmp_path), "TESTING": True, "MAX_JSON_BYTES": 1000}).test_client()
    mid = _upload(client, chain_model())
    value = {"dtype": "INT64", "shape": [2], "values": [1, -1]}
    r = _post(client, mid, 0, [{"op": "set_initializer", "name": "shp", "value": value, "pad": "x" * 2000}])
    assert r.status_code == 413 and r.get_json()["error"]["code"] == "body_too_big"


def test_reinferred_output_shapes_keep_the_names_inference_would_invent(client):
    """Inference can't name NonZero's count: re-inferring after an input edit keeps the output's
    own "count" rather than shipping onnx's unk__N."""
    g = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"])],
        "nz",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, "count"])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    mid = client.post(
        "/api/models", data={"file": (__import__("io").BytesIO(m.SerializeToString()), "nz.onnx")}
    ).get_json()["id"]
    op = {"op": "set_io_shape", "name": "x", "shape": [1, 8], "update_types": True}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    out = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data).graph.output[0]
    assert [d.dim_param or d.dim_value for d in out.type.tensor_type.shape.dim] == [2, "count"]
