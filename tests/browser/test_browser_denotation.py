"""Type and dimension denotations (TypeProto.denotation, Dimension.denotation) are shown on the
value panel (QA22 p1: kept by every edit, shown nowhere)."""

from __future__ import annotations

import onnx
from onnx import helper

from .browser_pages import open_model, upload


def denoted_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 3, 8, 8])
    x.type.denotation = "IMAGE"
    for d, what in zip(x.type.tensor_type.shape.dim, ["DATA_BATCH", "DATA_CHANNEL", "", ""], strict=True):
        d.denotation = what
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="act")],
        "g",
        [x],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", 3, 8, 8])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_denotations_are_on_the_value_panel(page, server, artifacts):
    summary = upload(page, server, denoted_model(), "denoted.onnx")
    graph = page.request.get(f"{server}/api/models/{summary['id']}/graph").json()
    x = next(v for v in graph["inputs"] if v["name"] == "x")
    assert x["type"]["denotation"] == "IMAGE"
    assert x["type"]["dim_denotations"] == ["DATA_BATCH", "DATA_CHANNEL", None, None]
    y = next(v for v in graph["outputs"] if v["name"] == "y")
    assert "denotation" not in y["type"] and "dim_denotations" not in y["type"]
    open_model(page, server, summary["id"], "#tensor=x")
    panel = page.locator("#sidebar")
    panel.get_by_text("Denotation").wait_for()
    assert "IMAGE" in panel.text_content()
    assert "DATA_BATCH × DATA_CHANNEL × ? × ?" in panel.text_content()
    page.screenshot(path=str(artifacts / "value-denotation.png"))


def test_a_values_metadata_is_edited_on_its_panel(page, server):
    """QA22 m8: a graph input's metadata, shown read-only, is added, changed and deleted here."""
    from .browser_pages import wait_revision

    summary = upload(page, server, denoted_model(), "denoted.onnx")
    open_model(page, server, summary["id"], "#tensor=x")
    panel = page.locator("#sidebar")
    panel.locator("button.ed-value-meta-toggle").click()
    panel.locator("#value-metadata-edit-add input[name=key]").fill("units")
    panel.locator("#value-metadata-edit-add [name=value]").fill("pixels, 0-255")
    panel.locator("#value-metadata-edit-add button[type=submit]").click()
    wait_revision(page, 1)
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert [(e.key, e.value) for e in model.graph.input[0].metadata_props] == [("units", "pixels, 0-255")]
    open_model(page, server, summary["id"], "#tensor=x")
    assert "pixels, 0-255" in page.locator("#sidebar .value-metadata").text_content()
