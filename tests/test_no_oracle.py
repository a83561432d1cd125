"""No file-existence oracle (issue 12): onnx.checker stat()s external tensors' locations relative
to the server's working directory; the validation verdict must not depend on what files exist."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper
from testkit import upload

from app.onnx_io.load import checker_verdict


def _constant_with_external_value(location: str):
    t = helper.make_tensor("c", TensorProto.FLOAT, [2], [1.0, 2.0])
    del t.float_data[:]
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key, entry.value = "location", location
    then = helper.make_graph(
        [helper.make_node("Constant", [], ["y"], value=t, name="k")],
        "then",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["out"], then_branch=then, else_branch=then, name="if")],
        "g",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("full", [False, True])
def test_the_checker_verdict_does_not_depend_on_what_files_exist(monkeypatch, full):
    monkeypatch.chdir("/")
    present = checker_verdict(_constant_with_external_value("etc/passwd"), full)
    absent = checker_verdict(_constant_with_external_value("etc/no-such-file-here"), full)
    assert present == absent


def test_the_api_verdict_does_not_depend_on_what_files_exist(client, monkeypatch):
    monkeypatch.chdir("/")
    verdicts = []
    for location in ("etc/passwd", "etc/no-such-file-here", "proc/self/environ", "../../../../etc/shadow"):
        r = upload(client, _constant_with_external_value(location).SerializeToString())
        if r.status_code != 201:  # refused at upload for its external location: a 4xx naming it
            assert 400 <= r.status_code < 500 and "location" in r.get_json()["error"]["message"].lower()
            verdicts.append(("refused", r.status_code))
            continue
        v = client.get(f"/api/models/{r.get_json()['id']}/validation").get_json()
        verdicts.append((v["ok"], v.get("full", {}).get("ok")))
    assert len(set(verdicts[:3])) == 1, verdicts
