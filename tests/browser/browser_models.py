"""Models the browser tests open, built with onnx.helper at run time (never committed)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import node_testcases

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"


def tiny_cnn(omit_value_info: tuple[str, ...] = ()) -> onnx.ModelProto:
    """Conv -> LeakyRelu -> MaxPool -> GlobalAveragePool -> Reshape(Constant) -> Gemm -> Softmax.
    `omit_value_info`: names whose value_info entry is left out (so an edit may change their shape)."""
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
        h.make_node(
            "Conv",
            ["input", "conv1.weight", "conv1.bias"],
            ["c1"],
            name="/features/conv1/Conv",
            kernel_shape=[3, 3],
            pads=[1, 1, 1, 1],
            strides=[1, 1],
        ),
        h.make_node("LeakyRelu", ["c1"], ["r1"], name="/features/act1/LeakyRelu", alpha=0.1),
        h.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("GlobalAveragePool", ["p1"], ["g1"], name="gap"),
        h.make_node("Constant", [], ["shape"], name="shape_const", value=nh.from_array(np.array([1, -1], np.int64))),
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
    value_info = [v for v in value_info if v.name not in omit_value_info]
    graph = h.make_graph(nodes, "tiny_cnn", [x], [y], inits, value_info=value_info)
    model = h.make_model(
        graph, opset_imports=[h.make_opsetid("", 17)], producer_name="onnx-studio-tests", producer_version="1.0"
    )
    h.set_model_props(model, {"author": "tests", "license": "MIT"})
    onnx.checker.check_model(model)
    return model


def position_slice_model() -> onnx.ModelProto:
    """x: float[batch, seq, 32]. A torch export's position-embedding pattern: the table (a
    Constant, 32 KB: the store takes its data out of the graph) sliced to the input's length,
    read off Shape -> Gather -> Unsqueeze, then MatMul and Add. onnx's own inference leaves the
    slice's length unknown even with every input dim a number."""
    consts = {
        "one": np.array(1, np.int64),
        "ax0": np.array([0], np.int64),
        "start": np.array([0], np.int64),
        "pos": np.ones((512, 16), np.float32),
    }
    nodes = [
        *(h.make_node("Constant", [], [k], name=k, value=nh.from_array(v)) for k, v in consts.items()),
        h.make_node("Shape", ["x"], ["s"], name="shape"),
        h.make_node("Gather", ["s", "one"], ["seq"], name="gather", axis=0),
        h.make_node("Unsqueeze", ["seq", "ax0"], ["end"], name="unsqueeze"),
        h.make_node("Slice", ["pos", "start", "end", "ax0"], ["p"], name="slice"),
        h.make_node("MatMul", ["p", "w"], ["z"], name="mm"),
        h.make_node("Add", ["x", "z"], ["y"], name="add"),
    ]
    graph = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 32])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [nh.from_array(np.ones((16, 32), np.float32), "w")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def if_model() -> onnx.ModelProto:
    """Sigmoid + an If whose branches read `x` from the enclosing graph."""
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 3])
    cond = h.make_tensor_value_info("cond", T.BOOL, [])
    y = h.make_tensor_value_info("y", T.FLOAT, [2, 3])
    one = nh.from_array(np.ones((2, 3), np.float32), "one")
    then_g = h.make_graph(
        [h.make_node("Add", ["x", "one"], ["then_y"], name="then_add")],
        "then_body",
        [],
        [h.make_tensor_value_info("then_y", T.FLOAT, [2, 3])],
        [one],
    )
    else_g = h.make_graph(
        [h.make_node("Neg", ["x"], ["n"], name="else_neg"), h.make_node("Relu", ["n"], ["else_y"], name="else_relu")],
        "else_body",
        [],
        [h.make_tensor_value_info("else_y", T.FLOAT, [2, 3])],
    )
    nodes = [
        h.make_node("Sigmoid", ["x"], ["xs"], name="pre"),
        h.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
    ]
    graph = h.make_graph(nodes, "if_graph", [x, cond], [y])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def custom_op_with_int64() -> onnx.ModelProto:
    """A node of a custom domain with INT64 extremes no JS number holds exactly."""
    x = h.make_tensor_value_info("x", T.FLOAT, [4])
    y = h.make_tensor_value_info("y", T.FLOAT, [4])
    node = h.make_node(
        "Window",
        ["x"],
        ["y"],
        name="win",
        domain="com.example",
        bounds=[-9223372036854775808, 9223372036854775807],
        label="wide",
    )
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
    model = h.make_model(
        graph,
        opset_imports=[h.make_opsetid("", 17)],
        doc_string="<script>window.__pwned=2</script>",
        producer_name=evil,
    )
    h.set_model_props(model, {"note" + evil: evil})
    return model


