"""A small model's page carries its summary and main graph as JSON data blocks (no request
before the drawing can start); they say what the API says, and no model string can end them."""

from __future__ import annotations

import json
import re

import onnx
from onnx import TensorProto, helper
from testkit import upload

from app.api.documents import EMBED_MAX_NODES

HOSTILE = "</script><script>alert(1)</script><!-- & -->"


def _model(nodes: int = 3, name: str = "relu") -> onnx.ModelProto:
    chain = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"{name}{i}") for i in range(nodes)]
    g = helper.make_graph(
        chain,
        "chain",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info(f"t{nodes}", TensorProto.FLOAT, [1, 4])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _block(page: str, block_id: str):
    found = re.search(rf'<script type="application/json" id="{block_id}">(.*?)</script>', page, re.S)
    return None if found is None else json.loads(found.group(1))


def _page(client, model: onnx.ModelProto) -> tuple[str, str]:
    mid = upload(client, model.SerializeToString(), "m.onnx").get_json()["id"]
    return mid, client.get(f"/models/{mid}").get_data(as_text=True)


def test_a_small_models_page_carries_what_the_api_says(client):
    mid, page = _page(client, _model())
    assert _block(page, "embedded-graph") == client.get(f"/api/models/{mid}/graph?path=").get_json()
    assert _block(page, "embedded-summary") == client.get(f"/api/models/{mid}").get_json()
    # the blocks come before the script that reads them
    assert page.index('id="embedded-graph"') < page.index("graph-prefetch.js")


def test_model_strings_cannot_end_the_data_block(client):
    _, page = _page(client, _model(name=HOSTILE))
    assert "<script>alert" not in page and "<!--" not in page
    graph = _block(page, "embedded-graph")
    assert [n["name"] for n in graph["nodes"]] == [f"{HOSTILE}{i}" for i in range(3)]


def test_big_graphs_and_unknown_models_are_asked_for(client):
    mid, page = _page(client, _model(EMBED_MAX_NODES + 1))
    assert _block(page, "embedded-graph") is None
    assert _block(page, "embedded-summary")["id"] == mid
    page = client.get("/models/no-such-model").get_data(as_text=True)
    assert _block(page, "embedded-summary") is None and _block(page, "embedded-graph") is None


def _graph_kept(app, mid: str) -> bool:
    from app.api import derived

    with app.app_context():
        s = app.extensions["store"]
        blob = s.revision(mid, s.model(mid).head).blob
        return any(derived.known(s, "graph", blob, f"{ready}:") for ready in (0, 1))


def test_an_upload_builds_a_small_models_page_data_before_answering(app, client):
    """The page opened right after an upload finds its graph JSON kept (a cold first view is
    not held up building it); a big one's is left to its background warm-up."""
    # contents no other test uploads: the process keeps graph JSON by content, whatever the store
    small = upload(client, _model(name="upload-warm").SerializeToString(), "m.onnx").get_json()["id"]
    assert _graph_kept(app, small)
    big = _model(EMBED_MAX_NODES + 1, name="upload-cold").SerializeToString()
    big = upload(client, big, "big.onnx").get_json()["id"]
    assert not _graph_kept(app, big)
