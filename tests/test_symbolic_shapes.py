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


def test_an_unnamed_input_dim_is_carried_through_by_its_input_and_axis():
    """A dim the model leaves without size or name ([?, 4], PaddlePaddle's -1 and "?") is named
    as a person gives its size, "x[0]": onnx's inference carries that one name through the graph
    where it invented one per node (unk__0, unk__1, … for the same batch). The model's own
    inputs stay as declared."""
    import onnx

    from app.onnx_io.inference import inferred_model

    graph = helper.make_graph(
        [
            helper.make_node("ReduceSumSquare", ["x"], ["sq"], keepdims=1, axes=[1]),
            helper.make_node("Mul", ["sq", "sq"], ["sq2"]),
            helper.make_node("Relu", ["y"], ["ry"]),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, "?", 2]),
        ],
        [
            helper.make_tensor_value_info("sq2", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("ry", TensorProto.FLOAT, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    before = model.SerializeToString()
    inferred = inferred_model(model)
    assert inferred is not None
    shapes = {
        v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*inferred.graph.value_info, *inferred.graph.output]
    }
    assert shapes["sq"] == ["x[0]", 1] and shapes["sq2"] == ["x[0]", 1]
    assert shapes["ry"] == ["y[0]", "y[1]", 2]
    assert model.SerializeToString() == before  # the model itself untouched
    assert onnx.helper.printable_type(model.graph.input[0].type) == "FLOAT, ?x4"
