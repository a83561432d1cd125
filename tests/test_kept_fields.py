"""Edits that hand the graph to a tool (onnx's version converter, shape inference) keep what the
tool has no business with (QA22 M1, m2): the graph's doc string, metadata and quantization
annotations, the doc strings and metadata of its inputs, outputs, value_info and initializers,
each node's doc string, metadata and device configurations — in bodies too."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

from app.onnx_io.kept_fields import restore_graph_fields


def entry(key: str, value: str) -> onnx.StringStringEntryProto:
    return onnx.StringStringEntryProto(key=key, value=value)


def described_model(opset: int = 21) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4], doc_string="X doc")
    x.metadata_props.append(entry("x_md", "1"))
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 4], doc_string="Y doc")
    y.metadata_props.append(entry("y_md", "2"))
    h = helper.make_tensor_value_info("h", TensorProto.FLOAT, ["batch", 4], doc_string="h doc")
    h.metadata_props.append(entry("h_md", "3"))
    w = numpy_helper.from_array(np.eye(4, dtype=np.float32), "W")
    w.doc_string = "W doc"
    w.metadata_props.append(entry("w_md", "4"))
    out = helper.make_tensor_value_info("b", TensorProto.FLOAT, None, doc_string="branch out doc")
    out.metadata_props.append(entry("b_md", "5"))
    then = helper.make_graph([helper.make_node("Relu", ["h"], ["b"], name="relu")], "then", [], [out])
    other = helper.make_graph([helper.make_node("Neg", ["h"], ["b"], name="neg")], "else", [], [out])
    mm = helper.make_node("MatMul", ["X", "W"], ["h"], name="mm", doc_string="mm doc")
    mm.metadata_props.append(entry("mm_md", "6"))
    config = mm.device_configurations.add(configuration_id="two_devices")
    config.sharding_spec.add(tensor_name="h", device=[0, 1])
    graph = helper.make_graph(
        [
            mm,
            helper.make_node("ReduceMax", ["h"], ["top"], name="top", keepdims=0),
            helper.make_node("Greater", ["top", "zero"], ["positive"], name="positive"),
            helper.make_node("If", ["positive"], ["Y"], name="choose", then_branch=then, else_branch=other),
        ],
        "described",
        [x],
        [y],
        [w, numpy_helper.from_array(np.array(0.0, np.float32), "zero")],
        value_info=[h],
        doc_string="graph doc",
    )
    graph.metadata_props.append(entry("g_md", "7"))
    graph.quantization_annotation.add(tensor_name="h").quant_parameter_tensor_names.append(entry("SCALE_TENSOR", "W"))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.configuration.add(name="two_devices", num_devices=2, device=["cpu0", "cpu1"])
    onnx.checker.check_model(model, full_check=True)
    return model


def without(model: onnx.ModelProto, *fields: str) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for f in fields:
        out.ClearField(f)
    return out


def edited(client, model: onnx.ModelProto, op: dict) -> onnx.ModelProto:
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    return onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)


def test_convert_opset_keeps_what_the_converter_drops(client):
    before = described_model(21)
    after = edited(client, before, {"op": "convert_opset", "version": 20})
    assert [(o.domain, o.version) for o in after.opset_import] == [("", 20)]
    # every field but the opset import is as it was: nothing here is an operator the converter changes
    assert without(after, "opset_import") == without(before, "opset_import")


def test_reinferred_value_info_keeps_its_doc_string_and_metadata(client):
    after = edited(client, described_model(), {"op": "set_io_shape", "name": "X", "shape": [2, 4]})
    h = next(v for v in after.graph.value_info if v.name == "h")
    assert [d.dim_value for d in h.type.tensor_type.shape.dim] == [2, 4]
    assert h.doc_string == "h doc" and [(e.key, e.value) for e in h.metadata_props] == [("h_md", "3")]


def test_fields_a_tool_made_its_own_are_not_overwritten():
    before = described_model().graph
    after = onnx.GraphProto()
    after.CopyFrom(before)
    for g in (after,):
        g.doc_string = "new doc"
        del g.metadata_props[:]
        g.metadata_props.append(entry("g_md", "new"))
        g.node[0].doc_string = ""
        g.node[0].op_type = "Gemm"  # another node writing that output: nothing of the MatMul's goes on it
        del g.node[0].metadata_props[:]
    restore_graph_fields(before, after)
    assert after.doc_string == "new doc" and [(e.key, e.value) for e in after.metadata_props] == [("g_md", "new")]
    assert after.node[0].doc_string == "" and not len(after.node[0].metadata_props)


def training_model(opset: int = 12) -> onnx.ModelProto:
    """y = X·W, with a training algorithm that sums W over axis 0 (ReduceSum's `axes` an
    attribute until opset 13, an input since) and an initialization graph."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")],
        "train_me",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.eye(4, dtype=np.float32), "W")],
    )
    algorithm = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["W"], ["s"], name="rs", axes=[0], keepdims=1),
            helper.make_node("Sub", ["W", "s"], ["W_new"], name="step"),
        ],
        "algorithm",
        [],
        [helper.make_tensor_value_info("W_new", TensorProto.FLOAT, [4, 4])],
    )
    init = helper.make_graph(
        [
            helper.make_node(
                "Constant", [], ["W0"], name="w0", value=numpy_helper.from_array(np.eye(4, dtype=np.float32))
            )
        ],
        "init",
        [],
        [helper.make_tensor_value_info("W0", TensorProto.FLOAT, [4, 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)
    t = model.training_info.add()
    t.algorithm.CopyFrom(algorithm)
    t.update_binding.add(key="W", value="W_new")
    t.initialization.CopyFrom(init)
    t.initialization_binding.add(key="W", value="W0")
    return model


def test_convert_opset_converts_the_training_graphs_too(client):
    """QA22 M2: to opset 18 the training algorithm kept ReduceSum's `axes` attribute, which no
    longer exists there; the checker looks no further than the main graph, so nothing said so."""
    before = training_model(12)
    mid = upload(client, before.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 18}]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith("; 2 training graphs converted too"), r.get_json()
    after = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)
    t = after.training_info[0]
    rs = next(n for n in t.algorithm.node if n.op_type == "ReduceSum")
    assert not any(a.name == "axes" for a in rs.attribute) and len(rs.input) == 2  # axes as an input at 18
    assert rs.name == "rs" and [(b.key, b.value) for b in t.update_binding] == [("W", "W_new")]
    # each training graph checks as a model of the opset it now follows
    for g in (t.algorithm, t.initialization):
        stand_in = helper.make_model(
            helper.make_graph(
                g.node,
                "g",
                [helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 4])] if g is t.algorithm else [],
                g.output,
            ),
            opset_imports=after.opset_import,
        )
        onnx.checker.check_model(stand_in, full_check=True)
    assert t.algorithm.name == "algorithm" and t.initialization.name == "init"


