"""Split a model into two at tensors (QA37 #9): two new models, each checked by onnx and run by
onnxruntime, chained giving the original's outputs; their weights the original's blobs."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from encoder_block import encoder_block
from testkit import upload


def run(data: bytes, feeds: dict) -> dict:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


def test_a_split_makes_two_models_that_chained_give_the_originals_outputs(client):
    model = encoder_block()
    mid = upload(client, model.SerializeToString(), "enc.onnx").get_json()["id"]
    blobs_before = _blob_names(client)
    r = client.post(f"/api/models/{mid}/split", json={"at": ["res1"], "revision": 0})
    assert r.status_code == 201, r.get_json()
    first, second = r.get_json()["parts"]
    assert (first["name"], second["name"]) == ("enc part 1 of 2.onnx", "enc part 2 of 2.onnx")
    assert (first["inputs"], first["outputs"]) == (["input_ids_embeds"], ["res1"])
    assert (second["inputs"], second["outputs"]) == (["res1"], ["last_hidden_state"])
    assert first["nodes"] + second["nodes"] == len(model.graph.node)
    parts = [client.get(f"/api/models/{p['id']}/download").data for p in (first, second)]
    for data in parts:
        onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    x = np.random.default_rng(0).standard_normal((2, 5, 64)).astype(np.float32)
    middle = run(parts[0], {"input_ids_embeds": x})
    np.testing.assert_array_equal(
        run(parts[1], middle)["last_hidden_state"],
        run(model.SerializeToString(), {"input_ids_embeds": x})["last_hidden_state"],
    )
    assert _blob_names(client) - blobs_before <= _graph_and_derived_blobs(client)  # no weight stored again
    # each part says where it came from; the model split is as it was
    history = client.get(f"/api/models/{first['id']}/revisions").get_json()["revisions"]
    assert history[0]["changes"][0].startswith("part 1 of 2 of enc.onnx (revision 0), split at res1: ")
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def _blob_names(client) -> set[str]:
    from app.api.documents import store

    with client.application.app_context():
        return set(store().blobs.digests())


def _graph_and_derived_blobs(client) -> set[str]:
    """The blobs the parts' revisions are (their graphs) and what was derived from them."""
    from app.api.documents import store

    with client.application.app_context():
        s = store()
        out = set()
        for _record, revisions in s.models_with_revisions():
            for r in revisions:
                out.add(r.blob)
        out |= {d for d, _ in s.index.derived_blobs()}
        return out


def test_a_split_names_what_it_cant_cut_at(client):
    mid = upload(client, encoder_block().SerializeToString(), "enc.onnx").get_json()["id"]
    cases = [
        ({"at": []}, 400, "bad_request"),
        ({"at": "res1"}, 400, "bad_request"),
        ({"at": ["res1"], "extra": 1}, 400, "bad_field"),
        ({"at": ["last_hidden_state"]}, 400, "bad_value"),  # nothing after it
        ({"at": ["nope"]}, 404, "unknown_tensor"),
        ({"at": ["res1"], "revision": "0"}, 400, "bad_request"),
        ({"at": ["res1"], "revision": 3}, 404, "unknown_revision"),
        ({"at": ["input_ids_embeds"]}, 400, "bad_value"),
        ({"at": ["res1", "res1"]}, 400, "bad_request"),  # QA39 #3: part 2 took it twice, invalid
        ({"at": ["ln1.w"]}, 400, "bad_value"),  # a weight
    ]
    for body, status, code in cases:
        r = client.post(f"/api/models/{mid}/split", json=body)
        assert (r.status_code, r.get_json()["error"]["code"]) == (status, code), (body, r.get_json())
    assert len(client.get("/api/models").get_json()["models"]) == 1  # nothing made


