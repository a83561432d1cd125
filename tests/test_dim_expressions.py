"""A dim declared as an expression of the others (optimum's attention mask "past_sequence +
sequence") is that expression: never a size of its own to ask for, made up or counted in."""

from __future__ import annotations

import numpy as np
import pytest
from browser.browser_models import TOTAL, masked_decoder
from testkit import upload

from app.onnx_io import dim_names
from app.onnx_io.inference import fix_dims, input_dims, output_only_dims


def test_the_grammar():
    plain = {"batch", "sequence", "past_sequence", "s0"}
    assert dim_names.expression_names(TOTAL, plain) == ["past_sequence", "sequence"]
    assert dim_names.expression_names("2*s0 + 1", plain) == ["s0"]
    assert dim_names.expression_value("(s0 + 1)**2 - sequence", {"s0": 3, "sequence": 4}) == 12
    # a name alone, a name in dims that aren't all there, anything but + - * of whole numbers
    for text in ("batch", "batch-size", "past_sequence + total", "s0 / 2", "floor(s0)", "s0 + 1.5", "x[0] + 1", ""):
        assert dim_names.expression_names(text, plain) is None, text
    assert dim_names.expression_names("batch-size", plain | {"size"}) == ["batch", "size"]
    # parsed, never run
    assert dim_names.expression_value("__import__('os').getpid()", {}) is None
    assert dim_names.plain_dims([["batch", TOTAL, None, 3], ["past_sequence", "?", "batch-size"]]) == {
        "batch",
        "past_sequence",
    }


def test_an_inputs_size_follows_its_expression_and_yields_to_nothing_inconsistent():
    sizes = {"past_sequence": 5, "sequence": 3}
    assert dim_names.dim_size("attention_mask", 1, TOTAL, sizes) == 8
    # a size given for the expression itself can't contradict the dims it is made of
    assert dim_names.dim_size("attention_mask", 1, TOTAL, {**sizes, TOTAL: 4}) == 8
    assert dim_names.dim_size("attention_mask", 1, TOTAL, {TOTAL: 4}) == 4
    assert dim_names.dim_size("attention_mask", 1, TOTAL, {"sequence": 3}) is None


def test_the_dims_asked_for_are_those_it_is_made_of():
    model = masked_decoder()
    assert input_dims(model) == ["batch", "sequence", "past_sequence"]
    assert output_only_dims(model) == []  # the present key's length is no new size either
    fix_dims(model, {"batch": 2, "sequence": 3, "past_sequence": 5})
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in [*model.graph.input, *model.graph.output]
    }
    assert shapes["attention_mask"] == [2, 8] and shapes["present_key"] == [2, 8, 8] and shapes["probs"] == [2, 3, 8]


def test_the_runtime_gate_feeds_the_mask_its_length_and_finds_the_model_runs_at_every_size(client):
    """The smoke run at 1 and again at 2 gives the mask past + new keys' length: before, a mask of
    2 against 4 keys made a correct decoder "run at size 1 only"."""
    mid = upload(client, masked_decoder().SerializeToString()).get_json()["id"]
    runtime = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert runtime["status"] == "ok", runtime
    other = runtime["other_size"]
    assert other["status"] == "ok" and other["dims"] == ["batch", "past_sequence", "sequence"], other


def test_costs_ask_three_sizes_and_the_formulas_are_in_them(client):
    mid = upload(client, masked_decoder().SerializeToString()).get_json()["id"]
    answer = client.get(f"/api/models/{mid}/stats").get_json()
    assert answer["input_dims"] == ["batch", "sequence", "past_sequence"]
    formula = answer["formula"]
    assert formula["symbols"] == ["batch", "sequence", "past_sequence"] and formula["unknown_nodes"] == 0
    assert all(TOTAL not in t["symbols"] for t in formula["flops"] + formula["activation_bytes"])
    # scores: 2·8 FLOPs per (query, key) pair, b·s·(p + s) pairs, and the Add and Softmax on them
    counted = client.get(f"/api/models/{mid}/stats?dims=batch=2,sequence=3,past_sequence=5").get_json()
    pairs = 2 * 3 * 8
    by_name = {n["name"]: n for n in counted["nodes"]}
    assert by_name["scores"]["flops"] == 2 * 8 * pairs and by_name["mask_add"]["flops"] == pairs


@pytest.mark.parametrize("past", [0, 5])
def test_a_run_with_random_inputs_makes_the_mask_as_long_as_the_keys(client, past):
    """Given batch, sequence and past_sequence, random inputs fit together: the mask has p + s
    values, the outputs are onnxruntime's own for the same inputs. A first step has no past."""
    data = masked_decoder().SerializeToString()
    mid = upload(client, data).get_json()["id"]
    dims = {"batch": 2, "sequence": 3, "past_sequence": past}
    names = ["query", "key", "past_key", "attention_mask"]
    body = {"inputs": {n: {"random": {"seed": i}} for i, n in enumerate(names)}, "dims": dims}
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == 200, r.get_json()
    outputs = r.get_json()["outputs"]
    assert outputs["probs"]["shape"] == [2, 3, past + 3] and outputs["present_key"]["shape"] == [2, past + 3, 8]
    probs = np.array(outputs["probs"]["values"], np.float64).reshape(2, 3, past + 3)
    np.testing.assert_allclose(probs.sum(axis=-1), 1, rtol=1e-5)  # a softmax over every key, cached and new


def test_the_graph_json_says_which_dims_are_expressions(client):
    mid = upload(client, masked_decoder().SerializeToString()).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    assert graph["dim_expressions"] == {TOTAL: ["past_sequence", "sequence"]}
    # the drawing keeps the model's own words for the dim
    assert [i["shape"] for i in graph["inputs"]][-1] == ["batch", TOTAL]
