"""Compare with a revision on a left-padded batch (QA19 F13): the positions a fed attention mask
pads (its 0s) are left out of the comparison of every output and node output that has them,
and said apart; a fully masked row of attention means nothing (in torch too), and a float16
conversion (the mask's -3.4e38 held as -65504) changes it from a uniform softmax to another."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import npy_blob, upload

from app.onnx_io.output_compare import compare_arrays
from app.onnx_io.padded_positions import Mask, position_axes

VOCAB, D, BATCH, SEQ, PAD = 11, 16, 2, 5, 2  # row 1 left-padded: its first PAD positions
LOWEST = float(np.finfo(np.float32).min)  # torch's "minus infinity" for a masked score


def attention_block(mask_name: str = "attention_mask", mask_type: int = TensorProto.INT64) -> onnx.ModelProto:
    """A causal single-head attention block as torch exports one: the mask's 0s and the future
    keys get float32's lowest added to their scores. Its scores are large (weights of std 1),
    so -65504 + score rounds apart in float16 where -3.4e38 + score does not."""
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["emb"], name="embed"),
        helper.make_node("MatMul", ["emb", "Wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["emb", "Wk"], ["k"], name="k_proj"),
        helper.make_node("MatMul", ["emb", "Wv"], ["v"], name="v_proj"),
        helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"], name="scores"),
        helper.make_node("Mul", ["qk", "scale"], ["scaled"], name="scale_scores"),
        # allowed[b, i, j] = mask[b, j] and j <= i
        helper.make_node("Shape", ["input_ids"], ["seq_len"], name="seq_len", start=1, end=2),
        helper.make_node("Concat", ["seq_len", "seq_len"], ["square"], name="square", axis=0),
        helper.make_node(
            "ConstantOfShape", ["square"], ["ones"], name="ones", value=numpy_helper.from_array(np.ones(1, np.float32))
        ),
        helper.make_node("Trilu", ["ones"], ["causal"], name="causal", upper=0),
        helper.make_node("Cast", [mask_name], ["key_mask"], name="key_mask", to=f),
        helper.make_node("Unsqueeze", ["key_mask", "axis1"], ["key_mask3"], name="key_mask3"),
        helper.make_node("Mul", ["key_mask3", "causal"], ["allowed"], name="allowed"),
        helper.make_node("Cast", ["allowed"], ["allowed_b"], name="allowed_b", to=TensorProto.BOOL),
        helper.make_node("Where", ["allowed_b", "zero", "lowest"], ["additive"], name="additive"),
        helper.make_node("Add", ["scaled", "additive"], ["masked"], name="mask_scores"),
        helper.make_node("Softmax", ["masked"], ["attn"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["attn", "v"], ["ctx"], name="attend"),
        helper.make_node("MatMul", ["ctx", "Wo"], ["logits"], name="lm_head"),
    ]
    inits = [
        w("E", VOCAB, D),
        w("Wq", D, D),
        w("Wk", D, D),
        w("Wv", D, D),
        w("Wo", D, VOCAB),
        numpy_helper.from_array(np.array(0.25, np.float32), "scale"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(np.array(LOWEST, np.float32), "lowest"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
    ]
    graph = helper.make_graph(
        nodes,
        "attention",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info(mask_name, mask_type, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("logits", f, ["batch", "seq", VOCAB])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def left_padded() -> tuple[np.ndarray, np.ndarray]:
    ids = np.random.default_rng(1).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int64)
    mask = np.ones((BATCH, SEQ), np.int64)
    mask[1, :PAD] = 0
    return ids, mask


def float16_revision(client, model: onnx.ModelProto) -> str:
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_float16"}]})
    assert r.status_code == 200, r.get_json()
    return mid


def run(client, mid: str, body: dict) -> dict:
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def test_padded_positions_are_left_out_of_the_outputs_and_each_nodes_error(client):
    mid = float16_revision(client, attention_block())
    ids, mask = left_padded()
    inputs = {"input_ids": {"npy": npy_blob(client, ids)}, "attention_mask": {"npy": npy_blob(client, mask)}}
    answer = run(client, mid, {"revision": 1, "inputs": inputs, "compare_to": 0, "locate": True})
    logits = np.array(answer["outputs"]["logits"]["values"], np.float64).reshape(BATCH, SEQ, VOCAB)
    plain = run(client, mid, {"revision": 0, "inputs": inputs})
    reference = np.array(plain["outputs"]["logits"]["values"], np.float64).reshape(BATCH, SEQ, VOCAB)
    diff = np.abs(logits - reference)
    real, padded = diff[mask != 0], diff[mask == 0]
    # the fixture shows the QA's case: the padded rows differ far more than float16 rounding
    assert padded.max() > 20 * real.max()

    compared = answer["compare"]
    c = compared["outputs"]["logits"]
    # the numbers are the real tokens' (the old comparison's max_abs was the padded rows')
    assert c["max_abs"] == pytest.approx(real.max(), rel=1e-6)
    assert c["close"] and c["shape"] == [BATCH, SEQ, VOCAB]
    assert c["padded"] == {
        "input": "attention_mask",
        "positions": PAD,
        "values": PAD * VOCAB,
        "max_abs": pytest.approx(padded.max(), rel=1e-6),
    }
    [said] = compared["padding"]
    assert said["input"] == "attention_mask" and said["positions"] == PAD and said["outputs"] == 1
    assert said["max_abs"] == pytest.approx(padded.max(), rel=1e-6)

    # node by node, the same rule: the softmax's fully masked rows no longer lead the ranking
    nodes = {n["name"]: n for n in compared["nodes"]}
    # the scores' rows at the padded queries and columns at the padded keys (named [batch, seq, seq])
    assert nodes["softmax"]["padded"]["values"] == SEQ * SEQ - (SEQ - PAD) ** 2
    worst = max(compared["nodes"], key=lambda n: n["rel_error"] or 0)
    assert worst["rel_error"] < 0.01, worst
    assert said["nodes"] == sum(1 for n in compared["nodes"] if "padded" in n) > 0
    # nodes without the batch and sequence axes (the causal square, the weights' shapes) are whole
    assert "padded" not in nodes["causal"]


def test_expected_outputs_leave_the_padded_positions_out_too(client):
    """A test data set's expected logits (the float model's) against the float16 revision: the
    real tokens' values are compared, the padded rows measured apart, as "compare" does."""
    mid = float16_revision(client, attention_block())
    ids, mask = left_padded()
    inputs = {"input_ids": {"npy": npy_blob(client, ids)}, "attention_mask": {"npy": npy_blob(client, mask)}}
    plain = run(client, mid, {"revision": 0, "inputs": inputs})
    reference = np.array(plain["outputs"]["logits"]["values"], np.float32).reshape(BATCH, SEQ, VOCAB)
    expected = {"logits": {"npy": npy_blob(client, reference)}}
    answer = run(client, mid, {"revision": 1, "inputs": inputs, "expected": expected})
    logits = np.array(answer["outputs"]["logits"]["values"], np.float64).reshape(BATCH, SEQ, VOCAB)
    diff = np.abs(logits - reference)
    real, padded = diff[mask != 0], diff[mask == 0]
    c = answer["expected"]["outputs"]["logits"]
    assert c["max_abs"] == pytest.approx(real.max(), rel=1e-5) and c["close"]
    assert c["padded"]["values"] == PAD * VOCAB
    assert c["padded"]["max_abs"] == pytest.approx(padded.max(), rel=1e-5) and padded.max() > 20 * real.max()
    [said] = answer["expected"]["padding"]
    assert said["input"] == "attention_mask" and said["positions"] == PAD and said["outputs"] == 1
    # without a mask's 0s, every value is compared
    ones = {**inputs, "attention_mask": {"npy": npy_blob(client, np.ones_like(mask))}}
    whole = run(client, mid, {"revision": 1, "inputs": ones, "expected": expected})["expected"]
    assert "padding" not in whole and "padded" not in whole["outputs"]["logits"]


