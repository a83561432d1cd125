"""A tree ensemble's node panel: its trees summed up (count, depth, features by splits with a
bar each) above the attributes, and any tree's rules stepped through."""

from __future__ import annotations

import numpy as np
from test_trees import classic_regressor, random_trees

from .browser_pages import open_model, upload


def test_the_trees_section_sums_up_the_forest_and_steps_through_its_trees(page, server, artifacts):
    trees = random_trees(np.random.default_rng(5), count=6, depth=4)
    summary = upload(page, server, classic_regressor(trees), "forest.onnx")
    open_model(page, server, summary["id"], "#node=n0")
    section = page.locator("#node-trees")
    page.locator("#trees-rules[data-tree='0']").wait_for()
    splits = sum(1 for nodes in trees for n in nodes if "weight" not in n)
    assert f"6 trees · {splits} splits" in section.text_content()
    assert "1 target, sum from 0.5" in section.text_content()
    rows = page.locator("#trees-features tbody tr")
    used = {n["feature"] for nodes in trees for n in nodes if "weight" not in n}
    assert rows.count() == len(used)
    widths = [
        float(rows.nth(i).locator(".trees-bar").evaluate("e => e.getBoundingClientRect().width"))
        for i in range(rows.count())
    ]
    assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1] > 0  # bars as long as the counts
    assert page.locator("#trees-rules").text_content().startswith(f"if X[{trees[0][0]['feature']}] ")
    page.click("button[aria-label='Next tree']")
    page.locator("#trees-rules[data-tree='1']").wait_for()
    assert page.locator("#trees-rules").text_content().startswith(f"if X[{trees[1][0]['feature']}] ")
    # the attribute lists say how long they are
    n = sum(len(t) for t in trees)
    assert page.locator(".attr[data-attr=nodes_modes] .attr-type").text_content() == f"STRINGS · {n}"
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "node-trees.png"))
