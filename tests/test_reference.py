"""Reference checks: cases (inputs and the outputs they must give) kept with a model and checked
on every revision; an edit that changes what the model computes fails them, one that does not
passes, and the verdict names the case and output furthest off."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from browser.browser_models import tiny_cnn
from testkit import ONNX_DATA, npy_blob, settled_reference, upload


def model_id(client) -> str:
    return upload(client, tiny_cnn().SerializeToString()).get_json()["id"]


def add_case(client, mid: str, body: dict, status: int = 201) -> dict:
    r = client.post(f"/api/models/{mid}/checks", json=body)
    assert r.status_code == status, r.get_json()
    return r.get_json()


def edit(client, mid: str, ops: list) -> dict:
    base = client.get(f"/api/models/{mid}").get_json()["revision"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": ops})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def verdict(client, mid: str, rev: int | None = None) -> dict:
    query = "" if rev is None else f"?revision={rev}"
    r = client.get(f"/api/models/{mid}/checks/verdict{query}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def fc_bias(values) -> list:
    return [{"op": "set_initializer", "name": "fc.bias", "value": {"dtype": "FLOAT", "shape": [10], "values": values}}]


def test_a_recorded_case_passes_until_an_edit_changes_the_outputs(client):
    mid = model_id(client)
    assert verdict(client, mid)["status"] == "none"
    added = add_case(client, mid, {"inputs": {"input": {"random": {"seed": 7}}}})
    case = added["case"]
    assert case["name"] == "case 1" and case["recorded_from"] == 0
    assert case["inputs"]["input"]["shape"] == [1, 3, 32, 32] and case["inputs"]["input"]["dtype"] == "float32"
    assert case["expected"]["probs"]["shape"] == [1, 10]
    assert added["verdict"]["status"] == "passed"

    # the recorded outputs are onnxruntime's own on the recorded inputs
    x = np.load(_blob_path(client, case["inputs"]["input"]["npy"]))
    sess = ort.InferenceSession(tiny_cnn().SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(
        np.load(_blob_path(client, case["expected"]["probs"]["npy"])), sess.run(None, {"input": x})[0]
    )

    renamed = edit(client, mid, [{"op": "set_metadata", "key": "owner", "value": "vision"}])
    assert settled_reference(client, mid, renamed)["status"] == "passed"

    changed = edit(client, mid, fc_bias([100] + [0] * 9))  # class 0 wins whatever the input
    v = settled_reference(client, mid, changed)
    assert v["status"] == "failed" and v["worst"]["case"] == "case 1" and v["worst"]["output"] == "probs"
    out = v["cases"][0]["outputs"]["probs"]
    assert not out["passed"] and out["max_abs"] > 0.1 and out["shape"] == [1, 10]
    assert verdict(client, mid, 1)["status"] == "passed" and verdict(client, mid)["status"] == "failed"

    client.post(f"/api/models/{mid}/undo")
    assert client.get(f"/api/models/{mid}").get_json()["validation"]["reference"]["status"] == "passed"


def _blob_path(client, digest: str):
    from app.api.documents import store

    with client.application.app_context():
        return store().blobs.path(digest)


def linear_model() -> onnx.ModelProto:
    """y = x·W + b, x: float[1, 4]: an output that moves as much as b does."""
    h, nh = onnx.helper, onnx.numpy_helper
    w = nh.from_array(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32), "W")
    b = nh.from_array(np.zeros(3, np.float32), "b")
    nodes = [h.make_node("MatMul", ["x", "W"], ["xw"]), h.make_node("Add", ["xw", "b"], ["y"])]
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3])
    graph = h.make_graph(nodes, "linear", [x], [y], [w, b])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_tolerance_decides_what_is_close_enough(client):
    mid = upload(client, linear_model().SerializeToString()).get_json()["id"]
    ones = npy_blob(client, np.ones((1, 4), np.float32))
    add_case(client, mid, {"name": "ones", "inputs": {"x": {"npy": ones}}})
    bias = {"dtype": "FLOAT", "shape": [3], "values": [0.01, 0, 0]}
    edit(client, mid, [{"op": "set_initializer", "name": "b", "value": bias}])  # y moves by 0.01
    strict = verdict(client, mid)
    assert strict["status"] == "failed" and strict["tolerance"] == pytest.approx(1e-3)
    far = strict["worst"]["max_rel_to_range"]
    assert 1e-3 < far < 0.05
    needed = strict["cases"][0]["outputs"]["y"]["tolerance_needed"]
    assert 1e-3 < needed <= far  # each value's own magnitude is allowed its share too
    r = client.patch(f"/api/models/{mid}/checks", json={"tolerance": 0.05})
    assert r.status_code == 200 and r.get_json()["tolerance"] == 0.05
    assert verdict(client, mid)["status"] == "passed"
    # the kept runs are judged again at each tolerance: the history has every revision's verdict
    # at once, none run again (the store keeps one verdict per revision)
    history = lambda: {  # noqa: E731
        r["revision"]: r["validation"]["reference"]
        for r in client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    }
    assert history() == {0: "passed", 1: "passed"}
    client.patch(f"/api/models/{mid}/checks", json={"tolerance": needed * 0.99})
    assert history() == {0: "passed", 1: "failed"}
    client.patch(f"/api/models/{mid}/checks", json={"tolerance": needed})
    assert history() == {0: "passed", 1: "passed"} and verdict(client, mid)["status"] == "passed"
    for bad in (-1, 2, "0.1", True, None):
        r = client.patch(f"/api/models/{mid}/checks", json={"tolerance": bad})
        assert r.status_code == 400 and "tolerance" in r.get_json()["error"]["message"]


def test_a_test_data_set_is_a_case_and_follows_its_inputs_and_outputs_renamed(client):
    folder = ONNX_DATA / "pytorch-converted" / "test_Conv2d"
    if not folder.exists():
        folder = sorted(p.parent for p in (ONNX_DATA / "pytorch-converted").glob("*/model.onnx"))[0]
    data = (folder / "model.onnx").read_bytes()
    model = onnx.load_from_string(data)
    mid = upload(client, data).get_json()["id"]
    tensor = onnx.numpy_helper.to_array
    x = tensor(onnx.load_tensor(str(folder / "test_data_set_0" / "input_0.pb")))
    y = tensor(onnx.load_tensor(str(folder / "test_data_set_0" / "output_0.pb")))
    inp, outp = model.graph.input[0].name, model.graph.output[0].name
    added = add_case(
        client,
        mid,
        {
            "name": "test_data_set_0",
            "inputs": {inp: {"npy": npy_blob(client, x)}},
            "expected": {outp: {"npy": npy_blob(client, y)}},
        },
    )
    assert added["case"]["recorded_from"] is None and added["verdict"]["status"] == "passed"

    # renamed since the case was kept: fed and checked under the new names, and said so
    edit(client, mid, [{"op": "rename_tensor", "from": outp, "to": "renamed_out"}])
    edit(client, mid, [{"op": "rename_tensor", "from": inp, "to": "renamed_in"}])
    v = verdict(client, mid)
    assert v["status"] == "passed", v
    assert v["cases"][0]["renamed"] == {inp: "renamed_in", outp: "renamed_out"}
    assert v["cases"][0]["outputs"]["renamed_out"] == {**v["cases"][0]["outputs"]["renamed_out"], "was": outp}
    # and an edit that changes what the renamed output gives still fails the case
    w = next(t for t in model.graph.initializer if t.dims)
    values = (onnx.numpy_helper.to_array(w) + 1).astype(np.float32)
    edit(
        client,
        mid,
        [
            {
                "op": "set_initializer",
                "name": w.name,
                "value": {"dtype": "FLOAT", "shape": list(values.shape), "values": values.ravel().tolist()},
            }
        ],
    )
    v = verdict(client, mid)
    assert v["status"] == "failed" and not v["cases"][0]["outputs"]["renamed_out"]["passed"]


def test_an_output_swapped_for_another_tensor_is_no_rename(client):
    """Only a name gone from the graph and a new one in its place is a rename: an output replaced
    by a tensor the graph had already computes something else, and the case says the output went."""
    mid = model_id(client)
    add_case(client, mid, {"inputs": {"input": {"random": {"seed": 7}}}})
    edit(client, mid, [{"op": "add_output", "tensor": "logits"}])  # another tensor of the graph
    edit(client, mid, [{"op": "remove_output", "name": "probs"}])
    v = verdict(client, mid)
    assert v["status"] == "failed" and "no output 'probs' any more" in v["cases"][0]["message"], v
    assert "renamed" not in v["cases"][0]
    # its Softmax still writes it: said, not read as a changed value (QA25 #5, a composition)
    assert "(it is computed inside now: keep a new case" in v["cases"][0]["message"]


def test_a_case_kept_before_its_model_names_were_recorded_still_follows_a_rename(client):
    """Cases stored by an earlier version carry no "names": the case's own names, in order, stand in."""
    from app.api.documents import store

    mid = model_id(client)
    add_case(client, mid, {"inputs": {"input": {"random": {"seed": 7}}}})
    with client.application.app_context():
        store().update_checks(
            mid, lambda c: {**c, "cases": [{k: v for k, v in x.items() if k != "names"} for x in c["cases"]]}
        )
    edit(client, mid, [{"op": "rename_tensor", "from": "probs", "to": "scores"}])
    v = verdict(client, mid)
    assert v["status"] == "passed" and v["cases"][0]["renamed"] == {"probs": "scores"}, v


