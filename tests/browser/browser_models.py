"""Models the browser tests open, built with onnx.helper at run time (never committed)."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"


def tiny_cnn() -> onnx.ModelProto:
    """Conv -> LeakyRelu -> MaxPool -> GlobalAveragePool -> Reshape(Constant) -> Gemm -> Softmax."""
    rng = np.random.default_rng(0)
    x = h.make_tensor_value_info("input", T.FLOAT, [1, 3, 32, 32])
    y = h.make_tensor_value_info("probs", T.FLOAT, [1, 10])
    inits = [
        nh.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "conv1.weight"),
        nh.from_array(np.zeros(8, np.float32), "conv1.bias"),
        nh.from_array(rng.standard_normal((10, 8)).astype(np.float32), "fc.weight"),
        nh.from_array(np.zeros(10, np.float32), "fc.bias"),
    ]
    nodes = [
        h.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["c1"], name="/features/conv1/Conv",
                    kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        h.make_node("LeakyRelu", ["c1"], ["r1"], name="/features/act1/LeakyRelu", alpha=0.1),
        h.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("GlobalAveragePool", ["p1"], ["g1"], name="gap"),
        h.make_node("Constant", [], ["shape"], name="shape_const",
                    value=nh.from_array(np.array([1, -1], np.int64))),
        h.make_node("Reshape", ["g1", "shape"], ["f1"], name="flatten"),
        h.make_node("Gemm", ["f1", "fc.weight", "fc.bias"], ["logits"], name="/classifier/fc/Gemm", transB=1),
        h.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    value_info = [
        h.make_tensor_value_info("c1", T.FLOAT, [1, 8, 32, 32]),
        h.make_tensor_value_info("r1", T.FLOAT, [1, 8, 32, 32]),
        h.make_tensor_value_info("p1", T.FLOAT, [1, 8, 16, 16]),
        h.make_tensor_value_info("g1", T.FLOAT, [1, 8, 1, 1]),
        h.make_tensor_value_info("f1", T.FLOAT, [1, 8]),
        h.make_tensor_value_info("logits", T.FLOAT, [1, 10]),
    ]
    graph = h.make_graph(nodes, "tiny_cnn", [x], [y], inits, value_info=value_info)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)],
                         producer_name="onnx-studio-tests", producer_version="1.0")
    h.set_model_props(model, {"author": "tests", "license": "MIT"})
    onnx.checker.check_model(model)
    return model


def if_model() -> onnx.ModelProto:
    """Sigmoid + an If whose branches read `x` from the enclosing graph."""
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 3])
    cond = h.make_tensor_value_info("cond", T.BOOL, [])
    y = h.make_tensor_value_info("y", T.FLOAT, [2, 3])
    one = nh.from_array(np.ones((2, 3), np.float32), "one")
    then_g = h.make_graph([h.make_node("Add", ["x", "one"], ["then_y"], name="then_add")], "then_body", [],
                          [h.make_tensor_value_info("then_y", T.FLOAT, [2, 3])], [one])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["n"], name="else_neg"),
                           h.make_node("Relu", ["n"], ["else_y"], name="else_relu")], "else_body", [],
                          [h.make_tensor_value_info("else_y", T.FLOAT, [2, 3])])
    nodes = [h.make_node("Sigmoid", ["x"], ["xs"], name="pre"),
             h.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)]
    graph = h.make_graph(nodes, "if_graph", [x, cond], [y])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def custom_op_with_int64() -> onnx.ModelProto:
    """A node of a custom domain with INT64 extremes no JS number holds exactly."""
    x = h.make_tensor_value_info("x", T.FLOAT, [4])
    y = h.make_tensor_value_info("y", T.FLOAT, [4])
    node = h.make_node("Window", ["x"], ["y"], name="win", domain="com.example",
                       bounds=[-9223372036854775808, 9223372036854775807], label="wide")
    graph = h.make_graph([node], "custom", [x], [y])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.example", 1)])
    onnx.checker.check_model(model)
    return model


def hostile_strings() -> onnx.ModelProto:
    """Markup in every string a page shows: it must come out as text."""
    evil = '<img src=x onerror="window.__pwned=1">'
    x = h.make_tensor_value_info("x" + evil, T.FLOAT, [1])
    y = h.make_tensor_value_info("y", T.FLOAT, [1])
    node = h.make_node("Relu", ["x" + evil], ["y"], name="relu" + evil, doc_string=evil)
    graph = h.make_graph([node], "g" + evil, [x], [y], doc_string=evil)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], doc_string="<script>window.__pwned=2</script>",
                         producer_name=evil)
    h.set_model_props(model, {"note" + evil: evil})
    return model


@functools.lru_cache(maxsize=1)
def official_node_models() -> dict[str, onnx.ModelProto]:
    """name -> model of the official node tests shipped (as code) with the onnx package."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name: c.model for c in collect_testcases(None) if c.model is not None}


def light_model(name: str) -> Path:
    return ONNX_DATA / "light" / f"light_{name}.onnx"
