"""Views of what the format holds beyond nodes: schemas, inferred types, validation, text form,
IR 10/11 fields, training info."""

from __future__ import annotations

import io

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from test_bad_input import small_model
from testkit import ONNX_DATA, upload


def test_schema_of_known_unknown_and_function_nodes(client):
    m = small_model()
    m.graph.node[1].attribute.append(helper.make_attribute("bogus", 3))
    m.graph.node.append(helper.make_node("Zork", ["z"], ["w"], domain="custom.x"))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    s = client.get(f"/api/models/{mid}/schema?node=n1").get_json()
    assert s["known"] and s["op_type"] == "LeakyRelu" and s["opset_version"] == 17
    assert any(a["name"] == "alpha" and a["default"] == 0.009999999776482582 for a in s["attributes"])
    assert s["unknown_attributes"] == ["bogus"] and "Leaky" in s["doc"]
    assert s["inputs"][0]["name"] == "X"
    u = client.get(f"/api/models/{mid}/schema?node=n3").get_json()
    assert not u["known"] and "custom.x" in u["problem"]
    assert client.get(f"/api/models/{mid}/schema?node=n9").status_code == 404
    assert client.get(f"/api/models/{mid}/schema").status_code == 400


def test_function_call_is_linked_to_its_function(client):
    fn_proto = helper.make_function(
        "local",
        "Swish",
        ["X"],
        ["Y"],
        [helper.make_node("Sigmoid", ["X"], ["S"]), helper.make_node("Mul", ["X", "S"], ["Y"])],
        [helper.make_opsetid("", 17)],
    )
    g = helper.make_graph(
        [helper.make_node("Swish", ["x"], ["y"], domain="local")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    m = helper.make_model(
        g, functions=[fn_proto], opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    )
    onnx.checker.check_model(m)
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    summary = client.get(f"/api/models/{mid}").get_json()
    assert summary["functions"][0] == {
        "path": "fn[0]",
        "name": "Swish",
        "domain": "local",
        "overload": "",
        "nodes": 2,
        "inputs": 1,
        "outputs": 1,
        "attributes": [],
    }
    assert client.get(f"/api/models/{mid}/graph").get_json()["nodes"][0]["function"] == "fn[0]"
    assert client.get(f"/api/models/{mid}/schema?node=n0").get_json()["kind"] == "function"
    fn = client.get(f"/api/models/{mid}/graph?path=fn[0]").get_json()
    assert fn["kind"] == "function" and [n["op_type"] for n in fn["nodes"]] == ["Sigmoid", "Mul"]
    assert [i["name"] for i in fn["inputs"]] == ["X"] and fn["breadcrumb"][-1]["path"] == "fn[0]"


def test_a_reference_to_a_function_attribute_has_no_value_of_its_own(client):
    """`value_float = @alpha` holds an empty 0.0 in its proto: sent as the reference alone, since
    a reader (the drawing once) takes a value sent for the value it has."""
    from browser.browser_models import function_model

    mid = upload(client, function_model().SerializeToString()).get_json()["id"]
    fn = client.get(f"/api/models/{mid}/graph?path=fn[0]").get_json()
    [ref] = fn["nodes"][0]["attributes"]
    assert ref == {"name": "value_float", "type": "FLOAT", "ref_attr_name": "alpha"}
    # the call's own attribute is a value
    call = client.get(f"/api/models/{mid}/graph").get_json()["nodes"][1]
    assert call["attributes"] == [{"name": "alpha", "type": "FLOAT", "value": 2.0}]


def test_inferred_types_fill_missing_value_info(client):
    m = small_model()
    assert not m.graph.value_info
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    g = client.get(f"/api/models/{mid}/graph").get_json()
    inferred = {v["name"]: v for v in g["inferred_value_info"]}
    assert inferred["h"]["dtype"] == "FLOAT" and inferred["h"]["shape"] == [1, 2]
    assert onnx.load_from_string(client.get(f"/api/models/{mid}/download").data) == m  # nothing stored


def test_validation_reports_inference_errors_per_node(client):
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="bad_conv", kernel_shape=[3, 3])
    g = helper.make_graph(
        [conv],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3, 3, 3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    v = client.get(f"/api/models/{mid}").get_json()["validation"]
    assert v["ok"] and not v["full"]["ok"]
    err = v["inference_errors"][0]
    assert err["node"] == "n0" and err["node_name"] == "bad_conv" and "kernel_shape" in err["message"]


def test_text_form(client):
    m = small_model()
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    r = client.get(f"/api/models/{mid}/text")
    assert r.mimetype == "text/plain"
    reparsed = onnx.parser.parse_model(r.get_data(as_text=True))
    assert [n.op_type for n in reparsed.graph.node] == ["MatMul", "LeakyRelu", "Identity"]
    d = client.get(f"/api/models/{mid}/text?download=1")
    assert "attachment" in d.headers["Content-Disposition"]

    # any revision prints as it is, not only the head (the page asks for the one on screen)
    node = reparsed.graph.node[1].name
    edit = {"base": 0, "ops": [{"op": "rename_node", "node": "n1", "name": "renamed_relu"}]}
    assert client.post(f"/api/models/{mid}/edits", json=edit).status_code == 200
    head = client.get(f"/api/models/{mid}/text").get_data(as_text=True)
    old = client.get(f"/api/models/{mid}/text?revision=0").get_data(as_text=True)
    assert "renamed_relu" in head and "renamed_relu" not in old and node in old
    d = client.get(f"/api/models/{mid}/text?revision=0&download=1")
    assert d.get_data(as_text=True) == old and ".r0.onnxtxt" in d.headers["Content-Disposition"]


def test_the_text_form_of_functions_reads_back_as_the_same_model(client):
    """onnx's printer leaves out a function's attribute defaults, doc string and value_info (the
    body then reads @beta, declared nowhere): the text form has them, so uploaded again it is
    the same model; what ONNX text has no syntax for is named in a comment at its top."""
    m = onnx.parser.parse_model(
        """
        <ir_version: 10, opset_import: ["" : 18, "local" : 1]>
        main (float[N, 4] X) => (float[N, 4] Y) {
          H = local.Act <alpha: float = 0.2> (X)
          Y = local.Act <alpha: float = 0.1, beta: float = 3.0> (H)
        }
        <domain: "local", opset_import: ["" : 18]>
        Act <alpha, beta: float = 0.5, tag: string = "a>b"> (X) => (Y) {
          T1 = LeakyRelu <alpha: float = @alpha> (X)
          B = Constant <value_float: float = @beta> ()
          Y = Mul (T1, B)
        }
        """
    )
    fn = m.functions[0]
    fn.doc_string = 'LeakyRelu "scaled"\nby beta'
    fn.value_info.append(helper.make_tensor_value_info("T1", TensorProto.FLOAT, ["N", 4]))
    fn.metadata_props.add(key="origin", value="tests")
    m.graph.node[0].doc_string = "first call"
    onnx.checker.check_model(m, full_check=True)
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    text = client.get(f"/api/models/{mid}/text").get_data(as_text=True)
    assert text.startswith(
        "# Not in this text (ONNX text has no syntax for them): doc strings of 1 node; metadata of function Act.\n"
    )
    back = onnx.parser.parse_model(text)
    got = back.functions[0]
    assert list(got.attribute) == ["alpha"] and list(got.attribute_proto) == list(fn.attribute_proto)
    assert got.doc_string == fn.doc_string and list(got.value_info) == list(fn.value_info)
    onnx.checker.check_model(back, full_check=True)
    # uploaded again, the text is a model that computes what the original does
    r = client.post("/api/models", data={"file": (io.BytesIO(text.encode()), "act.onnxtxt")})
    assert r.status_code == 201, r.get_json()
    text_id = r.get_json()["id"]
    verdict = client.get(f"/api/models/{text_id}/validation").get_json()
    assert verdict["full"]["ok"] and verdict["runtime"]["status"] == "ok", verdict
    # stored as the binary model it parses to: it downloads as a .onnx file onnx.load reads
    # (as "act.onnxtxt", onnx.load took its bytes for text, QA20 F3), its revisions too
    d = client.get(f"/api/models/{text_id}/download")
    assert (
        'filename="act.onnx"' in d.headers["Content-Disposition"]
        or "filename=act.onnx" in d.headers["Content-Disposition"]
    )
    assert onnx.load_from_string(d.data).functions[0].name == "Act"
    edit = {"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    assert client.post(f"/api/models/{text_id}/edits", json=edit).status_code == 200
    assert "act.r1.onnx" in client.get(f"/api/models/{text_id}/download").headers["Content-Disposition"]
    assert "act.r1.onnxtxt" in client.get(f"/api/models/{text_id}/text?download=1").headers["Content-Disposition"]


def test_the_text_form_shows_weights_as_the_external_layout_holds_them(client):
    """Weights over 1 KiB print as references into <name>.data, exactly as the .onnx of
    Download › external layout holds them: never the store's own keys (studio:tensor/...), and
    the text with that .data file is the whole model again."""
    import io
    import zipfile

    m = small_model()
    big = np.arange(5000, dtype=np.float32).reshape(50, 100)
    m.graph.initializer.append(numpy_helper.from_array(big, "table"))
    m.graph.initializer.append(numpy_helper.from_array(np.ones(4, np.float32), "tiny"))
    mid = upload(client, m.SerializeToString(), "net.onnx").get_json()["id"]
    text = client.get(f"/api/models/{mid}/text").get_data(as_text=True)
    assert "studio:tensor" not in text
    assert 'float[50,100] table = ["location": "net.data", "offset": "0", "length": "20000"]' in text
    z = zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{mid}/download?layout=external").data))
    from_text = onnx.parser.parse_model(text)
    from_zip = onnx.ModelProto.FromString(z.read("net.onnx"))
    ours = {t.name: t for t in from_text.graph.initializer}
    theirs = {t.name: t for t in from_zip.graph.initializer}
    assert ours["table"].external_data == theirs["table"].external_data
    assert np.array_equal(numpy_helper.to_array(ours["tiny"]), numpy_helper.to_array(theirs["tiny"]))
    data = z.read("net.data")
    assert np.array_equal(np.frombuffer(data[:20000], np.float32).reshape(50, 100), big)


def test_ir10_and_ir11_fields_are_shown(client):
    m = small_model()
    m.ir_version = 11
    m.graph.value_info.append(helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 2]))
    m.graph.value_info[0].metadata_props.add(key="vi", value="1")
    m.graph.initializer[0].metadata_props.add(key="t", value="2")
    m.graph.quantization_annotation.add(tensor_name="h").quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="W")
    m.configuration.add(name="pair", num_devices=2)
    cfg = m.graph.node[0].device_configurations.add(configuration_id="pair")
    spec = cfg.sharding_spec.add(tensor_name="x", device=[0, 1])
    spec.sharded_dim.add(axis=0).simple_sharding.add(dim_value=1, num_shards=2)
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    s = client.get(f"/api/models/{mid}").get_json()
    assert s["configuration"] == [{"name": "pair", "num_devices": 2}]
    g = client.get(f"/api/models/{mid}/graph").get_json()
    assert g["value_info"][0]["metadata_props"] == [{"key": "vi", "value": "1"}]
    assert g["initializers"][0]["metadata_props"] == [{"key": "t", "value": "2"}]
    assert g["quantization_annotation"][0]["tensor_name"] == "h"
    dc = g["nodes"][0]["device_configurations"][0]
    # onnx.proto's names and integers as numbers, as the rest of the API (QA22 p8)
    assert dc == {
        "configuration_id": "pair",
        "sharding_spec": [
            {
                "tensor_name": "x",
                "device": [0, 1],
                "sharded_dim": [{"axis": 0, "simple_sharding": [{"dim_value": 1, "num_shards": 2}]}],
            }
        ],
    }