def test_cases_are_listed_deleted_and_refused_with_reasons(client):
    mid = model_id(client)
    add_case(client, mid, {"name": "a", "inputs": {"input": {"random": {"seed": 1}}}})
    add_case(client, mid, {"inputs": {"input": {"random": {"seed": 2}}}})
    listed = client.get(f"/api/models/{mid}/checks").get_json()
    assert [c["name"] for c in listed["cases"]] == ["a", "case 2"]
    assert add_case(client, mid, {"name": "a"}, 409)["error"]["code"] == "duplicate_name"
    assert add_case(client, mid, {"inputs": {"nope": {"random": {}}}}, 400)["error"]["code"] == "unknown_input"
    assert add_case(client, mid, {"expected": {"nope": {"npy": "0" * 64}}}, 400)["error"]["code"] == "unknown_output"
    for bad in ("", " ", "x" * 101, "\ud800", 3):
        assert add_case(client, mid, {"name": bad}, 400)["error"]["code"] == "bad_request"
    assert add_case(client, mid, {"revision": 9}, 404)["error"]["code"] == "unknown_revision"
    bad_shape = npy_blob(client, np.zeros((1, 3, 5), np.float32))
    refused = add_case(client, mid, {"inputs": {"input": {"npy": bad_shape}}}, 422)["error"]
    assert refused["code"] == "run_failed" and "Got: 3 Expected: 4" in refused["message"]
    assert client.delete(f"/api/models/{mid}/checks/a").status_code == 204
    assert client.delete(f"/api/models/{mid}/checks/a").status_code == 404
    assert [c["name"] for c in client.get(f"/api/models/{mid}/checks").get_json()["cases"]] == ["case 2"]


