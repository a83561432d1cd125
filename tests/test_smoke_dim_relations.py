"""The smoke run of a decoder with a cache: its attention mask must be as long as the past and the
new tokens together, which no size shared by every dynamic dim gives (torch's exporters name the
three dims apart: s53 = s15 + s70, or total_seq). It runs with one dim one bigger than the
others, and again with those sizes doubled (QA19: every KV-cache export showed a red ✗ or
"ran out of memory" after ~10 s of bigger tries)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

from app.onnx_io.runtime_check import check_model


def cached_decoder(mask_dims: tuple[str, str] = ("s43", "s53")) -> onnx.ModelProto:
    """x [s25, s70, 4] joins the cache past [s25, s15, 4]; the mask [s43, s53] is concatenated
    beside the joined keys, so it must be exactly s15 + s70 long (and s43 = s25)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["s25", "s70", 4])
    past = helper.make_tensor_value_info("past", TensorProto.FLOAT, ["s25", "s15", 4])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, list(mask_dims))
    present = helper.make_tensor_value_info("present", TensorProto.FLOAT, ["s25", "s15 + s70", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["s25", "s15 + s70", 5])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [-1])
    nodes = [
        helper.make_node("Concat", ["past", "x"], ["present"], name="cache", axis=1),
        helper.make_node("Unsqueeze", ["attention_mask", "axes"], ["m3"], name="mask3"),
        helper.make_node("Concat", ["present", "m3"], ["y"], name="with_mask", axis=2),
    ]
    graph = helper.make_graph(nodes, "decoder", [x, past, mask], [y, present], [axes])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_mask_as_long_as_the_past_and_the_tokens_runs():
    verdict = check_model(cached_decoder())

    assert verdict["status"] == "ok", verdict
    assert verdict["sizes"] == {"s15": 1, "s25": 1, "s43": 1, "s53": 2, "s70": 1}
    other = verdict["other_size"]
    assert other["status"] == "ok", other
    assert other["at"] == "s15, s25, s43, s70 at 2 and s53 at 4"
    assert "declared_mismatches" not in verdict and "declared_mismatches" not in other


def test_the_legacy_exporters_names_run_too():
    verdict = check_model(cached_decoder(("batch", "total_seq")))

    assert verdict["status"] == "ok", verdict
    assert verdict["sizes"]["total_seq"] == 2


def test_an_edit_of_such_a_decoder_is_gated_on_those_sizes(client):
    mid = upload(client, cached_decoder().SerializeToString()).get_json()["id"]
    runtime = client.get(f"/api/models/{mid}/validation").get_json()["runtime"]
    assert runtime["status"] == "ok" and runtime["other_size"]["status"] == "ok", runtime

    renamed = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "rename_tensor", "from": "y", "to": "scores"}]}
    )
    assert renamed.status_code == 200, renamed.get_json()
    assert renamed.get_json()["validation"]["runtime"]["status"] == "ok"

    # the mask's own batch fixed at 3: at the smoke run's sizes nothing runs any more
    broken = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 1, "ops": [{"op": "set_io_shape", "name": "attention_mask", "shape": [3, "s53"]}]},
    )
    assert broken.status_code == 422, broken.get_json()
    assert "onnxruntime can't run the edited model" in broken.get_json()["error"]["message"]