def test_training_graphs_and_bindings(client):
    path = ONNX_DATA / "simple" / "test_gradient_of_add" / "model.onnx"
    m = onnx.load(path)
    m.training_info.add().algorithm.CopyFrom(
        helper.make_graph([helper.make_node("Identity", ["a"], ["a_next"])], "algo", [], [])
    )
    m.training_info[0].update_binding.add(key="a", value="a_next")
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    t = client.get(f"/api/models/{mid}").get_json()["training"][0]
    assert t["algo"] == "train[0].algo" and t["init"] is None
    assert t["update_binding"] == [{"key": "a", "value": "a_next"}]
    g = client.get(f"/api/models/{mid}/graph?path=train[0].algo").get_json()
    assert [n["op_type"] for n in g["nodes"]] == ["Identity"]


def test_sparse_initializer_previews_densified(client):
    m = small_model()
    values = numpy_helper.from_array(np.array([5.0, 7.0], np.float32), "S")
    indices = numpy_helper.from_array(np.array([1, 6], np.int64), "S_idx")
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [2, 4]))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    g = client.get(f"/api/models/{mid}/graph").get_json()
    assert g["initializers"][-1] == {
        "name": "S",
        "dtype": "FLOAT",
        "shape": [2, 4],
        "nnz": 2,
        "ref": "S",
        "sparse": True,
        "indices": {"dtype": "INT64", "shape": [2]},
    }
    p = client.get(f"/api/models/{mid}/tensors/S").get_json()
    assert p["values"] == [0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 7.0, 0.0] and p["sparse"] == {"nnz": 2}


