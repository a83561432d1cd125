"""onnxruntime's symbolic shape inference (app/onnx_io/inference.py) leaves nothing behind."""

from __future__ import annotations

import os

from onnx import TensorProto, helper

from app.onnx_io.inference import symbolic_shapes


def test_an_inference_that_falls_short_writes_nothing_where_it_runs(tmp_path, monkeypatch):
    # past an op it doesn't know, onnxruntime's inference saves sym_shape_infer_temp.onnx (and
    # the model's data, as external files) in the working directory: the server's, or the
    # person's for `onnx-studio apply`; concurrent ones would overwrite each other's
    graph = helper.make_graph(
        [helper.make_node("Bar", ["x"], ["y"], domain="com.example"), helper.make_node("Relu", ["y"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    monkeypatch.chdir(tmp_path)
    assert symbolic_shapes(model, 10.0) is None  # incomplete: onnx's names stand
    assert os.listdir(tmp_path) == []
    assert os.getcwd() == str(tmp_path)

    # and where it completes, the inferred model comes back as before
    model.graph.node[0].CopyFrom(helper.make_node("Neg", ["x"], ["y"]))
    inferred = symbolic_shapes(model, 10.0)
    assert inferred is not None
    dims = [d.dim_param or d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]
    assert dims == ["n", 3]
    assert os.listdir(tmp_path) == []
