"""fix_dims: a named dim given a size on every input naming it, each input's other dims kept
(QA27: "batch -> 1" recorded as a whole shape set the next export's 64×64 input to 32×32)."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper
from test_recipes import apply
from testkit import upload


def image_model(side: int) -> bytes:
    """x [batch, 3, side, side] and a mask [batch, 1]: GlobalAveragePool, times the mask, y."""
    nodes = [
        helper.make_node("GlobalAveragePool", ["x"], ["p"], name="gap"),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("Mul", ["f", "mask"], ["y"], name="mul"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, side, side]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def shapes(data: bytes) -> dict:
    model = onnx.load_from_string(data)
    return {
        v.name: [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim]
        for v in [*model.graph.input, *model.graph.output]
    }


def test_a_named_dim_takes_its_size_on_every_input_and_the_outputs(client):
    mid = upload(client, image_model(32)).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "fix_dims", "dims": {"batch": 1}}]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].startswith(
        "fixed batch = 1: 'x' is now FLOAT ⟨1×3×32×32⟩; 'mask' is now FLOAT ⟨1×1⟩"
    )
    data = client.get(f"/api/models/{mid}/download").data
    assert shapes(data) == {"x": [1, 3, 32, 32], "mask": [1, 1], "y": [1, 3]}
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)


def test_outputs_sized_by_names_inference_made_up_take_their_sizes(client):
    """QA43 #2: a tf2onnx export declares its output [unk__313, unk__314, 85]; with every input
    dim fixed, Make static left it ?×?×85 (no input named those dims, so nothing re-inferred)."""
    import numpy as np
    from onnx import numpy_helper

    shape = numpy_helper.from_array(np.array([0, -1, 3], np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="heads")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["unk__312", "height", "width", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["unk__313", "unk__314", 3])],
        [shape],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    dims = {"unk__312": 1, "height": 4, "width": 5}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "fix_dims", "dims": dims}]})
    assert r.status_code == 200, r.get_json()
    data = client.get(f"/api/models/{mid}/download").data
    assert shapes(data) == {"x": [1, 4, 5, 3], "y": [1, 20, 3]}
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)


def test_a_dim_no_input_names_is_refused_naming_those_they_do(client):
    mid = upload(client, image_model(32)).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "fix_dims", "dims": {"bach": 1}}]})
    assert r.status_code == 400  # a dim the model lacks, named in the body (docs/api.md: statuses)
    assert r.get_json()["error"]["message"] == (
        "op #1 (fix_dims): no input of the graph names a dim 'bach' (did you mean 'batch'?)"
    )
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "fix_dims", "dims": {"batch": -1}}]})
    assert r.status_code == 400


def test_replayed_on_an_export_at_another_size_it_keeps_that_size(client, tmp_path):
    mid = upload(client, image_model(32)).get_json()["id"]
    assert (
        client.post(
            f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "fix_dims", "dims": {"batch": 1}}]}
        ).status_code
        == 200
    )
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, image_model(64), recipe)
    assert run.returncode == 0, run.stderr
    assert shapes((tmp_path / "out.onnx").read_bytes()) == {"x": [1, 3, 64, 64], "mask": [1, 1], "y": [1, 3]}
