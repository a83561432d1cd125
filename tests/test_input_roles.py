"""Random inputs a decoder can run on meaningfully (the KV-cache QA): a mask of ones, position
ids after the past, each input a stream of its own for one seed, and the answer says how each
input was made."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from testkit import upload

from app.onnx_io.input_roles import MASK, POSITIONS, input_roles

TOTAL = "past_sequence + sequence"


def decoder_inputs() -> onnx.ModelProto:
    """A decoder step's inputs as optimum names them, each passed to an output of its own."""
    inputs = [
        h.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence"]),
        h.make_tensor_value_info("attention_mask", T.INT64, ["batch", TOTAL]),
        h.make_tensor_value_info("position_ids", T.INT64, ["batch", "sequence"]),
        h.make_tensor_value_info("past_key", T.FLOAT, ["batch", "past_sequence", 4]),
        h.make_tensor_value_info("past_value", T.FLOAT, ["batch", "past_sequence", 4]),
    ]
    nodes = [h.make_node("Identity", [v.name], [f"{v.name}_out"], name=f"pass_{v.name}") for v in inputs]
    outputs = [h.make_value_info(f"{v.name}_out", v.type) for v in inputs]
    model = h.make_model(h.make_graph(nodes, "step", inputs, outputs), opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def run(client, mid: str, body: dict) -> dict:
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def values(preview: dict) -> np.ndarray:
    return np.array(preview["values"]).reshape(preview["shape"])


def test_a_decoders_random_inputs_attend_every_position_in_order(client):
    mid = upload(client, decoder_inputs().SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"dims": {"batch": 2, "sequence": 3, "past_sequence": 5}})
    out = answer["outputs"]
    assert values(out["attention_mask_out"]).tolist() == [[1] * 8] * 2
    assert values(out["position_ids_out"]).tolist() == [[5, 6, 7]] * 2  # after the 5 cached
    assert values(out["input_ids_out"]).shape == (2, 3)
    # the same seed (0, the page's default) on two inputs: two streams, not the same numbers
    key, value = values(out["past_key_out"]), values(out["past_value_out"])
    assert key.shape == value.shape == (2, 5, 4) and not np.allclose(key, value)
    made = {name: p.get("random") for name, p in answer["inputs"].items()}
    assert made == {
        "input_ids": {"seed": 0},
        "attention_mask": {"seed": 0, "role": MASK},
        "position_ids": {"seed": 0, "role": POSITIONS, "from": 5},  # the page says "5, 6, 7…"
        "past_key": {"seed": 0},
        "past_value": {"seed": 0},
    }
    # a seed gives the same values again; another seed others
    again = run(client, mid, {"dims": {"batch": 2, "sequence": 3, "past_sequence": 5}})
    assert again["outputs"]["past_key_out"]["values"] == out["past_key_out"]["values"]
    seeded = {"past_key": {"random": {"seed": 1}}}
    other = run(client, mid, {"inputs": seeded, "dims": {"batch": 2, "sequence": 3, "past_sequence": 5}})
    assert other["outputs"]["past_key_out"]["values"] != out["past_key_out"]["values"]


def test_a_mask_given_is_fed_as_given(client):
    mid = upload(client, decoder_inputs().SerializeToString()).get_json()["id"]
    given = {"attention_mask": {"values": [[0, 1, 1]]}, "position_ids": {"values": [[0, 0, 0]]}}
    answer = run(client, mid, {"inputs": given, "dims": {"batch": 1, "sequence": 3, "past_sequence": 0}})
    assert values(answer["outputs"]["attention_mask_out"]).tolist() == [[0, 1, 1]]
    assert values(answer["outputs"]["position_ids_out"]).tolist() == [[0, 0, 0]]
    assert "random" not in answer["inputs"]["attention_mask"]


@pytest.mark.parametrize(
    ("name", "elem", "role"),
    [
        ("attention_mask", T.INT64, MASK),
        ("encoder_attention_mask", T.INT32, MASK),
        ("mask", T.BOOL, MASK),
        ("attention_mask", T.FLOAT, None),  # additive or multiplicative: not ours to guess
        ("mask_rcnn_image", T.INT64, None),
        ("position_ids", T.INT64, POSITIONS),
        ("decoder_position_ids", T.INT32, POSITIONS),
        ("position_ids", T.BOOL, None),
        ("input_ids", T.INT64, None),
    ],
)
def test_input_roles_by_name_and_type(name, elem, role):
    graph = h.make_graph([], "g", [h.make_tensor_value_info(name, elem, [1, 4])], [])
    assert input_roles(graph, {name}).get(name) == role


