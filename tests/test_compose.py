"""The compose op: another model (an uploaded .onnx) joined after this one (post-processing
reading its outputs) or before it (pre-processing feeding its inputs) — checked by onnx.checker,
run by onnxruntime against the two models run one after the other, this model's own names,
fields and metadata unchanged."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from browser.browser_models import argmax_post, classifier
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload


def normalize_pre() -> onnx.ModelProto:
    """image uint8 [1, 8] -> Cast float -> (x - 128) / 64 -> x: named like the classifier's input."""
    graph = h.make_graph(
        [
            h.make_node("Cast", ["image"], ["f"], to=T.FLOAT),
            h.make_node("Sub", ["f", "mean"], ["centred"]),
            h.make_node("Div", ["centred", "scale"], ["x"]),
        ],
        "pre",
        [h.make_tensor_value_info("image", T.UINT8, [1, 8])],
        [h.make_tensor_value_info("x", T.FLOAT, [1, 8])],
        [nh.from_array(np.array(128, np.float32), "mean"), nh.from_array(np.array(64, np.float32), "scale")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def model_blob(client, model: onnx.ModelProto, name: str = "added.onnx") -> dict:
    r = client.post("/api/blobs", data={"file": (io.BytesIO(model.SerializeToString()), name)})
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def composed(client, base: onnx.ModelProto, added: onnx.ModelProto, status: int = 200, **op) -> tuple[str, dict]:
    mid = upload(client, base.SerializeToString()).get_json()["id"]
    blob = model_blob(client, added)["blob"]
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "compose", "model": {"onnx": blob}, **op}]}
    )
    assert r.status_code == status, r.get_json()
    return mid, r.get_json()


def download(client, mid: str, revision: int | None = None) -> onnx.ModelProto:
    query = "" if revision is None else f"?revision={revision}"
    return onnx.load_from_string(client.get(f"/api/models/{mid}/download{query}").data)


def run(model: onnx.ModelProto, feeds: dict) -> dict:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds), strict=True))


X = np.random.default_rng(1).standard_normal((1, 8)).astype(np.float32)


def test_a_post_processing_model_after_this_one_computes_both_in_turn(client):
    """ArgMax after the classifier: y feeds "scores"; the model's outputs are the added model's
    (y no longer, unless kept); the added model's "mm", "w" and node "relu" clash with the
    classifier's and get a suffix, the classifier keeps every name, field and metadata value."""
    mid, answer = composed(client, classifier(), argmax_post(), connect={"scores": "y"})
    assert answer["revision"] == 1 and "3 of its names changed to stay unique" in answer["changes"][0], answer
    model = download(client, mid)
    onnx.checker.check_model(model, full_check=True)
    assert [o.name for o in model.graph.output] == ["probs", "label"] and [i.name for i in model.graph.input] == ["x"]
    assert [n.name for n in model.graph.node] == ["fc", "relu", "relu_1", "softmax", "argmax"]
    assert model.producer_name == "trainer" and model.graph.name == "classifier"
    props = {p.key: p.value for p in model.metadata_props}
    assert props == {"author": "me", "license": "mine", "post": "argmax"}
    assert "metadata kept this model's 'license'" in answer["changes"][0]
    got = run(model, {"x": X})
    y = run(classifier(), {"x": X})["y"]
    want = run(argmax_post(), {"scores": y})
    np.testing.assert_allclose(got["probs"], want["probs"], rtol=1e-6)
    assert got["label"].tolist() == want["label"].tolist()
    # this model's weights are its own still, the added one's stored too: the download has both
    inits = {t.name: nh.to_array(t) for t in model.graph.initializer}
    np.testing.assert_array_equal(inits["w"], nh.to_array(classifier().graph.initializer[0]))
    np.testing.assert_array_equal(inits["w_1"], nh.to_array(argmax_post().graph.initializer[0]))
    # y stays an output on request, and its type is kept as value_info otherwise
    assert "y" in {v.name for v in model.graph.value_info}
    kept = download(
        client, composed(client, classifier(), argmax_post(), connect={"scores": "y"}, keep_outputs=True)[0]
    )
    assert [o.name for o in kept.graph.output] == ["y", "probs", "label"]


