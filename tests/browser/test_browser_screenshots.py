"""Screenshots of both pages under test-artifacts/, and a check that nothing overlaps."""

from __future__ import annotations

import onnx

from .browser_models import if_model, light_model, tiny_cnn
from .browser_pages import open_model, upload, wait_ready


def boxes(page) -> list[dict]:
    return page.locator("#graph [data-box]").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return {id: e.getAttribute('data-box'), x: r.x, y: r.y, w: r.width, h: r.height}; })"
    )


def overlapping(rects: list[dict]) -> list[tuple[str, str]]:
    out = []
    for i, a in enumerate(rects):
        for b in rects[i + 1 :]:
            if (
                a["x"] < b["x"] + b["w"]
                and b["x"] < a["x"] + a["w"]
                and a["y"] < b["y"] + b["h"]
                and b["y"] < a["y"] + a["h"]
            ):
                out.append((a["id"], b["id"]))
    return out


def test_screenshots(page, server, artifacts):
    upload_if = upload(page, server, if_model(), "if_model.onnx")
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")

    page.goto(server + "/")
    page.wait_for_selector("#models-table a.model-link")
    page.screenshot(path=str(artifacts / "index-page.png"))

    open_model(page, server, summary["id"])
    rects = boxes(page)
    assert len(rects) == 9  # 7 nodes (the Constant is a line of the Reshape's box), input, output
    assert overlapping(rects) == []
    graph = page.locator("#graph").bounding_box()
    sidebar = page.locator("#sidebar").bounding_box()
    assert graph["x"] + graph["width"] <= sidebar["x"] + 1  # drawing and sidebar side by side
    page.screenshot(path=str(artifacts / "model-page-open.png"))
    page.click("#btn-fit")
    rects = boxes(page)
    for r in rects:  # Fit: every box visible in the drawing area
        assert graph["x"] <= r["x"] and r["x"] + r["w"] <= graph["x"] + graph["width"]
        assert graph["y"] <= r["y"] and r["y"] + r["h"] <= graph["y"] + graph["height"]
    page.screenshot(path=str(artifacts / "model-page.png"))

    page.click("#graph [data-node-id=n0]")
    page.locator("#sidebar .preview-link").first.click()
    page.wait_for_selector("#sidebar .tensor-preview .tp-stats")
    page.screenshot(path=str(artifacts / "model-page-node.png"))

    # an attribute value the server refuses: its message next to the field
    page.click("#graph [data-node-id=n1]")
    page.locator("#sidebar [data-attr=alpha] input[name=value]").fill("twice as leaky")
    page.locator("#sidebar [data-attr=alpha] button[type=submit]").click()
    page.locator("#sidebar [data-attr=alpha] .field-error").wait_for(state="visible")
    page.screenshot(path=str(artifacts / "model-page-edit-error.png"))

    page.click("#btn-model")
    page.locator("#metadata-add input[name=key]").fill("reviewed")
    page.locator("#metadata-add textarea[name=value]").fill("yes")
    page.locator("#metadata-add button[type=submit]").click()
    page.wait_for_selector("#metadata [data-meta-key=reviewed]")
    page.screenshot(path=str(artifacts / "model-page-metadata.png"))

    page.goto(f"{server}/models/{upload_if['id']}#path=n1%2Fthen_branch")
    wait_ready(page)
    page.screenshot(path=str(artifacts / "model-page-subgraph.png"))


def test_screenshot_large_model(page, server, artifacts):
    model = onnx.load(light_model("inception_v1"))
    summary = upload(page, server, model, "light_inception_v1.onnx")
    open_model(page, server, summary["id"])
    # its inception blocks (named by their weights) are layers: it opens as its parts, one column
    page.screenshot(path=str(artifacts / "model-page-large-first.png"))
    collapsed = page.locator("#graph [data-group-id][data-collapsed=true]").evaluate_all(
        "els => els.map((e) => e.getAttribute('data-group-id'))"
    )
    assert {"inception_3a", "inception_5b"} <= set(collapsed), collapsed
    page.click("#expand-all")
    page.wait_for_selector("#graph[data-expanded=all][data-state=ready]:not([data-drawn=window])")
    assert page.locator("#graph [data-node-id]").count() == len(model.graph.node)
    assert overlapping(boxes(page)) == []
    page.screenshot(path=str(artifacts / "model-page-large.png"))