def test_the_collector_keeps_a_cases_arrays_and_drops_them_with_it(client):
    mid = model_id(client)
    case = add_case(client, mid, {"inputs": {"input": {"random": {"seed": 5}}}})["case"]
    digests = [case["inputs"]["input"]["npy"], case["expected"]["probs"]["npy"]]
    from app.api.documents import store

    with client.application.app_context():
        s = store()
        s.collect(now=10**10)  # far in the future: only what is referenced stays
        assert all(s.blobs.exists(d) for d in digests)
        assert verdict(client, mid)["status"] == "passed"
        assert client.delete(f"/api/models/{mid}/checks/case 1").status_code == 204
        s.collect(now=10**10)
        assert not any(s.blobs.exists(d) for d in digests)


def test_a_big_models_verdict_comes_from_the_background(client, monkeypatch):
    mid = model_id(client)
    add_case(client, mid, {"inputs": {"input": {"random": {"seed": 3}}}})
    monkeypatch.setattr("app.api.runtime.SYNC_NODES", 0)  # every model counts as big
    answer = edit(client, mid, fc_bias([100] + [0] * 9))
    assert answer["validation"]["reference"]["status"] == "pending"
    # the summary says pending until a worker has it; the verdict call waits for it
    assert verdict(client, mid)["status"] == "failed"
    assert client.get(f"/api/models/{mid}").get_json()["validation"]["reference"]["status"] == "failed"