def test_big_graphs_defer_inferred_types_to_their_own_call(tmp_path):
    from app import create_app

    app = create_app({"DATA_DIR": str(tmp_path / "d"), "INFER_INLINE_NODES": 2})
    c = app.test_client()
    m = small_model()
    m.doc_string = f"unique {tmp_path}"  # inference results are cached by content: make it new
    # stored directly: an upload's summary would start the background warm-up and race this test
    mid = app.extensions["store"].create_model("m.onnx", m.SerializeToString()).id  # 3 nodes > 2
    g = c.get(f"/api/models/{mid}/graph").get_json()
    assert g["inferred_types"] == "deferred" and g["inferred_value_info"] == []
    t = c.get(f"/api/models/{mid}/types").get_json()
    assert {v["name"]: v["shape"] for v in t["inferred_value_info"]}["h"] == [1, 2]
    assert c.get(f"/api/models/{mid}/graph").get_json()["inferred_types"] == "included"  # cached now
    assert c.get(f"/api/models/{mid}/types?path=n9/body").status_code == 404


def test_big_models_validate_in_the_background(tmp_path):
    from app import create_app

    app = create_app({"DATA_DIR": str(tmp_path / "d"), "INFER_INLINE_NODES": 2})
    c = app.test_client()
    m = small_model()
    m.doc_string = f"validate {tmp_path}"
    s = upload(c, m.SerializeToString()).get_json()
    assert s["validation"]["pending"] is True and s["validation"]["ok"] is None
    v = c.get(f"/api/models/{s['id']}/validation").get_json()
    assert v["ok"] is True and v["full"]["ok"] is True
    assert c.get(f"/api/models/{s['id']}").get_json()["validation"]["ok"] is True