def test_extract_subgraph_keeps_the_annotations_and_notes_of_what_it_keeps(client):
    """QA22 m7: onnx's Extractor refused any model with a quantization annotation, in its own
    words ("len_quantization_annotation is 1, it must be 0")."""
    before = described_model()
    after = edited(client, before, {"op": "extract_subgraph", "inputs": ["X"], "outputs": ["h"]})
    assert [n.name for n in after.graph.node] == ["mm"]
    assert [a.tensor_name for a in after.graph.quantization_annotation] == ["h"]
    assert after.graph.doc_string == "graph doc" and [(e.key, e.value) for e in after.graph.metadata_props] == [
        ("g_md", "7")
    ]
    w = next(t for t in after.graph.initializer if t.name == "W")
    assert w.doc_string == "W doc" and [(e.key, e.value) for e in w.metadata_props] == [("w_md", "4")]
    x = after.graph.input[0]
    assert x.doc_string == "X doc" and [(e.key, e.value) for e in x.metadata_props] == [("x_md", "1")]
    assert after.graph.node[0].doc_string == "mm doc" and len(after.graph.node[0].device_configurations) == 1


def test_setting_a_sparse_initializer_says_what_it_is(client):
    """QA22 m6: "no initializer named 'S1'" for an initializer the page lists (a sparse one)."""
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "S1"),
        numpy_helper.from_array(np.array([0, 5], np.int64), "S1_indices"),
        [2, 4],
    )
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "S1"], ["Y"], name="add")],
        "sparse",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])],
        sparse_initializer=[sparse],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    value = {"dtype": "FLOAT", "shape": [2, 4], "values": [0.0] * 8}
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "set_initializer", "name": "S1", "value": value}]}
    )
    assert r.status_code == 422, r.get_json()
    assert (
        "'S1' is a sparse initializer (values at indices): its values are not set here"
        in r.get_json()["error"]["message"]
    )