@functools.lru_cache(maxsize=1)
def official_node_models() -> dict[str, onnx.ModelProto]:
    """name -> model of the official node tests shipped (as code) with the onnx package (one
    collection per process, testkit's: each takes seconds of every worker's collection)."""
    return {name: c.model for name, c in node_testcases().items() if c.model is not None}


def light_model(name: str) -> Path:
    return ONNX_DATA / "light" / f"light_{name}.onnx"


def function_model() -> onnx.ModelProto:
    """A model-local function (with an attribute read through ref_attr_name) called by the main graph."""
    alpha_ref = h.make_attribute_ref("value_float", T.FLOAT)
    alpha_ref.ref_attr_name = "alpha"
    body = [
        h.make_node("Constant", [], ["a"], name="alpha_const", **{}),
        h.make_node("Mul", ["X", "a"], ["xa"], name="scale"),
        h.make_node("Relu", ["xa"], ["Y"], name="relu"),
    ]
    body[0].attribute.append(alpha_ref)
    fn = h.make_function(
        "com.studio",
        "ScaledRelu",
        ["X"],
        ["Y"],
        body,
        opset_imports=[h.make_opsetid("", 17)],
        attributes=[],
        attribute_protos=[h.make_attribute("alpha", 0.5)],
        doc_string="Relu of `X` scaled by **alpha**.",
    )
    fn.metadata_props.add(key="origin", value="tests")
    x = h.make_tensor_value_info("x", T.FLOAT, ["N", 4])
    y = h.make_tensor_value_info("y", T.FLOAT, ["N", 4])
    nodes = [
        h.make_node("Neg", ["x"], ["nx"], name="neg"),
        h.make_node("ScaledRelu", ["nx"], ["y"], name="scaled", domain="com.studio", alpha=2.0),
    ]
    graph = h.make_graph(nodes, "fn_graph", [x], [y])
    model = h.make_model(graph, functions=[fn], opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.studio", 1)])
    onnx.checker.check_model(model)
    return model


def low_precision_model() -> onnx.ModelProto:
    """FLOAT8E4M3FN and INT4 initializers, plus a float tensor too large for one page."""
    import ml_dtypes

    f8 = np.array(
        [[0.1, -2.0, 448.0, np.nan, 0.001953125, -0.0], [1.5, -0.75, 3.25, 100.0, -448.0, 0.3]], np.float32
    ).astype(ml_dtypes.float8_e4m3fn)
    i4 = np.array([[-8, 7, 0, 3, -1], [2, -3, 5, -6, 1], [4, 4, -4, 0, 6]], ml_dtypes.int4)
    big = (np.arange(2000, dtype=np.float32) * 0.5 - 10).reshape(50, 40)
    inits = [nh.from_array(f8, "f8_weight"), nh.from_array(i4, "int4_weight"), nh.from_array(big, "big")]
    outs = [
        h.make_tensor_value_info("f8_out", T.FLOAT8E4M3FN, list(f8.shape)),
        h.make_tensor_value_info("i4_out", T.INT4, list(i4.shape)),
        h.make_tensor_value_info("big_out", T.FLOAT, list(big.shape)),
    ]
    nodes = [
        h.make_node("Identity", ["f8_weight"], ["f8_out"], name="id_f8"),
        h.make_node("Identity", ["int4_weight"], ["i4_out"], name="id_i4"),
        h.make_node("Identity", ["big"], ["big_out"], name="id_big"),
    ]
    graph = h.make_graph(nodes, "low_precision", [], outs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    onnx.checker.check_model(model)
    return model


def inference_error_model() -> onnx.ModelProto:
    """Passes the basic checker, fails strict inference: Add of FLOAT and INT64."""
    x = h.make_tensor_value_info("x", T.FLOAT, [2])
    k = h.make_tensor_value_info("k", T.INT64, [2])
    y = h.make_tensor_value_info("y", T.FLOAT, [2])
    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="first_relu"),
        h.make_node("Add", ["r", "k"], ["y"], name="bad_add"),
    ]
    graph = h.make_graph(nodes, "mismatch", [x, k], [y])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def kitchen_sink_model() -> onnx.ModelProto:
    """Every kind of thing a ModelProto can hold that the page shows: typed inputs of every kind,
    sparse initializers, quantization annotations, metadata everywhere, attributes of every type,
    node device configurations, training info, device configurations, a local function."""
    rng = np.random.default_rng(1)
    seq_in = h.make_tensor_sequence_value_info("seq_in", T.FLOAT, ["N", 3])
    map_in = h.make_value_info("map_in", h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(T.FLOAT, None)))
    opt_in = h.make_value_info("opt_in", h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, [2, 3])))
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 3], doc_string="The **main** input.")
    x.metadata_props.add(key="unit", value="metres")
    y = h.make_tensor_value_info("y", T.FLOAT, [2, 3])
    w = nh.from_array(rng.standard_normal((2, 3)).astype(np.float32), "w")
    w.metadata_props.add(key="source", value="random")
    scale = nh.from_array(np.array(0.05, np.float32), "w_scale")
    sparse_vals = nh.from_array(np.array([1.5, -2.0], np.float32), "sp")
    sparse = h.make_sparse_tensor(sparse_vals, nh.from_array(np.array([1, 4], np.int64), "sp_idx"), [2, 3])
    seq_type = h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, ["N", 3]))
    map_type = h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(T.FLOAT, None))
    odd = h.make_node(
        "Annotate",
        ["x"],
        ["x_annotated"],
        name="annotate",
        domain="com.studio.ext",
        doc_string="Carries one attribute of **every** type.",
        f=0.25,
        i=7,
        s="text",
        floats=[1.0, 2.5],
        ints=[1, 2, 3],
        strings=["a", "b"],
        t=nh.from_array(np.arange(6, dtype=np.int32).reshape(2, 3), "t_attr"),
        tensors=[nh.from_array(np.ones(2, np.float16)), nh.from_array(np.array([True, False]))],
        sparse=h.make_sparse_tensor(
            nh.from_array(np.array([3.0], np.float32), "sv"), nh.from_array(np.array([2], np.int64), "si"), [4]
        ),
        tp=seq_type,
        tps=[map_type, h.make_optional_type_proto(h.make_tensor_type_proto(T.INT64, []))],
    )
    odd.metadata_props.add(key="stage", value="pre")
    cfg = odd.device_configurations.add(configuration_id="mesh2", pipeline_stage=1)
    spec = cfg.sharding_spec.add(tensor_name="x", device=[0, 1])
    dim = spec.sharded_dim.add(axis=0)
    dim.simple_sharding.add(dim_value=2, num_shards=2)
    nodes = [
        odd,
        h.make_node("Add", ["x_annotated", "w"], ["s"], name="add_w"),
        h.make_node("Add", ["s", "sp"], ["s2"], name="add_sparse"),
        h.make_node("Mul", ["s2", "w_scale"], ["y"], name="scale_out", overload=""),
    ]
    graph = h.make_graph(
        nodes,
        "kitchen_sink",
        [x, seq_in, map_in, opt_in],
        [y],
        [w, scale],
        value_info=[h.make_tensor_value_info("s", T.FLOAT, [2, 3])],
        sparse_initializer=[sparse],
        doc_string="The main graph.",
    )
    graph.metadata_props.add(key="graph_note", value="kitchen")
    qa = graph.quantization_annotation.add(tensor_name="w")
    qa.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="w_scale")
    model = h.make_model(
        graph,
        functions=[function_model().functions[0]],
        opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.studio", 1), h.make_opsetid("com.studio.ext", 1)],
        producer_name="onnx-studio-tests",
        doc_string="# Kitchen sink\n\nA model with *everything*:\n\n- functions\n- training info\n\n```\ncode block\n```",
    )
    h.set_model_props(model, {"author": "tests"})
    train = model.training_info.add()
    train.algorithm.CopyFrom(
        h.make_graph(
            [h.make_node("Neg", ["w"], ["w_new"], name="step")],
            "algo",
            [],
            [h.make_tensor_value_info("w_new", T.FLOAT, [2, 3])],
        )
    )
    train.initialization.CopyFrom(
        h.make_graph(
            [h.make_node("Constant", [], ["w_init"], name="init", value=nh.from_array(np.zeros((2, 3), np.float32)))],
            "init",
            [],
            [h.make_tensor_value_info("w_init", T.FLOAT, [2, 3])],
        )
    )
    train.initialization_binding.add(key="w", value="w_init")
    train.update_binding.add(key="w", value="w_new")
    dev = model.configuration.add(name="mesh2", num_devices=2)
    dev.device.extend(["cuda:0", "cuda:1"])
    return model