def test_operators_at_the_model_opset(client):
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    ops = {(o["domain"], o["op_type"]): o for o in client.get(f"/api/models/{mid}/operators").get_json()["operators"]}
    assert ops[("", "Conv")]["since_version"] == 11  # newest Conv at opset 17
    assert ("", "Attention") not in ops  # opset 23 arrives later than 17
    leaky = ops[("", "LeakyRelu")]["attributes"]
    assert leaky == [{"name": "alpha", "type": "FLOAT", "required": False, "default": 0.009999999776482582}]


def test_inferred_dims_are_named_after_the_inputs_dims(client):
    """onnx's inference calls the length of a sliced table unk__N; onnxruntime's symbolic
    inference (run after it in the helper) names it from the inputs: the drawing reads seq, not
    unk__0, wherever the size follows from the inputs."""
    from browser.browser_models import position_slice_model

    model = position_slice_model()
    by_onnx = onnx.shape_inference.infer_shapes(model, data_prop=True)
    p = next(v for v in by_onnx.graph.value_info if v.name == "p")
    assert p.type.tensor_type.shape.dim[0].dim_param.startswith("unk__")  # what it would say
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    shapes = {t["name"]: t["shape"] for t in client.get(f"/api/models/{mid}/types").get_json()["inferred_value_info"]}
    assert shapes["p"] == ["seq", 16] and shapes["z"] == ["seq", 32]
    assert "unk__" not in str(shapes), shapes