def test_a_pre_processing_model_before_this_one_takes_its_inputs_place(client):
    """uint8 normalisation in front: the model now reads "image" (uint8); the pre-processor's
    output, named "x" like the classifier's input, computes it; this model's nodes follow."""
    mid, answer = composed(client, classifier(), normalize_pre(), position="before", connect={"x": "x"})
    model = download(client, mid)
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["image"] and [o.name for o in model.graph.output] == ["y"]
    assert [n.op_type for n in model.graph.node] == ["Cast", "Sub", "Div", "MatMul", "Relu"]
    image = np.random.default_rng(2).integers(0, 256, (1, 8)).astype(np.uint8)
    want = run(classifier(), {"x": ((image.astype(np.float32) - 128) / 64)})["y"]
    np.testing.assert_allclose(run(model, {"image": image})["y"], want, rtol=1e-6)
    assert "added a model of 3 nodes before this one" in answer["changes"][0]


def test_one_tensor_can_feed_several_inputs(client):
    """After: y feeds both inputs of an Add. Before: the added model's one output feeds both
    inputs of this model (the second through an Identity: a tensor has one name)."""
    add = h.make_model(
        h.make_graph(
            [h.make_node("Add", ["a", "b"], ["sum"], name="add")],
            "add",
            [h.make_tensor_value_info(n, T.FLOAT, [1, 300]) for n in ("a", "b")],
            [h.make_tensor_value_info("sum", T.FLOAT, [1, 300])],
        ),
        opset_imports=[h.make_opsetid("", 17)],
    )
    mid, _ = composed(client, classifier(), add, connect={"a": "y", "b": "y"})
    model = download(client, mid)
    onnx.checker.check_model(model, full_check=True)
    np.testing.assert_allclose(run(model, {"x": X})["sum"], 2 * run(classifier(), {"x": X})["y"], rtol=1e-6)
    two = add  # this model: a + b; the added one makes one tensor from "seed"
    pre = h.make_model(
        h.make_graph(
            [h.make_node("Neg", ["seed"], ["minus"], name="neg")],
            "pre",
            [h.make_tensor_value_info("seed", T.FLOAT, [1, 300])],
            [h.make_tensor_value_info("minus", T.FLOAT, [1, 300])],
        ),
        opset_imports=[h.make_opsetid("", 17)],
    )
    mid, _ = composed(client, two, pre, position="before", connect={"a": "minus", "b": "minus"})
    model = download(client, mid)
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["seed"] and [n.op_type for n in model.graph.node] == [
        "Neg",
        "Identity",
        "Add",
    ]
    seed = np.ones((1, 300), np.float32)
    np.testing.assert_allclose(run(model, {"seed": seed})["sum"], -2 * seed)


def test_a_prefix_goes_before_every_name_of_the_added_model(client):
    mid, _ = composed(client, classifier(), argmax_post(), connect={"scores": "y"}, prefix="post/")
    model = download(client, mid)
    onnx.checker.check_model(model, full_check=True)
    assert [o.name for o in model.graph.output] == ["post/probs", "post/label"]
    assert [n.name for n in model.graph.node][2:] == ["post/relu", "post/softmax", "post/argmax"]
    assert {t.name for t in model.graph.initializer} == {"w", "post/w"}


def test_an_intermediate_tensor_can_feed_the_added_model(client):
    """Post-processing on "mm" (the MatMul's output, before the Relu): y stays an output."""
    mid, _ = composed(client, classifier(), argmax_post(), connect={"scores": "mm"})
    model = download(client, mid)
    assert [o.name for o in model.graph.output] == ["y", "probs", "label"]
    got = run(model, {"x": X})
    mm = X @ nh.to_array(classifier().graph.initializer[0])
    assert got["label"].tolist() == run(argmax_post(), {"scores": mm})["label"].tolist()


def test_the_added_models_opset_is_converted_to_this_ones(client):
    mid, answer = composed(client, classifier(17), argmax_post(13), connect={"scores": "y"})
    model = download(client, mid)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    assert "the added model converted from opset 13 to 17" in answer["changes"][0]
    onnx.checker.check_model(model, full_check=True)