def every_dtype_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """One initializer per element type (each also a graph output); returns the model and the
    arrays numpy_helper.to_array reads back from it."""
    import ml_dtypes

    values = {
        "f16": np.array([0.1, -65504, 6.1e-05, np.inf], np.float16),
        "bf16": np.array([0.1, -3.0e38, 1.0078125], ml_dtypes.bfloat16),
        "f64": np.array([0.1, 1 / 3, -1e-300], np.float64),
        "f8e5m2": np.array([0.1, -57344, 3.0], np.float32).astype(ml_dtypes.float8_e5m2),
        "f4": np.array([0.5, -6.0, 1.5, 0.0], ml_dtypes.float4_e2m1fn),
        "u4": np.array([0, 15, 7], ml_dtypes.uint4),
        "u64": np.array([0, 18446744073709551615, 9007199254740993], np.uint64),
        "i64": np.array([-9223372036854775808, 42], np.int64),
        "c64": np.array([1 - 2.5j, 0.1 + 0j], np.complex64),
        "c128": np.array([1 / 3 + 2j], np.complex128),
        "flags": np.array([True, False, True]),
        "words": np.array(["plain", 'quote"d', "ünïcode"], dtype=object),
    }
    inits = [nh.from_array(v, k) for k, v in values.items()]
    outputs = [h.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    graph = h.make_graph([], "every_dtype", [], outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    return model, {t.name: nh.to_array(t) for t in model.graph.initializer}


def qdq_model() -> onnx.ModelProto:
    """A QDQ-quantized net as static quantization and quantization-aware exports write it:
    x -> Q -> DQ -> Conv (int8 weight behind a DequantizeLinear) -> Q -> DQ -> MatMul (a float
    weight quantized in the graph: Q -> DQ) -> y. Ids: n0 Q(x), n1 DQ, n2 DQ(w int8), n3 Conv,
    n4 Q, n5 DQ, n6 Q(m), n7 DQ, n8 Flatten, n9 MatMul."""
    rng = np.random.default_rng(0)
    scale, zero = nh.from_array(np.array(0.05, np.float32), "s"), nh.from_array(np.array(128, np.uint8), "z")
    wz = nh.from_array(np.array(0, np.int8), "wz")
    inits = [
        scale,
        zero,
        wz,
        nh.from_array(rng.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8), "conv.weight_quantized"),
        nh.from_array(rng.standard_normal((64, 5)).astype(np.float32), "fc.weight"),
    ]
    nodes = [
        h.make_node("QuantizeLinear", ["x", "s", "z"], ["x_q"], name="x_QuantizeLinear"),
        h.make_node("DequantizeLinear", ["x_q", "s", "z"], ["x_dq"], name="x_DequantizeLinear"),
        h.make_node(
            "DequantizeLinear", ["conv.weight_quantized", "s", "wz"], ["conv.weight_dq"], name="w_DequantizeLinear"
        ),
        h.make_node("Conv", ["x_dq", "conv.weight_dq"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        h.make_node("QuantizeLinear", ["c", "s", "z"], ["c_q"], name="c_QuantizeLinear"),
        h.make_node("DequantizeLinear", ["c_q", "s", "z"], ["c_dq"], name="c_DequantizeLinear"),
        h.make_node("QuantizeLinear", ["fc.weight", "s", "wz"], ["fc_q"], name="fc_QuantizeLinear"),
        h.make_node("DequantizeLinear", ["fc_q", "s", "wz"], ["fc_dq"], name="fc_DequantizeLinear"),
        h.make_node("Flatten", ["c_dq"], ["f"], name="flatten"),
        h.make_node("MatMul", ["f", "fc_dq"], ["y"], name="fc"),
    ]
    graph = h.make_graph(
        nodes,
        "qdq",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 5])],
        inits,
        value_info=[h.make_tensor_value_info("c_dq", T.FLOAT, [1, 4, 4, 4])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def two_inputs() -> onnx.ModelProto:
    """(x + y) @ W, x and y float [1, 4]: a model fed by two inputs."""
    w = nh.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "W")
    g = h.make_graph(
        [h.make_node("Add", ["x", "y"], ["s"], name="add"), h.make_node("MatMul", ["s", "W"], ["z"], name="mm")],
        "two",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4]), h.make_tensor_value_info("y", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("z", T.FLOAT, [1, 3])],
        [w],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def three_convs(names: bool = True) -> onnx.ModelProto:
    """x -> conv1 -> relu -> conv2 -> relu -> conv3 -> + x -> y; conv2's weights hold one value 1000x
    the others (on a channel conv1 leaves at 0, so it adds nothing), and per-tensor int8 weights
    keep that one and round every other to 0."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((8, 4, 3, 3)).astype(np.float32) * 0.3
    w1[0] = 0
    w2 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.1
    w2[0, 0, 0, 0] = 100.0
    weights = {
        "w1": w1,
        "w2": w2,
        "w3": rng.standard_normal((4, 8, 3, 3)).astype(np.float32) * 0.3,
    }
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [
        h.make_node("Conv", ["x", "w1"], ["c1"], name="conv1" if names else "", **conv),
        h.make_node("Relu", ["c1"], ["r1"], name="relu1" if names else ""),
        h.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2" if names else "", **conv),
        h.make_node("Relu", ["c2"], ["r2"], name="relu2" if names else ""),
        h.make_node("Conv", ["r2", "w3"], ["c3"], name="conv3" if names else "", **conv),
        h.make_node("Add", ["c3", "x"], ["y"], name="add" if names else ""),
    ]
    graph = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 8, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 8, 8])],
        [nh.from_array(v, k) for k, v in weights.items()],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def classifier(opset: int = 17) -> onnx.ModelProto:
    """x [1, 8] -> MatMul (a 8x300 weight: 9.6 KB, a blob of its own) -> Relu -> y [1, 300]."""
    w = np.random.default_rng(0).standard_normal((8, 300)).astype(np.float32)
    graph = h.make_graph(
        [h.make_node("MatMul", ["x", "w"], ["mm"], name="fc"), h.make_node("Relu", ["mm"], ["y"], name="relu")],
        "classifier",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 300])],
        [nh.from_array(w, "w")],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="trainer")
    h.set_model_props(model, {"author": "me", "license": "mine"})
    return model


def argmax_post(opset: int = 17) -> onnx.ModelProto:
    """scores [1, 300] -> Softmax -> probs; ArgMax -> label. Its names clash with the classifier's
    on purpose: "mm" and the node "relu"; its own weights ("w", 300 floats) too."""
    w = np.linspace(0.5, 1.5, 300, dtype=np.float32).reshape(1, 300)
    graph = h.make_graph(
        [
            h.make_node("Mul", ["scores", "w"], ["mm"], name="relu"),
            h.make_node("Softmax", ["mm"], ["probs"], name="softmax", axis=-1),
            h.make_node("ArgMax", ["mm"], ["label"], name="argmax", axis=-1, keepdims=0),
        ],
        "post",
        [h.make_tensor_value_info("scores", T.FLOAT, [1, 300])],
        [h.make_tensor_value_info("probs", T.FLOAT, [1, 300]), h.make_tensor_value_info("label", T.INT64, [1])],
        [nh.from_array(w, "w")],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    h.set_model_props(model, {"license": "theirs", "post": "argmax"})
    return model


def loop_model(n: int = 1_000_000, trips: int = 6) -> onnx.ModelProto:
    """v -> Loop "loop" (`trips` times: Identity "keep_going" on the condition, Mul "double" of
    the n values by 1) -> out."""
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
            h.make_node("Mul", ["v_in", "two"], ["v_out"], name="double"),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("v_in", T.FLOAT, [n]),
        ],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, [n])],
        [nh.from_array(np.array(1.0, np.float32), "two")],
    )
    graph = h.make_graph(
        [h.make_node("Loop", ["trips", "", "v"], ["out"], name="loop", body=body)],
        "g",
        [h.make_tensor_value_info("v", T.FLOAT, [n])],
        [h.make_tensor_value_info("out", T.FLOAT, [n])],
        [nh.from_array(np.array(trips, np.int64), "trips")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def zipmap_model() -> onnx.ModelProto:
    """A classifier's tail as skl2onnx writes it: probabilities through ai.onnx.ml's ZipMap, a
    sequence of maps class → probability, one per row."""
    node = h.make_node("ZipMap", ["X"], ["probs"], domain="ai.onnx.ml", classlabels_int64s=[0, 1, 2])
    probs = h.make_value_info(
        "probs",
        h.make_sequence_type_proto(h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(T.FLOAT, []))),
    )
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.FLOAT, [2, 3])], [probs])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 1)])


def flag_model() -> onnx.ModelProto:
    """y = If(use_cache) then x + 1 else x * mask, with `mask` [batch, 4] and a bool flag: an
    Optimum merged decoder's `use_cache_branch` and attention mask in small."""
    one = nh.from_array(np.array(1, np.float32), "one")
    then = h.make_graph(
        [h.make_node("Add", ["x", "one"], ["t"])], "then", [], [h.make_tensor_value_info("t", T.FLOAT, None)]
    )
    other = h.make_graph(
        [h.make_node("Mul", ["x", "mask"], ["e"])], "else", [], [h.make_tensor_value_info("e", T.FLOAT, None)]
    )
    g = h.make_graph(
        [h.make_node("If", ["use_cache"], ["y"], name="branch", then_branch=then, else_branch=other)],
        "flagged",
        [
            h.make_tensor_value_info("x", T.FLOAT, ["batch", 4]),
            h.make_tensor_value_info("mask", T.FLOAT, ["batch", 4]),
            h.make_tensor_value_info("use_cache", T.BOOL, []),
        ],
        [h.make_tensor_value_info("y", T.FLOAT, ["batch", 4])],
        [one],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def constant_in_branch(elements: int = 4096, initializer: bool = False) -> onnx.ModelProto:
    """out = If(b) then x + c else x, with c a Constant node of `elements` floats inside the
    branch (or the branch's initializer, as Simplify leaves it): the store keeps it in a blob of
    its own, and onnxruntime reads a subgraph's tensors with onnx's loader, which refuses a
    hard-linked file."""
    c = nh.from_array(np.linspace(0, 1, elements, dtype=np.float32), "c")
    then = h.make_graph(
        [
            *([] if initializer else [h.make_node("Constant", [], ["c"], value=c)]),
            h.make_node("Add", ["x", "c"], ["y"]),
        ],
        "then",
        [],
        [h.make_tensor_value_info("y", T.FLOAT, [elements])],
        [c] if initializer else [],
    )
    other = h.make_graph(
        [h.make_node("Identity", ["x"], ["z"])], "else", [], [h.make_tensor_value_info("z", T.FLOAT, [elements])]
    )
    g = h.make_graph(
        [h.make_node("If", ["b"], ["out"], name="branch", then_branch=then, else_branch=other)],
        "branchy",
        [h.make_tensor_value_info("x", T.FLOAT, [elements]), h.make_tensor_value_info("b", T.BOOL, [])],
        [h.make_tensor_value_info("out", T.FLOAT, [elements])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def unnamed_dims_model() -> onnx.ModelProto:
    """z = x·W + y with x [?, 4] (a dim with neither size nor name, as silero VAD declares its
    input) and y ["?", 3] (PaddlePaddle's "?", written for every unknown dim): the sizes a person
    gives them are named by input and axis, "x[0]" and "y[0]"."""
    w = nh.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "W")
    x = h.make_tensor_value_info("x", T.FLOAT, [None, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, ["?", 3])
    g = h.make_graph(
        [h.make_node("MatMul", ["x", "W"], ["xw"], name="mm"), h.make_node("Add", ["xw", "y"], ["z"], name="add")],
        "unnamed",
        [x, y],
        [h.make_tensor_value_info("z", T.FLOAT, [None, 3])],
        [w],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def reflect_padded(pad: int, fixed: bool) -> onnx.ModelProto:
    """y = Pad(x, `pad` on each side of the last axis, reflected): onnxruntime needs more than
    `pad` samples there, which a sequence of 1 (or 2) is not — as silero VAD pads its audio."""
    pads = nh.from_array(np.array([0, pad, 0, pad], np.int64), "pads")
    graph = h.make_graph(
        [h.make_node("Pad", ["x", "pads"], ["y"], name="reflect", mode="reflect")],
        "padded",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 2] if fixed else ["batch", "sequence"])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 2 + 2 * pad] if fixed else ["batch", "padded"])],
        [pads],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


