"""A first view too wide for the top of the drawing frames the graph's inputs together where they
fit in the window (QA34 #3: the onnx node test affine_grid_2d_expanded opened with `theta` in the
middle and `size` off-screen, behind the side panel)."""

from __future__ import annotations

import onnx
from onnx.backend.test.case.node import collect_testcases

from .browser_pages import open_model, upload


def _affine_grid() -> onnx.ModelProto:
    return next(c.model for c in collect_testcases(None) if c.name == "test_affine_grid_2d_expanded")


def test_the_inputs_of_a_wide_graph_open_together_beside_the_side_panel(page, server, artifacts):
    page.set_viewport_size({"width": 1440, "height": 900})
    mid = upload(page, server, _affine_grid(), "affine_grid.onnx")["id"]
    open_model(page, server, mid)
    page.locator("#graph[data-state=ready]").wait_for()
    page.screenshot(path=str(artifacts / "first-view-affine-grid.png"))
    area = page.locator("#graph").bounding_box()
    side = page.locator("#sidebar").bounding_box()
    right = min(area["x"] + area["width"], side["x"]) if side and side["width"] else area["x"] + area["width"]
    for name in ("theta", "size"):
        box = page.locator(f"#graph [data-box='input:{name}']").bounding_box()
        assert box is not None, name
        assert area["x"] <= box["x"] and box["x"] + box["width"] <= right, (name, box, area, side)
