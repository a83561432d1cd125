"""The text form says what it leaves out (QA finding M4): the comment at the top of GET
.../text names, counted, everything the model holds that onnx.printer's text does not carry,
and says so plainly when the text as printed does not parse back at all. Each case is a model
holding one such thing: the header names it, and onnx.parser's reading of the text is the
model without it, field by field; a model the header says nothing of reads back whole."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import nested_search_model, upload

LEFT_OUT = "# Not in this text (ONNX text has no syntax for them): "
NOT_PARSED = "# This text does not parse back: "


def vi(name: str, shape=(4,)) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def const(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, np.float32), name)


def base(*extra_nodes: onnx.NodeProto, outputs: tuple[str, ...] = ()) -> onnx.ModelProto:
    """x + w -> h, Relu(h) -> y: a small model each case adds its one thing to."""
    g = helper.make_graph(
        [
            helper.make_node("Add", ["x", "w"], ["h"], name="add"),
            helper.make_node("Relu", ["h"], ["y"], name="relu"),
            *extra_nodes,
        ],
        "g",
        [vi("x")],
        [vi("y"), *(vi(o) for o in outputs)],
        [const("w", [1, 2, 3, 4])],
        value_info=[vi("h")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def text_and_model(client, model: onnx.ModelProto) -> tuple[str, onnx.ModelProto]:
    """The text form of `model` uploaded, and the model as the store gives it back."""
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    text = client.get(f"/api/models/{mid}/text")
    assert text.status_code == 200, text.get_json()
    held = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    return text.get_data(as_text=True), held


def header(text: str) -> dict[str, str]:
    """The comment lines at the top: {"left_out": ..., "not_parsed": ...} (those there)."""
    said = {}
    for line in text.split("\n"):
        if not line.startswith("#"):
            break
        for key, top in (("left_out", LEFT_OUT), ("not_parsed", NOT_PARSED)):
            if line.startswith(top):
                said[key] = line[len(top) :]
    return said


def differences(a, b, path: str = "model") -> list[str]:
    """Where two protos differ, field by field (a tensor's values compared as values, however
    they are stored: raw_data or the typed fields)."""
    out: list[str] = []
    skip: set[str] = set()
    if isinstance(a, onnx.TensorProto) and a.data_location != TensorProto.EXTERNAL and not a.HasField("segment"):
        if not same_values(a, b):
            out.append(f"{path}.<values>")
        skip = {"raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"}
    for fd in a.DESCRIPTOR.fields:
        if fd.name in skip:
            continue
        x, y, here = getattr(a, fd.name), getattr(b, fd.name), f"{path}.{fd.name}"
        if fd.is_repeated:
            if len(x) != len(y):
                out.append(f"{here}: {len(x)} items vs {len(y)}")
            elif fd.message_type:
                for k, (xi, yi) in enumerate(zip(x, y, strict=True)):
                    out += differences(xi, yi, f"{here}[{k}]")
            elif list(x) != list(y):
                out.append(f"{here}: {list(x)} vs {list(y)}")
        elif fd.message_type:
            if a.HasField(fd.name) != b.HasField(fd.name):
                out.append(f"{here}: set {a.HasField(fd.name)} vs {b.HasField(fd.name)}")
            elif a.HasField(fd.name):
                out += differences(x, y, here)
        elif x != y:
            out.append(f"{here}: {x!r} vs {y!r}")
    return out


def same_values(a: onnx.TensorProto, b: onnx.TensorProto) -> bool:
    if b.HasField("segment"):
        return False
    x, y = numpy_helper.to_array(a), numpy_helper.to_array(b)
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    return x.tolist() == y.tolist() if x.dtype == object else x.tobytes() == y.tobytes()


def without(model: onnx.ModelProto, strip: Callable[[onnx.ModelProto], None]) -> onnx.ModelProto:
    m = copy.deepcopy(model)
    strip(m)
    return m


def all_graphs(m: onnx.ModelProto):
    stack = [m.graph]
    while stack:
        g = stack.pop()
        yield g
        for n in g.node:
            for a in n.attribute:
                stack += [a.g] if a.HasField("g") else []
                stack += list(a.graphs)


# ---------------------------------------------------------------- one omission per model


def training() -> onnx.ModelProto:
    m = base()
    first = m.training_info.add()
    first.initialization.CopyFrom(
        helper.make_graph([helper.make_node("Identity", ["w"], ["w0"])], "init", [], [vi("w0")])
    )
    first.initialization.doc_string = "sets w up"  # inside the training graphs: said by them
    first.algorithm.CopyFrom(helper.make_graph([helper.make_node("Neg", ["w"], ["w1"])], "step", [], [vi("w1")]))
    first.algorithm.doc_string = "one step"
    first.initialization_binding.add(key="w", value="w0")
    first.update_binding.add(key="w", value="w1")
    second = m.training_info.add()
    second.algorithm.CopyFrom(helper.make_graph([helper.make_node("Abs", ["w"], ["w2"])], "again", [], [vi("w2")]))
    second.update_binding.add(key="w", value="w2")
    return m


def sparse_initializers() -> onnx.ModelProto:
    def sparse(name: str) -> onnx.SparseTensorProto:
        values = helper.make_tensor(name, TensorProto.FLOAT, [1], [5.0])
        return helper.make_sparse_tensor(values, helper.make_tensor(f"{name}_at", TensorProto.INT64, [1], [2]), [4])

    then_g = helper.make_graph([helper.make_node("Add", ["h", "s3"], ["t"])], "then", [], [vi("t")])
    then_g.sparse_initializer.append(sparse("s3"))
    else_g = helper.make_graph([helper.make_node("Identity", ["h"], ["e"])], "else", [], [vi("e")])
    m = base(
        helper.make_node("Add", ["s1", "s2"], ["s12"], name="sum"),
        helper.make_node("ReduceMax", ["x"], ["m"], name="max", keepdims=0),
        helper.make_node("Cast", ["m"], ["c"], name="cond", to=TensorProto.BOOL),
        helper.make_node("If", ["c"], ["branch"], name="if", then_branch=then_g, else_branch=else_g),
        outputs=("s12", "branch"),
    )
    m.graph.sparse_initializer.extend([sparse("s1"), sparse("s2")])
    return m


def strip_sparse(m: onnx.ModelProto) -> None:
    for g in all_graphs(m):
        del g.sparse_initializer[:]


def devices() -> onnx.ModelProto:
    m = base()
    m.ir_version = 11
    m.configuration.add(name="pair", num_devices=2, device=["gpu:0", "gpu:1"])
    m.configuration.add(name="one", num_devices=1)
    for node in m.graph.node:
        spec = node.device_configurations.add(configuration_id="pair").sharding_spec.add(tensor_name=node.input[0])
        spec.device.extend([0, 1])
        spec.sharded_dim.add(axis=0).simple_sharding.add(dim_value=4, num_shards=2)
    return m


def strip_devices(m: onnx.ModelProto) -> None:
    del m.configuration[:]
    for n in m.graph.node:
        del n.device_configurations[:]


def annotations() -> onnx.ModelProto:
    m = base()
    for name in ("h", "y"):
        ann = m.graph.quantization_annotation.add(tensor_name=name)
        ann.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="w")
    return m


def value_notes() -> onnx.ModelProto:
    m = base()
    m.ir_version = 10
    m.graph.input[0].doc_string = "the picture"
    m.graph.output[0].metadata_props.add(key="unit", value="logit")
    m.graph.value_info[0].doc_string = "before Relu"
    m.graph.value_info[0].metadata_props.add(key="range", value="any")
    return m


def strip_value_notes(m: onnx.ModelProto) -> None:
    for v in (*m.graph.input, *m.graph.output, *m.graph.value_info):
        v.ClearField("doc_string")
        del v.metadata_props[:]


def tensor_notes() -> onnx.ModelProto:
    m = base(helper.make_node("Constant", [], ["k"], name="k", value=const("kv", [7, 7, 7, 7])), outputs=("k",))
    m.ir_version = 10
    m.graph.initializer[0].doc_string = "the bias"
    m.graph.initializer[0].metadata_props.add(key="origin", value="trained")
    m.graph.node[2].attribute[0].t.metadata_props.add(key="origin", value="set")
    return m


def strip_tensor_notes(m: onnx.ModelProto) -> None:
    for t in (m.graph.initializer[0], m.graph.node[2].attribute[0].t):
        t.ClearField("doc_string")
        del t.metadata_props[:]


def denotations() -> onnx.ModelProto:
    m = base()
    m.graph.input[0].type.denotation = "TENSOR"
    m.graph.output[0].type.tensor_type.shape.dim[0].denotation = "DATA_FEATURE"
    return m


def strip_denotations(m: onnx.ModelProto) -> None:
    m.graph.input[0].type.ClearField("denotation")
    m.graph.output[0].type.tensor_type.shape.dim[0].ClearField("denotation")


def attribute_notes() -> onnx.ModelProto:
    m = base(helper.make_node("LeakyRelu", ["x"], ["l"], name="leaky", alpha=0.5), outputs=("l",))
    m.graph.node[2].attribute[0].doc_string = "gentle slope"
    return m


def attribute_lists() -> onnx.ModelProto:
    m = base(
        helper.make_node(
            "Holder", ["x"], ["held"], name="holder", domain="custom", tables=[const("", [1, 2]), const("", [3])]
        ),
        outputs=("held",),
    )
    m.opset_import.append(helper.make_opsetid("custom", 1))
    return m


def segments() -> onnx.ModelProto:
    m = base()
    m.graph.initializer[0].segment.begin = 0
    m.graph.initializer[0].segment.end = 4
    return m


def node_and_graph_notes() -> onnx.ModelProto:
    then_g = helper.make_graph([helper.make_node("Neg", ["h"], ["t"], name="neg")], "then", [], [vi("t")])
    else_g = helper.make_graph([helper.make_node("Abs", ["h"], ["e"], name="abs")], "else", [], [vi("e")])
    then_g.doc_string = "the negative side"
    else_g.metadata_props.add(key="k", value="v")
    m = base(
        helper.make_node("Cast", ["x"], ["c"], name="cast", to=TensorProto.BOOL),
        helper.make_node("ReduceMin", ["c"], ["c1"], name="all", keepdims=0),
        helper.make_node("If", ["c1"], ["branch"], name="if", then_branch=then_g, else_branch=else_g),
        outputs=("branch",),
    )
    m.ir_version = 10
    m.graph.node[0].doc_string = "adds the bias"
    m.graph.node[1].metadata_props.add(key="k", value="v")
    then_branch = next(a for a in m.graph.node[4].attribute if a.name == "then_branch")
    then_branch.g.node[0].doc_string = "inside"
    return m


def strip_node_and_graph_notes(m: onnx.ModelProto) -> None:
    for g in all_graphs(m):
        g.ClearField("doc_string")
        del g.metadata_props[:]
        for n in g.node:
            n.ClearField("doc_string")
            del n.metadata_props[:]


LEFT_OUT_CASES = {
    "training": (
        training,
        "3 training graphs and their 3 bindings",
        lambda m: m.ClearField("training_info"),
    ),
    "sparse initializers": (sparse_initializers, "3 sparse initializers", strip_sparse),
    "devices": (
        devices,
        "the model's 2 device configurations; device configurations of 2 nodes",
        strip_devices,
    ),
    "annotations": (
        annotations,
        "2 quantization annotations",
        lambda m: m.graph.ClearField("quantization_annotation"),
    ),
    "value notes": (value_notes, "doc strings of 2 values; metadata of 2 values", strip_value_notes),
    "tensor notes": (tensor_notes, "doc strings of 1 tensor; metadata of 2 tensors", strip_tensor_notes),
    "denotations": (denotations, "denotations of 2 types", strip_denotations),
    "attribute doc strings": (
        attribute_notes,
        "doc strings of 1 attribute",
        lambda m: m.graph.node[2].attribute[0].ClearField("doc_string"),
    ),
    "attribute lists": (
        attribute_lists,
        "values of 1 attribute of type tensors (the parser reads such lists empty)",
        lambda m: m.graph.node[2].attribute[0].ClearField("tensors"),
    ),
    "segments": (segments, "segments of 1 tensor", lambda m: m.graph.initializer[0].ClearField("segment")),
    "node and graph notes": (
        node_and_graph_notes,
        "doc strings of 2 nodes; metadata of 1 node; doc strings of 1 graph; metadata of 1 graph",
        strip_node_and_graph_notes,
    ),
}


@pytest.mark.parametrize("case", list(LEFT_OUT_CASES))
def test_the_header_names_what_the_text_leaves_out_and_the_text_is_the_model_without_it(client, case):
    build, words, strip = LEFT_OUT_CASES[case]
    text, held = text_and_model(client, build())
    assert header(text) == {"left_out": words + "."}, text[:400]
    back = onnx.parser.parse_model(text)
    assert differences(held, back), "the case holds nothing the text leaves out"
    assert differences(without(held, strip), back) == []


def test_training_graphs_are_named_as_such_not_by_their_doc_strings(client):
    """The training graphs' doc strings were the header's only trace of them ("doc strings of
    2 graphs"): the graphs go whole, with their bindings, and are said so once."""
    text, _ = text_and_model(client, training())
    assert "doc strings" not in text.split("\n")[0]
    assert header(text)["left_out"].startswith("3 training graphs and their 3 bindings")
    one = base()
    info = one.training_info.add()
    info.algorithm.CopyFrom(helper.make_graph([helper.make_node("Neg", ["w"], ["w1"])], "step", [], [vi("w1")]))
    info.update_binding.add(key="w", value="w1")
    text, _ = text_and_model(client, one)
    assert header(text) == {"left_out": "1 training graph and its 1 binding."}


def test_everything_left_out_is_said_in_one_line_in_order(client):
    m = devices()
    m.training_info.extend(training().training_info)
    m.graph.quantization_annotation.add(tensor_name="h")
    m.graph.value_info[0].doc_string = "sum"
    m.graph.node[0].doc_string = "adds"
    m.functions.append(
        helper.make_function("local", "Twice", ["X"], ["Y"], [helper.make_node("Add", ["X", "X"], ["Y"])], [])
    )
    m.functions[0].metadata_props.add(key="k", value="v")
    text, _ = text_and_model(client, m)
    assert text.split("\n")[0] == (
        LEFT_OUT + "3 training graphs and their 3 bindings; the model's 2 device configurations;"
        " device configurations of 2 nodes; 1 quantization annotation; doc strings of 1 node;"
        " doc strings of 1 value; metadata of function Twice."
    )
    onnx.parser.parse_model(text)


# ---------------------------------------------------------------- texts that don't parse back


def sparse_constant() -> onnx.ModelProto:
    values = helper.make_tensor("v", TensorProto.FLOAT, [2], [1.0, 2.0])
    sparse = helper.make_sparse_tensor(values, helper.make_tensor("i", TensorProto.INT64, [2], [0, 3]), [4])
    return base(helper.make_node("Constant", [], ["k"], name="k", sparse_value=sparse), outputs=("k",))


def odd_element_types() -> onnx.ModelProto:
    m = base()
    m.graph.initializer.append(helper.make_tensor("q", TensorProto.INT4, [4], [1, -2, 3, -4]))
    m.graph.initializer.append(numpy_helper.from_array(np.array([1 + 2j], np.complex64), "z"))
    return m


def unnamed_initializer() -> onnx.ModelProto:
    m = base()
    m.graph.initializer.append(const("", [0.5]))
    return m


def odd_domain() -> onnx.ModelProto:
    m = base(helper.make_node("Blur", ["x"], ["b"], name="blur", domain="my-ops"), outputs=("b",))
    m.opset_import.append(helper.make_opsetid("my-ops", 1))
    return m


NOT_PARSED_CASES = {
    "sparse Constant": (sparse_constant, "sparse values of 1 Constant node, printed empty."),
    "int4 and complex64 values": (odd_element_types, 'values of 2 complex64/int4 tensors, printed as "...".'),
    "an initializer without a name": (unnamed_initializer, "1 initializer without a name."),
    # none of the causes above: the parser's own words, at the line of the text as served
    "a domain the parser can't read": (
        odd_domain,
        "onnx.parser stops at line 11, column 17: Expected character ( not found.",
    ),
}


@pytest.mark.parametrize("case", list(NOT_PARSED_CASES))
def test_a_text_that_does_not_parse_back_says_so(client, case):
    build, words = NOT_PARSED_CASES[case]
    text, _ = text_and_model(client, build())
    assert header(text) == {"not_parsed": words}, text[:600]
    assert text.startswith(NOT_PARSED)
    with pytest.raises(Exception, match="ParseError"):
        onnx.parser.parse_model(text)


def test_the_parsers_own_words_point_at_the_line_of_the_text_served(client):
    text, _ = text_and_model(client, odd_domain())
    assert "line 11, column 17" in text.split("\n")[0]
    assert text.split("\n")[10].strip() == "[blur] b = my-ops.Blur (x)"


def test_what_does_not_parse_back_is_said_above_what_is_left_out(client):
    m = sparse_constant()
    m.graph.node[0].doc_string = "adds"
    text, _ = text_and_model(client, m)
    first, second, third = text.split("\n")[:3]
    assert first == NOT_PARSED + "sparse values of 1 Constant node, printed empty."
    assert second == LEFT_OUT + "doc strings of 1 node."
    assert not third.startswith("#")


# ---------------------------------------------------------------- nothing said: the whole model


def with_functions() -> onnx.ModelProto:
    m = onnx.parser.parse_model(
        """
        <ir_version: 10, opset_import: ["" : 18, "local" : 1], producer_name: "p", producer_version: "2",
         domain: "d", model_version: 3, doc_string: "the model", metadata_props: ["k": "v"]>
        main (float[N, 4] X, int64[2] S) => (float[N, 4] Y, seq(float[2]) Q, optional(int64[2]) O) {
          H = local.Act <alpha: float = 0.2> (X)
          Y = local.Act <alpha: float = 0.1, beta: float = 3.0> (H)
          Q = SequenceConstruct (S2)
          S2 = Cast <to: int = 1> (S)
          O = Optional (S)
        }
        <domain: "local", opset_import: ["" : 18]>
        Act <alpha, beta: float = 0.5> (X) => (Y) {
          T1 = LeakyRelu <alpha: float = @alpha> (X)
          B = Constant <value_float: float = @beta> ()
          Y = Mul (T1, B)
        }
        """
    )
    m.functions[0].doc_string = "LeakyRelu, scaled"
    m.functions[0].value_info.append(helper.make_tensor_value_info("T1", TensorProto.FLOAT, ["N", 4]))
    m.graph.initializer.append(numpy_helper.from_array(np.array([1, 2], np.float16), "half"))
    m.graph.initializer.append(numpy_helper.from_array(np.array(["a", 'b"c'], object), "words"))
    m.graph.initializer.append(numpy_helper.from_array(np.array([1 / 3, np.pi], np.float32), "thirds"))
    return m


WHOLE = {"nested": nested_search_model, "functions and types": with_functions, "plain": base}


@pytest.mark.parametrize("case", list(WHOLE))
def test_a_text_with_no_header_reads_back_as_the_whole_model(client, case):
    text, held = text_and_model(client, WHOLE[case]())
    assert header(text) == {} and not text.startswith("#")
    assert differences(held, onnx.parser.parse_model(text)) == []