TOTAL = "past_sequence + sequence"  # how optimum names a decoder's mask and present length


def masked_decoder() -> onnx.ModelProto:
    """One attention step of a decoder with a KV cache, as optimum exports it: the mask's length
    declared "past_sequence + sequence", added to the scores over the cached and the new keys —
    a mask of any other length fails the Add (broadcasting hides only a length of 1)."""
    nodes = [
        h.make_node("Concat", ["past_key", "key"], ["present_key"], name="concat", axis=1),
        h.make_node("Transpose", ["present_key"], ["key_t"], name="transpose", perm=[0, 2, 1]),
        h.make_node("MatMul", ["query", "key_t"], ["scores"], name="scores"),
        h.make_node("Unsqueeze", ["attention_mask", "one"], ["mask"], name="unsqueeze"),
        h.make_node("Add", ["scores", "mask"], ["masked"], name="mask_add"),
        h.make_node("Softmax", ["masked"], ["probs"], name="softmax", axis=-1),
    ]
    graph = h.make_graph(
        nodes,
        "decoder_step",
        [
            h.make_tensor_value_info("query", T.FLOAT, ["batch", "sequence", 8]),
            h.make_tensor_value_info("key", T.FLOAT, ["batch", "sequence", 8]),
            h.make_tensor_value_info("past_key", T.FLOAT, ["batch", "past_sequence", 8]),
            h.make_tensor_value_info("attention_mask", T.FLOAT, ["batch", TOTAL]),
        ],
        [
            h.make_tensor_value_info("probs", T.FLOAT, ["batch", "sequence", TOTAL]),
            h.make_tensor_value_info("present_key", T.FLOAT, ["batch", TOTAL, 8]),
        ],
        [nh.from_array(np.array([1], np.int64), "one")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


ML_OPSET = h.make_opsetid("ai.onnx.ml", 3)
WORDS = ["cat", "dog", "bird", "sat", "ran"]
COLORS = ["red", "green", "blue"]


def _ml_model(nodes, inputs, outputs, opsets, initializers=()) -> bytes:
    g = h.make_graph(nodes, "pipeline", inputs, outputs, list(initializers))
    m = h.make_model(g, opset_imports=opsets, ir_version=8)
    onnx.checker.check_model(m)
    return m.SerializeToString()


def column_model(zeros: int = 0) -> bytes:
    """A number column and a string column one-hot encoded, concatenated (ColumnTransformer);
    zeros=0 is skl2onnx's handle_unknown="error": a category the encoder doesn't know fails the run."""
    nodes = [
        h.make_node("OneHotEncoder", ["color"], ["onehot"], domain="ai.onnx.ml", cats_strings=COLORS, zeros=zeros),
        h.make_node("Reshape", ["onehot", "flat"], ["onehot2"]),
        h.make_node("Concat", ["a", "onehot2"], ["features"], axis=1),
    ]
    g_inputs = [
        h.make_tensor_value_info("a", T.FLOAT, [None, 1]),
        h.make_tensor_value_info("color", T.STRING, [None, 1]),
    ]
    out = [h.make_tensor_value_info("features", T.FLOAT, [None, 4])]
    flat = nh.from_array(np.array([-1, 3], np.int64), "flat")
    return _ml_model(nodes, g_inputs, out, [h.make_opsetid("", 17), ML_OPSET], [flat])


def dict_model() -> bytes:
    nodes = [h.make_node("DictVectorizer", ["feats"], ["vector"], domain="ai.onnx.ml", string_vocabulary=WORDS)]
    feats = h.make_value_info("feats", h.make_map_type_proto(T.STRING, h.make_tensor_type_proto(T.FLOAT, None)))
    out = [h.make_tensor_value_info("vector", T.FLOAT, [None, len(WORDS)])]
    return _ml_model(nodes, [feats], out, [h.make_opsetid("", 17), ML_OPSET])


def text_model(locale: str | None = None) -> bytes:
    """skl2onnx's TfidfVectorizer front: lower-cased, split into words, counted over a vocabulary."""
    normalize = {"case_change_action": "LOWER", **({"locale": locale} if locale else {})}
    nodes = [
        h.make_node("StringNormalizer", ["text"], ["lower"], **normalize),
        h.make_node(
            "Tokenizer",
            ["lower"],
            ["tokens"],
            domain="com.microsoft",
            mark=0,
            mincharnum=1,
            pad_value="#",
            tokenexp=r"\w+",
        ),
        h.make_node(
            "TfIdfVectorizer",
            ["tokens"],
            ["counts"],
            mode="TF",
            min_gram_length=1,
            max_gram_length=1,
            max_skip_count=0,
            ngram_counts=[0],
            ngram_indexes=list(range(len(WORDS))),
            pool_strings=WORDS,
        ),
    ]
    inputs = [h.make_tensor_value_info("text", T.STRING, [None])]
    out = [h.make_tensor_value_info("counts", T.FLOAT, [None, len(WORDS)])]
    return _ml_model(nodes, inputs, out, [h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])


def iris_classifier() -> onnx.ModelProto:
    """A scikit-learn LogisticRegression on iris as skl2onnx writes it: X float [?, 4] scaled,
    LinearClassifier's label and probabilities, the probabilities through a ZipMap."""
    nodes = [
        h.make_node(
            "Scaler", ["X"], ["scaled"], domain="ai.onnx.ml", offset=[5.8, 3.0, 3.8, 1.2], scale=[1.2, 2.3, 0.6, 1.3]
        ),
        h.make_node(
            "LinearClassifier",
            ["scaled"],
            ["label", "probabilities"],
            domain="ai.onnx.ml",
            classlabels_ints=[0, 1, 2],
            coefficients=[-1.0, 1.1, -1.8, -1.7, 0.5, -0.3, -0.3, -0.7, 0.5, -0.8, 2.1, 2.4],
            intercepts=[-0.2, 2.0, -1.8],
            multi_class=1,
            post_transform="SOFTMAX",
        ),
        h.make_node(
            "ZipMap", ["probabilities"], ["output_probability"], domain="ai.onnx.ml", classlabels_int64s=[0, 1, 2]
        ),
    ]
    probs = h.make_value_info(
        "output_probability",
        h.make_sequence_type_proto(h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(T.FLOAT, []))),
    )
    g = h.make_graph(
        nodes,
        "iris",
        [h.make_tensor_value_info("X", T.FLOAT, [None, 4])],
        [h.make_tensor_value_info("label", T.INT64, [None]), probs],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 1)], ir_version=8)


