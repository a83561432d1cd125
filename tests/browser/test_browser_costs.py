"""Measure on the page (issue 15): the model panel's Costs (totals, the sortable table of nodes)
and the heat map of the drawing by FLOPs, parameters or output size, with its legend."""

from __future__ import annotations

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload


def test_costs_table_and_heat_map(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    stats = page.request.get(f"{server}/api/models/{summary['id']}/stats").json()
    text = costs.text_content()
    assert "Parameters" in text and "FLOPs" in text and "Activations" in text
    # the table: every node, FLOPs first, then sorted by parameters on a click
    rows = page.locator("#cost-table tbody tr")
    assert rows.count() == len(stats["nodes"])
    flops_order = [n["node"] for n in sorted(stats["nodes"], key=lambda n: -(n["flops"] or -1))]
    assert rows.first.get_attribute("data-node") == flops_order[0]
    page.click("#cost-table th[data-key=params] button")
    assert page.locator("#cost-table th[data-key=params]").get_attribute("aria-sort") == "descending"
    most_params = max(stats["nodes"], key=lambda n: n["params"])
    assert rows.first.get_attribute("data-node") == most_params["node"]

    # the heat map: each drawn node box gets its class, the legend says what it counts
    page.click("#costs .cost-heat button[data-metric=flops]")
    page.locator("#heat-legend:not([hidden])").wait_for()
    assert "FLOPs per node" in page.locator("#heat-legend").text_content()
    conv = max((n for n in stats["nodes"] if n["flops"]), key=lambda n: n["flops"])
    page.click("#expand-all")
    hottest = page.locator(f'#graph g.box[data-node-id="{conv["node"]}"]')
    hottest.wait_for()
    assert "heat-5" in hottest.get_attribute("class")
    zero = next(n for n in stats["nodes"] if n["op_type"] == "Reshape")  # (a Constant is drawn inside its reader)
    assert zero["flops"] == 0
    assert "heat-zero" in page.locator(f'#graph g.box[data-node-id="{zero["node"]}"]').get_attribute("class")
    page.screenshot(path=str(artifacts / "costs-heat-map.png"))

    # a row's link selects its node; the legend's × turns the heat map off
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    page.locator(f'#cost-table tr[data-node="{conv["node"]}"] a').click()
    page.wait_for_selector("#sidebar[data-panel=node]")
    page.click("#heat-legend .heat-off")
    assert page.locator("#heat-legend").is_hidden()
    assert page.locator("#graph .box.heat-5").count() == 0