def test_cases_added_at_once_are_all_kept(app):
    """Each add is a read-modify-write of the model's row, in one transaction with the row locked."""
    from concurrent.futures import ThreadPoolExecutor

    mid = model_id(app.test_client())

    def add(i: int) -> int:
        body = {"name": f"c{i}", "inputs": {"input": {"random": {"seed": i}}}}
        return app.test_client().post(f"/api/models/{mid}/checks", json=body).status_code

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(add, range(6))) == [201] * 6
    names = [c["name"] for c in app.test_client().get(f"/api/models/{mid}/checks").get_json()["cases"]]
    assert sorted(names) == [f"c{i}" for i in range(6)]


WRONG = [
    None,
    0,
    -1,
    1.5,
    True,
    "",
    "x",
    "\ud800",
    [],
    [1],
    {},
    {"npy": 3},
    {"random": 1},
    {"random": {"seed": "s"}},
    {"npy": "0" * 64},
]


def test_wrong_bodies_are_4xx_and_change_nothing(client):
    mid = model_id(client)
    add_case(client, mid, {"name": "kept", "inputs": {"input": {"random": {"seed": 1}}}})
    before = client.get(f"/api/models/{mid}/checks").get_json()
    bodies = (
        [w for w in WRONG if not isinstance(w, dict)]
        + [{field: w} for field in ("name", "inputs", "dims", "expected", "revision") for w in WRONG]
        + [{"inputs": {"input": w}} for w in WRONG]
        + [{"expected": {"probs": w}} for w in WRONG]
        + [{"dims": {"n": w}} for w in WRONG]
    )
    for body in bodies:
        r = client.post(f"/api/models/{mid}/checks", json=body)
        if r.status_code == 201:  # a body that is a case after all (a name, or defaults)
            client.delete(f"/api/models/{mid}/checks/{r.get_json()['case']['name']}")
            continue
        assert 400 <= r.status_code < 500, (body, r.status_code, r.get_json())
        assert r.get_json()["error"]["message"], body
        r = client.patch(f"/api/models/{mid}/checks", json=body)
        assert 400 <= r.status_code < 500, (body, r.status_code)
    for raw in (b"{", b"[]", b"\xff", b'{"a":' * 5000):
        r = client.post(f"/api/models/{mid}/checks", data=raw, content_type="application/json")
        assert r.status_code == 400, raw[:20]
    assert client.get(f"/api/models/{mid}/checks").get_json() == before
    assert client.get("/api/models/nope/checks").status_code == 404
    assert client.get(f"/api/models/{mid}/checks/verdict?revision=x").status_code == 400


