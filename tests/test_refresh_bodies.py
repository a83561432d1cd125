"""Re-inferring types after an edit reaches every graph, not just the main one: a batch made
dynamic with update_types re-declares the If/Loop bodies' outputs, carried inputs and stored
value_info so the model runs at the new batch; a valid edit inside a body after the Shape
inference tool stored its value_info is taken, the stale entries re-inferred and said where;
and the main graph's outputs carry the dim names the Shape inference tool gives (N, not unk__0)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from test_stale_value_info import edit, run, stored
from testkit import upload

F = TensorProto.FLOAT


def dims(v: onnx.ValueInfoProto) -> list:
    return [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]


def if_model(batch, inferred: bool = True) -> onnx.ModelProto:
    """y = If(cond): then ReduceMax(Transpose(Unsqueeze(x, 1)), axes 1), else Neg(x); x [batch, 4],
    value_info stored in every graph by onnx's shape inference (unless not `inferred`)."""
    then_g = helper.make_graph(
        [
            helper.make_node("Unsqueeze", ["x", "ax1"], ["t"], name="unsq"),
            helper.make_node("Transpose", ["t"], ["u"], name="tr", perm=[0, 1, 2]),
            helper.make_node("ReduceMax", ["u"], ["t_out"], name="rmax", axes=[1], keepdims=0),
        ],
        "then_g",
        [],
        [helper.make_tensor_value_info("t_out", F, [batch, 4])],
        [numpy_helper.from_array(np.array([1], np.int64), "ax1")],
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e_out"], name="neg")],
        "else_g",
        [],
        [helper.make_tensor_value_info("e_out", F, [batch, 4])],
    )
    g = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        "g",
        [
            helper.make_tensor_value_info("x", F, [batch, 4]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", F, [batch, 4])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(m, strict_mode=True) if inferred else m


def loop_model() -> onnx.ModelProto:
    """Three iterations of s = s + x, scanning Relu(s); every shape declared at batch 1."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "x"], ["s_out"], name="acc"),
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
            helper.make_node("Relu", ["s_out"], ["scan_out"], name="relu"),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("s_in", F, [1, 4]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("s_out", F, [1, 4]),
            helper.make_tensor_value_info("scan_out", F, [1, 4]),
        ],
    )
    g = helper.make_graph(
        [helper.make_node("Loop", ["trip", "", "s0"], ["s_final", "s_all"], name="loop", body=body)],
        "g",
        [helper.make_tensor_value_info("x", F, [1, 4]), helper.make_tensor_value_info("s0", F, [1, 4])],
        [helper.make_tensor_value_info("s_final", F, [1, 4]), helper.make_tensor_value_info("s_all", F, [3, 1, 4])],
        [numpy_helper.from_array(np.array(3, np.int64), "trip")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(m, strict_mode=True)


def test_if_bodies_follow_a_batch_made_dynamic_and_the_model_runs_at_batch_3(client):
    model = if_model(1)
    branch = model.graph.node[0]
    assert [dims(v) for v in branch.attribute[1].g.value_info] == [[1, 1, 4], [1, 1, 4]]  # then_branch's t, u
    mid = upload(client, model.SerializeToString(), "if.onnx").get_json()["id"]
    r = edit(client, mid, 0, {"op": "set_io_shape", "name": "x", "shape": ["B", 4], "update_types": True})
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][0]
    assert "value_info re-inferred (2 of 2 entries changed, 0 dropped), 1 output shape updated" in line, line
    assert "branch/then_branch" in line and "branch/else_branch" in line
    back = stored(client, mid)
    onnx.checker.check_model(back, full_check=True)
    assert dims(back.graph.output[0]) == ["B", 4]
    bodies = {a.name: a.g for a in back.graph.node[0].attribute}
    assert dims(bodies["then_branch"].output[0]) == ["B", 4] and dims(bodies["else_branch"].output[0]) == ["B", 4]
    assert [dims(v) for v in bodies["then_branch"].value_info] == [["B", 1, 4], ["B", 1, 4]]
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    for cond, want in ((True, x), (False, -x)):
        (y,) = run(back, {"x": x, "cond": np.array(cond)})
        np.testing.assert_array_equal(y, want)


def test_an_output_a_constant_still_fixes_is_not_counted_as_updated(client):
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="flat")],
        "g",
        [helper.make_tensor_value_info("x", F, [1, 2, 2])],
        [helper.make_tensor_value_info("y", F, [1, 4])],
        [numpy_helper.from_array(np.array([1, 4], np.int64), "shape")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, m.SerializeToString(), "flat.onnx").get_json()["id"]
    r = edit(client, mid, 0, {"op": "set_io_shape", "name": "x", "shape": ["B", 2, 2], "update_types": True})
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][0]
    assert (
        "0 output shapes updated" in line
        and 'still hard-coded (dim 0 = 1) in the constant input of node "flat"' in line
    )
    assert dims(stored(client, mid).graph.output[0]) == [1, 4]


def test_a_loop_body_s_carried_input_follows_the_batch_and_the_model_runs_at_batch_3(client):
    mid = upload(client, loop_model().SerializeToString(), "loop.onnx").get_json()["id"]
    r = edit(
        client,
        mid,
        0,
        {"op": "set_io_shape", "name": "x", "shape": ["B", 4]},
        {"op": "set_io_shape", "name": "s0", "shape": ["B", 4], "update_types": True},
    )
    assert r.status_code == 200, r.get_json()
    back = stored(client, mid)
    onnx.checker.check_model(back, full_check=True)
    body = back.graph.node[0].attribute[0].g
    assert dims(body.input[2]) == ["B", 4]  # s_in: what the Loop feeds it
    assert [dims(o) for o in body.output] == [[], ["B", 4], ["B", 4]]
    assert dims(back.graph.output[1])[1:] == ["B", 4]
    # the carried value: onnx's inference leaves it untyped; the body gives it back as it took it
    assert dims(back.graph.output[0]) == ["B", 4]
    rng = np.random.default_rng(0)
    x, s0 = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    s_final, s_all = run(back, {"x": x, "s0": s0})
    want = np.stack([np.maximum(s0 + k * x, 0) for k in (1, 2, 3)])
    np.testing.assert_allclose(s_final, s0 + 3 * x, rtol=1e-6)
    np.testing.assert_allclose(s_all, want, rtol=1e-6)


def test_what_follows_a_loop_s_carried_value_follows_the_batch(client):
    """acc = Loop(x) adding x three times, y = Relu(acc), all at batch 1 (acc in value_info too):
    x made [B, 4] types acc and y [B, 4] (onnx's inference alone leaves acc untyped, y at 1, and
    onnxruntime warns at batch 3), and the smoke run at batch 2 finds nothing declared amiss."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
            helper.make_node("Add", ["acc_in", "x"], ["acc_out"], name="add"),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", F, [1, 4]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", F, [1, 4]),
        ],
    )
    g = helper.make_graph(
        [
            helper.make_node("Loop", ["trip", "", "x"], ["acc"], name="loop", body=body),
            helper.make_node("Relu", ["acc"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [1, 4])],
        [helper.make_tensor_value_info("y", F, [1, 4])],
        [numpy_helper.from_array(np.array(3, np.int64), "trip")],
        value_info=[helper.make_tensor_value_info("acc", F, [1, 4])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    mid = upload(client, model.SerializeToString(), "loop_relu.onnx").get_json()["id"]
    r = edit(client, mid, 0, {"op": "set_io_shape", "name": "x", "shape": ["B", 4], "update_types": True})
    assert r.status_code == 200, r.get_json()
    assert "1 output shape updated" in r.get_json()["changes"][0]
    assert "declared_mismatches" not in r.get_json()["validation"]["runtime"]["other_size"]
    back = stored(client, mid)
    onnx.checker.check_model(back, full_check=True)
    assert dims(back.graph.value_info[0]) == ["B", 4] and dims(back.graph.output[0]) == ["B", 4]
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(run(back, {"x": x})[0], np.maximum(4 * x, 0), rtol=1e-6)


def test_a_body_edit_after_shape_inference_re_infers_the_body_s_stored_value_info(client):
    mid = upload(client, if_model("N", inferred=False).SerializeToString(), "if.onnx").get_json()["id"]
    assert edit(client, mid, 0, {"op": "infer_shapes"}).status_code == 200
    r = edit(
        client,
        mid,
        1,
        {"op": "set_attribute", "node": "@branch/then_branch/@tr", "name": "perm", "value": [0, 2, 1]},
        {"op": "set_attribute", "node": "@branch/then_branch/@rmax", "name": "axes", "value": [2]},
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][-1] == (
        "stored value_info of 'u' in branch/then_branch re-inferred: the edit changed its shape"
    )
    back = stored(client, mid)
    onnx.checker.check_model(back, full_check=True)
    then_g = next(a.g for a in back.graph.node[0].attribute if a.name == "then_branch")
    assert {v.name: dims(v) for v in then_g.value_info} == {"t": ["N", 1, 4], "u": ["N", 4, 1]}
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    (y,) = run(back, {"x": x, "cond": np.array(True)})
    np.testing.assert_array_equal(y, x)  # the max over a dim of 1: x itself


def test_update_types_names_the_output_batch_as_shape_inference_does(client):
    path = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"
    mid = upload(client, path.read_bytes(), "resnet50.onnx").get_json()["id"]
    r = edit(
        client,
        mid,
        0,
        {
            "op": "set_initializer",
            "name": "OC2_DUMMY_1",
            "value": {"dtype": "INT64", "shape": [2], "values": [-1, 2048]},
        },
        {"op": "set_io_shape", "name": "gpu_0/data_0", "shape": ["N", 3, 224, 224], "update_types": True},
    )
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][1]
    assert line.endswith("; 1 output shape updated") and "hard-coded" not in line, line  # no value_info: none said
    back = stored(client, mid)
    assert dims(back.graph.output[0]) == ["N", 1000]
    onnx.checker.check_model(back, full_check=True)
    assert not any(d.dim_param.startswith("unk__") for v in back.graph.value_info for d in v.type.tensor_type.shape.dim)
