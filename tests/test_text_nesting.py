"""ONNX text nested deeper than any real model is refused before onnx's C++ parser sees it
(issue 12: an If nested 5,000 deep crashed the parser, and the server with it)."""

from __future__ import annotations

import io

import onnx
import pytest

from app.onnx_io.kinds import MAX_TEXT_NESTING, nesting_depth


def nested_if_text(depth: int) -> str:
    """A model whose If's then-branch holds an If ... `depth` deep, in ONNX text syntax."""
    body = "y = Identity (x)"
    for _ in range(depth):
        branch = f"g () => (float[1] y) {{ {body} }}"
        body = f"y = If (c) <then_branch = {branch}, else_branch = g () => (float[1] y) {{ y = Identity (x) }}>"
    return f'<ir_version: 8, opset_import: ["" : 17]>\nmain (bool c, float[1] x) => (float[1] y) {{\n  {body}\n}}\n'


def test_a_real_nesting_parses_and_is_counted():
    text = nested_if_text(3)
    model = onnx.parser.parse_model(text)
    assert model.graph.node[0].op_type == "If"
    assert 6 <= nesting_depth(text) < MAX_TEXT_NESTING
    assert nesting_depth('f (x) => (y) { y = Foo <s = "((((((("> (x) }') == 2


def _upload(client, text: str):
    files = [(io.BytesIO(text.encode()), "deep.onnxtxt")]
    return client.post("/api/models", data={"file": files}, content_type="multipart/form-data")


def test_a_modest_text_model_uploads(client):
    r = _upload(client, nested_if_text(3))
    assert r.status_code == 201, r.get_json()


@pytest.mark.parametrize("depth", [200, 5000])
def test_a_text_model_nested_too_deep_is_refused(client, depth):
    r = _upload(client, nested_if_text(depth))
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["code"] == "too_deep"
    assert client.get("/api/models").get_json()["models"] == []
