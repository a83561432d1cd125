"""convert_opset down (QA25 #1): onnx's converter has no adapter down for Mul-14, Add-14, Relu-14,
Reshape-14, Shape-15, Identity-16…, so 17 → 13 was refused for practically any torch export,
though each such node means the same at 13. Those nodes are carried as they are (the full check
at the older opset holding their types); the rest go through the converter's adapters; what no
older opset has is listed at once."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload


def torch_like() -> onnx.ModelProto:
    """Conv → Mul → Add → Relu → Shape/Reshape (flatten) → Identity → MatMul → Softmax, opset 17."""
    rng = np.random.default_rng(0)
    inits = [
        nh.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w"),
        nh.from_array(np.array(0.5, np.float32), "half"),
        nh.from_array(rng.standard_normal(4).astype(np.float32).reshape(1, 4, 1, 1), "bias"),
        nh.from_array(np.array([1, -1], np.int64), "flat"),
        nh.from_array(rng.standard_normal((64, 5)).astype(np.float32), "fc"),
    ]
    nodes = [
        h.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        h.make_node("Mul", ["c", "half"], ["m"], name="mul"),
        h.make_node("Add", ["m", "bias"], ["a"], name="add"),
        h.make_node("Relu", ["a"], ["r"], name="relu"),
        h.make_node("Shape", ["r"], ["s"], name="shape"),
        h.make_node("Reshape", ["r", "flat"], ["f"], name="reshape"),
        h.make_node("Identity", ["f"], ["i"], name="identity"),
        h.make_node("MatMul", ["i", "fc"], ["l"], name="matmul"),
        h.make_node("Softmax", ["l"], ["y"], name="softmax", axis=-1),
    ]
    graph = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 5]), h.make_tensor_value_info("s", T.INT64, [4])],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def run(data: bytes, x: np.ndarray) -> list[np.ndarray]:
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})


def test_the_converter_alone_refuses_it():
    with pytest.raises(Exception, match="No Adapter"):
        onnx.version_converter.convert_version(torch_like(), 13)


@pytest.mark.parametrize("target", [13, 11])
def test_a_torch_like_model_goes_down_with_the_same_outputs(client, target):
    model = torch_like()
    mid = upload(client, model.SerializeToString(), "cnn.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": target}]})
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][0]
    assert line.startswith(f"converted from opset 17 to {target}") and f"valid at opset {target} as they are" in line, (
        line
    )
    data = client.get(f"/api/models/{mid}/download").data
    converted = onnx.load_from_string(data)
    onnx.checker.check_model(converted, full_check=True)
    assert [(o.domain, o.version) for o in converted.opset_import] == [("", target)]
    assert {n.domain for n in converted.graph.node} == {""}
    x = np.random.default_rng(1).standard_normal((1, 3, 4, 4)).astype(np.float32)
    for got, want in zip(run(data, x), run(model.SerializeToString(), x), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("by", ["scales", "sizes"])
def test_a_torch_upsample_goes_down_to_11_its_left_out_inputs_given_empty(client, by):
    """QA43 #3: Resize(X, "", scales) — every torch export's upsample at opset 13+ — was refused
    going to 11, whose Resize requires roi (and scales): they are given as empty tensors, what
    torch's own opset-11 exports pass."""
    given = (
        nh.from_array(np.array([1, 1, 2, 2], np.float32), "by")
        if by == "scales"
        else nh.from_array(np.array([1, 3, 8, 8], np.int64), "by")
    )
    inputs = ["x", "", "by"] if by == "scales" else ["x", "", "", "by"]
    graph = h.make_graph(
        [
            h.make_node("Resize", inputs, ["up"], name="/model.11/Resize", mode="nearest"),
            h.make_node("Relu", ["up"], ["y"], name="relu"),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 3, 8, 8])],
        [given],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "up.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 11}]})
    assert r.status_code == 200, r.get_json()
    said = "requires and the model leaves out (a Resize's roi or scales) given as an empty tensor"
    assert said in r.get_json()["changes"][0]
    data = client.get(f"/api/models/{mid}/download").data
    converted = onnx.load_from_string(data)
    onnx.checker.check_model(converted, full_check=True)
    (resize,) = [n for n in converted.graph.node if n.op_type == "Resize"]
    empty = {t.name: t for t in converted.graph.initializer}[resize.input[1]]
    assert list(empty.dims) == [0] and all(resize.input[:3])
    x = np.random.default_rng(2).standard_normal((1, 3, 4, 4)).astype(np.float32)
    np.testing.assert_array_equal(run(data, x)[0], run(model.SerializeToString(), x)[0])