def test_subgraph_inputs_and_outputs_declared_untyped_get_inferred_types(client):
    """The expanded LinearAttention's Scan body declares its inputs and outputs without types
    (as many exporters' loop bodies do): inference types them, and the graph says so."""
    from testkit import node_testcases

    model = node_testcases()["test_linear_attention_linear_expanded"].model
    scan = next(i for i, n in enumerate(model.graph.node) if n.op_type == "Scan")
    body = next(a.g for a in model.graph.node[scan].attribute if a.name == "body")
    untyped = [v.name for v in [*body.input, *body.output] if not v.HasField("type")]
    assert len(untyped) == len(body.input) + len(body.output) == 6  # what makes the case
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    g = client.get(f"/api/models/{mid}/graph?path=n{scan}/body").get_json()
    assert all(v["type"] == {"kind": "unknown"} for v in [*g["inputs"], *g["outputs"]])  # as declared
    inferred = {v["name"]: v for v in g["inferred_value_info"]}
    assert set(untyped) <= set(inferred)
    assert all(inferred[name]["dtype"] == "FLOAT" for name in untyped)
    # the inputs' shapes follow from the Scan's inputs; the outputs' only their element type
    assert all(len(inferred[v.name]["shape"]) >= 2 for v in body.input), [inferred[v.name] for v in body.input]
    assert len(inferred) == len(set(inferred))  # each name once


def test_what_a_subgraph_or_training_graph_reads_from_outside_is_typed(client):
    """An If branch reading `x` of the main graph, and a training graph reading a main-graph
    initializer, say where it comes from and its type (the page then types its edges)."""
    from browser.browser_models import if_model
    from test_unused_initializers import shared_model

    mid = upload(client, if_model().SerializeToString()).get_json()["id"]
    g = client.get(f"/api/models/{mid}/graph?path=n1/then_branch").get_json()
    assert g["outer_scope"] == ["x"]
    assert [(v["name"], v["dtype"], v["shape"], v["from"]) for v in g["outer_value_info"]] == [
        ("x", "FLOAT", [2, 3], "")
    ]
    assert client.get(f"/api/models/{mid}/graph").get_json()["outer_value_info"] == []

    mid = upload(client, shared_model().SerializeToString()).get_json()["id"]
    g = client.get(f"/api/models/{mid}/graph?path=train[0].algo").get_json()
    assert g["outer_scope"] == ["T"]
    assert [(v["name"], v["dtype"], v["shape"], v["from"]) for v in g["outer_value_info"]] == [
        ("T", "FLOAT", [2, 2], "")
    ]


def test_a_branch_says_which_outer_values_are_weights_and_how_to_read_them(client):
    """QA31: a merged decoder's branches read every weight from the main graph; the graph JSON
    says which outer values are initializers (with the ref their values are read by), so the
    page lists them in their readers' boxes instead of a row of 50 boxes."""
    from merged_decoder import merged_decoder

    mid = upload(client, merged_decoder().SerializeToString()).get_json()["id"]
    g = client.get(f"/api/models/{mid}/graph?path=n0/else_branch").get_json()  # it reads every weight
    outer = {v["name"]: v for v in g["outer_value_info"]}
    weights = {name for name, v in outer.items() if "initializer" in v}
    assert weights == {t.name for t in merged_decoder().graph.initializer}
    assert "input_ids" in outer and "initializer" not in outer["input_ids"]
    init = outer["model.decoder.layers.0.self_attn.k_proj.weight"]["initializer"]
    assert (init["dtype"], init["shape"]) == ("FLOAT", [32, 32])
    values = client.get(f"/api/models/{mid}/tensors/{init['ref']}?count=4").get_json()
    assert values["shape"] == [32, 32] and len(values["values"]) == 4
