"""An edit that makes an If's branches give an output in shapes that can't both hold, or a Loop's
body give a carried value back in another shape than it took, is refused in one line naming both
sides (QA20 F14: ArgMax axis=0 in a then_branch was accepted with "the output shapes of
'then_tok' … re-inferred", and the model failed at iteration 4, past the smoke run's trips)."""

from __future__ import annotations

import numpy as np
import onnx
from test_loop_trip_smoke import beam_loop_if, fixed_loop
from testkit import upload

from app.edits.stale_value_info import body_clash


def _upload(client, model: onnx.ModelProto) -> str:
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def _edit(client, mid: str, ops: list):
    return client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})


def test_a_branch_output_made_another_shape_than_the_other_branchs_is_refused(client):
    mid = _upload(client, beam_loop_if())
    r = _edit(client, mid, [{"op": "set_attribute", "node": "while/cond/greedy/ArgMax", "name": "axis", "value": 0}])
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"] == (
        'the edit would make the branches of node "while/cond" (If) in while/body disagree: '
        "then_branch's output 'then_tok' would be [1, 32], else_branch's 'else_tok' is [1, 1]"
    )
    # onnxruntime meets it only at iteration 4 (the then_branch runs past iteration 3): the smoke
    # run's 3 trips don't; the model as stored is unchanged
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def test_the_else_branch_is_named_as_the_changed_side_when_it_is(client):
    mid = _upload(client, beam_loop_if())
    ops = [{"op": "set_attribute", "node": "while/cond/topk/TopK", "name": "axis", "value": 0}]
    r = _edit(client, mid, ops)
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"] == (
        'the edit would make the branches of node "while/cond" (If) in while/body disagree: '
        "else_branch's output 'else_tok' would be [1, 32], then_branch's 'then_tok' is [1, 1]"
    )


def test_a_carried_value_given_back_in_another_shape_is_refused(client):
    mid = _upload(client, fixed_loop(False))
    weights = np.ones((8, 4), np.float32).reshape(-1).tolist()
    ops = [
        {
            "op": "set_initializer",
            "name": "W",
            "value": {"dtype": "FLOAT", "shape": [8, 4], "values": weights},
            "allow_type_change": True,
        }
    ]
    r = _edit(client, mid, ops)
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "give a carried value back in another shape than it took it" in message, message
    assert "its body's output 'ho' would be [1, 4], its input 'hh' is [1, 8]" in message, message


def test_a_harmless_branch_edit_is_accepted(client):
    mid = _upload(client, beam_loop_if())
    r = _edit(client, mid, [{"op": "set_attribute", "node": "while/cond/topk/TopK", "name": "largest", "value": 0}])
    assert r.status_code == 200, r.get_json()


def test_branches_the_model_itself_gives_in_two_shapes_are_its_business():
    model = beam_loop_if()
    body = next(a.g for a in model.graph.node[2].attribute if a.name == "body")
    then = next(a.g for a in body.node[7].attribute if a.name == "then_branch")
    then.output[0].type.tensor_type.shape.dim[1].dim_value = 32
    before = {"n2/body/n7/then_branch": [then.output[0].type]}
    assert body_clash(model, before) is None  # as it was: not the edit's doing
    was = onnx.TypeProto()
    was.CopyFrom(then.output[0].type)
    was.tensor_type.shape.dim[1].dim_value = 1
    assert body_clash(model, {"n2/body/n7/then_branch": [was]}) == (
        'the edit would make the branches of node "while/cond" (If) in while/body disagree: '
        "then_branch's output 'then_tok' would be [1, 32], else_branch's 'else_tok' is [1, 1]"
    )


def test_with_allow_invalid_the_clash_is_stored_as_the_edit_made_it_and_said(client):
    mid = _upload(client, beam_loop_if())
    op = {"op": "set_attribute", "node": "while/cond/greedy/ArgMax", "name": "axis", "value": 0}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op], "allow_invalid": True})
    assert r.status_code == 200, r.get_json()
    invalid = r.get_json()["validation"]["invalid"]
    assert any("then_branch's output 'then_tok' would be [1, 32]" in m for m in invalid), invalid
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    argmax = next(
        n
        for loop in model.graph.node
        if loop.op_type == "Loop"
        for n in loop.attribute[0].g.node
        if n.op_type == "If"
        for a in n.attribute
        for n in a.g.node
        if n.name == "while/cond/greedy/ArgMax"
    )
    assert next(a.i for a in argmax.attribute if a.name == "axis") == 0