def test_a_node_whose_types_the_older_opset_lacks_is_refused(client):
    """Mul-14 takes int8; Mul-13 doesn't: carried as it is, the full check at 13 refuses it."""
    graph = h.make_graph(
        [h.make_node("Mul", ["x", "x"], ["y"], name="mul")],
        "g",
        [h.make_tensor_value_info("x", T.INT8, [2])],
        [h.make_tensor_value_info("y", T.INT8, [2])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "int8.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 13}]})
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert message.startswith(
        "op #1 (convert_opset): opset 17 -> 13 is not possible: a node kept as it is doesn't hold"
    ), message
    assert "mul" in message


def test_every_operator_the_older_opset_lacks_is_named_at_once(client):
    model = torch_like()
    g = model.graph
    g.node[3].op_type = "HardSwish"  # Relu -> HardSwish (14)
    scale = nh.from_array(np.ones(64, np.float32), "ln_scale")
    g.initializer.append(scale)
    g.node.insert(7, h.make_node("LayerNormalization", ["i", "ln_scale"], ["n"], name="ln", axis=-1))
    g.node[8].input[0] = "n"
    onnx.checker.check_model(model, full_check=True)
    mid = upload(client, model.SerializeToString(), "cnn.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 13}]})
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert message.endswith("every operator opset 13 lacks: HardSwish ×1 (from 14), LayerNormalization ×1 (from 17)"), (
        message
    )


def hardswish_layernorm() -> onnx.ModelProto:
    """HardSwish (opset 14) then LayerNormalization (17): what an opset 13 runtime lacks."""
    rng = np.random.default_rng(2)
    graph = h.make_graph(
        [
            h.make_node("HardSwish", ["x"], ["hs"], name="act"),
            h.make_node("LayerNormalization", ["hs", "g", "b"], ["y"], name="ln", axis=-1, epsilon=1e-3),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 8])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n", 8])],
        [
            nh.from_array(rng.standard_normal(8).astype(np.float32), "g"),
            nh.from_array(rng.standard_normal(8).astype(np.float32), "b"),
        ],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_operators_an_older_opset_lacks_are_written_out_then_converted(client):
    """write_out puts onnx's own body of primitives in each node's place (QA25 #2): the outputs
    stay (up to rounding), and opset 13 is then reachable."""
    model = hardswish_layernorm()
    mid = upload(client, model.SerializeToString(), "m.onnx").get_json()["id"]
    ops = [{"op": "write_out", "op_types": ["HardSwish", "LayerNormalization"]}, {"op": "convert_opset", "version": 13}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].startswith(
        "wrote out 2 node(s) (HardSwish ×1, LayerNormalization ×1) as the primitives their ONNX definitions give:"
    )
    data = client.get(f"/api/models/{mid}/download").data
    written = onnx.load_from_string(data)
    onnx.checker.check_model(written, full_check=True)
    kinds = {n.op_type for n in written.graph.node}
    assert not kinds & {"HardSwish", "LayerNormalization"} and "HardSigmoid" in kinds and "ReduceMean" in kinds
    assert all(n.name.startswith(("act/", "ln/")) for n in written.graph.node)
    x = np.random.default_rng(3).standard_normal((5, 8)).astype(np.float32)
    (want,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    (got,) = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_an_operator_onnx_defines_no_body_for_is_refused(client):
    mid = upload(client, torch_like().SerializeToString(), "cnn.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "write_out", "nodes": ["conv"]}]})
    assert r.status_code == 400, r.get_json()
    assert "onnx defines no body of primitives for Conv" in r.get_json()["error"]["message"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "write_out", "op_types": ["Gelu"]}]})
    assert r.status_code == 400 and "has no node of Gelu" in r.get_json()["error"]["message"]


def test_written_out_nodes_stay_in_the_module_of_the_node_they_replace(client):
    """QA29: a dynamo export's nodes say their module in metadata only; the nodes a written-out
    HardSwish became carry its metadata (stack trace, class) one scope level deeper, so they
    draw as one group inside its module, not as a group of their own outside the model."""
    from app.views.scopes import node_scope

    model = hardswish_layernorm()
    act = next(n for n in model.graph.node if n.op_type == "HardSwish")
    scopes = "['', 'model', 'model.layers.1', 'model.layers.1.mlp', 'hardswish']"
    namespace = ": M/model: Model/model.layers.1: Layer/model.layers.1.mlp: MLP/hardswish: aten.hardswish.default"
    for key, value in (
        ("pkg.torch.onnx.name_scopes", scopes),
        ("namespace", namespace),
        ("pkg.torch.onnx.stack_trace", 'File "mlp.py", line 12, in forward'),
    ):
        act.metadata_props.add(key=key, value=value)
    mid = upload(client, model.SerializeToString(), "m.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "write_out", "nodes": [act.name]}]})
    assert r.status_code == 200, r.get_json()
    written = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(written, full_check=True)
    parts = [n for n in written.graph.node if n.name.startswith(f"{act.name}/")]
    assert parts
    inner = ["model", "model.layers.1", "model.layers.1.mlp", "model.layers.1.mlp.hardswish"]
    for n in parts:
        meta = {p.key: p.value for p in n.metadata_props}
        assert meta["pkg.torch.onnx.stack_trace"] == 'File "mlp.py", line 12, in forward'
        assert node_scope(n) == inner
        del n.metadata_props[:]  # the namespace alone says the same
        n.metadata_props.add(key="namespace", value=meta["namespace"])
        assert node_scope(n) == inner
    assert next(n for n in written.graph.node if n.op_type == "LayerNormalization").metadata_props == []


def test_a_mode_the_older_opset_lacks_is_not_carried_to_it(client):
    """QA44 #3: Resize-19's half_pixel_symmetric, carried to opset 11 as it was, passed the
    checker (which holds no node to its version's list of modes): refused, the mode named."""
    scales = nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    resize = h.make_node(
        "Resize",
        ["x", "", "scales"],
        ["y"],
        name="up",
        mode="linear",
        coordinate_transformation_mode="half_pixel_symmetric",
    )
    graph = h.make_graph(
        [resize],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 3, 8, 8])],
        [scales],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])
    mid = upload(client, model.SerializeToString(), "up.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 11}]})
    assert r.status_code == 422, r.get_json()
    assert "coordinate_transformation_mode='half_pixel_symmetric' is not supported" in r.get_json()["error"]["message"]
