"""Classical-ML inputs in runs and the runtime gate: values typed in as JSON ({"values": ...}),
random categorical inputs drawn from the vocabulary of the node that looks them up (a
OneHotEncoder's categories, a DictVectorizer's keys, a TfIdfVectorizer's words through a
Tokenizer), and a text model onnxruntime can't load for want of a locale said to be the server's
lack, not the model's fault. The models are shaped as skl2onnx writes them."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from browser.browser_models import COLORS, WORDS, column_model, dict_model, text_model
from onnx import TensorProto, helper
from testkit import upload


def run(client, mid: str, body: dict, status: int = 200) -> dict:
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == status, r.get_json()
    return r.get_json()


def runtime_verdict(client, mid: str) -> dict:
    return client.get(f"/api/models/{mid}/validation").get_json()["runtime"]


def test_values_typed_in_run_as_onnxruntime_runs_them(client):
    data = column_model()
    mid = upload(client, data).get_json()["id"]
    a, color = [[0.5], [-2.0]], [["blue"], ["red"]]
    got = run(client, mid, {"inputs": {"a": {"values": a}, "color": {"values": color}}})
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = sess.run(None, {"a": np.array(a, np.float32), "color": np.array(color, object)})[0]
    assert got["outputs"]["features"]["shape"] == [2, 4]
    assert got["outputs"]["features"]["values"] == want.reshape(-1).tolist()
    assert got["inputs"]["color"]["values"] == ["blue", "red"]  # what was fed, as kept for compare_to


def test_a_map_typed_in_and_a_random_one_drawn_from_the_vectorizers_keys(client):
    data = dict_model()
    mid = upload(client, data).get_json()["id"]
    got = run(client, mid, {"inputs": {"feats": {"values": {"dog": 2.5, "ran": -1}}}})
    assert got["outputs"]["vector"]["values"] == [0.0, 2.5, 0.0, 0.0, -1.0]
    # random: some of the vocabulary's keys, normal values — never keys it doesn't know
    drawn = run(client, mid, {"inputs": {"feats": {"random": {"seed": 3}}}})
    fed = drawn["inputs"]["feats"]
    assert fed["kind"] == "map" and fed["count"] >= 1 and set(fed["keys"]["values"]) <= set(WORDS)
    vector = drawn["outputs"]["vector"]["values"]
    assert sum(v != 0 for v in vector) == fed["count"]
    # the gate ran it too (a map input used to be "skipped": nothing to feed it)
    assert runtime_verdict(client, mid)["status"] == "ok"


def test_random_categories_are_the_encoders_and_the_gate_passes_a_strict_encoder(client):
    mid = upload(client, column_model(zeros=0)).get_json()["id"]
    # an empty string (what the gate fed before) is no category: zeros=0 makes onnxruntime refuse it
    verdict = runtime_verdict(client, mid)
    assert verdict["status"] == "ok", verdict
    got = run(client, mid, {"inputs": {"color": {"random": {"seed": 1}}}, "dims": {"a[0]": 12, "color[0]": 12}})
    colors = got["inputs"]["color"]["values"]
    assert len(colors) == 12 and set(colors) <= set(COLORS) and len(set(colors)) > 1
    # one-hot rows: exactly one 1 among the three columns after "a"
    rows = np.array(got["outputs"]["features"]["values"]).reshape(12, 4)[:, 1:]
    assert (rows.sum(axis=1) == 1).all()


def test_random_text_is_words_of_the_vectorizers_vocabulary(client):
    mid = upload(client, text_model()).get_json()["id"]
    assert runtime_verdict(client, mid)["status"] == "ok"
    got = run(client, mid, {"dims": {"text[0]": 6}})
    texts = got["inputs"]["text"]["values"]
    assert len(texts) == 6 and all(t and set(t.split()) <= set(WORDS) for t in texts)
    counts = np.array(got["outputs"]["counts"]["values"]).reshape(6, len(WORDS))
    assert (counts.sum(axis=1) == [len(t.split()) for t in texts]).all()  # every word counted
    typed = run(client, mid, {"inputs": {"text": {"values": ["Dog sat", "CAT cat fish"]}}})
    assert typed["outputs"]["counts"]["values"] == [0, 1, 0, 1, 0, 2, 0, 0, 0, 0]


def test_a_locale_the_server_lacks_is_not_the_models_fault(client):
    mid = upload(client, text_model(locale="xx_NOWHERE.UTF-8")).get_json()["id"]
    verdict = runtime_verdict(client, mid)
    assert verdict["status"] == "skipped" and "no locale xx_NOWHERE.UTF-8" in verdict["message"], verdict
    refused = run(client, mid, {"inputs": {"text": {"values": ["a"]}}}, 422)
    assert "this server has no locale xx_NOWHERE.UTF-8" in refused["error"]["message"]


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ({"a": {"values": [[0.5], [1, 2]]}}, "not a rectangular array"),
        ({"a": {"values": [[0.5, 1.0]]}}, "its shape is ?×1, the values typed in are of shape 1×2"),
        ({"a": {"values": [["x"]]}}, "float holds numbers"),
        ({"a": {"values": [[1e39]]}}, "1e+39 is beyond the largest float (3.40282e+38)"),
        ({"color": {"values": [[1]]}}, "strings are typed in quotes"),
        ({"a": {"values": [[None]]}}, "values are numbers, strings, booleans, lists and maps"),
        ({"a": {"values": list(range(100_001))}}, "at most 100,000 values typed in"),
        ({"a": {"value": 1}}, '{"values": [...]}'),
    ],
)
def test_values_that_dont_fit_the_input_are_refused_naming_it(client, inputs, words):
    mid = upload(client, column_model(zeros=1)).get_json()["id"]
    refused = run(client, mid, {"inputs": inputs, "dims": {"a[0]": 1, "color[0]": 1}}, 400)
    assert words in refused["error"]["message"]


def test_typed_integers_must_be_whole_and_in_range(client):
    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "ints",
        [helper.make_tensor_value_info("x", TensorProto.INT8, [2])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [2])],
    )
    mid = upload(
        client, helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    ).get_json()["id"]
    assert run(client, mid, {"inputs": {"x": {"values": [-128, 127]}}})["outputs"]["y"]["values"] == [-128, 127]
    assert "outside int8's range" in run(client, mid, {"inputs": {"x": {"values": [0, 128]}}}, 400)["error"]["message"]
    assert (
        "whole numbers: 1.5 is not one"
        in run(client, mid, {"inputs": {"x": {"values": [0, 1.5]}}}, 400)["error"]["message"]
    )
    assert run(client, mid, {"inputs": {"x": {"values": [2.0, -3.0]}}})["outputs"]["y"]["values"] == [2, -3]
    assert (
        "NaN and infinity are not"
        in run(client, mid, {"inputs": {"x": {"values": ["NaN", 1]}}}, 400)["error"]["message"]
    )
    map_refused = run(client, mid, {"inputs": {"x": {"values": {"k": 1}}}}, 400)
    assert 'input "x"' in map_refused["error"]["message"]


def test_typed_floats_take_nan_and_infinity_as_edits_do(client):
    """JSON has no NaN or infinity: typed as "NaN", "Infinity", "-Infinity" in a run's values,
    as in an edit's tensor values."""
    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "floats",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    mid = upload(
        client, helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    ).get_json()["id"]
    got = run(client, mid, {"inputs": {"x": {"values": ["NaN", "Infinity", "-Infinity"]}}})["outputs"]["y"]
    assert got["values"] == ["NaN", "Infinity", "-Infinity"]


def test_random_token_ids_index_the_embedding_table(client):
    """A language model's input_ids go (through an Unsqueeze) to a Gather of its embedding
    table: random ones are token ids below its 50 rows, not all 0 — every position one token,
    every row of the output the same. The gate's fills stay below the rows too."""
    table = np.arange(50 * 4, dtype=np.float32).reshape(50, 4)
    graph = helper.make_graph(
        [
            helper.make_node("Unsqueeze", ["input_ids", "axes"], ["ids"]),
            helper.make_node("Gather", ["embed", "ids"], ["hidden"]),
        ],
        "lm",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", 1, "sequence", 4])],
        [
            helper.make_tensor("embed", TensorProto.FLOAT, [50, 4], table.reshape(-1).tolist()),
            helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    got = run(client, mid, {"inputs": {"input_ids": {"random": {"seed": 2}}}, "dims": {"batch": 2, "sequence": 40}})
    ids = np.array(got["inputs"]["input_ids"]["values"])
    assert ids.shape == (80,) and ids.min() >= 0 and ids.max() < 50 and len(set(ids.tolist())) > 10
    assert runtime_verdict(client, mid)["status"] == "ok"
