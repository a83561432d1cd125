"""Strings are text (issue 12): a model whose string fields hold invalid UTF-8 (upb gives them to
Python as bytes) is shown with replacement characters on every view, never a 500, and keeps its
bytes exactly through an edit."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper
from testkit import upload

BAD = b"\xff\xfe"  # never valid UTF-8


def _model() -> bytes:
    """Every string location marked by a 4-letter token that the test turns into invalid UTF-8."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["BODI"], ["BODO"], name="BNAM")],
        "BGRA",
        [helper.make_tensor_value_info("BODI", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("BODO", TensorProto.FLOAT, [1])],
    )
    nodes = [
        helper.make_node("Relu", ["XINP"], ["YMID"], name="NNAM", doc_string="DDOC"),
        helper.make_node("Cast", ["YMID"], ["ZOUT"], name="CNAM", to=TensorProto.FLOAT),
        helper.make_node("If", ["COND"], ["IOUT"], name="IFNM", then_branch=body, else_branch=body),
    ]
    graph = helper.make_graph(
        nodes,
        "GNAM",
        [
            helper.make_tensor_value_info("XINP", TensorProto.FLOAT, ["SYMB", 3]),
            helper.make_tensor_value_info("COND", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info("ZOUT", TensorProto.FLOAT, ["SYMB", 3]),
            helper.make_tensor_value_info("IOUT", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor("WINI", TensorProto.FLOAT, [1], [1.0])],
        doc_string="GDOC",
    )
    model = helper.make_model(
        graph, producer_name="PROD", producer_version="PVER", opset_imports=[helper.make_opsetid("", 17)]
    )
    helper.set_model_props(model, {"MKEY": "MVAL"})
    return model.SerializeToString()


TOKENS = ["NNAM", "DDOC", "CNAM", "XINP", "YMID", "SYMB", "GNAM", "GDOC", "WINI", "PROD", "PVER", "MKEY", "MVAL"]
TOKENS += ["BNAM", "BODI", "BGRA"]


def _routes(mid: str) -> list[str]:
    base = f"/api/models/{mid}"
    return [
        "/api/models",
        base,
        f"{base}/graph",
        f"{base}/graph?path=n2/then_branch",
        f"{base}/validation",
        f"{base}/types",
        f"{base}/search?q=Relu",
        f"{base}/search?q=%EF%BF%BD",
        f"{base}/node?id=n0",
        f"{base}/node?id=n2/then_branch/n0",
        f"{base}/schema?node=n0",
        f"{base}/operators",
        f"{base}/text",
        f"{base}/text?download=1",
        f"{base}/revisions",
        f"{base}/download",
        f"{base}/stats",
        f"{base}/stats?dims=SYMB%3D2",
        f"/models/{mid}",
    ]


@pytest.mark.parametrize("token", TOKENS)
def test_invalid_utf8_is_shown_replaced_and_kept(client, token):
    data = _model()
    assert data.count(token.encode()) >= 1
    broken = data.replace(token.encode(), BAD + token[2:].encode())
    r = upload(client, broken)
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    seen = []
    for route in _routes(mid):
        resp = client.get(route)
        assert resp.status_code < 500, (route, resp.status_code)
        seen.append(resp.get_data())
    # the replaced text is what the views show
    assert any(("\ufffd\ufffd" + token[2:]).encode() in body for body in seen), token
    # an edit elsewhere keeps the bytes as they were
    edit = {"base": 0, "ops": [{"op": "set_metadata", "key": "edited", "value": "yes"}]}
    r = client.post(f"/api/models/{mid}/edits", json=edit)
    assert r.status_code == 200, r.get_json()
    stored = client.get(f"/api/models/{mid}/download").data
    assert (BAD + token[2:].encode()) in stored
    assert onnx.load_from_string(stored).metadata_props[-1].key == "edited"


def _function_model() -> bytes:
    """A model-local function named "QQQQ" (made invalid UTF-8 by the test), called once."""
    f = onnx.FunctionProto(name="QQQQ", domain="local", input=["x"], output=["y"])
    f.node.append(helper.make_node("Relu", ["x"], ["y"]))
    f.opset_import.append(helper.make_opsetid("", 18))
    call = helper.make_node("QQQQ", ["X"], ["Y"], domain="local")
    graph = helper.make_graph(
        [call],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)], ir_version=10
    )
    model.functions.append(f)
    return model.SerializeToString().replace(b"QQQQ", BAD + b"QQ")


def test_an_edit_tripping_over_invalid_utf8_runs_on_the_text_decoded_and_says_so(client):
    """convert_opset writes the function's name into a graph of its own: the bytes upb gives
    for it were a 500 (QA15). The batch runs again on the model decoded, and says what it wrote."""
    mid = upload(client, _function_model()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 21}]})
    assert r.status_code == 200, r.get_json()
    [change] = r.get_json()["changes"]
    assert change.endswith("; 2 text field(s) held invalid UTF-8: written with replacement characters (U+FFFD)"), change
    stored = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert stored.functions[0].name == "\ufffd\ufffdQQ" and stored.graph.node[0].op_type == "\ufffd\ufffdQQ"
    assert stored.opset_import[0].version == 21
