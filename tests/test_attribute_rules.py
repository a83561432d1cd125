"""Attribute values ONNX's specs rule out but onnx's checker lets through (onnxruntime then
refuses them in its own words): refused before anything runs, in one line naming the node, what
the value must be and what was given; a batch that ends consistent is taken."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from onnx.backend.test.case.node import collect_testcases
from testkit import upload


def conv_model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", pads=[1, 1, 1, 1])],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4, 8, 8])],
        [w],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def edit(client, mid, *ops):
    return client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": list(ops)})


def refusal(r, status: int = 422) -> str:
    assert r.status_code == status, r.get_json()
    return r.get_json()["error"]["message"]


def outputs(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


@pytest.fixture
def conv(client):
    return upload(client, conv_model().SerializeToString(), "conv.onnx").get_json()["id"]


def test_a_string_outside_its_closed_set_is_refused_naming_the_choices(client, conv):
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "auto_pad", "value": "SAME"})
    assert refusal(r) == (
        "the edit breaks its operator's spec: attribute 'auto_pad' of node \"conv1\" (Conv) must be one of "
        "NOTSET, SAME_UPPER, SAME_LOWER, VALID; got 'SAME'"
    )


def test_auto_pad_beside_pads_is_refused_unless_the_batch_deletes_pads(client, conv):
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "auto_pad", "value": "SAME_UPPER"})
    assert refusal(r) == (
        "the edit breaks its operator's spec: node \"conv1\" (Conv) can't have both auto_pad SAME_UPPER and pads [1, 1, 1, 1] "
        "(the spec takes one or the other): delete pads, or set auto_pad to NOTSET"
    )
    r = edit(
        client,
        conv,
        {"op": "set_attribute", "node": "conv1", "name": "auto_pad", "value": "SAME_UPPER"},
        {"op": "delete_attribute", "node": "conv1", "name": "pads"},
    )
    assert r.status_code == 200, r.get_json()
    back = onnx.load_from_string(client.get(f"/api/models/{conv}/download").data)
    onnx.checker.check_model(back, full_check=True)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    # a 3x3 kernel at stride 1: SAME_UPPER pads one on each side, as pads [1, 1, 1, 1] did
    np.testing.assert_allclose(outputs(back, x), outputs(conv_model(), x), rtol=1e-5, atol=1e-6)


def test_a_per_axis_list_of_the_wrong_length_says_how_many_and_what_they_are(client, conv):
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "pads", "value": [1, 1]})
    assert refusal(r) == (
        "the edit breaks its operator's spec: attribute 'pads' of node \"conv1\" (Conv) needs 4 values (the start of "
        "each of its 2 spatial axes, then the end of each); got 2: [1, 1]"
    )
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "strides", "value": [0, 0]})
    assert refusal(r).endswith("attribute 'strides' of node \"conv1\" (Conv) must be whole numbers from 1; got [0, 0]")
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "dilations", "value": [2]})
    assert "needs 2 values (one for each of its 2 spatial axes); got 1: [2]" in refusal(r)
    assert len(client.get(f"/api/models/{conv}/revisions").get_json()["revisions"]) == 1


def test_official_conv_and_pool_cases_take_their_own_values_and_refuse_typos(client):
    cases = {
        c.name: c
        for c in collect_testcases(None)
        if c.name in ("test_conv_with_autopad_same", "test_maxpool_3d_default")
    }
    conv = upload(client, cases["test_conv_with_autopad_same"].model.SerializeToString(), "c.onnx").get_json()["id"]
    node = cases["test_conv_with_autopad_same"].model.graph.node[0]
    ref = f"@{node.name}" if node.name else "n0"
    # another value the spec allows is taken (the output keeps its declared shape)
    r = edit(client, conv, {"op": "set_attribute", "node": ref, "name": "auto_pad", "value": "SAME_UPPER"})
    assert r.status_code == 200, r.get_json()
    op = {"op": "set_attribute", "node": ref, "name": "pads", "value": [1, 1, 1, 1]}
    r = client.post(f"/api/models/{conv}/edits", json={"base": 1, "ops": [op]})
    assert "can't have both auto_pad SAME_UPPER and pads [1, 1, 1, 1]" in refusal(r)
    pool = upload(client, cases["test_maxpool_3d_default"].model.SerializeToString(), "p.onnx").get_json()["id"]
    r = edit(client, pool, {"op": "set_attribute", "node": "n0", "name": "kernel_shape", "value": [2, 2]})
    assert "needs 3 values (one for each of its 3 spatial axes); got 2: [2, 2]" in refusal(r)
    r = edit(client, pool, {"op": "set_attribute", "node": "n0", "name": "strides", "value": [2, 2, 2]})
    assert r.status_code == 422  # the right length: judged by shape inference (the output's size changes)


def test_a_list_item_of_the_wrong_kind_is_named_with_its_value(client, conv):
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "strides", "value": [2.5, 2]})
    assert refusal(r, 400) == (
        "op #1 (set_attribute): attribute 'strides' of node \"conv1\" (Conv): item 0 must be an integer, got 2.5"
    )


def test_a_conv_kernel_other_than_its_weights_is_refused(client, conv):
    # onnx's checker passes it; onnxruntime refuses it ("kernel_shape is not compatible with W shape")
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "kernel_shape", "value": [5, 5]})
    assert refusal(r) == (
        "the edit breaks its operator's spec: attribute 'kernel_shape' of node \"conv1\" (Conv) must be [3, 3],"
        " the last 2 dims"
        " of its weight 'w' ⟨4×3×3×3⟩; got [5, 5] (set_initializer changes the weight)"
    )
    # the same batch giving the weight a 5x5 kernel (and the pads that keep the output's size)
    w5 = np.ones((4, 3, 5, 5), np.float32) / 75
    r = edit(
        client,
        conv,
        {"op": "set_attribute", "node": "conv1", "name": "kernel_shape", "value": [5, 5]},
        {"op": "set_attribute", "node": "conv1", "name": "pads", "value": [2, 2, 2, 2]},
        {
            "op": "set_initializer",
            "name": "w",
            "value": {"dtype": "FLOAT", "shape": [4, 3, 5, 5], "values": w5.ravel().tolist()},
            "allow_type_change": True,
        },
    )
    assert r.status_code == 200, r.get_json()
    back = onnx.load_from_string(client.get(f"/api/models/{conv}/download").data)
    x = np.ones((1, 3, 8, 8), np.float32)
    assert outputs(back, x)[0, 0, 4, 4] == pytest.approx(1.0)  # a 5x5 window of ones, all inside


def test_allow_invalid_stores_past_a_rule_saying_why(client, conv):
    op = {"op": "set_attribute", "node": "conv1", "name": "kernel_shape", "value": [5, 5]}
    r = client.post(f"/api/models/{conv}/edits", json={"base": 0, "ops": [op], "allow_invalid": True})
    assert r.status_code == 200, r.get_json()
    invalid = r.get_json()["validation"]["invalid"]
    assert invalid[0].startswith("the edit breaks its operator's spec: attribute 'kernel_shape'")
    stored = onnx.load_from_string(client.get(f"/api/models/{conv}/download").data)
    assert list(stored.graph.node[0].attribute[-1].ints) == [5, 5]


def test_every_value_the_official_node_tests_use_is_among_the_choices():
    from app.onnx_io.attribute_choices import attribute_choices

    seen = 0
    for case in collect_testcases(None):
        for node in case.model.graph.node:
            for a in node.attribute:
                choices = attribute_choices(node.op_type, node.domain, a.name)
                if choices and a.type == onnx.AttributeProto.STRING:
                    assert a.s.decode() in choices, (case.name, node.op_type, a.name, a.s)
                    seen += 1
    assert seen > 100  # auto_pad, Pad and Resize modes, RNN directions, reductions...


def test_switches_groups_pads_and_pools_by_the_spec(client, conv):
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "group", "value": 0})
    assert refusal(r).endswith("attribute 'group' of node \"conv1\" (Conv) must be a whole number from 1; got 0")
    r = edit(client, conv, {"op": "set_attribute", "node": "conv1", "name": "pads", "value": [-1, 0, 0, 0]})
    assert refusal(r).endswith(
        "must be whole numbers from 0 (the pixels added before and after each axis); got [-1, 0, 0, 0]"
    )
    g = helper.make_graph(
        [
            helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[2, 2], pads=[0, 0, 0, 0]),
            helper.make_node("ReduceMean", ["p"], ["y"], name="mean", axes=[2, 3], keepdims=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3, 1, 1])],
    )
    pool = upload(
        client, helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    ).get_json()
    r = edit(client, pool["id"], {"op": "set_attribute", "node": "mean", "name": "keepdims", "value": 3})
    assert refusal(r).endswith("attribute 'keepdims' of node \"mean\" (ReduceMean) is a switch: 0 or 1; got 3")
    r = edit(client, pool["id"], {"op": "set_attribute", "node": "pool", "name": "auto_pad", "value": "SAME_UPPER"})
    assert "can't have both auto_pad SAME_UPPER and pads [0, 0, 0, 0]" in refusal(r)


def test_a_conv_kernel_is_checked_against_a_weight_made_by_constant_of_shape(client):
    # as the wheel's light models make their weights: ConstantOfShape of constant dims
    import onnx.parser

    model = onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 3, 8, 8] x) => (float[1, 4, 6, 6] y) {
      dims = Constant <value: tensor = int64[4] {4, 3, 3, 3}> ()
      w = ConstantOfShape <value: tensor = float[1] {0.1}> (dims)
      y = Conv <kernel_shape: ints = [3, 3]> (x, w)
    }
    """)
    model.graph.node[2].name = "conv"
    mid = upload(client, model.SerializeToString(), "c.onnx").get_json()["id"]
    r = edit(client, mid, {"op": "set_attribute", "node": "conv", "name": "kernel_shape", "value": [5, 5]})
    assert refusal(r) == (
        "the edit breaks its operator's spec: attribute 'kernel_shape' of node \"conv\" (Conv) must be [3, 3],"
        " the last 2 dims of its weight 'w' ⟨4×3×3×3⟩; got [5, 5] (the ConstantOfShape making it sets its shape)"
    )


def resize_model() -> onnx.ModelProto:
    """A nearest ×2 Resize named "up" (opset 18)."""
    g = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="nearest")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3, 8, 8])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_a_resize_mode_is_one_of_resizes_own_and_the_panel_is_told_them(client):
    """QA23 F9: Resize's mode was a free text field, and "bilinear" (Upsample-1's word, no
    Resize mode) passed the quick check, caught only by onnxruntime's run 1.9 s later."""
    mid = upload(client, resize_model().SerializeToString()).get_json()["id"]
    r = edit(client, mid, {"op": "set_attribute", "node": "up", "name": "mode", "value": "bilinear"})
    assert refusal(r) == (
        "the edit breaks its operator's spec: attribute 'mode' of node \"up\" (Resize) must be one of "
        "nearest, linear, cubic; got 'bilinear'"
    )
    schema = client.get(f"/api/models/{mid}/schema?node=n0").get_json()
    formal = {a["name"]: a for a in schema["attributes"]}
    assert formal["mode"]["choices"] == ["nearest", "linear", "cubic"]
    assert formal["nearest_mode"]["choices"] == ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
    assert formal["antialias"]["choices"] is None  # an INT: any value its own rules allow
