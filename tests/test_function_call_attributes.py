"""A call of a model-local function sets the function's attributes: the ones it declares are
offered with their types (the function is the call's schema), others are refused, and what a
deleted one leaves is said."""

from __future__ import annotations

import onnx
from browser.browser_models import function_calls_model
from testkit import upload


def model_id(client) -> str:
    return upload(client, function_calls_model().SerializeToString()).get_json()["id"]


def post(client, mid: str, op: dict, base: int = 0):
    return client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": [op]})


def test_a_calls_schema_is_its_functions_attributes(client):
    mid = model_id(client)
    schema = client.get(f"/api/models/{mid}/schema?node=n0").get_json()
    assert schema["kind"] == "function" and schema["function"] == "fn[0]"
    assert schema["attributes"] == [
        {
            "name": "slope",
            "type": "FLOAT",
            "required": False,
            "default": None,
            "description": "Read by LeakyRelu.alpha.",
        },
        {
            "name": "note",
            "type": None,
            "required": False,
            "default": None,
            "description": "Nothing in the body reads it.",
        },
        {
            "name": "gain",
            "type": "FLOAT",
            "required": False,
            "default": 2.0,
            "description": "Read by Constant.value_float.",
        },
    ]


def test_a_calls_new_attribute_takes_the_functions_type(client):
    mid = model_id(client)
    r = post(client, mid, {"op": "set_attribute", "node": "n0", "name": "gain", "value": 5})
    assert r.status_code == 200, r.get_json()
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    [gain] = [a for a in model.graph.node[0].attribute if a.name == "gain"]
    assert gain.type == onnx.AttributeProto.FLOAT and gain.f == 5.0
    # another type than the function's is refused; so is a name it doesn't declare
    r = post(client, mid, {"op": "set_attribute", "node": "n1", "name": "note", "value": 1, "type": "INT"}, 1)
    assert r.status_code == 200, r.get_json()  # nothing says note's type: the caller's
    r = post(client, mid, {"op": "set_attribute", "node": "n0", "name": "bogus", "value": 1.0, "type": "FLOAT"}, 2)
    assert r.status_code == 400
    assert r.get_json()["error"]["message"] == (
        "op #1 (set_attribute): function Block declares no attribute 'bogus' (its attributes: slope, note, gain)"
    )
    r = post(client, mid, {"op": "set_attribute", "node": "n1", "name": "note", "value": 1.5}, 2)
    assert r.status_code == 400  # exists as an INT now: 1.5 is refused


def test_a_reference_in_the_body_says_where_it_is_set(client):
    mid = model_id(client)
    r = post(client, mid, {"op": "set_attribute", "node": "fn[0]/n0", "name": "alpha", "value": 0.3})
    assert r.status_code == 400
    assert r.get_json()["error"]["message"].endswith(
        "takes the value of the function's attribute 'slope', which each call sets (or leaves to the"
        " function's default): set it on the calls"
    )


def test_deleting_a_calls_attribute_says_what_it_leaves(client):
    mid = model_id(client)
    r = post(client, mid, {"op": "delete_attribute", "node": "n1", "name": "gain"})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith(": the call takes Block's default")
    r = post(client, mid, {"op": "delete_attribute", "node": "n1", "name": "slope"}, 1)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith(
        ": Block has no default for it, so what refers to it (LeakyRelu.alpha) is left unset and its operator's"
        " default applies"
    )


def test_deleting_the_node_writing_a_functions_output_says_so(client):
    mid = model_id(client)
    r = post(client, mid, {"op": "delete_node", "node": "fn[0]/n2"})
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"] == (
        "op #1 (delete_node): node fn[0]/n2 (Mul) writes 'Y', an output of function Block: nothing"
        " would compute it (reconnect gives it the node's first input instead)"
    )
    r = post(client, mid, {"op": "delete_node", "node": "fn[0]/n2", "reconnect": True})
    assert r.status_code == 200, r.get_json()


def test_a_functions_body_is_named_by_the_function_in_what_is_said(client):
    mid = model_id(client)
    r = post(client, mid, {"op": "set_metadata", "target": "fn[0]", "key": "origin", "value": "tests"})
    assert r.status_code == 200, r.get_json()
    assert "function Block" in r.get_json()["changes"][0] and "fn[0]" not in r.get_json()["changes"][0]


def test_cleanup_removes_the_functions_no_node_calls(client):
    """After the only call of Block is deleted, Block goes, and Act, which only Block called;
    Keep, called in an If branch, stays."""
    model = onnx.parser.parse_model(
        """
        <ir_version: 10, opset_import: ["" : 18, "local" : 1]>
        main (float[2] X, bool c) => (float[2] Y) {
          H = local.Block (X)
          Y = If (c) <
            then_branch = t () => (float[2] a) { a = local.Keep (X) },
            else_branch = e () => (float[2] b) { b = Neg (X) }
          >
        }
        <domain: "local", opset_import: ["" : 18, "local" : 1]>
        Block (X) => (Y) { Y = local.Act (X) }
        <domain: "local", opset_import: ["" : 18]>
        Act (X) => (Y) { Y = Relu (X) }
        <domain: "local", opset_import: ["" : 18]>
        Keep (X) => (Y) { Y = Sigmoid (X) }
        """
    )
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = post(client, mid, {"op": "cleanup"})
    assert r.status_code == 200, r.get_json()
    edited = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert [f.name for f in edited.functions] == ["Keep"]  # Block's call was dead: nothing reads H
    assert r.get_json()["changes"][0].endswith(", 2 uncalled functions (Block, Act)")
    onnx.checker.check_model(edited, full_check=True)


def test_a_node_can_become_a_call_of_a_function_and_back(client):
    mid = model_id(client)
    r = post(client, mid, {"op": "set_node_op", "node": "n1", "op_type": "Relu", "domain": "", "drop_attributes": True})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == ["node n1 (Block) is now ai.onnx::Relu; dropped its 'slope', 'gain'"]
    # back to a call: the function's attributes are its schema, typed from the function
    back = {"op": "set_node_op", "node": "n1", "op_type": "Block", "domain": "local"}
    r = post(client, mid, {**back, "attributes": {"bogus": 1.0}}, 1)
    assert r.status_code == 400 and "function Block declares no attribute 'bogus'" in r.get_json()["error"]["message"]
    r = post(client, mid, {**back, "attributes": {"slope": 0.5}}, 1)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["ok"] is True
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    call = model.graph.node[1]
    assert (call.domain, call.op_type) == ("local", "Block")
    assert [(a.name, a.type, a.f) for a in call.attribute] == [("slope", onnx.AttributeProto.FLOAT, 0.5)]
    # a call reading more inputs than the function takes is refused, saying how many it takes
    r = post(client, mid, {"op": "insert_node", "tensor": "H", "op_type": "Add", "inputs": ["X"]}, 2)
    assert r.status_code == 200, r.get_json()
    r = post(client, mid, {**back, "node": "n1"}, 3)  # the Add, inserted after n0
    assert r.status_code == 400 and "Block takes 0 to 1 inputs" in r.get_json()["error"]["message"], r.get_json()
