"""Hostile model-local functions (QA15): opset versions past what onnx's C++ takes, ... — every
view and edit answers, never a 500."""

from __future__ import annotations

from itertools import pairwise

import onnx
from onnx import TensorProto as T
from onnx import helper as h
from testkit import upload


def _calling(f: onnx.FunctionProto) -> onnx.ModelProto:
    g = h.make_graph(
        [h.make_node(f.name, ["X"], ["Y"], domain=f.domain)],
        "g",
        [h.make_tensor_value_info("X", T.FLOAT, [2])],
        [h.make_tensor_value_info("Y", T.FLOAT, [2])],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid(f.domain, 1)], ir_version=10)
    model.functions.append(f)
    return model


def test_a_function_importing_an_opset_past_a_c_int_is_shown(client):
    """get_schema(op, 2**40) is a TypeError in onnx's bindings (the schema view answered 500)."""
    f = onnx.FunctionProto(name="F", domain="local", input=["x"], output=["y"])
    f.node.append(h.make_node("Relu", ["x"], ["y"]))
    f.opset_import.append(h.make_opsetid("", 2**40))
    mid = upload(client, _calling(f).SerializeToString()).get_json()["id"]
    for route in (
        "schema?node=fn%5B0%5D/n0",
        "graph?path=fn%5B0%5D",
        "types?path=fn%5B0%5D",
        "stats",
        "node?id=fn%5B0%5D/n0",
    ):
        r = client.get(f"/api/models/{mid}/{route}")
        assert r.status_code == 200, (route, r.get_json())
    assert client.get(f"/api/models/{mid}/schema?node=fn%5B0%5D/n0").get_json()["known"] is False


def _chain(levels: int, fan: int) -> onnx.ModelProto:
    """F0 calls F1 `fan` times, F1 calls F2 `fan` times, ...: a call of F0 stands for fan^levels nodes."""
    functions = []
    for k in range(levels):
        f = onnx.FunctionProto(name=f"F{k}", domain="local", input=["x"], output=["y"])
        f.opset_import.extend([h.make_opsetid("", 18), h.make_opsetid("local", 1)])
        if k == levels - 1:
            f.node.append(h.make_node("Relu", ["x"], ["y"]))
        else:
            names = ["x", *(f"t{i}" for i in range(fan - 1)), "y"]
            f.node.extend(h.make_node(f"F{k + 1}", [a], [b], domain="local") for a, b in pairwise(names))
        functions.append(f)
    model = _calling(functions[0])
    model.functions.extend(functions[1:])
    return model


def test_a_function_fan_out_is_refused_before_onnx_expands_it(client):
    """10 functions each calling the next 10 times: 2.6 KB standing for 10^9 nodes held the
    helper 10 minutes while every other upload waited (QA15 F1). Refused at once, saying so."""
    import time

    bomb = _chain(10, 10).SerializeToString()
    assert len(bomb) < 4000
    started = time.monotonic()
    r = upload(client, bomb, "fanout.onnx")
    assert time.monotonic() - started < 2
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"] == (
        "fanout.onnx: a call of its model-local function 'F0' expands to more than 100,000 nodes (its body's"
        " calls of other functions, expanded in turn): more than onnx's shape inference and onnxruntime can"
        " work through"
    )
    assert client.get("/api/models").get_json()["models"] == []  # nothing stored
    # the same as ONNX text
    r = upload(client, onnx.printer.to_text(_chain(10, 10)).encode(), "fanout.onnxtxt")
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "functions_too_large"
    # deep but narrow chains, and a fan-out within bounds, are models like any other
    for model in (_chain(300, 1), _chain(3, 10)):
        assert upload(client, model.SerializeToString()).status_code == 201