def test_a_cut_that_leaves_a_node_on_both_sides_names_the_values_crossing_it(client):
    """QA39 #2: with a skip connection part 2 ran part 1's Relu again, said nowhere."""
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Neg", ["a"], ["c"], name="neg"),
            helper.make_node("Add", ["c", "a"], ["y"], name="add"),
            helper.make_node("Exp", ["x"], ["dead"], name="exp"),  # no output reads it
        ],
        "g",
        [helper.make_tensor_value_info("x", f, [2])],
        [helper.make_tensor_value_info("y", f, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "skip.onnx").get_json()["id"]
    answer = client.post(f"/api/models/{mid}/split", json={"at": ["c"]}).get_json()
    assert (answer["both"], answer["crossing"]) == (1, ["a"])
    separated = client.post(f"/api/models/{mid}/split", json={"at": ["c", "a"]}).get_json()
    assert "both" not in separated and [p["nodes"] for p in separated["parts"]] == [2, 1]
    r = client.post(f"/api/models/{mid}/split", json={"at": ["dead"]})
    assert r.status_code == 400 and "no graph output depends on 'dead'" in r.get_json()["error"]["message"]


def test_each_part_keeps_the_external_data_files_its_weights_are_in(client):
    """QA39 #1: each part shipped every external data file of the model."""
    import io
    import zipfile

    from onnx import TensorProto, helper, numpy_helper

    f = TensorProto.FLOAT
    rng = np.random.default_rng(0)
    weights = []
    for k in (1, 2):
        t = numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), f"w{k}")
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value=f"w{k}.bin")
        weights.append(t)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
            helper.make_node("MatMul", ["h", "w2"], ["y"], name="mm2"),
        ],
        "g",
        [helper.make_tensor_value_info("x", f, [1, 64])],
        [helper.make_tensor_value_info("y", f, [1, 64])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    raw = {f"w{k}.bin": rng.standard_normal((64, 64)).astype(np.float32).tobytes() for k in (1, 2)}
    r = client.post(
        "/api/models",
        data={
            "file": [(io.BytesIO(model.SerializeToString()), "two.onnx"), *[(io.BytesIO(b), n) for n, b in raw.items()]]
        },
        content_type="multipart/form-data",
    )
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    first, second = client.post(f"/api/models/{mid}/split", json={"at": ["h"]}).get_json()["parts"]
    for part, kept in ((first, "w1.bin"), (second, "w2.bin")):
        with zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{part['id']}/download").data)) as z:
            assert sorted(z.namelist()) == sorted([part["name"], kept]), z.namelist()


def test_a_dry_run_says_what_a_cut_would_make_and_stores_nothing(client):
    mid = upload(client, encoder_block().SerializeToString(), "enc.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/split", json={"at": ["res1"], "dry_run": True})
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    assert answer["dry_run"] and [p["name"] for p in answer["parts"]] == [
        "enc part 1 of 2.onnx",
        "enc part 2 of 2.onnx",
    ]
    assert len(client.get("/api/models").get_json()["models"]) == 1


def _annotated_trainable() -> onnx.ModelProto:
    """y = relu(x * w) + bias; `m`'s annotation names `m_scale` as its scale (a weight no node
    reads), a training graph updates both w and bias."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.full(4, 2.0, np.float32), "w")
    bias = numpy_helper.from_array(np.full(4, 0.5, np.float32), "bias")
    scale = numpy_helper.from_array(np.array(0.1, np.float32), "m_scale")
    g = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "w"], ["m"], name="mul"),
            helper.make_node("Relu", ["m"], ["r"], name="relu"),
            helper.make_node("Add", ["r", "bias"], ["y"], name="add"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [w, bias, scale],
    )
    note = g.quantization_annotation.add(tensor_name="m")
    note.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="m_scale")
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    algorithm = helper.make_graph(
        [helper.make_node("Neg", ["w"], ["w_next"]), helper.make_node("Neg", ["bias"], ["bias_next"])],
        "step",
        [],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in ("w_next", "bias_next")],
    )
    training = model.training_info.add()
    training.algorithm.CopyFrom(algorithm)
    training.update_binding.add(key="w", value="w_next")
    training.update_binding.add(key="bias", value="bias_next")
    onnx.checker.check_model(model, full_check=True)
    return model


def test_a_part_keeps_the_scales_its_annotations_name_and_binds_only_its_own_weights(client):
    """QA39 #11: a part kept an annotation naming a scale it lacked (a weight no node reads,
    which the extractor leaves out) and the training binding of the other part's weight: the
    scale now comes along, the binding of a weight it lacks goes, said."""
    mid = upload(client, _annotated_trainable().SerializeToString(), "q.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/split", json={"at": ["m"]})
    assert r.status_code == 201, r.get_json()
    first, second = (
        onnx.load_from_string(client.get(f"/api/models/{p['id']}/download").data) for p in r.get_json()["parts"]
    )
    for part, weights in ((first, {"w", "m_scale"}), (second, {"bias", "m_scale"})):
        [note] = part.graph.quantization_annotation  # `m`: part 1's output, part 2's input
        assert note.tensor_name == "m" and {t.name for t in part.graph.initializer} == weights
    assert [b.key for b in first.training_info[0].update_binding] == ["w"]
    assert [b.key for b in second.training_info[0].update_binding] == ["bias"]
    history = client.get(f"/api/models/{r.get_json()['parts'][0]['id']}/revisions").get_json()["revisions"]
    assert "training bindings of 'bias' dropped (weights left out)" in history[0]["changes"][0]
    # a cleanup keeps a scale its annotation names
    cleaned = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "cleanup"}]})
    assert cleaned.status_code == 200, cleaned.get_json()
    kept = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert "m_scale" in {t.name for t in kept.graph.initializer}
    for part in (first, second):
        onnx.checker.check_model(part, full_check=True)
