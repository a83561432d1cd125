"""onnx's C++ never runs on an untrusted model in the server process (issue 12). A model whose
shape inference segfaults (Shape -> Slice with step 2^63-1) is opened, validated and edited
through the in-process test client: were any of it run here, this test process would die."""

from __future__ import annotations

from hostile_corpus import CLASSES
from testkit import upload

from app.onnx_io import offload


def _crasher() -> bytes:
    return dict(CLASSES["inference_crashes"]())["slice_step_max.onnx"]


def test_a_model_that_crashes_onnx_costs_one_answer(client, monkeypatch):
    mid = upload(client, _crasher()).get_json()["id"]
    assert client.get(f"/api/models/{mid}/graph").status_code == 200  # drawn without inferred types
    assert client.get(f"/api/models/{mid}/validation").get_json()["ok"] is False  # its output has no type
    assert client.get(f"/api/models/{mid}/types").status_code == 200
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "infer_shapes"}]})
    assert r.status_code == 422 and "shape inference crashed" in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 0
    # remembered for that content: the same request is answered at once, without the helper
    helpers = []
    real_executor = offload._executor
    monkeypatch.setattr(offload, "_executor", lambda *a: helpers.append(a) or real_executor(*a))
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "infer_shapes"}]})
    assert r.status_code == 422 and "shape inference crashed" in r.get_json()["error"]["message"]
    assert helpers == []  # no helper asked: the verdict remembered
    monkeypatch.undo()
    # and the helper still serves other models
    ok = upload(client, dict(CLASSES["huge_dims"]())["negative_dims.onnx"]).get_json()["id"]
    assert client.get(f"/api/models/{ok}/text").status_code == 200


def test_a_helper_job_past_its_wall_clock_is_stopped():
    """A job that outlives its wall-clock limit: the helper is killed, the answer a 422, the
    content remembered; a fresh helper serves the next job."""
    nodes = "\n".join(f"  t{i + 1} = Relu (t{i})" for i in range(30000))
    text = f'<ir_version: 8, opset_import: ["" : 17]>\nm (float[1] t0) => (float[1] t30000) {{\n{nodes}\n}}'
    key = offload.content_key(text.encode()) + ":wall-test"
    try:
        offload.run("parse_text", key, text, limits=offload.Limits(wall_seconds=0.001))
    except Exception as exc:
        assert getattr(exc, "status", None) == 422 and "ran out of time" in str(exc)
    else:
        raise AssertionError("a job finished within a 1 ms wall clock")
    assert offload.known_failure("parse_text", key)
    assert offload.run("parse_text", offload.content_key(text.encode()), text)  # a fresh helper serves


def test_a_crash_is_remembered_by_every_worker_and_after_a_restart(tmp_path, monkeypatch):
    """Another worker, or the server after a restart, has none of this process's memory: the
    store tells it the content crashes onnx, and the helper is not run on it again."""
    from app import create_app

    monkeypatch.setattr(offload, "_failures", type(offload._failures)())  # not known from another test
    config = {"DATA_DIR": str(tmp_path / "data"), "TESTING": True}
    first = create_app(config).test_client()
    mid = upload(first, _crasher()).get_json()["id"]
    edit = {"base": 0, "ops": [{"op": "infer_shapes"}]}
    assert first.post(f"/api/models/{mid}/edits", json=edit).status_code == 422
    monkeypatch.setattr(offload, "_failures", type(offload._failures)())  # a fresh process's memory

    def no_helper(*args, **kwargs):
        raise AssertionError("the helper ran again on a content known to crash it")

    monkeypatch.setattr(offload, "_executor", no_helper)
    r = create_app(config).test_client().post(f"/api/models/{mid}/edits", json=edit)
    assert r.status_code == 422 and "shape inference crashed" in r.get_json()["error"]["message"]
