"""set_io_shape on a body's input or output (`graph`, QA20 F10): a carried value exported at batch 1
gets its dim freed, and inference then types what the Loop gives at the batch fed; the element
type only where the Loop, Scan or If leaves it free, refused in one line elsewhere; the iteration
number and the condition stay scalars; the main graph's set_io_shape points at the body a name
belongs to."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from test_stale_value_info import edit, stored
from testkit import upload

F = T.FLOAT


def batch1_loop() -> onnx.ModelProto:
    """trip iterations of s = s + x (x, s0 [batch, 4]), scanning Relu(s); the body declares its
    carried value and scan output at batch 1, as an export at batch 1 leaves them."""
    body = h.make_graph(
        [
            h.make_node("Identity", ["c_in"], ["c_out"], name="keep"),
            h.make_node("Add", ["s_in", "x"], ["s_out"], name="acc"),
            h.make_node("Relu", ["s_out"], ["y"], name="relu"),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("c_in", T.BOOL, []),
            h.make_tensor_value_info("s_in", F, [1, 4]),
        ],
        [
            h.make_tensor_value_info("c_out", T.BOOL, []),
            h.make_tensor_value_info("s_out", F, [1, 4]),
            h.make_tensor_value_info("y", F, [1, 4]),
        ],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["trip", "", "s0"], ["s_final", "ys"], name="loop", body=body)],
        "g",
        [
            h.make_tensor_value_info("trip", T.INT64, []),
            h.make_tensor_value_info("x", F, ["batch", 4]),
            h.make_tensor_value_info("s0", F, ["batch", 4]),
        ],
        # unknown dims: what inference makes of them is the point
        [h.make_tensor_value_info("s_final", F, [None, 4]), h.make_tensor_value_info("ys", F, [None, None, 4])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(m, full_check=True)
    return m


def if_model() -> onnx.ModelProto:
    then_g = h.make_graph(
        [h.make_node("Neg", ["x"], ["t_out"])], "then_g", [], [h.make_tensor_value_info("t_out", F, [2])]
    )
    else_g = h.make_graph(
        [h.make_node("Abs", ["x"], ["e_out"])], "else_g", [], [h.make_tensor_value_info("e_out", F, [2])]
    )
    g = h.make_graph(
        [h.make_node("If", ["flag"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        "g",
        [h.make_tensor_value_info("flag", T.BOOL, []), h.make_tensor_value_info("x", F, [2])],
        [h.make_tensor_value_info("y", F, [2])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def dims(v: onnx.ValueInfoProto) -> list:
    return [d.dim_param or (d.dim_value if d.HasField("dim_value") else None) for d in v.type.tensor_type.shape.dim]


def opened(client, m: onnx.ModelProto) -> str:
    r = upload(client, m.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def body(m: onnx.ModelProto) -> onnx.GraphProto:
    return next(a.g for a in m.graph.node[0].attribute if a.name == "body")


def inferred_ys(m: onnx.ModelProto) -> list:
    done = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    return dims(next(o for o in done.graph.output if o.name == "ys"))


def test_a_carried_value_exported_at_batch_1_gets_its_dim_freed(client):
    m = batch1_loop()
    assert inferred_ys(m)[1:] == [1, 4]  # what the batch-1 body makes inference say of the Loop's output
    mid = opened(client, m)
    op = {"op": "set_io_shape", "graph": "n0/body", "name": "s_in", "shape": ["batch", 4]}
    r = edit(client, mid, 0, op)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == [
        "'s_in' (carried input of loop/body) is now FLOAT ⟨batch×4⟩; 's_out', which the next iteration reads as it,"
        " still declares FLOAT ⟨1×4⟩ (update_types re-infers it)"
    ]
    mid = opened(client, m)  # with update_types, inference types what follows it
    r = edit(client, mid, 0, {**op, "update_types": True})
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    assert answer["changes"][0].startswith(
        "'s_in' (carried input of loop/body) is now FLOAT ⟨batch×4⟩; 2 output shapes updated; the bodies' shapes re-inferred"
    )
    assert answer["validation"]["runtime"]["ok"] is True
    new = stored(client, mid)
    onnx.checker.check_model(new, full_check=True)
    assert dims(body(new).input[2]) == ["batch", 4]
    assert dims(body(new).output[1]) == dims(body(new).output[2]) == ["batch", 4]  # re-inferred after it
    assert inferred_ys(new)[1:] == ["batch", 4]
    # and onnxruntime computes it at batch 3: s0 + trip·x, Relu of each step stacked
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    s0 = np.ones((3, 4), np.float32)
    sess = ort.InferenceSession(new.SerializeToString(), providers=["CPUExecutionProvider"])
    s_final, ys = sess.run(None, {"trip": np.array(3, np.int64), "x": x, "s0": s0})
    np.testing.assert_allclose(s_final, s0 + 3 * x)
    np.testing.assert_allclose(ys, np.stack([np.maximum(s0 + k * x, 0) for k in (1, 2, 3)]))
    # its page: the role says what it carries (graph JSON)
    g = client.get(f"/api/models/{mid}/graph", query_string={"path": "n0/body"}).get_json()
    assert g["inputs"][2]["shape"] == ["batch", 4] and g["inputs"][2]["role"]["kind"] == "carried"


def test_a_body_output_keeps_the_shape_asked_when_the_rest_is_re_inferred(client):
    mid = opened(client, batch1_loop())
    op = {"op": "set_io_shape", "graph": "n0/body", "name": "y", "shape": [None, 4], "update_types": True}
    r = edit(client, mid, 0, op)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].startswith(
        "'y' (scan output of loop/body) is now FLOAT ⟨?×4⟩; 2 output shapes updated; the bodies' shapes re-inferred"
    )
    new = stored(client, mid)
    onnx.checker.check_model(new, full_check=True)
    assert dims(body(new).output[2]) == [None, 4]


def test_what_the_loop_fixes_is_refused_in_one_line(client):
    mid = opened(client, batch1_loop())

    def refused(op: dict) -> str:
        r = edit(client, mid, 0, {"op": "set_io_shape", "graph": "n0/body", **op})
        assert r.status_code == 400, r.get_json()
        message = r.get_json()["error"]["message"]
        assert "\n" not in message
        return message

    said = refused({"name": "s_in", "shape": [None, 4], "dtype": "DOUBLE"})
    assert said.endswith(
        "'s_in' would be DOUBLE, but a carried value takes the element type of what node \"loop\" (Loop) feeds it: 's0' is FLOAT"
    )
    said = refused({"name": "s_out", "shape": [None, 4], "dtype": "DOUBLE"})
    assert "the next iteration reads it as 's_in', which is FLOAT" in said
    assert refused({"name": "i", "shape": [1]}).endswith(
        "'i' is the iteration number of node \"loop\" (Loop): an INT64 scalar, by the spec"
    )
    assert refused({"name": "c_out", "shape": [], "dtype": "FLOAT"}).endswith(
        "'c_out' is the condition of node \"loop\" (Loop): a BOOL scalar, by the spec"
    )
    assert "cast works on the main graph's inputs and outputs" in refused(
        {"name": "y", "shape": [1, 4], "dtype": "DOUBLE", "cast": True}
    )
    r = edit(client, mid, 0, {"op": "set_io_shape", "graph": "n0/body", "name": "nope", "shape": [1]})
    assert r.status_code == 404 and r.get_json()["error"]["message"].endswith(
        "loop/body has no input or output named 'nope'"
    )
    # the main graph's op names the body a value belongs to
    r = edit(client, mid, 0, {"op": "set_io_shape", "name": "s_in", "shape": [None, 4]})
    assert r.status_code == 404
    assert r.get_json()["error"]["message"].endswith(
        'the graph has no input or output named \'s_in\'; it is an input of loop/body: give "graph": "n0/body"'
    )
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 0  # nothing stored


def test_an_if_branch_output_keeps_the_other_branchs_type_and_takes_a_shape(client):
    mid = opened(client, if_model())
    r = edit(
        client,
        mid,
        0,
        {"op": "set_io_shape", "graph": "n0/then_branch", "name": "t_out", "shape": [2], "dtype": "DOUBLE"},
    )
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"].endswith("would be DOUBLE, but the other branch's output 'e_out' is FLOAT")
    r = edit(client, mid, 0, {"op": "set_io_shape", "graph": "n0/then_branch", "name": "t_out", "shape": ["n"]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].startswith("'t_out' (If output of branch/then_branch) is now FLOAT ⟨n⟩")
    new = stored(client, mid)
    onnx.checker.check_model(new, full_check=True)
    then_g = next(a.g for a in new.graph.node[0].attribute if a.name == "then_branch")
    assert dims(then_g.output[0]) == ["n"]
    sess = ort.InferenceSession(new.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([-1.5, 2.0], np.float32)
    np.testing.assert_array_equal(sess.run(None, {"flag": np.array(True), "x": x})[0], -x)


def test_re_inferred_outputs_take_no_dim_names_inference_made_up(app):
    """QA20 F9: set_io_shape h0 [batch, 16] with update_types wrote onnx's scratch name
    Loop_2_o0__d0 into the model's declared outputs (they said [None, 1] before)."""
    from test_loop_trip_smoke import beam_loop_if

    from app.edits.shape_hints import refresh_types

    model = beam_loop_if()
    scores = next(o for o in model.graph.output if o.name == "scores")
    assert [d.dim_param for d in scores.type.tensor_type.shape.dim] == ["", ""]
    h0 = next(i for i in model.graph.input if i.name == "h0")
    h0.type.tensor_type.shape.dim[0].dim_param = "batch"
    refresh_types(model)
    for o in model.graph.output:
        names = [d.dim_param for d in o.type.tensor_type.shape.dim if d.HasField("dim_param")]
        assert all(
            not n.startswith(("unk__", "Loop_")) or (n == "Loop_2_o0__d0" and o.name == "generated") for n in names
        ), (
            o.name,
            names,
        )
    assert scores.type.tensor_type.shape.dim[0].dim_param == ""  # unknown: the iterations
    final = next(o for o in model.graph.output if o.name == "final_hidden")
    assert [d.dim_param or d.dim_value for d in final.type.tensor_type.shape.dim] == ["batch", 16]