def test_an_empty_cache_is_typed_as_no_values(client):
    # past_sequence 0: the cache's shape is [2, 0, 4], which nested lists can't say; [] is it
    mid = upload(client, decoder_inputs().SerializeToString()).get_json()["id"]
    given = {"past_key": {"values": []}, "past_value": {"values": [[]]}}
    answer = run(client, mid, {"inputs": given, "dims": {"batch": 2, "sequence": 3, "past_sequence": 0}})
    assert answer["outputs"]["past_key_out"]["shape"] == answer["outputs"]["past_value_out"]["shape"] == [2, 0, 4]
    assert values(answer["outputs"]["attention_mask_out"]).tolist() == [[1] * 3] * 2
    assert values(answer["outputs"]["position_ids_out"]).tolist() == [[0, 1, 2]] * 2
    # past_sequence not given: the caches' one size left is their empty one, and the mask's
    answer = run(client, mid, {"inputs": given, "dims": {"batch": 2, "sequence": 3}})
    assert answer["outputs"]["past_key_out"]["shape"] == [2, 0, 4]
    assert values(answer["outputs"]["attention_mask_out"]).tolist() == [[1] * 3] * 2
    # where the declared shape isn't empty at those sizes, [] is refused as before
    r = client.post(
        f"/api/models/{mid}/run",
        json={"inputs": {"past_key": {"values": []}}, "dims": {"batch": 2, "sequence": 3, "past_sequence": 1}},
    )
    message = r.get_json()["error"]["message"]
    assert r.status_code == 400 and "its shape is batch×past_sequence×4, 2×1×4 at the sizes given" in message


def refusal(client, mid: str, body: dict) -> str:
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == 400, r.get_json()
    return r.get_json()["error"]["message"]


def test_values_given_that_disagree_with_the_dims_are_refused_in_one_line(client):
    """The KV-cache QA: input_ids typed 1×2 at sequence 3 ran into onnxruntime's "Attempting to
    broadcast an axis by a dimension other than 1. 2 by 3" at a kernel deep in the graph."""
    mid = upload(client, decoder_inputs().SerializeToString()).get_json()["id"]
    dims = {"batch": 1, "sequence": 3, "past_sequence": 0}
    ids = {"input_ids": {"values": [[1, 2]]}}
    assert refusal(client, mid, {"inputs": ids, "dims": dims}) == (
        'input "input_ids" is 1×2: its dim sequence is 2, but "dims" gives 3'
    )
    mask = {"attention_mask": {"values": [[1, 1, 1, 1]]}}
    assert refusal(client, mid, {"inputs": mask, "dims": dims}) == (
        'input "attention_mask" is 1×4: its dim "past_sequence + sequence" is 4, not 3'
        " (past_sequence = 0, sequence = 3)"
    )
    # two inputs given that disagree with each other
    both = {"input_ids": {"values": [[1, 2]]}, "position_ids": {"values": [[0, 1, 2]]}}
    assert refusal(client, mid, {"inputs": both, "dims": {"batch": 1, "past_sequence": 0}}) == (
        'input "position_ids" is 1×3: its dim sequence is 3, but input "input_ids" makes it 2'
    )


def test_an_npy_of_another_size_than_the_model_fixes_is_refused_naming_the_dim(client):
    from testkit import npy_blob

    graph = h.make_graph(
        [h.make_node("Relu", ["image"], ["y"], name="relu")],
        "g",
        [h.make_tensor_value_info("image", T.FLOAT, [1, 3, 32, 32])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 3, 32, 32])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    blob = npy_blob(client, np.zeros((1, 3, 64, 64), np.float32))
    assert refusal(client, mid, {"inputs": {"image": {"npy": blob}}}) == (
        'input "image" is 1×3×64×64: its dim 2 is 64, but the model fixes it at 32'
    )


def test_values_given_size_the_inputs_made(client):
    # no dims at all: input_ids says batch 2 and sequence 3, the mask of 5 the past of 2
    mid = upload(client, decoder_inputs().SerializeToString()).get_json()["id"]
    given = {"input_ids": {"values": [[7, 8, 9], [1, 2, 3]]}, "attention_mask": {"values": [[1] * 5, [0, 1, 1, 1, 1]]}}
    answer = run(client, mid, {"inputs": given})
    assert answer["outputs"]["past_key_out"]["shape"] == [2, 2, 4]
    assert values(answer["outputs"]["position_ids_out"]).tolist() == [[2, 3, 4]] * 2


def test_a_missing_size_is_asked_by_the_dims_it_is_made_of(client):
    mid = upload(client, decoder_inputs().SerializeToString()).get_json()["id"]
    message = refusal(client, mid, {"dims": {"batch": 1, "sequence": 3}})
    assert 'give past_sequence in "dims"' in message, message
    # a name that is no dim of the model's inputs is refused, not ignored
    r = client.post(f"/api/models/{mid}/run", json={"dims": {"batch": 1, "sequence": 3, "past_len": 2}})
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"] == (
        "'past_len' is no dim of this model's inputs (its dims: batch, sequence, past_sequence)"
    )