def test_fixing_every_input_dim_re_infers_the_outputs_declaring_them(client):
    """QA23 F6: a conformer's input made static [1, 200, 80] left its output declaring [batch,
    time_sub, 32]: dims no input names any more. Re-inferred by default now; with
    update_types false, kept as asked."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["feats", "W"], ["logits"], name="proj")],
        "ctc",
        [helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["batch", "time", 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "time_sub", 4])],
        [numpy_helper.from_array(np.ones((8, 4), np.float32), "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    after = edited(client, model, {"op": "set_io_shape", "name": "feats", "shape": [1, 20, 8]})
    dims = [d.dim_value for d in after.graph.output[0].type.tensor_type.shape.dim]
    assert dims == [1, 20, 4]
    kept = edited(client, model, {"op": "set_io_shape", "name": "feats", "shape": [1, 20, 8], "update_types": False})
    assert [d.dim_param for d in kept.graph.output[0].type.tensor_type.shape.dim] == ["batch", "time_sub", ""]


def test_complex_values_are_typed_as_real_imaginary_pairs(client):
    """QA22 m5: the tensor view shows a complex tensor as [re, im] pairs and prefills its JSON
    form so; the server refused them (a [3, 2] for a [3]). Pairs are read as complex numbers;
    plain numbers are real ones."""
    c = numpy_helper.from_array(np.array([1 + 2j, -3 + 0.5j, -1j], np.complex64), "c")
    graph = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["y"], name="id")],
        "complex",
        [],
        [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [3])],
        [c],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    pairs = {"dtype": "COMPLEX64", "shape": [3], "values": [[0.5, -1], [2, 0], [0, 3]]}
    after = edited(client, model, {"op": "set_initializer", "name": "c", "value": pairs})
    assert numpy_helper.to_array(after.graph.initializer[0]).tolist() == [0.5 - 1j, 2 + 0j, 3j]
    reals = {"dtype": "COMPLEX64", "shape": [3], "values": [1, 2, 3]}
    after = edited(client, model, {"op": "set_initializer", "name": "c", "value": reals})
    assert numpy_helper.to_array(after.graph.initializer[0]).tolist() == [1 + 0j, 2 + 0j, 3 + 0j]


def test_a_values_metadata_is_set_on_each_of_its_entries(client):
    """QA22 m8: metadata of graph inputs, outputs, value_info and initializers was shown but not
    editable. With `tensor`, set_metadata sets it on each entry of that name, as the value panel
    shows them together; null deletes it where it is."""
    before = described_model()
    mid = upload(client, before.SerializeToString()).get_json()["id"]

    def ops(*batch):
        r = client.post(f"/api/models/{mid}/edits", json={"base": len(ops.done), "ops": list(batch)})
        assert r.status_code == 200, r.get_json()
        ops.done.append(r.get_json()["changes"])
        return onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)

    ops.done = []
    after = ops({"op": "set_metadata", "tensor": "W", "key": "source", "value": "imagenet"})
    w = next(t for t in after.graph.initializer if t.name == "W")
    assert [(e.key, e.value) for e in w.metadata_props] == [("w_md", "4"), ("source", "imagenet")]
    assert ops.done[-1] == ["added metadata 'source' = 'imagenet' to the value 'W'"]
    after = ops({"op": "set_metadata", "tensor": "h", "key": "h_md", "value": "30"})
    h = next(v for v in after.graph.value_info if v.name == "h")
    assert [(e.key, e.value) for e in h.metadata_props] == [("h_md", "30")]
    after = ops({"op": "set_metadata", "tensor": "X", "key": "x_md", "value": None})
    assert not len(after.graph.input[0].metadata_props)
    # in a body: the If branch's output
    after = ops({"op": "set_metadata", "tensor": "b", "target": "n3/then_branch", "key": "b_md", "value": "then"})
    then = next(a.g for a in after.graph.node[3].attribute if a.name == "then_branch")
    assert [(e.key, e.value) for e in then.output[0].metadata_props] == [("b_md", "then")]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 4, "ops": [{"op": "set_metadata", "tensor": "nope", "key": "k", "value": "v"}]},
    )
    assert r.status_code == 404 and "declares no value 'nope'" in r.get_json()["error"]["message"]


def test_simplify_keeps_what_onnxruntime_drops(client):
    """QA22 m1: simplify dropped the inputs', outputs' and value_info's doc strings and metadata,
    initializers' metadata and the quantization annotations."""
    before = described_model()
    before.graph.node.insert(0, helper.make_node("Identity", ["X"], ["X_copy"], name="copy"))  # something to simplify
    before.graph.node[1].input[0] = "X_copy"
    after = edited(client, before, {"op": "simplify"})
    assert len(after.graph.node) == len(before.graph.node) - 1
    x, y = after.graph.input[0], after.graph.output[0]
    assert (x.doc_string, [(e.key, e.value) for e in x.metadata_props]) == ("X doc", [("x_md", "1")])
    assert (y.doc_string, [(e.key, e.value) for e in y.metadata_props]) == ("Y doc", [("y_md", "2")])
    h = next(v for v in after.graph.value_info if v.name == "h")
    assert (h.doc_string, [(e.key, e.value) for e in h.metadata_props]) == ("h doc", [("h_md", "3")])
    w = next(t for t in after.graph.initializer if t.name == "W")
    assert (w.doc_string, [(e.key, e.value) for e in w.metadata_props]) == ("W doc", [("w_md", "4")])
    assert [a.tensor_name for a in after.graph.quantization_annotation] == ["h"]
    mm = next(n for n in after.graph.node if n.name == "mm")
    assert len(mm.device_configurations) == 1


def test_a_string_input_beside_a_bfloat16_output_runs(client):
    """QA22 m4: a string feed sends the run through numpy, which has no bfloat16 to give: the
    smoke run called the model failing and Run answered 422. The narrow outputs come back
    widened (said as converted from their type)."""
    graph = helper.make_graph(
        [
            helper.make_node("Identity", ["s"], ["s_out"], name="pass_text"),
            helper.make_node("Cast", ["x"], ["half"], name="narrow", to=TensorProto.BFLOAT16),
        ],
        "mixed",
        [
            helper.make_tensor_value_info("s", TensorProto.STRING, [3]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [
            helper.make_tensor_value_info("s_out", TensorProto.STRING, [3]),
            helper.make_tensor_value_info("half", TensorProto.BFLOAT16, [2]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    runtime = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert runtime["status"] == "ok", runtime
    body = {"inputs": {"s": {"values": ["a", "b", "c"]}, "x": {"values": [1.5, -2.0]}}}
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == 200, r.get_json()
    out = r.get_json()["outputs"]
    assert out["s_out"]["values"] == ["a", "b", "c"]
    assert out["half"]["values"] == [1.5, -2.0] and out["half"]["converted_from"] == "BFLOAT16"