@pytest.mark.parametrize("split", [None, 1], ids=["inline", "weights_as_blobs"])
def test_a_gate_refuses_edits_that_change_the_outputs(tmp_path, split, gates_wait):
    """With "gate": an edit whose result does not give the cases' outputs is refused (422, nothing
    stored) — its weights the store's own blobs or inline; one that keeps them is stored."""
    from app import create_app

    config = {"DATA_DIR": str(tmp_path / "data"), "TESTING": True}
    if split:
        config["STORE_SPLIT_MIN_BYTES"] = split  # every tensor a blob: the edited model runs from them
    client = create_app(config).test_client()
    mid = model_id(client)
    add_case(client, mid, {"inputs": {"input": {"random": {"seed": 7}}}})
    r = client.patch(f"/api/models/{mid}/checks", json={"gate": True})
    assert r.status_code == 200 and r.get_json()["gate"] is True

    refused = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": fc_bias([100] + [0] * 9)})
    assert refused.status_code == 422, refused.get_json()
    error = refused.get_json()["error"]
    assert error["code"] == "invalid_result"
    assert error["message"].startswith("the edit changes what the model computes: case 'case 1': probs is ")
    assert "% of its range off (tolerance 0.1 %) (its reference cases gate edits)" in error["message"]
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0  # nothing stored

    # what keeps the outputs passes the gate: a rename, new weights giving the same values
    kept = edit(client, mid, [{"op": "rename_node", "node": "n7", "name": "classifier_softmax"}])
    assert kept["revision"] == 1 and settled_reference(client, mid, kept)["status"] == "passed"
    w = onnx.numpy_helper.to_array(tiny_cnn().graph.initializer[2])
    same = {"dtype": "FLOAT", "shape": list(w.shape), "values": w.flatten().tolist()}
    rewritten = edit(client, mid, [{"op": "set_initializer", "name": "fc.weight", "value": same}])
    assert rewritten.get("unchanged") or settled_reference(client, mid, rewritten)["status"] == "passed"
    head = client.get(f"/api/models/{mid}").get_json()["revision"]

    stored = client.post(
        f"/api/models/{mid}/edits", json={"base": head, "ops": fc_bias([100] + [0] * 9), "allow_invalid": True}
    )
    assert stored.status_code == 200
    assert stored.get_json()["validation"]["invalid"][0].startswith("the edit changes what the model computes")
    client.post(f"/api/models/{mid}/undo")
    client.patch(f"/api/models/{mid}/checks", json={"gate": False})
    assert settled_reference(client, mid, edit(client, mid, fc_bias([100] + [0] * 9)))["status"] == "failed"
    for bad in ({}, {"gate": 1}, {"gate": "yes"}):
        assert client.patch(f"/api/models/{mid}/checks", json=bad).status_code == 400


def test_the_gates_runs_are_the_new_revisions_verdict(client, monkeypatch, gates_wait):
    """The cases run once per gated edit: on the result before storing, kept for the revision."""
    mid = model_id(client)
    add_case(client, mid, {"inputs": {"input": {"random": {"seed": 2}}}})
    client.patch(f"/api/models/{mid}/checks", json={"gate": True})

    def no_second_run(*args, **kwargs):
        raise AssertionError("the cases ran again after the edit was stored")

    monkeypatch.setattr("app.api.reference.run_raw", no_second_run)
    answer = edit(client, mid, [{"op": "set_metadata", "key": "k", "value": "v"}])
    assert answer["validation"]["reference"]["status"] == "passed"
    assert client.get(f"/api/models/{mid}/revisions").get_json()["revisions"][-1]["validation"]["reference"] == "passed"


def test_the_next_export_takes_the_cases_of_the_last(client):
    """Copied cases hold another model (the next export) to the first one's outputs; they stay
    when the first model goes."""
    first = model_id(client)
    add_case(client, first, {"name": "a", "inputs": {"input": {"random": {"seed": 1}}}})
    add_case(client, first, {"name": "b", "inputs": {"input": {"random": {"seed": 2}}}})
    client.patch(f"/api/models/{first}/checks", json={"tolerance": 0.01})
    same = upload(client, tiny_cnn().SerializeToString(), "again.onnx").get_json()["id"]
    r = client.post(f"/api/models/{same}/checks/copy", json={"from": first})
    assert r.status_code == 200 and r.get_json() == {"kept": ["a", "b"], "skipped": []}
    checks = client.get(f"/api/models/{same}/checks").get_json()
    assert checks["tolerance"] == 0.01  # it had none: it takes theirs
    assert checks["cases"][0]["copied_from"] == {"model": first, "name": "model.onnx", "case": "a"}
    assert verdict(client, same)["status"] == "passed"
    again = client.post(f"/api/models/{same}/checks/copy", json={"from": first}).get_json()
    assert again["kept"] == ["a (2)", "b (2)"]

    other = onnx.helper.make_model(
        onnx.helper.make_graph(
            [onnx.helper.make_node("Relu", ["x"], ["y"])],
            "g",
            [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 32, 32])],
            [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3, 32, 32])],
        ),
        opset_imports=[onnx.helper.make_opsetid("", 17)],
    )
    oid = upload(client, other.SerializeToString(), "other.onnx").get_json()["id"]
    answer = client.post(f"/api/models/{oid}/checks/copy", json={"from": first}).get_json()
    assert answer["kept"] == [] and "differ from the case's (input, x, probs)" in answer["skipped"][0]["reason"]
    for bad in ({}, {"from": 3}, {"from": oid}):
        assert client.post(f"/api/models/{oid}/checks/copy", json=bad).status_code == 400
    assert client.post(f"/api/models/{oid}/checks/copy", json={"from": "nope"}).status_code == 404
    # a tensor .pb (a data file, no cases) said to be one, not "copied" as nothing
    tensor = onnx.numpy_helper.from_array(np.ones(3, np.float32), "t").SerializeToString()
    pb = upload(client, tensor, "input_0.pb").get_json()["id"]
    r = client.post(f"/api/models/{oid}/checks/copy", json={"from": pb})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "not_a_model", r.get_json()

    from app.api.documents import store

    client.delete(f"/api/models/{first}")
    with client.application.app_context():
        store().collect(now=10**10)
    assert verdict(client, same)["status"] == "passed"  # the copies' arrays stayed


