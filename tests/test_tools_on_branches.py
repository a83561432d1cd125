"""The model tools on a merged decoder (QA31 #3–#6): the main graph is one If whose branches read
every weight from the main graph's initializers. Dynamic quantization quantizes the MatMuls of
both branches; static quantization, which onnxruntime does on the main graph only, says so; the
weight check lists the branches' weights; float16 keeps float32 inputs and outputs with both
branches running; extract_subgraph keeps the weights the branches read; simplify's line says
what went (a branch a constant condition doesn't take) and what grew (a tied weight folded into
each branch)."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from merged_decoder import PAST, PAST_ENCODER, decoder_feeds, merged_decoder
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import npy_blob, upload

ORIGINAL = merged_decoder().SerializeToString()
INPUTS = ["encoder_hidden_states", "input_ids", *PAST, *PAST_ENCODER, "use_cache_branch"]
WEIGHTS = {t.name for t in merged_decoder().graph.initializer}


def edit(client, ops: list[dict]):
    mid = upload(client, ORIGINAL).get_json()["id"]
    return mid, client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})


def stored(client, mid: str, answer) -> onnx.ModelProto:
    assert answer.status_code == 200, answer.get_json()
    data = client.get(f"/api/models/{mid}/download?revision={answer.get_json()['revision']}").data
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model, full_check=True)
    return model


def branches(model: onnx.ModelProto) -> dict[str, onnx.GraphProto]:
    node = next(n for n in model.graph.node if n.op_type == "If")
    return {a.name: a.g for a in node.attribute}


def outputs(model: onnx.ModelProto | bytes, use_cache: bool) -> list[np.ndarray]:
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, decoder_feeds(use_cache))


@pytest.mark.parametrize("use_cache", [True, False])
def test_dynamic_quantization_quantizes_the_matmuls_of_both_branches(client, use_cache):
    mid, r = edit(client, [{"op": "quantize_dynamic"}])
    model = stored(client, mid, r)
    integer = {name: sum(n.op_type == "MatMulInteger" for n in g.node) for name, g in branches(model).items()}
    # every MatMul reading a weight: q, k, v, out of both attentions, without the cache; with it
    # the cross-attention's k and v come from the cache
    assert integer == {"then_branch": 6, "else_branch": 8}
    assert "14 MatMul/Conv node(s) now integer (14 of them inside If/Loop bodies)" in r.get_json()["changes"][0]
    for got, want in zip(outputs(model, use_cache), outputs(ORIGINAL, use_cache), strict=True):
        np.testing.assert_allclose(got, want, atol=0.05)


def test_static_quantization_says_it_leaves_weights_read_inside_branches(client):
    calibration = {name: {"npy": npy_blob(client, arr)} for name, arr in decoder_feeds(True).items()}
    _, r = edit(client, [{"op": "quantize_static", "calibration": calibration}])
    assert r.status_code == 400, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "the 24 MatMul node(s) it would quantize are inside If/Loop bodies" in message
    assert "weights read only inside If/Loop branches aren't quantized statically by onnxruntime" in message
    assert "none of the operators asked for" not in message


def matmul_then_if() -> onnx.ModelProto:
    """y = x·w in the main graph, then an If on `flag`: y·w2 (w2 a main-graph initializer) or y."""
    rng = np.random.default_rng(0)
    weights = [nh.from_array(rng.standard_normal((8, 8)).astype(np.float32), n) for n in ("w", "w2")]
    out = h.make_tensor_value_info("z_then", T.FLOAT, None)
    then = h.make_graph([h.make_node("MatMul", ["y", "w2"], ["z_then"], name="inner")], "then", [], [out])
    other = h.make_graph(
        [h.make_node("Identity", ["y"], ["z_else"])], "else", [], [h.make_tensor_value_info("z_else", T.FLOAT, None)]
    )
    nodes = [
        h.make_node("MatMul", ["x", "w"], ["y"], name="outer"),
        h.make_node("If", ["flag"], ["z"], name="if", then_branch=then, else_branch=other),
    ]
    inputs = [h.make_tensor_value_info("x", T.FLOAT, [4, 8]), h.make_tensor_value_info("flag", T.BOOL, [])]
    graph = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("z", T.FLOAT, [4, 8])], weights)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_static_quantization_says_what_it_left_in_float_inside_branches(client):
    mid = upload(client, matmul_then_if().SerializeToString()).get_json()["id"]
    x = np.random.default_rng(1).standard_normal((3, 4, 8)).astype(np.float32)
    calibration = {"x": {"npy": npy_blob(client, x)}, "flag": {"npy": npy_blob(client, np.array([True, False, True]))}}
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_static", "calibration": calibration}]}
    )
    model = stored(client, mid, r)
    assert "DequantizeLinear" in [n.op_type for n in model.graph.node]  # the main graph's MatMul
    assert (
        "; left in float: 1 MatMul node(s) inside If/Loop bodies, which onnxruntime's static quantization doesn't "
        "enter: weights read only inside If/Loop branches aren't quantized statically by onnxruntime"
    ) in r.get_json()["changes"][0]


def test_the_weight_check_lists_the_weights_the_branches_read(client):
    mid = upload(client, ORIGINAL).get_json()["id"]
    r = client.get(f"/api/models/{mid}/weight-ranges?bits=8")
    assert r.status_code == 200, r.get_json()
    found = {w["tensor"]: {n["node"].rsplit("/", 1)[0] for n in w["nodes"]} for w in r.get_json()["weights"]}
    assert set(found) == WEIGHTS
    both = {"n0/then_branch", "n0/else_branch"}
    assert found["model.decoder.embed_tokens.weight"] == both  # the Gather of each branch
    assert found["model.decoder.layers.0.self_attn.q_proj.weight"] == both
    assert found["model.decoder.layers.0.encoder_attn.k_proj.weight"] == {"n0/else_branch"}  # cached in then


@pytest.mark.parametrize("use_cache", [True, False])
def test_float16_keeping_float32_inputs_and_outputs_runs_both_branches(client, use_cache):
    mid, r = edit(client, [{"op": "convert_float16"}])  # keep_io_types: true by default
    model = stored(client, mid, r)
    assert {t.data_type for t in model.graph.initializer} == {T.FLOAT16}
    io = [*model.graph.input, *model.graph.output]
    assert {v.name: v.type.tensor_type.elem_type for v in io if v.name not in ("input_ids", "use_cache_branch")} == {
        v.name: T.FLOAT for v in io if v.name not in ("input_ids", "use_cache_branch")
    }
    # the inputs' Casts, which only the branches read, come before the If
    order = [n.op_type for n in model.graph.node]
    assert order[:6] == ["Cast"] * 5 + ["If"]
    got, want = outputs(model, use_cache), outputs(ORIGINAL, use_cache)
    assert all(x.dtype == np.float32 for x in got)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, atol=5e-3)


def test_extracting_the_whole_decoder_keeps_the_weights_its_branches_read(client):
    mid, r = edit(client, [{"op": "extract_subgraph", "inputs": INPUTS, "outputs": ["logits"]}])
    model = stored(client, mid, r)
    assert {t.name for t in model.graph.initializer} == WEIGHTS
    for use_cache in (True, False):
        np.testing.assert_array_equal(outputs(model, use_cache)[0], outputs(ORIGINAL, use_cache)[0])
    # after float16, what the branches read is a node's output: the Casts of the inputs stay too
    mid, r = edit(
        client, [{"op": "convert_float16"}, {"op": "extract_subgraph", "inputs": INPUTS, "outputs": ["logits"]}]
    )
    model = stored(client, mid, r)
    assert {"encoder_hidden_states", *PAST, *PAST_ENCODER} <= {
        n.input[0] for n in model.graph.node if n.op_type == "Cast"
    }
    np.testing.assert_allclose(outputs(model, True)[0], outputs(ORIGINAL, True)[0], atol=5e-3)


def test_simplify_says_a_branch_went_with_its_condition_not_that_it_was_written_out(client):
    freeze = {
        "op": "freeze_input",
        "name": "use_cache_branch",
        "value": {"dtype": "BOOL", "shape": [1], "values": [True]},
    }
    mid, r = edit(client, [freeze, {"op": "simplify"}])
    model = stored(client, mid, r)
    line = r.get_json()["changes"][-1]
    assert "If" not in [n.op_type for n in model.graph.node]  # the with-cache branch in its place
    # the else branch's Softmaxes went with it; the then branch's are still here
    assert [n.op_type for n in model.graph.node].count("Softmax") == 2
    assert "as their function bodies" not in line
    assert "1 If node gone, each replaced by the branch its constant condition takes" in line
    feeds = decoder_feeds(True)
    del feeds["use_cache_branch"]
    got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_allclose(got[0], outputs(ORIGINAL, True)[0], atol=1e-5)


def test_simplify_says_the_weights_grew_where_a_tied_weight_is_folded_into_each_branch(client):
    mid, r = edit(client, [{"op": "simplify"}])
    model = stored(client, mid, r)
    folded = "/proj_out/Transpose_output_0"  # the tied embedding transposed for the lm_head
    held = [g for g in branches(model).values() if any(t.name == folded for t in g.initializer)]
    assert len(held) == 2
    line = r.get_json()["changes"][0]
    grew = re.search(r"the weights grew by ([\d.]+) KiB \(([\d.]+) KiB -> ([\d.]+) KiB\)", line)
    assert grew, line
    assert float(grew.group(1)) == pytest.approx(2 * 50 * 32 * 4 / 1024, abs=0.1)  # two [32,50] float copies
    assert f"'{folded}' 6.2 KiB in each of 2 If/Loop bodies" in line


def test_cleanup_drops_an_if_output_nothing_reads_and_what_both_branches_computed_for_it(client):
    """QA32 (#13 of QA31): after remove_output present.0.encoder.value, cleanup said "nothing
    changed" while both branches still computed it."""
    gone = "present.0.encoder.value"
    mid, r = edit(client, [{"op": "remove_output", "name": gone}, {"op": "cleanup"}])
    model = stored(client, mid, r)
    node = next(n for n in model.graph.node if n.op_type == "If")
    assert gone not in node.output and len(node.output) == 4
    assert all(len(b.output) == 4 for b in branches(model).values())
    assert "1 If output nothing read" in r.get_json()["changes"][-1], r.get_json()["changes"]
    # what each branch computed only for it goes (the attention still reads the values)
    for name, body in branches(model).items():
        assert not [n.name for n in body.node if n.name.startswith("present.0.encoder.value")], name
    for use_cache in (True, False):
        want = dict(zip([o.name for o in merged_decoder().graph.output], outputs(ORIGINAL, use_cache), strict=True))
        got = dict(zip([o.name for o in model.graph.output], outputs(model, use_cache), strict=True))
        assert set(got) == set(want) - {gone}
        for name, value in got.items():
            np.testing.assert_array_equal(value, want[name])


def _branch_passing_on_an_embedding() -> onnx.ModelProto:
    """e = Gather(table, ids) in the main graph; If(flag): then MatMul(e, w), else Identity(e)."""
    rng = np.random.default_rng(0)
    table = nh.from_array(rng.standard_normal((50, 16)).astype(np.float32), "table")
    w = nh.from_array(rng.standard_normal((16, 16)).astype(np.float32), "w")
    out = lambda n: h.make_tensor_value_info(n, T.FLOAT, None)  # noqa: E731
    then = h.make_graph([h.make_node("MatMul", ["e", "w"], ["t"], name="proj")], "then", [], [out("t")])
    other = h.make_graph([h.make_node("Identity", ["e"], ["o"], name="keep")], "else", [], [out("o")])
    graph = h.make_graph(
        [
            h.make_node("Gather", ["table", "ids"], ["e"], name="embed/Gather"),
            h.make_node("If", ["flag"], ["hidden"], name="pick", then_branch=then, else_branch=other),
        ],
        "g",
        [h.make_tensor_value_info("ids", T.INT64, ["batch", "seq"]), h.make_tensor_value_info("flag", T.BOOL, [])],
        [h.make_tensor_value_info("hidden", T.FLOAT, ["batch", "seq", 16])],
        [table, w],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_dynamic_quantization_keeps_a_gather_a_branch_reads_in_float(client):
    """QA32 N5: onnxruntime's quantizer made the embedding's output quantized and dequantized it
    for the main graph's readers only: the else branch's Identity read a tensor gone, and the
    edit failed with "Invalid model with unknown initializers/tensors {'e'}"."""
    source = _branch_passing_on_an_embedding()
    mid = upload(client, source.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_dynamic"}]})
    model = stored(client, mid, r)
    line = r.get_json()["changes"][0]
    assert "1 MatMul/Conv node(s) now integer (1 of them inside If/Loop bodies)" in line
    assert line.endswith(
        "; kept float: Gather 'embed/Gather', whose output an If/Loop body reads (onnxruntime's quantizer can't"
        " hand it on quantized)"
    )
    ids = np.array([[1, 7, 3]], np.int64)
    for flag in (True, False):
        feeds = {"ids": ids, "flag": np.array(flag)}
        got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        want = ort.InferenceSession(source.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        np.testing.assert_allclose(got[0], want[0], atol=0.1 if flag else 0)


def test_an_input_a_frozen_flag_leaves_unread_is_offered_and_removed_by_cleanup(client):
    """QA45 #9: the merged decoder frozen to its cache branch and simplified still takes
    encoder_hidden_states, which nothing reads; Clean up said "nothing changed". The summary
    names it, cleanup says it keeps it, and with unread_inputs removes it: the result runs
    without it, its outputs those of the cache branch."""
    freeze = {
        "op": "freeze_input",
        "name": "use_cache_branch",
        "value": {"dtype": "BOOL", "shape": [1], "values": [True]},
    }
    mid, r = edit(client, [freeze, {"op": "simplify"}])
    head = r.get_json()["revision"]
    assert client.get(f"/api/models/{mid}").get_json()["unread_inputs"] == ["encoder_hidden_states"]
    kept = client.post(f"/api/models/{mid}/edits", json={"base": head, "ops": [{"op": "cleanup"}]}).get_json()
    assert kept["unchanged"] and kept["notes"] == [
        "cleanup: 1 graph input nothing reads kept ('encoder_hidden_states'): unread_inputs removes them"
    ], kept
    gone = client.post(
        f"/api/models/{mid}/edits", json={"base": head, "ops": [{"op": "cleanup", "unread_inputs": True}]}
    )
    model = stored(client, mid, gone)
    assert "1 graph input nothing read ('encoder_hidden_states')" in gone.get_json()["changes"][-1]
    assert "encoder_hidden_states" not in [i.name for i in model.graph.input]
    assert client.get(f"/api/models/{mid}").get_json()["unread_inputs"] == []
    feeds = decoder_feeds(True)
    want = outputs(ORIGINAL, True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {i.name: feeds[i.name] for i in model.graph.input})
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_shape_inference_names_the_dims_inside_the_branches(client):
    """QA45 #6: after Shape inference a merged decoder's branch values read ?×?×256 (onnx's
    unk__N: its inference stops at a Reshape of computed sizes, and merges no broadcast dims);
    onnxruntime's symbolic inference names them in terms of the inputs' dims, in the branches
    as in the main graph, each branch's values by its own graph (both branches name theirs alike)."""
    mid, r = edit(client, [{"op": "infer_shapes"}])
    model = stored(client, mid, r)
    for name, body in branches(model).items():
        dims = {vi.name: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in body.value_info}
        unnamed = {n: d for n, d in dims.items() if any(str(x).startswith("unk__") for x in d)}
        assert not unnamed, (name, unnamed)
        assert dims["/model/decoder/layers.0/self_attn/Reshape_output_0"] == [
            "batch_size",
            "decoder_sequence_length",
            2,
            16,
        ], name