def sized_reshape() -> onnx.ModelProto:
    """y = Reshape(relu(x), [batch, 2·seq, 4]), the sizes computed from Shape(x): a part cut out
    between `a` and `y` takes them as INT64 tensors `b` and `c`, which no made-up integer fits."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None, 4])
    consts = [
        helper.make_tensor(name, TensorProto.INT64, [1], [v])
        for name, v in (("zero", 0), ("one", 1), ("two", 2), ("four", 4))
    ]
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Shape", ["x"], ["shp"], name="shape"),
        helper.make_node("Slice", ["shp", "zero", "one"], ["b"], name="batch_of"),
        helper.make_node("Slice", ["shp", "one", "two"], ["s"], name="seq_of"),
        helper.make_node("Mul", ["s", "two"], ["c"], name="twice"),
        helper.make_node("Concat", ["b", "c", "four"], ["new_shape"], name="sizes", axis=0),
        helper.make_node("Reshape", ["a", "new_shape"], ["y"], name="reshape"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_part_cut_out_is_fed_the_values_its_model_computes(client):
    """QA19 F6: a decoder layer extracted with its batch and sequence sizes as inputs was refused
    ("runs at 1 but no longer at 2") though right. The smoke run feeds it what the model it was
    cut from computes on the same made-up inputs; an edit of the part is gated on those too."""
    mid = upload(client, sized_reshape().SerializeToString()).get_json()["id"]
    extract = {"op": "extract_subgraph", "inputs": ["a", "b", "c"], "outputs": ["y"]}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [extract]})
    assert r.status_code == 200, r.get_json()
    runtime = r.get_json()["validation"]["runtime"]
    assert runtime["status"] == "ok" and runtime["fed"] == ["a", "b", "c"] and runtime["fed_from"] == 0, runtime
    assert runtime["other_size"]["status"] == "ok", runtime

    # the part edited again: its inputs are still fed from revision 0
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "rename_tensor", "from": "y", "to": "out"}]}
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["fed_from"] == 0

    # a wrong edit of the part is still refused: the reshape's size no longer fits
    bad = {"op": "set_initializer", "name": "four", "value": {"dtype": "INT64", "shape": [1], "values": [3]}}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 2, "ops": [bad]})
    assert r.status_code == 422, r.get_json()
    assert "onnxruntime can't run the edited model" in r.get_json()["error"]["message"]


def test_a_part_made_up_values_refuse_says_so_without_its_model(client):
    """The same part uploaded alone: nothing computes its sizes, its verdict is on made-up values."""
    part = onnx.utils.Extractor(onnx.shape_inference.infer_shapes(sized_reshape())).extract_model(
        ["a", "b", "c"], ["y"]
    )
    mid = upload(client, part.SerializeToString()).get_json()["id"]
    runtime = client.get(f"/api/models/{mid}/validation").get_json()["runtime"]
    assert runtime["status"] == "fails" and runtime["guessed"], runtime
    assert "fed" not in runtime


def fixed_pool_cnn() -> onnx.ModelProto:
    """A 3x3 Conv without padding, a fixed 30x30 AveragePool and a Reshape to [1, 4] (a
    classifier's flatten): it runs at 32x32, as exported, and nowhere the smoke run used to try
    (at 1 the conv's output would be negative; at 2 to 512 the reshape doesn't fit)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    flat = numpy_helper.from_array(np.array([1, 4], np.int64), "flat")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
        helper.make_node("AveragePool", ["c"], ["p"], name="pool", kernel_shape=[30, 30]),
        helper.make_node("Reshape", ["p", "flat"], ["y"], name="flatten"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], [w, flat])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_dims_made_dynamic_are_run_at_the_sizes_the_model_had(client):
    """QA17 F15: an image's 224x224 made height x width was refused ("AveragePool: output dimension
    is negative"; a SqueezeNet crashed): the smoke run tried every dynamic dim at 1 first. It tries
    the sizes the model fixed before, and the next edits the sizes that ran."""
    mid = upload(client, fixed_pool_cnn().SerializeToString()).get_json()["id"]
    dynamic = {"op": "set_io_shape", "name": "x", "shape": [1, 3, "height", "width"]}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [dynamic]})
    assert r.status_code == 200, r.get_json()
    runtime = r.get_json()["validation"]["runtime"]
    assert runtime["status"] == "ok" and runtime["sizes"] == {"height": 32, "width": 32}, runtime

    rename = {"op": "rename_tensor", "from": "y", "to": "pooled"}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [rename]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["sizes"] == {"height": 32, "width": 32}
