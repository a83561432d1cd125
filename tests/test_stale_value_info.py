"""An attribute edit that changes shapes, on a model whose value_info stores every intermediate
shape (as exports and our own Shape inference tool leave it): the entries the edit made stale
are re-inferred and said, not a refusal over a hint; the graph's outputs stay its contract."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from testkit import ONNX_DATA, upload


def edit(client, mid, base, *ops):
    return client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": list(ops)})


def stored(client, mid) -> onnx.ModelProto:
    return onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)


def run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def pooled_cnn(output_shape=(1, 4, 1, 1)) -> onnx.ModelProto:
    """x [1,3,16,16] -> Conv 3x3 -> MaxPool 2x2 -> GlobalAveragePool, value_info inferred."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], strides=[1, 1]),
        helper.make_node("GlobalAveragePool", ["p"], ["y"], name="gap"),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, list(output_shape))],
        [w],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(m, strict_mode=True)


def shape_of(model: onnx.ModelProto, name: str) -> list[int]:
    v = next(v for v in model.graph.value_info if v.name == name)
    return [d.dim_value for d in v.type.tensor_type.shape.dim]


def test_two_attributes_in_one_batch_re_infer_what_they_made_stale(client):
    model = pooled_cnn()
    assert shape_of(model, "p") == [1, 4, 15, 15]
    mid = upload(client, model.SerializeToString(), "cnn.onnx").get_json()["id"]
    r = edit(
        client,
        mid,
        0,
        {"op": "set_attribute", "node": "pool", "name": "kernel_shape", "value": [3, 3]},
        {"op": "set_attribute", "node": "pool", "name": "pads", "value": [1, 1, 1, 1]},
        {"op": "set_attribute", "node": "conv", "name": "strides", "value": [2, 2]},
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][-1] == (
        "stored value_info of 'c', 'p' re-inferred: the edit changed their shapes (2 values)"
    )
    # the answer carries the full check's verdict, as GET .../validation does
    assert r.get_json()["validation"]["full"]["ok"] is True
    back = stored(client, mid)
    onnx.checker.check_model(back, full_check=True)
    assert shape_of(back, "c") == [1, 4, 8, 8] and shape_of(back, "p") == [1, 4, 8, 8]
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    (y,) = run(back, {"x": x})
    assert y.shape == (1, 4, 1, 1)


def test_a_real_model_after_shape_inference_takes_a_strides_edit(client):
    model = onnx.load(ONNX_DATA / "light" / "light_squeezenet.onnx")
    model = onnx.shape_inference.infer_shapes(model)
    before = shape_of(model, next(n.output[0] for n in model.graph.node if n.name == "n32"))
    mid = upload(client, model.SerializeToString(), "squeezenet.onnx").get_json()["id"]
    r = edit(client, mid, 0, {"op": "set_attribute", "node": "@n32", "name": "strides", "value": [1, 1]})
    assert r.status_code == 200, r.get_json()
    assert "re-inferred: the edit changed their shapes" in r.get_json()["changes"][-1]
    back = stored(client, mid)
    onnx.checker.check_model(back, full_check=True)
    after = shape_of(back, next(n.output[0] for n in back.graph.node if n.name == "n32"))
    assert before[2:] == [13, 13] and after[2:] == [25, 25]
    x = np.random.default_rng(2).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (y,) = run(back, {"data_0": x})
    assert y.shape == (1, 1000, 1, 1)


def test_an_edit_a_graph_output_contradicts_is_still_refused(client):
    # the output itself is the Conv's: its declared shape is the model's contract, not a hint
    model = pooled_cnn()
    model.graph.output.append(helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, [1, 4, 16, 16]))
    mid = upload(client, model.SerializeToString(), "cnn.onnx").get_json()["id"]
    r = edit(client, mid, 0, {"op": "set_attribute", "node": "conv", "name": "strides", "value": [2, 2]})
    assert r.status_code == 422
    assert "would break shape/type inference" in r.get_json()["error"]["message"]
    assert len(client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]) == 1


