"""A model held to a deployment target's limits (QA37 #10): each limit a rule the answer keeps or
breaks, naming what breaks it and what fixes it; after those fixes, kept."""

from __future__ import annotations

from encoder_block import encoder_block
from onnx.backend.test.case.node import collect_testcases
from testkit import upload

NPU = "max_opset=13&static=1&control_flow=0&standard=1&max_nodes=60"


def target(client, mid: str, query: str, status: int = 200) -> dict:
    r = client.get(f"/api/models/{mid}/target?{query}")
    assert r.status_code == status, r.get_json()
    return r.get_json()


def test_an_export_breaks_the_npus_rules_until_the_studio_fixes_them(client):
    mid = upload(client, encoder_block().SerializeToString(), "enc.onnx").get_json()["id"]
    answer = target(client, mid, NPU + "&ops=MatMul,Add,Softmax,Reshape,Transpose,Div,Mul,Erf")
    rules = {r["rule"]: r for r in answer["rules"]}
    assert not answer["ok"] and answer["nodes"] == 45
    assert rules["max_opset"]["message"] == "ai.onnx opset 17, past 13"
    assert (
        rules["max_opset"]["fix"]
        == "Convert opset… to 13, after Write out of LayerNormalization ×2, which opset 13 lacks"
    )
    assert rules["static"]["inputs"] == ["input_ids_embeds"] and "(batch, sequence)" in rules["static"]["message"]
    assert rules["control_flow"]["ok"] and rules["standard"]["ok"] and rules["max_nodes"]["ok"]
    ops = rules["ops"]
    assert ops["message"] == (
        "14 nodes of operators the target doesn't take: Dropout ×3, Identity ×2, LayerNormalization ×2, Gather ×2,"
        " Unsqueeze ×2, Concat ×2, Shape ×1"
    )
    assert not ops["ok"] and len(ops["nodes"]) == 14
    # QA39 #5: Write out only for the operators onnx defines by others, Simplify for what it removes
    assert ops["fix"] == (
        "Write out puts primitives in place of LayerNormalization; Simplify folds constants and removes Identity and Dropout"
    )

    fixes = [
        {"op": "fix_dims", "dims": {"batch": 1, "sequence": 8}},
        {"op": "write_out", "op_types": ["LayerNormalization"]},
        {"op": "convert_opset", "version": 13},
    ]
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": fixes}).status_code == 200
    rules = {r["rule"]: r for r in target(client, mid, NPU)["rules"]}
    assert rules["max_opset"]["ok"] and rules["static"]["ok"]
    assert not rules["max_nodes"]["ok"] and rules["max_nodes"]["message"].endswith("past the budget of 60")


def test_control_flow_is_named_by_its_nodes(client):
    case = next(c for c in collect_testcases(None) if c.name == "test_if")
    mid = upload(client, case.model.SerializeToString(), "if.onnx").get_json()["id"]
    (rule,) = target(client, mid, "control_flow=false")["rules"]
    assert rule == {
        "rule": "control_flow",
        "ok": False,
        "message": "1 node of control flow: If ×1",
        "nodes": ["n0"],
        "names": rule["names"],
        "fix": "Simplify removes an If whose condition is known (give its inputs their values first: Make static, Fix input)",
    }


def test_a_limit_that_isnt_one_is_refused(client):
    mid = upload(client, encoder_block().SerializeToString(), "enc.onnx").get_json()["id"]
    huge = "9" * 5000  # past Python's 4,300 digits for int(): a 500 once (QA39 #7)
    for query in (
        "max_opset=0", "max_opset=x", "static=maybe", "ops=", "ops=Conv(x)", "ops=;", "max_nodes=-1", f"max_opset={huge}",
        "maxnodes=2",  # a typo read as "keeps every limit" (QA39 #6)
    ):  # fmt: skip
        assert target(client, mid, query, 400)["error"]["code"] == "bad_request", query
    assert "did you mean 'max_nodes'" in target(client, mid, "maxnodes=2", 400)["error"]["message"]
    assert target(client, mid, "ops=Conv(x)", 400)["error"]["message"].endswith("'Conv(x)' is not an operator type")
    # what people type between operator types (QA39: "Relu; Mul" was refused, quoted as 'Relu;,Mul')
    assert target(client, mid, "ops=MatMul;%20Add Softmax,,Reshape") == target(
        client, mid, "ops=MatMul,Add,Softmax,Reshape"
    )
    assert target(client, mid, "")["rules"] == [] and target(client, mid, "")["ok"]


def test_another_domains_operator_is_named_with_its_domain(client):
    """QA39 #6: ops=FastGelu admitted com.microsoft.FastGelu; com.microsoft.FastGelu matched nothing."""
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [
            helper.make_node("FastGelu", ["x"], ["g"], name="gelu", domain="com.microsoft"),
            helper.make_node("Relu", ["g"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", f, [2])],
        [helper.make_tensor_value_info("y", f, [2])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    mid = upload(client, helper.make_model(graph, opset_imports=opsets).SerializeToString(), "ms.onnx").get_json()["id"]
    assert target(client, mid, "ops=Relu,com.microsoft.FastGelu")["ok"]
    (rule,) = target(client, mid, "ops=Relu,FastGelu")["rules"]
    assert rule["message"] == "1 node of operators the target doesn't take: com.microsoft.FastGelu ×1"


def test_an_older_opsets_missing_operator_without_a_body_is_not_sent_to_write_out(client):
    """A last look: a light Inception at opset 8 was told to write out ConstantOfShape (which has
    no body), and to write out Softmax, which every runtime has."""
    from testkit import ONNX_DATA

    data = (ONNX_DATA / "light" / "light_inception_v2.onnx").read_bytes()
    mid = upload(client, data, "inception.onnx").get_json()["id"]
    rules = {r["rule"]: r for r in target(client, mid, "max_opset=8&ops=Conv,Relu,Concat")["rules"]}
    assert rules["max_opset"]["fix"] == (
        "Convert opset… to 8; opset 8 lacks ConstantOfShape ×407 too, which onnx defines by no other operators"
    )
    assert rules["ops"]["fix"] == "Simplify folds constants and removes Identity and Dropout"
