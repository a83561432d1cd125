"""Declarations onnx's shape inference can't type: opset-23 Attention's present_key and
present_value (QA29). A dim fixed on the inputs is fixed where they still name it (F2), such a
tensor made a graph output again gets the shape Attention's definition gives (F3), and what
nothing types is refused naming the tensor and its node, not with the checker's bare "Field
'shape' of 'type' is required but missing."."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper
from testkit import upload


def attention_model(past: bool = True) -> onnx.ModelProto:
    """x [batch, seq, 16] as Q, K and V of an Attention (2 heads of 8), with a cache past_key /
    past_value [batch, 2, past, 8] when `past`; outputs y [batch, seq, 16] (through an Identity
    of the Attention's out, which value_info declares) and present_key / present_value
    [batch, 2, total, 8] (without a cache: [batch, 2, seq, 8])."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 16])]
    fed = ["x", "x", "x"]
    if past:
        inputs += [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", 2, "past", 8])
            for n in ("past_key", "past_value")
        ]
        fed += ["", "past_key", "past_value"]
    cache = ["batch", 2, "total" if past else "seq", 8]
    graph = helper.make_graph(
        [
            helper.make_node(
                "Attention", fed, ["out", "present_key", "present_value"], name="attn", q_num_heads=2, kv_num_heads=2
            ),
            helper.make_node("Identity", ["out"], ["y"], name="copy"),
        ],
        "decoder",
        inputs,
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 16]),
            helper.make_tensor_value_info("present_key", TensorProto.FLOAT, cache),
            helper.make_tensor_value_info("present_value", TensorProto.FLOAT, cache),
        ],
        value_info=[helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", 16])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)
    onnx.checker.check_model(m, full_check=True)
    return m


def fill_model() -> onnx.ModelProto:
    """A ConstantOfShape of a shape input of unknown length: its output's rank nobody knows."""
    graph = helper.make_graph(
        [
            helper.make_node("ConstantOfShape", ["dims"], ["filled"], name="fill"),
            helper.make_node("Shape", ["filled"], ["rank_dims"], name="measure"),
        ],
        "g",
        [helper.make_tensor_value_info("dims", TensorProto.INT64, ["n"])],
        [helper.make_tensor_value_info("rank_dims", TensorProto.INT64, ["n"])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m, full_check=True)
    return m


def edited(client, model: onnx.ModelProto, ops: list):
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    if r.status_code != 200:
        return r.get_json(), None
    data = client.get(f"/api/models/{mid}/download").data
    result = onnx.load_from_string(data)
    onnx.checker.check_model(result, full_check=True)
    return r.get_json(), result


def declared(model: onnx.ModelProto) -> dict:
    return {
        v.name: [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in v.type.tensor_type.shape.dim]
        for v in [*model.graph.input, *model.graph.output, *model.graph.value_info]
    }


def test_a_fixed_batch_reaches_the_outputs_inference_cant_type(client):
    answer, result = edited(client, attention_model(), [{"op": "fix_dims", "dims": {"batch": 1}}])
    assert answer["changes"] == [
        "fixed batch = 1: 'x' is now FLOAT ⟨1×seq×16⟩; 'past_key' is now FLOAT ⟨1×2×past×8⟩;"
        " 'past_value' is now FLOAT ⟨1×2×past×8⟩; value_info re-inferred (1 of 1 entry changed, 0 dropped),"
        " 3 output shapes updated"
    ]
    assert declared(result) == {
        "x": [1, "seq", 16],
        "past_key": [1, 2, "past", 8],
        "past_value": [1, 2, "past", 8],
        "y": [1, "seq", 16],
        "present_key": [1, 2, "total", 8],
        "present_value": [1, 2, "total", 8],
        "out": [1, "seq", 16],
    }


def test_without_reinference_the_declarations_stay_and_are_said(client):
    ops = [{"op": "fix_dims", "dims": {"batch": 1}, "update_types": False}]
    answer, result = edited(client, attention_model(), ops)
    assert answer["changes"] == [
        "fixed batch = 1: 'x' is now FLOAT ⟨1×seq×16⟩; 'past_key' is now FLOAT ⟨1×2×past×8⟩;"
        " 'past_value' is now FLOAT ⟨1×2×past×8⟩; 1 stored value_info entry still give the sizes before"
        " (update_types re-infers them); 3 outputs ('y', 'present_key', 'present_value') and 1 value_info"
        " entry still declare batch, which no input names now (update_types writes its size there)"
    ]
    assert declared(result)["out"] == ["batch", "seq", 16]
    assert declared(result)["present_value"] == ["batch", 2, "total", 8]


def test_set_io_shape_giving_the_last_named_batch_a_size_does_the_same(client):
    ops = [{"op": "set_io_shape", "name": "x", "shape": [1, "seq", 16]}]
    answer, result = edited(client, attention_model(past=False), ops)
    assert answer["changes"] == [
        "'x' is now FLOAT ⟨1×seq×16⟩; value_info re-inferred (1 of 1 entry changed, 0 dropped), 3 output shapes updated"
    ]
    assert declared(result)["present_key"] == [1, 2, "seq", 8]


def test_a_removed_cache_output_comes_back_with_the_shape_attention_gives(client):
    model = attention_model()
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    for base, op in enumerate(
        [{"op": "remove_output", "name": "present_value"}, {"op": "add_output", "tensor": "present_value"}]
    ):
        r = client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": [op]})
        assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == ["added graph output 'present_value'"]  # typed by the rule in inference
    result = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(result, full_check=True)
    # the length its sibling present_key declares (the export's total), not the rule's past + seq:
    # the model is again what it was
    assert declared(result)["present_value"] == ["batch", 2, "total", 8]
    assert result.graph == model.graph


def test_without_a_cache_the_present_is_k_by_heads(client):
    ops = [{"op": "remove_output", "name": "present_key"}, {"op": "add_output", "tensor": "present_key"}]
    answer, result = edited(client, attention_model(past=False), ops)
    assert answer["changes"][1] == "added graph output 'present_key'"
    assert declared(result)["present_key"] == ["batch", 2, "seq", 8]


def test_a_tensor_of_unknown_rank_is_refused_naming_it_and_its_node(client):
    answer, _ = edited(client, fill_model(), [{"op": "add_output", "tensor": "filled"}])
    assert answer["error"]["message"] == (
        "op #1 (add_output): onnx's shape inference gives 'filled' (written by node \"fill\" (ConstantOfShape)) no"
        " shape, and an output of the main graph must declare one (its rank at least: onnx's checker refuses it"
        ' without); give "dtype": "FLOAT", "shape" (null for a dim of unknown size: [null, 4])'
    )
    for given in ({"dtype": "FLOAT", "shape": [None, None]}, {"shape": [None, None]}):  # the dtype inferred
        answer, result = edited(client, fill_model(), [{"op": "add_output", "tensor": "filled", **given}])
        assert answer["changes"] == ["added graph output 'filled'"]
        assert declared(result)["filled"] == [None, None]
        assert result.graph.output[-1].type.tensor_type.elem_type == TensorProto.FLOAT


def test_a_main_graph_output_left_without_a_shape_is_refused_naming_it(client):
    answer, _ = edited(client, fill_model(), [{"op": "set_io_shape", "name": "rank_dims", "shape": None}])
    assert answer["error"]["message"] == (
        "the edit would make the model invalid: set_io_shape leaves 'rank_dims', an output of the main graph, with"
        " no shape, and onnx's checker requires one (its rank at least): give its dims, null for a size unknown"
        " ([null, 3])"
    )