def test_an_output_set_with_update_types_keeps_the_shape_asked_and_names_what_fixes_it(client):
    model = onnx.load(ONNX_DATA / "light" / "light_resnet50.onnx")
    mid = upload(client, model.SerializeToString(), "resnet50.onnx").get_json()["id"]
    r = edit(
        client,
        mid,
        0,
        {"op": "set_io_shape", "name": "gpu_0/data_0", "shape": ["batch", 3, 224, 224]},
        {"op": "set_io_shape", "name": "gpu_0/softmax_1", "shape": ["batch", 1000], "update_types": True},
    )
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][1]
    assert line.startswith(
        "'gpu_0/softmax_1' is now FLOAT ⟨batch×1000⟩; 0 output shapes updated; inference still gives"
    )
    assert "; inference still gives 'gpu_0/softmax_1' as FLOAT ⟨1×1000⟩; still hard-coded (dim 0 = 1)" in line
    assert "Reshape" in line
    out = stored(client, mid).graph.output[0]
    assert [d.dim_param or d.dim_value for d in out.type.tensor_type.shape.dim] == ["batch", 1000]


def test_an_input_made_dynamic_without_update_types_says_what_value_info_still_pins(client):
    model = pooled_cnn()
    mid = upload(client, model.SerializeToString(), "cnn.onnx").get_json()["id"]
    op = {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 16, 16], "update_types": False}
    r = edit(client, mid, 0, op)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith(
        "; 2 stored value_info entries still give the sizes before and output 'y' still declares the size before"
        " (update_types re-infers them)"
    )
    r = edit(client, mid, 1, {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 16, 16], "update_types": True})
    assert r.status_code == 200, r.get_json()
    c = next(v for v in stored(client, mid).graph.value_info if v.name == "c")
    assert c.type.tensor_type.shape.dim[0].dim_param == "batch"


def test_an_input_made_dynamic_re_infers_what_contradicts_it_unless_told_not_to(client):
    """Left out, update_types is done where value_info pins the old sizes (QA14 #2: stale sizes
    made onnxruntime's fused Reshape fail at batch 3 on a model every check passed)."""
    model = pooled_cnn()
    mid = upload(client, model.SerializeToString(), "cnn.onnx").get_json()["id"]
    r = edit(client, mid, 0, {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 16, 16]})
    assert r.status_code == 200, r.get_json()
    assert "; value_info re-inferred (2 of 2 entries changed, 0 dropped)" in r.get_json()["changes"][0]
    back = stored(client, mid)
    c = next(v for v in back.graph.value_info if v.name == "c")
    assert c.type.tensor_type.shape.dim[0].dim_param == "batch"
    assert back.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    # nothing contradicts a size given back as a number: nothing re-inferred, nothing said
    r = edit(client, mid, 1, {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 16, 16], "dtype": "FLOAT"})
    assert r.get_json().get("unchanged") is True


def test_an_output_still_declaring_the_old_size_is_said_and_re_inferred_by_default(client):
    """No value_info, the output declared [1, 8]: update_types false said nothing of it (QA16 #6),
    and left out it was not re-inferred."""
    model = pooled_cnn()
    del model.graph.value_info[:]
    mid = upload(client, model.SerializeToString(), "cnn.onnx").get_json()["id"]
    out = model.graph.output[0].name
    op = {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 16, 16], "update_types": False}
    r = edit(client, mid, 0, op)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith(
        f"; output '{out}' still declares the size before (update_types re-infers them)"
    )
    r = edit(client, mid, 1, {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 16, 16]})
    assert r.get_json().get("unchanged") is True  # the same dims: nothing new to re-infer for
    r = client.post(f"/api/models/{mid}/undo", json={"base": 1})
    r = edit(client, mid, 0, {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 16, 16]})
    assert r.status_code == 200, r.get_json()
    declared = stored(client, mid).graph.output[0].type.tensor_type.shape.dim[0]
    assert declared.dim_param == "batch", r.get_json()["changes"]


def test_a_resolution_change_says_once_what_became_of_value_info(client):
    """QA17 F10: with update_types false the change line said value_info "still give the sizes
    before", then the gate re-inferred them (they broke strict inference) and said so too."""
    mid = upload(client, pooled_cnn().SerializeToString(), "cnn.onnx").get_json()["id"]
    op = {"op": "set_io_shape", "name": "x", "shape": [1, 3, 32, 32], "update_types": False}
    r = edit(client, mid, 0, op)
    assert r.status_code == 200, r.get_json()
    changes = r.get_json()["changes"]
    assert not any("still give the sizes before" in c for c in changes), changes
    assert "re-inferred" in changes[-1], changes
