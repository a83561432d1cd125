"""A decoder step without an attention mask (QA29 F5): an opset-23 Attention with is_causal takes
no mask, so the positions made for a run follow the past the key/value cache holds, its length
the size of the cache's past dim; and comparing with a revision that has outputs this one lacks
(a layer's present key and value removed) says them, not compared (QA29 #12)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from test_input_roles import run, values
from testkit import upload

HEADS, HEAD = 4, 16
CACHE = ["batch", HEADS, "past_seq", HEAD]
MAX_POSITIONS = 32


def rotary_step(cache: list | None = None, cache_names: tuple[str, ...] = ("key", "value")) -> onnx.ModelProto:
    """A decoder step of opset 23: token embeddings rotated by RotaryEmbedding at position_ids,
    the positions passed out as they were fed, each cache input passed to its present output."""
    cache = cache or CACHE
    rng = np.random.default_rng(0)
    half = HEADS * HEAD // (2 * HEADS)
    weights = [
        numpy_helper.from_array(rng.standard_normal((16, HEADS * HEAD)).astype(np.float32), "embed"),
        numpy_helper.from_array(rng.standard_normal((MAX_POSITIONS, half)).astype(np.float32), "cos"),
        numpy_helper.from_array(rng.standard_normal((MAX_POSITIONS, half)).astype(np.float32), "sin"),
    ]
    inputs = [
        h.make_tensor_value_info("input_ids", T.INT64, ["batch", "seq"]),
        h.make_tensor_value_info("position_ids", T.INT64, ["batch", "seq"]),
        *(h.make_tensor_value_info(f"past_key_values.0.{k}", T.FLOAT, cache) for k in cache_names),
    ]
    nodes = [
        h.make_node("Gather", ["embed", "input_ids"], ["hidden"], name="embed_tokens"),
        h.make_node("RotaryEmbedding", ["hidden", "cos", "sin", "position_ids"], ["rotated"], num_heads=HEADS),
        h.make_node("Identity", ["position_ids"], ["positions_fed"], name="pass_positions"),
        *(
            h.make_node("Identity", [f"past_key_values.0.{k}"], [f"present.0.{k}"], name=f"pass_{k}")
            for k in cache_names
        ),
    ]
    outputs = [
        h.make_tensor_value_info("rotated", T.FLOAT, ["batch", "seq", HEADS * HEAD]),
        h.make_tensor_value_info("positions_fed", T.INT64, ["batch", "seq"]),
        *(h.make_tensor_value_info(f"present.0.{k}", T.FLOAT, cache) for k in cache_names),
    ]
    graph = h.make_graph(nodes, "step", inputs, outputs, initializer=weights)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 23)], ir_version=11)
    onnx.checker.check_model(model, full_check=True)
    return model


def made_positions(answer: dict) -> tuple[list, int]:
    """The positions the run fed (as the model saw them) and where the answer says they start."""
    made = answer["inputs"]["position_ids"]["random"]
    assert made["role"] == "positions", made
    return values(answer["outputs"]["positions_fed"]).tolist(), made["from"]


def test_positions_follow_the_cache_without_a_mask(client):
    mid = upload(client, rotary_step().SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"dims": {"batch": 2, "seq": 4, "past_seq": 3}})
    assert made_positions(answer) == ([[3, 4, 5, 6]] * 2, 3)  # after the 3 cached
    assert values(answer["inputs"]["position_ids"]).tolist() == [[3, 4, 5, 6]] * 2
    # the first step, an empty cache: from 0
    first = run(client, mid, {"dims": {"batch": 1, "seq": 4, "past_seq": 0}})
    assert made_positions(first) == ([[0, 1, 2, 3]], 0)


def test_a_cache_given_says_its_past_length(client):
    # no past_seq in "dims": the cache typed in is 2 long, the positions follow it
    mid = upload(client, rotary_step().SerializeToString()).get_json()["id"]
    cache = np.zeros((1, HEADS, 2, HEAD)).tolist()
    given = {"past_key_values.0.key": {"values": cache}, "past_key_values.0.value": {"values": cache}}
    answer = run(client, mid, {"inputs": given, "dims": {"batch": 1, "seq": 3}})
    assert made_positions(answer) == ([[2, 3, 4]], 2)
    # positions given are fed as given
    ids = {**given, "position_ids": {"values": [[0, 0, 0]]}}
    answer = run(client, mid, {"inputs": ids, "dims": {"batch": 1, "seq": 3}})
    assert values(answer["outputs"]["positions_fed"]).tolist() == [[0, 0, 0]]


def test_the_past_dim_is_the_one_the_positions_lack_or_named_past(client):
    # torch.export names: the cache [s0, 4, s1, 16], the positions [s0, s2]
    named = rotary_step(["s0", HEADS, "s1", HEAD])
    for v in named.graph.input[:2]:
        v.type.tensor_type.shape.dim[0].dim_param, v.type.tensor_type.shape.dim[1].dim_param = "s0", "s2"
    mid = upload(client, named.SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"dims": {"s0": 1, "s2": 2, "s1": 5}})
    assert made_positions(answer) == ([[5, 6]], 5)
    # a cache whose batch is named apart from the ids': the dim named past is its past
    apart = rotary_step(["batch_size", HEADS, "past_seq", HEAD])
    mid = upload(client, apart.SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"dims": {"batch": 1, "batch_size": 1, "seq": 2, "past_seq": 4}})
    assert made_positions(answer) == ([[4, 5]], 4)


def test_an_encoders_cache_is_no_past(client):
    # a cross-attention's cache holds the encoder's sequence: the positions start at 0
    cross = rotary_step(["batch", HEADS, "encoder_seq", HEAD], ("encoder.key", "encoder.value"))
    mid = upload(client, cross.SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"dims": {"batch": 1, "seq": 2, "encoder_seq": 6}})
    assert made_positions(answer) == ([[0, 1]], 0)


def test_a_mask_still_places_the_positions(client):
    # a mask covering the past and new positions says the past, as before
    model = rotary_step()
    mask = h.make_tensor_value_info("attention_mask", T.INT64, ["batch", "past_seq + seq"])
    model.graph.input.append(mask)
    model.graph.node.append(h.make_node("Identity", ["attention_mask"], ["mask_fed"], name="pass_mask"))
    model.graph.output.append(h.make_value_info("mask_fed", mask.type))
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"dims": {"batch": 1, "seq": 2, "past_seq": 3}})
    assert made_positions(answer) == ([[3, 4]], 3)
    assert values(answer["outputs"]["mask_fed"]).tolist() == [[1] * 5]


def test_outputs_only_one_revision_has_are_said_not_compared(client):
    mid = upload(client, rotary_step().SerializeToString()).get_json()["id"]
    removed = [{"op": "remove_output", "name": f"present.0.{k}"} for k in ("key", "value")]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": removed})
    assert r.status_code == 200, r.get_json()
    dims = {"batch": 1, "seq": 2, "past_seq": 3}
    compared = run(client, mid, {"dims": dims, "compare_to": 0})["compare"]
    assert sorted(compared["outputs"]) == ["positions_fed", "rotated"]
    assert compared["only_in"] == {"here": [], "there": ["present.0.key", "present.0.value"]}
    # the other way round: revision 1 still computes them (as tensors), compared as such
    back = run(client, mid, {"dims": dims, "revision": 0, "compare_to": 1})["compare"]
    assert back["only_in"] == {"here": [], "there": []} and "present.0.key" in back["outputs"]
    # the tensors gone too (cleanup): said on this side
    r = client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "cleanup"}]})
    assert r.status_code == 200, r.get_json()
    back = run(client, mid, {"dims": dims, "revision": 0, "compare_to": 2})["compare"]
    assert back["only_in"] == {"here": ["present.0.key", "present.0.value"], "there": []}
    # tensors asked for: the other's graph outputs not asked are no output "only there"
    asked = run(client, mid, {"dims": dims, "compare_to": 0, "outputs": ["hidden"]})["compare"]
    assert asked["only_in"] == {"here": [], "there": []} and list(asked["outputs"]) == ["hidden"]


def test_another_model_says_the_outputs_it_lacks_too(client):
    source = upload(client, rotary_step().SerializeToString(), "step.onnx").get_json()["id"]
    trimmed = upload(client, rotary_step().SerializeToString(), "step_trimmed.onnx").get_json()["id"]
    removed = [{"op": "remove_output", "name": "present.0.value"}, {"op": "cleanup"}]
    r = client.post(f"/api/models/{trimmed}/edits", json={"base": 0, "ops": removed})
    assert r.status_code == 200, r.get_json()
    dims = {"batch": 1, "seq": 2, "past_seq": 3}
    compared = run(client, trimmed, {"dims": dims, "compare_model": source})["compare"]
    assert compared["model"]["id"] == source and compared["only_in"] == {"here": [], "there": ["present.0.value"]}
    back = run(client, source, {"dims": dims, "compare_model": trimmed})["compare"]
    assert back["only_in"] == {"here": ["present.0.value"], "there": []}