def test_a_case_cut_short_while_a_request_waits_is_no_verdict(client, monkeypatch):
    """A quick model's cases run within the gate's wall while a request waits; one cut short says
    nothing of the model: pending, and the background run (the full wall) gives the verdict."""
    import app.api.reference as reference

    mid = model_id(client)
    add_case(client, mid, {"inputs": {"input": {"random": {"seed": 3}}}})
    # cut short for sure (a tiny wall is not: a loaded machine can read a quick answer late)
    monkeypatch.setattr(reference, "run_raw", lambda *a, **k: {"status": "limit", "message": "out of time (15 s)"})
    held = []  # the background run, started once the answer is in
    monkeypatch.setattr(reference, "once_in_background", lambda *args: held.append(args))
    answer = edit(client, mid, [{"op": "set_metadata", "key": "k", "value": "v"}])
    assert answer["validation"]["reference"]["status"] == "pending"
    monkeypatch.undo()
    assert len(held) == 1
    with client.application.app_context():
        reference.once_in_background(*held[0])
    assert verdict(client, mid)["status"] == "passed"


def test_a_case_feeding_an_input_frozen_since_holds_at_that_value_and_no_longer_applies_at_another(client, gates_wait):
    """QA32 N6: freezing a merged decoder's use_cache_branch to true made both its cases error
    ("the model has no input any more") and the model "outputs differ" — though the case with the
    cache gave its outputs exactly. That case holds (the frozen input left out of its feed); the
    one without the cache no longer applies, and judges nothing."""
    from merged_decoder import decoder_feeds, merged_decoder

    mid = upload(client, merged_decoder().SerializeToString()).get_json()["id"]
    for name, use_cache in (("first step", False), ("with the cache", True)):
        feeds = decoder_feeds(use_cache)
        inputs = {n: {"npy": npy_blob(client, a)} for n, a in feeds.items()}
        dims = {"past_decoder_sequence_length": 4 if use_cache else 0}
        assert add_case(client, mid, {"name": name, "inputs": inputs, "dims": dims})["verdict"]["status"] == "passed"
    frozen = edit(
        client,
        mid,
        [
            {
                "op": "freeze_input",
                "name": "use_cache_branch",
                "value": {"dtype": "BOOL", "shape": [1], "values": [True]},
            }
        ],
    )
    v = settled_reference(client, mid, frozen)
    by_name = {c["name"]: c for c in v["cases"]}
    assert by_name["with the cache"]["status"] == "passed" and by_name["with the cache"]["frozen"] == [
        "use_cache_branch"
    ]
    assert by_name["first step"]["status"] == "not_applicable"
    assert by_name["first step"]["message"] == (
        "it feeds 'use_cache_branch' [false], which the model holds fixed at [true] now (freeze_input):"
        " this case no longer applies"
    )
    assert v["status"] == "passed"  # the one case that applies gives its outputs