def test_functions_join_and_identical_ones_are_shared(client):
    """A model-local function in both models, the same body: one copy; the added model's own
    function joins this one's."""
    double = h.make_function(
        "local", "Double", ["a"], ["b"], [h.make_node("Add", ["a", "a"], ["b"])], [h.make_opsetid("", 17)]
    )
    triple = h.make_function(
        "local",
        "Triple",
        ["a"],
        ["b"],
        [h.make_node("Add", ["a", "a"], ["t"]), h.make_node("Add", ["t", "a"], ["b"])],
        [h.make_opsetid("", 17)],
    )

    def with_functions(model, node, functions):
        model.graph.node.append(node)
        model.functions.extend(functions)
        model.opset_import.append(h.make_opsetid("local", 1))
        return model

    base = classifier()
    base.graph.output[0].name = "d"
    base = with_functions(base, h.make_node("Double", ["y"], ["d"], domain="local"), [double])
    post = argmax_post()
    post.graph.node[0].input[0] = "s3"
    post = with_functions(post, h.make_node("Triple", ["scores"], ["s3"], domain="local"), [double, triple])
    post.graph.node.insert(0, post.graph.node.pop())  # Triple first
    mid, answer = composed(client, base, post, connect={"scores": "d"})
    model = download(client, mid)
    onnx.checker.check_model(model, full_check=True)
    assert (
        sorted(f.name for f in model.functions) == ["Double", "Triple"]
        and "1 local function(s) added" in answer["changes"][0]
    )
    clash = h.make_function(
        "local", "Double", ["a"], ["b"], [h.make_node("Mul", ["a", "a"], ["b"])], [h.make_opsetid("", 17)]
    )
    post.functions[0].CopyFrom(clash)
    _, refused = composed(client, base, post, 422, connect={"scores": "d"})
    assert refused["error"]["code"] == "function_clash"


def test_a_recipe_with_a_composition_replays_with_the_added_model_inside(client, tmp_path):
    from app.edits.recipe import replay

    mid, _ = composed(client, classifier(), argmax_post(), connect={"scores": "y"})
    recipe = client.get(f"/api/models/{mid}/recipe?from=0&to=1").get_json()
    assert len(recipe["blobs"]) == 1
    results = replay(classifier().SerializeToString(), recipe, lambda data: {"ok": True})
    replayed = onnx.load_from_string(results[-1].data)
    assert [o.name for o in replayed.graph.output] == ["probs", "label"]
    assert replayed.SerializeToString() == client.get(f"/api/models/{mid}/download").data


def external_model() -> onnx.ModelProto:
    m = argmax_post()
    t = m.graph.initializer[0]
    t.data_location = T.EXTERNAL
    t.ClearField("raw_data")
    del t.float_data[:]
    t.external_data.add(key="location", value="weights.bin")
    return m


@pytest.mark.parametrize(
    ("op", "added", "status", "code"),
    [
        ({"connect": {"scores": "nope"}}, argmax_post, 404, "unknown_tensor"),
        ({"connect": {"nope": "y"}}, argmax_post, 404, "unknown_tensor"),
        ({"connect": {"x": "x"}, "position": "before"}, argmax_post, 404, "unknown_tensor"),  # no tensor x there
        ({"connect": {}}, argmax_post, 400, "bad_value"),
        ({"connect": {"image": "y"}}, normalize_pre, 422, "type_mismatch"),  # FLOAT into UINT8
        ({"connect": {"scores": "y"}}, external_model, 422, "external_data_missing"),
        ({"connect": {"scores": "y"}, "position": "aside"}, argmax_post, 400, "bad_field"),
        ({"connect": {"scores": 3}}, argmax_post, 400, "bad_field"),
    ],
)
def test_wrong_compositions_are_refused_and_nothing_is_stored(client, op, added, status, code):
    mid, answer = composed(client, classifier(), added(), status, **op)
    assert answer["error"]["code"] == code, answer
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def test_a_file_that_is_not_a_model_or_a_blob_that_is_not_one_is_refused(client):
    r = client.post("/api/blobs", data={"file": (io.BytesIO(b"\x08\x01garbage" * 10), "post.onnx")})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "not_onnx"
    mid = upload(client, classifier().SerializeToString()).get_json()["id"]
    buf = io.BytesIO()
    np.save(buf, np.zeros(3, np.float32))
    npy = client.post("/api/blobs", data={"file": (io.BytesIO(buf.getvalue()), "a.npy")}).get_json()["blob"]
    for blob, code in ((npy, "not_onnx"), ("f" * 64, "unknown_blob")):
        op = {"op": "compose", "model": {"onnx": blob}, "connect": {"scores": "y"}}
        r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
        assert 400 <= r.status_code < 500 and r.get_json()["error"]["code"] == code, r.get_json()