def test_without_padding_nothing_is_left_out(client):
    """A mask of ones, a mask the run made (ones), a mask the model doesn't take as one: every
    value compared, as before."""
    ids, mask = left_padded()
    mid = float16_revision(client, attention_block())
    ones = {
        "input_ids": {"npy": npy_blob(client, ids)},
        "attention_mask": {"npy": npy_blob(client, np.ones_like(mask))},
    }
    made = {"input_ids": {"npy": npy_blob(client, ids)}}
    for inputs in (ones, made):
        compared = run(client, mid, {"revision": 1, "inputs": inputs, "compare_to": 0, "locate": True})["compare"]
        assert "padding" not in compared
        assert not any("padded" in c for c in [*compared["outputs"].values(), *compared["nodes"]])
    # torch's key_padding_mask is True at the padding: not a mask whose 0s pad
    other = float16_revision(client, attention_block("key_padding_mask"))
    inputs = {"input_ids": {"npy": npy_blob(client, ids)}, "key_padding_mask": {"npy": npy_blob(client, mask)}}
    compared = run(client, other, {"revision": 1, "inputs": inputs, "compare_to": 0, "locate": True})["compare"]
    assert "padding" not in compared and "padded" not in compared["outputs"]["logits"]


def test_a_bool_mask_pads_where_false(client):
    mid = float16_revision(client, attention_block(mask_type=TensorProto.BOOL))
    ids, mask = left_padded()
    inputs = {"input_ids": {"npy": npy_blob(client, ids)}, "attention_mask": {"npy": npy_blob(client, mask != 0)}}
    compared = run(client, mid, {"revision": 1, "inputs": inputs, "compare_to": 0})["compare"]
    assert compared["outputs"]["logits"]["padded"]["values"] == PAD * VOCAB
    assert compared["padding"][0]["positions"] == PAD and "nodes" not in compared["padding"][0]


