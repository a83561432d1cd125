"""Compare of a retrained forest on the page (QA21 F3): the tree-level line comes first, and a
long list's change reads as how many items differ, then the first few by position, each before
and now (not two identical cut-off lists), strings as text."""

from __future__ import annotations

import numpy as np
import onnx

from .browser_pages import compared_with_revision, open_model, upload


def _forest() -> onnx.ModelProto:
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    model = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0).fit(x, y)
    return to_onnx(model, x[:1], options={"zipmap": False}, target_opset={"": 17, "ai.onnx.ml": 3})


def test_compare_a_forest_after_one_threshold_changed(page, server, artifacts):
    model = _forest()
    node = next(n for n in model.graph.node if n.op_type == "TreeEnsembleClassifier")
    k = next(
        i for i, m in enumerate(next(a for a in node.attribute if a.name == "nodes_modes").strings) if m != b"LEAF"
    )
    nid = f"n{list(model.graph.node).index(node)}"
    mid = upload(page, server, model, "forest.onnx")["id"]
    op = {"op": "set_attribute_items", "node": nid, "name": "nodes_values", "items": [{"index": k, "value": 0.125}]}
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [op]})
    assert r.status == 200, r.text()
    compared_with_revision(page, server, mid, 1)
    changed = page.locator(f"#compare-changed li[data-node={nid}]")
    rows = changed.locator("tbody tr")
    assert rows.count() == 2, rows.all_text_contents()
    trees = rows.nth(0).locator("td")
    assert trees.nth(0).text_content() == "trees"
    assert trees.nth(1).text_content() == "1 of 6 differ — thresholds in 1, leaf values in 0, structure in 0"
    values = rows.nth(1)
    assert values.locator("td").first.text_content() == "attribute nodes_values"
    total = len(next(a for a in node.attribute if a.name == "nodes_values").floats)
    assert values.locator(".compare-items > div").first.text_content() == f"1 of {total:,} values differs"
    item = values.locator(".compare-item")
    assert item.count() == 1
    assert item.locator(".muted").text_content() == f"[{k}] "
    assert item.locator(".compare-now").text_content() == "0.125"
    page.screenshot(path=str(artifacts / "compare-forest-threshold.png"))
    changed.screenshot(path=str(artifacts / "compare-forest-threshold-node.png"))


def test_compare_two_retrained_forests_reads_strings_as_text(page, server, artifacts):
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    ids = []
    for seed in (0, 1):
        m = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=seed).fit(x, y)
        onx = to_onnx(m, x[:1], options={"zipmap": False}, target_opset={"": 17, "ai.onnx.ml": 3})
        ids.append(upload(page, server, onx, f"forest{seed}.onnx")["id"])
    open_model(page, server, ids[1])
    page.click("#btn-compare")
    page.locator(f"#compare-with option[value='model:{ids[0]}']").wait_for(state="attached")
    page.select_option("#compare-with", f"model:{ids[0]}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    changed = page.locator("#compare-changed li.compare-changed").first
    text = changed.text_content()
    assert "of 6 differ — thresholds in" in text and "b'" not in text, text
    modes = changed.locator("tbody tr", has_text="attribute nodes_modes")
    assert modes.locator(".compare-item").count() >= 1
    assert "'" in modes.locator(".compare-before").first.text_content()  # 'LEAF' / 'BRANCH_LEQ', quoted text
    changed.screenshot(path=str(artifacts / "compare-forest-retrained.png"))