def test_an_uploaded_model_says_what_it_takes_and_gives(client):
    info = model_blob(client, argmax_post(), "post.onnx")
    assert info["kind"] == "model" and info["nodes"] == 3 and info["name"] == "post"
    assert [(i["name"], i["dtype"], i["shape"]) for i in info["inputs"]] == [("scores", "FLOAT", [1, 300])]
    assert [o["name"] for o in info["outputs"]] == ["probs", "label"]


def doubled(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model composed after itself, each input of the added copy fed by the same input: every
    name of the copy clashes (tensors, nodes, subgraphs' values read from outer scopes, local
    functions: shared), so all of them are renamed. compose itself, in-process, no server."""
    from app.edits.compose import compose
    from app.edits.sources import blob_reader

    data = model.SerializeToString()
    initialized = {t.name for t in model.graph.initializer}
    inputs = [v.name for v in model.graph.input if v.name not in initialized]
    result = onnx.ModelProto()
    result.CopyFrom(model)
    op = {"model": {"onnx": "copy"}, "connect": {i: i for i in inputs}, "position": "after", "prefix": ""}
    with blob_reader(lambda digest: data):
        compose(result, {**op, "keep_outputs": False})
    return result


def same_values(a, b) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def check_doubled(model: onnx.ModelProto, feeds: list) -> bool:
    """The model after itself passes the checks the model passes, and computes each output twice,
    equal to the model's own (False when onnxruntime can't run the model itself on `feeds`)."""
    twice = doubled(model)
    try:
        onnx.checker.check_model(model, full_check=True)
        full = True
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError):
        full = False
    onnx.checker.check_model(twice, full_check=full)
    so = ort.SessionOptions()
    so.log_severity_level = 4
    initialized = {t.name for t in model.graph.initializer}
    names = [v.name for v in model.graph.input if v.name not in initialized]
    try:
        want = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
            None, dict(zip(names, feeds, strict=False))
        )
    except Exception:
        return False
    got = ort.InferenceSession(twice.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
        None, dict(zip(names, feeds, strict=False))
    )
    n = len(model.graph.output)
    assert len(got) == 2 * n
    for k, value in enumerate(want):
        assert same_values(value, got[k]) and same_values(value, got[n + k]), model.graph.output[k].name
    return True


@pytest.mark.corpus
def test_every_node_test_model_composed_after_itself_computes_itself_twice():
    """The ~1,900 official node-test models (every operator, attribute kind, subgraph, function):
    each composed after itself passes the checker as the model does, and onnxruntime computes
    each of its outputs twice, equal to the model's own (1,525 run, in ~20 s)."""
    from testkit import node_testcase_names, node_testcases

    ran = 0
    for name in node_testcase_names():
        case = node_testcases()[name]
        initialized = {t.name for t in case.model.graph.initializer}
        if not [v for v in case.model.graph.input if v.name not in initialized]:
            continue  # nothing to connect
        ran += check_doubled(case.model, list(case.data_sets[0][0]))
    assert ran > 1400


@pytest.mark.corpus
def test_real_models_composed_after_themselves_compute_themselves_twice():
    """The onnx wheel's 82 pytorch-converted models, the same way, on their own test inputs (the
    checks on every one; onnxruntime on the ones it runs by themselves: old opsets it refuses)."""
    ran = 0
    for path in sorted((Path(onnx.__file__).parent / "backend/test/data/pytorch-converted").glob("*/model.onnx")):
        feeds = [nh.to_array(onnx.load_tensor(str(p))) for p in sorted(path.parent.glob("test_data_set_0/input_*.pb"))]
        ran += check_doubled(onnx.load(path), feeds)
    assert ran >= 55