def nms_detector(boxes: int = 12) -> onnx.ModelProto:
    """boxes [1, N, 4] and scores [1, 1, N] -> NonMaxSuppression -> selected_indices [k, 3];
    the scores pass a Mul by "gain" (1.0) first. IoU threshold 1: nothing is suppressed, every
    box is selected in the order of its score, so a gain of -1 selects the same rows reversed."""
    graph = h.make_graph(
        [
            h.make_node("Mul", ["scores", "gain"], ["ranked"], name="rank"),
            h.make_node("NonMaxSuppression", ["boxes", "ranked", "keep", "iou"], ["selected_indices"], name="nms"),
        ],
        "detector",
        [
            h.make_tensor_value_info("boxes", T.FLOAT, [1, boxes, 4]),
            h.make_tensor_value_info("scores", T.FLOAT, [1, 1, boxes]),
        ],
        [h.make_tensor_value_info("selected_indices", T.INT64, ["selected", 3])],
        [
            nh.from_array(np.array(1.0, np.float32), "gain"),
            nh.from_array(np.array([boxes], np.int64), "keep"),
            nh.from_array(np.array([1.0], np.float32), "iou"),
        ],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def function_calls_model() -> onnx.ModelProto:
    """Two calls of a model-local function Block whose attributes are a reference (slope), one
    with a default (gain) and one nothing in the body reads (note)."""
    return onnx.parser.parse_model(
        """
        <ir_version: 10, opset_import: ["" : 18, "local" : 1]>
        main (float[2, 4] X) => (float[2, 4] Y) {
          H = local.Block <slope: float = 0.2> (X)
          Y = local.Block <slope: float = 0.05, gain: float = 3.0> (H)
        }
        <domain: "local", opset_import: ["" : 18, "local" : 1]>
        Block <slope, gain: float = 2.0, note> (X) => (Y) {
          T1 = LeakyRelu <alpha: float = @slope> (X)
          B = Constant <value_float: float = @gain> ()
          Y = Mul (T1, B)
        }
        """
    )


def reshaped_to(dims: list, shape: list[int], declared_out: list) -> onnx.ModelProto:
    """x of `dims` reshaped to the constant `shape` (a Reshape holding what its export fixed), y
    declared `declared_out`: a model some of whose dynamic dims run only at 1."""
    graph = h.make_graph(
        [h.make_node("Reshape", ["x", "shape"], ["y"], name="fold")],
        "fold",
        [h.make_tensor_value_info("x", T.FLOAT, dims)],
        [h.make_tensor_value_info("y", T.FLOAT, declared_out)],
        [nh.from_array(np.array(shape, np.int64), "shape")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def sparse_training_model() -> onnx.ModelProto:
    """y = x + S (S a 2×3 sparse initializer), trained by an algorithm graph W_new = W - lr·W."""
    values = nh.from_array(np.array([1.5, -2.0], np.float32), "S")
    indices = nh.from_array(np.array([1, 5], np.int64), "S_indices")
    sparse = h.make_sparse_tensor(values, indices, [2, 3])
    w = nh.from_array(np.ones((2, 3), np.float32), "W")
    graph = h.make_graph(
        [
            h.make_node("Add", ["x", "S"], ["h"], name="add"),
            h.make_node("Mul", ["h", "W"], ["y"], name="mul"),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
        [w],
        sparse_initializer=[sparse],
    )
    lr = nh.from_array(np.array(0.1, np.float32), "lr")
    algo = h.make_graph(
        [
            h.make_node("Mul", ["W", "lr"], ["step"], name="scale"),
            h.make_node("Sub", ["W", "step"], ["W_new"], name="update"),
        ],
        "algo",
        [],
        [h.make_tensor_value_info("W_new", T.FLOAT, [2, 3])],
        [lr],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    train = model.training_info.add()
    train.algorithm.CopyFrom(algo)
    train.update_binding.add(key="W", value="W_new")
    onnx.checker.check_model(model)
    return model