def _mask(seq_dim="seq") -> Mask:
    attended = np.ones((2, 6), bool)
    attended[1, :2] = False
    return Mask("attention_mask", attended, seq_dim, frozenset({seq_dim} if isinstance(seq_dim, str) else ()))


@pytest.mark.parametrize(
    ("shape", "declared", "axes"),
    [
        ((2, 6, 1000), None, [1]),  # logits
        ((2, 6), None, [1]),
        ((2, 4, 6, 64), None, [2]),  # queries, keys, values, heads first
        ((2, 4, 6, 6), None, [2, 3]),  # attention scores: the query's and the key's position
        ((2, 4, 6, 64), ["batch", 4, "seq", 64], [2]),
        ((2, 4, 64, 6), ["batch", 4, 64, "seq"], [3]),  # keys transposed, named
        ((2, 2, 2, 6, 64), ["batch", 2, 2, "seq", 64], [3]),  # grouped keys expanded, named
        ((2, 6, 6, 64), None, []),  # as many heads as tokens, no names: compared whole
        ((2, 6, 6, 64), ["batch", 6, "seq", 64], [2]),  # a fixed 6 is heads
        ((2, 6, 6, 64), ["batch", "seq", 6, 64], [1]),
        ((2, 128), None, []),  # a pooled output
        ((3, 6, 8), None, []),  # another batch
        ((12, 8), None, []),  # batch and sequence flattened
        ((2, 6, 8), ["batch", "past", 8], []),  # another dim of the same size
    ],
)
def test_the_axes_holding_the_masks_positions(shape, declared, axes):
    assert position_axes(shape, declared, _mask()) == axes


def test_a_fixed_length_mask_goes_by_position():
    assert position_axes((2, 6, 8), [2, 6, 8], _mask(6)) == [1]
    assert position_axes((2, 4, 6, 6), [2, 4, 6, 6], _mask(6)) == [2, 3]


def test_compare_arrays_measures_the_attended_values_and_the_padded_apart():
    mask = _mask()
    a = np.zeros((2, 6, 3), np.float32)
    b = a.copy()
    b[1, 0] = 5.0  # a padded position
    b[0, 3] = 0.5  # a real one
    out = compare_arrays(a, b, attended=lambda shape: (mask, np.broadcast_to(mask.attended[:, :, None], shape)))
    assert out["max_abs"] == 0.5 and not out["equal"] and out["shape"] == [2, 6, 3]
    assert out["padded"] == {"input": "attention_mask", "positions": 2, "values": 6, "max_abs": 5.0}
    # nothing padded in the tensor: compared whole, as without a mask
    whole = compare_arrays(a, b, attended=lambda shape: (mask, np.ones(shape, bool)))
    assert whole == compare_arrays(a, b) and whole["max_abs"] == 5.0