def test_an_edit_that_makes_a_call_fan_out_is_refused(client):
    """F4's Relu made a call of H (10 calls of a Relu) in a chain 5 deep, 10 wide: a call of F0
    would stand for 10^5 nodes and more."""
    model = _chain(5, 10)  # F4: a Relu; F0 stands for ~10^4 nodes
    leaf = _chain(2, 10)  # F0 calling F1 (a Relu) 10 times: renamed H and L
    leaf.functions[0].name, leaf.functions[1].name = "H", "L"
    for n in leaf.functions[0].node:
        n.op_type = "L"
    model.functions.extend(leaf.functions)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    op = {"op": "set_node_op", "node": "fn[4]/n0", "op_type": "H", "domain": "local"}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 422, r.get_json()
    assert "function 'F0' expands to more than 100,000 nodes" in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def test_add_node_with_a_hundred_thousand_outputs_is_refused_at_once(client):
    """add_node's duplicate check was quadratic: 100,000 outputs held a core 173 s (QA15 F5)."""
    import time

    f = onnx.FunctionProto(name="F", domain="local", input=["x"], output=["y"])
    f.node.append(h.make_node("Relu", ["x"], ["y"]))
    f.opset_import.append(h.make_opsetid("", 18))
    mid = upload(client, _calling(f).SerializeToString()).get_json()["id"]
    for graph in ("", "fn[0]"):
        op = {
            "op": "add_node",
            "op_type": "Relu",
            "inputs": ["x" if graph else "X"],
            "outputs": [f"o{k}" for k in range(100_000)],
        }
        if graph:
            op["graph"] = graph
        started = time.monotonic()
        r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
        assert time.monotonic() - started < 5
        assert r.status_code == 400 and "Relu takes 1 output; got 100000" in r.get_json()["error"]["message"], (
            r.get_json()
        )


def test_a_checker_sentence_broken_across_lines_is_said_whole(client):
    """Deleting a body node others read: the checker's "... however input 't' of node:" went out
    alone, naming no node and not saying what was wrong (QA15 F7)."""
    f = onnx.FunctionProto(name="Act", domain="local", input=["x"], output=["y"])
    f.node.extend([h.make_node("Relu", ["x"], ["t"]), h.make_node("Mul", ["t", "t"], ["y"], name="mul")])
    f.opset_import.append(h.make_opsetid("", 18))
    mid = upload(client, _calling(f).SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "delete_node", "node": "fn[0]/n0"}]})
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "however input 't' of node: Name: mul OpType: Mul is neither output of any previous nodes" in message, (
        message
    )


def test_two_functions_of_one_key_resolve_to_the_first_everywhere(client):
    """The graph linked the call to fn[1] (the last), the schema panel to fn[0] (QA15 F6)."""
    first = onnx.FunctionProto(name="D", domain="local", input=["x"], output=["y"])
    first.node.append(h.make_node("Relu", ["x"], ["y"]))
    first.opset_import.append(h.make_opsetid("", 18))
    second = onnx.FunctionProto()
    second.CopyFrom(first)
    second.node[0].op_type = "Neg"
    model = _calling(first)
    model.functions.append(second)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    assert client.get(f"/api/models/{mid}/graph").get_json()["nodes"][0]["function"] == "fn[0]"
    assert client.get(f"/api/models/{mid}/schema?node=n0").get_json()["function"] == "fn[0]"


def test_a_call_given_more_inputs_than_its_function_takes_is_refused_in_words(client):
    """onnxruntime's "actuals.size() <= formals.size() was false" was the answer (QA15 F7)."""
    f = onnx.FunctionProto(name="Act", domain="local", input=["x"], output=["y"])
    f.node.append(h.make_node("Relu", ["x"], ["y"]))
    f.opset_import.append(h.make_opsetid("", 18))
    mid = upload(client, _calling(f).SerializeToString()).get_json()["id"]
    op = {"op": "set_node_input", "node": "n0", "index": 1, "tensor": "X"}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"].endswith("function Act takes 0 to 1 inputs: it has no input 1")
    op = {"op": "add_node", "op_type": "Act", "domain": "local", "inputs": ["X", "X"]}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 400 and r.get_json()["error"]["message"].endswith(
        "(add_node): function Act takes 0 to 1 inputs; it would read 2"
    ), r.get_json()


def test_an_unknown_node_named_by_an_encoded_address_is_said_by_its_name(client):
    """A recipe names "/model/h.1/MatMul" as @%2Fmodel%2Fh.1%2FMatMul: said as the name too (QA16 #5)."""
    f = onnx.FunctionProto(name="F", domain="local", input=["x"], output=["y"])
    f.node.append(h.make_node("Relu", ["x"], ["y"]))
    f.opset_import.append(h.make_opsetid("", 18))
    mid = upload(client, _calling(f).SerializeToString()).get_json()["id"]
    op = {"op": "rename_node", "node": "@%2Fmodel%2Fh.1%2FMatMul", "name": "mm"}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 404, r.get_json()
    assert r.get_json()["error"]["message"].endswith(
        "no node '@%2Fmodel%2Fh.1%2FMatMul' (a node named \"/model/h.1/MatMul\") in this model"
    ), r.get_json()