def test_a_stored_model_is_added_from_the_store(client):
    """POST .../as-blob: a stored model's head as one .onnx blob (its weights joined in from the
    store's tensor blobs), answered as an uploaded .onnx is; composed before another model, it
    computes what the two compute one after the other."""
    stored = upload(client, classifier().SerializeToString(), "classifier.onnx").get_json()["id"]
    r = client.post(f"/api/models/{stored}/as-blob")
    assert r.status_code == 201, r.get_json()
    info = r.get_json()
    assert info["kind"] == "model" and info["nodes"] == 2 and [o["name"] for o in info["outputs"]] == ["y"]
    mid = upload(client, argmax_post().SerializeToString(), "post.onnx").get_json()["id"]
    op = {"op": "compose", "model": {"onnx": info["blob"]}, "connect": {"scores": "y"}, "position": "before"}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    model = download(client, mid)
    assert [i.name for i in model.graph.input] == ["x"]
    y = run(classifier(), {"x": X})["y"]
    assert run(model, {"x": X})["label"].tolist() == run(argmax_post(), {"scores": y})["label"].tolist()
    # an earlier revision, and what is no model, on request
    assert client.post(f"/api/models/{stored}/as-blob?revision=0").status_code == 201
    assert client.post(f"/api/models/{stored}/as-blob?revision=5").status_code == 404
    tensor = onnx.helper.make_tensor("t", T.FLOAT, [2], [1.0, 2.0]).SerializeToString()
    not_a_model = upload(client, tensor, "t.pb").get_json()["id"]
    r = client.post(f"/api/models/{not_a_model}/as-blob")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "not_a_model"


def test_a_model_with_names_that_are_not_text_is_refused_to_add(client):
    """A node name of invalid UTF-8 (bytes swapped in the serialized model): the upload describes
    it with replacement characters; compose refuses it in one line, nothing stored."""
    post = argmax_post()
    post.graph.node[1].name = "SOFTNAME"
    data = post.SerializeToString().replace(b"SOFTNAME", b"SOFT\xff\xfeME")
    r = client.post("/api/blobs", data={"file": (io.BytesIO(data), "post.onnx")})
    assert r.status_code == 201
    mid = upload(client, classifier().SerializeToString()).get_json()["id"]
    op = {"op": "compose", "model": {"onnx": r.get_json()["blob"]}, "connect": {"scores": "y"}}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 400 and "not valid UTF-8" in r.get_json()["error"]["message"], r.get_json()
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def test_the_ir_version_goes_only_as_high_as_the_joined_model_needs(client):
    """An IR-8 model stays IR 8 when the added model declares the newest IR but needs none of
    it; a float8 Cast in the added model takes it to 9 (float8 came with IR 9), said in the
    report."""
    base = classifier()
    base.ir_version = 8
    post = argmax_post()
    assert post.ir_version > 8
    mid, answer = composed(client, base, post, connect={"scores": "y"})
    assert download(client, mid).ir_version == 8 and "ir_version" not in answer["changes"][0]
    post.graph.node.append(h.make_node("Cast", ["probs"], ["probs8"], name="to_f8", to=T.FLOAT8E4M3FN))
    post.graph.output.append(h.make_tensor_value_info("probs8", T.FLOAT8E4M3FN, [1, 300]))
    post.opset_import[0].version = 19  # float8 Cast
    base.opset_import[0].version = 19
    mid, answer = composed(client, base, post, connect={"scores": "y"})
    assert download(client, mid).ir_version == 9 and "ir_version 8 -> 9" in answer["changes"][0], answer


def test_an_added_models_batch_is_the_static_models_size(client):
    """The post-processing declares [batch, 300]; the classifier is static: the joined outputs
    say [1, 300] and [1], not a batch no input has (QA25 #4)."""
    post = argmax_post()
    for v in [*post.graph.input, *post.graph.output]:
        v.type.tensor_type.shape.dim[0].dim_param = "batch"
    mid, answer = composed(client, classifier(), post, connect={"scores": "y"})
    assert "outputs naming batch, which no input names:" in answer["changes"][0], answer["changes"]
    model = download(client, mid)
    shapes = {o.name: [d.dim_value or d.dim_param for d in o.type.tensor_type.shape.dim] for o in model.graph.output}
    assert shapes == {"probs": [1, 300], "label": [1]}
