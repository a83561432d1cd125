"""Measure on the page (issue 15): the model panel's Costs (totals, the sortable table of nodes)
and the heat map of the drawing by FLOPs, parameters, output size or memory alive, with its
legend; a node's own costs in its panel."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .browser_models import position_slice_model, tiny_cnn
from .browser_pages import open_model, reveal, upload, wait_revision


def test_costs_table_and_heat_map(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/stats" in r.url else None)
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    page.wait_for_timeout(300)
    assert len(asked) == 1, asked  # the panel is drawn again as verdicts arrive: counted once
    stats = page.request.get(f"{server}/api/models/{summary['id']}/stats").json()
    text = costs.text_content()
    assert "Parameters" in text and "FLOPs" in text and "Activations" in text
    assert "a multiply-add counts 2" in text  # QA17: 8.2 G for ResNet-50 read as 2x papers' 4.1 G MACs
    # the table: every node, FLOPs first, then sorted by parameters on a click
    rows = page.locator("#cost-table tbody tr")
    assert rows.count() == len(stats["nodes"])
    flops_order = [n["node"] for n in sorted(stats["nodes"], key=lambda n: -(n["flops"] or -1))]
    assert rows.first.get_attribute("data-node") == flops_order[0]
    page.click("#cost-table th[data-key=params] button")
    assert page.locator("#cost-table th[data-key=params]").get_attribute("aria-sort") == "descending"
    most_params = max(stats["nodes"], key=lambda n: n["params"])
    assert rows.first.get_attribute("data-node") == most_params["node"]
    # each node's op under its name, whole (not cut to "Leaky…"); the rows sort by it too
    page.click("#cost-table th[data-key=name] button[data-sort=op_type]")
    ops = rows.locator(".cost-op").all_text_contents()
    assert ops == sorted(n["op_type"] for n in stats["nodes"]), ops
    assert page.evaluate(
        "() => [...document.querySelectorAll('#cost-table .cost-op')].every((e) => e.scrollWidth <= e.clientWidth)"
    ), "an op name is cut"

    # the heat map: each drawn node box gets its class, the legend says what it counts
    page.click("#costs .cost-heat button[data-metric=flops]")
    page.locator("#heat-legend:not([hidden])").wait_for()
    assert "FLOPs per box" in page.locator("#heat-legend").text_content()
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
    # the node's own line of the costs, in its panel
    node_costs = page.locator("#node-costs:not(.muted)")
    node_costs.wait_for()
    assert "FLOPs" in node_costs.text_content() and "Memory alive" in node_costs.text_content()
    page.click("#heat-legend .heat-off")
    assert page.locator("#heat-legend").is_hidden()
    assert page.locator("#graph .box.heat-5").count() == 0

    # memory alive: the peak's node is named and linked, and is the hottest box of that heat map
    peak = stats["totals"]["peak_node"]
    assert peak and max(n["live_bytes"] for n in stats["nodes"]) == stats["totals"]["peak_activation_bytes"]
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    page.click("#costs .cost-heat button[data-metric=live_bytes]")
    assert "Memory alive per box" in page.locator("#heat-legend").text_content()
    assert "heat-5" in page.locator(f'#graph g.box[data-node-id="{peak}"]').get_attribute("class")
    page.click(f'#costs .cost-peak a[data-node="{peak}"]')
    page.wait_for_selector("#sidebar[data-panel=node]")
    page.wait_for_function(
        "() => document.querySelector('#node-costs:not(.muted)')?.textContent.includes(\"the model's peak\")"
    )
    page.screenshot(path=str(artifacts / "costs-memory-alive.png"))

    # the Reshape writes nothing of its own: its output is its input's buffer
    assert zero["view_of"] == "g1"
    page.click(f'#graph g.box[data-node-id="{zero["node"]}"]')
    page.wait_for_function(
        "() => document.querySelector('#node-costs:not(.muted)')?.textContent.includes('a view of g1')"
    )


def test_input_sizes_given_once_count_every_node_and_feed_the_run(page, server, artifacts):
    """A model with symbolic input dims asks for those sizes only (never inference's unk__N);
    counted at them, every node's FLOPs are known; the run panel starts from the same sizes."""
    summary = upload(page, server, position_slice_model(), "position_slice.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    # before any sizes: the costs as formulas of them (the numbers come once they are given);
    # 32 B: the Shape's 3 int64 and the Gather's 1 (the Unsqueeze a view of it)
    assert costs.locator("[data-formula=flops]").text_content() == "32·batch·seq + 1.02 K·seq"
    assert costs.locator("[data-formula=activation_bytes]").text_content() == "128 B·batch·seq + 192 B·seq + 32 B"
    assert [f.get_attribute("name") for f in costs.locator(".cost-dims input").all()] == ["batch", "seq"]
    # each node's cost too: the table leads with what grows fastest (the Add's batch·seq first)
    rows = costs.locator("#cost-table tbody tr")
    assert rows.nth(0).locator("td.num").first.text_content() == "32·batch·seq"
    mm = page.locator("#cost-table tr", has=page.locator("a", has_text="mm"))
    assert mm.locator("td.num").first.text_content() == "1.02 K·seq"
    page.click("#costs .cost-heat button[data-metric=flops]")  # on before counting: MatMul unknown
    mm_box = page.locator('#graph g.box[data-node-id="n8"]')
    assert "heat-unknown" in mm_box.get_attribute("class")
    page.fill("#costs .cost-dims input[name=batch]", "2")
    page.fill("#costs .cost-dims input[name=seq]", "8")
    page.click("#costs .cost-dims button[type=submit]")
    page.wait_for_function("() => document.querySelector('#costs').textContent.includes('Counted at these sizes')")
    mm = page.locator("#cost-table tr", has=page.locator("a", has_text="mm"))
    assert mm.locator("td.num").first.text_content() == "8.19 K"  # 2 x 8 x 32 x 16
    assert "unknown" not in costs.locator(".props").text_content()
    assert "at most at once" in costs.locator(".props").text_content()
    # the heat map follows the new numbers: the MatMul is the hottest node now
    page.wait_for_function(
        "() => document.querySelector('#graph g.box[data-node-id=\"n8\"]').classList.contains('heat-5')"
    )
    page.screenshot(path=str(artifacts / "costs-input-sizes.png"))
    # a size it can't count at: said under the fields, which stay, with the last counts
    page.fill("#costs .cost-dims input[name=seq]", "1" * 20)
    page.click("#costs .cost-dims button[type=submit]")
    refused = page.locator("#costs .field-error")
    refused.wait_for()
    assert (
        refused.text_content()
        == "Not counted at those sizes: seq: 11111111111111111111 is too big a size (at most 1e+12)"
    )
    assert costs.locator(".cost-dims input").count() == 2
    assert mm.locator("td.num").first.text_content() == "8.19 K"
    page.fill("#costs .cost-dims input[name=seq]", "8")
    page.click("#btn-run")
    page.locator("#run-go").wait_for()
    assert page.input_value(".run-dim[aria-label=batch]") == "2"
    assert page.input_value(".run-dim[aria-label=seq]") == "8"


HEAT_PIXELS = """(colours) => {
  const c = document.querySelector('#graph canvas.graph-canvas');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (colours.some(([r, g, b]) => d[i] === r && d[i + 1] === g && d[i + 2] === b)) n++;
  return n;
}"""


def test_the_heat_map_on_a_canvas_drawing(page, server, artifacts):
    """A graph too big for one SVG element per box is painted on a canvas: its boxes take the
    heat colours too, and lose them when the heat map is turned off. (Far out, boxes thinner
    than a pixel blend into their neighbours: no exact colour to count there.)"""
    from .scale_models import llama_like

    summary = upload(page, server, llama_like(53), "llama_5k.onnx")
    open_model(page, server, summary["id"])
    page.click("#expand-all")
    page.wait_for_selector("#graph[data-expanded=all][data-state=ready]:not([data-drawn=window])", timeout=120_000)
    assert page.get_attribute("#graph", "data-renderer") == "canvas"
    heat = page.evaluate(
        "[0, 1, 2, 3, 4, 5].map((k) => getComputedStyle(document.documentElement).getPropertyValue(`--g-heat-${k}`).trim())"
    )
    colours = [[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in heat]
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for(timeout=60_000)
    assert page.evaluate(HEAT_PIXELS, colours) == 0
    page.click("#costs .cost-heat button[data-metric=flops]")
    page.locator("#heat-legend:not([hidden])").wait_for()
    page.wait_for_function(f"(colours) => ({HEAT_PIXELS})(colours) > 500", arg=colours, timeout=20_000)
    page.screenshot(path=str(artifacts / "costs-heat-canvas.png"))
    page.click("#heat-legend .heat-off")
    page.wait_for_function(f"(colours) => ({HEAT_PIXELS})(colours) === 0", arg=colours, timeout=20_000)


MINIMAP_PIXELS = """() => {
  const c = document.querySelector('#minimap');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const [r, g, b] = COLOUR;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] === r && d[i + 1] === g && d[i + 2] === b) n++;
  return n;
}"""


def test_the_heat_map_on_collapsed_groups_counts_what_they_hold(page, server, artifacts):
    """A hierarchical model opens as collapsed groups: coloured by FLOPs, each group's box takes
    the sum of its nodes' (memory alive: their most), on a scale over what is drawn, and its
    panel says what it costs; expanded, its nodes are coloured one by one."""
    from .scale_models import llama_like

    summary = upload(page, server, llama_like(24), "llama_24.onnx")
    stats = page.request.get(f"{server}/api/models/{summary['id']}/stats").json()
    open_model(page, server, summary["id"])
    layer = page.locator("#graph g.box[data-group-id='/model/layers.3'][data-collapsed=true]")
    layer.wait_for()
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    # the exact count beside the rounded one: what one checks against the framework's
    params = stats["totals"]["params"]
    assert params > 1000 and f"({params:,} · " in page.locator("#costs").text_content()
    hottest = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--g-heat-5').trim()")
    hot_pixels = MINIMAP_PIXELS.replace("COLOUR", str([int(hottest[i : i + 2], 16) for i in (1, 3, 5)]))
    assert page.evaluate(hot_pixels) == 0
    page.click("#costs .cost-heat button[data-metric=flops]")
    legend = page.locator("#heat-legend:not([hidden])")
    legend.wait_for()
    assert "A collapsed group: its nodes' sum" in legend.text_content()
    # the overview in the corner takes the same colours: where the cost is, at a glance
    page.wait_for_function(f"() => ({hot_pixels})() > 50")
    # every layer costs the same and the most of anything drawn: all in the hottest class
    assert "heat-5" in layer.get_attribute("class")
    layers = page.locator("#graph g.box.group[data-group-id^='/model/layers.']")
    assert layers.count() >= 2 and all("heat-5" in c for c in [x.get_attribute("class") for x in layers.all()])
    summed = sum(n["flops"] for n in stats["nodes"] if n["name"].startswith("/model/layers.3/"))
    assert summed > 0
    page.screenshot(path=str(artifacts / "costs-heat-groups.png"))

    # the group's panel (selected as a deep link does, which brings it into the window): its
    # nodes' FLOPs added up
    reveal(page, group="/model/layers.3")
    page.wait_for_selector("#sidebar[data-panel=group]")
    costs = page.locator("#group-costs:not(.muted)")
    costs.wait_for()
    flops = costs.locator("dd").first.text_content()
    assert flops.endswith("K") and abs(float(flops.split()[0]) * 1000 - summed) <= 0.01 * summed, (flops, summed)

    # expanded, what it holds is coloured one by one (its norm's few FLOPs against whole layers)
    layer.dblclick()
    page.wait_for_selector("#graph g[data-group-id='/model/layers.3'][data-collapsed=false]")
    norm = page.locator("#graph g.box[data-group-id='/model/layers.3/input_layernorm'][data-collapsed=true]")
    norm.wait_for()
    page.wait_for_function(
        "() => [...document.querySelector(\"#graph g.box[data-group-id='/model/layers.3/input_layernorm']\").classList].some((c) => c.startsWith('heat-'))"
    )
    assert "heat-5" not in norm.get_attribute("class")
    assert "heat-5" in page.locator("#graph g.box[data-group-id='/model/layers.4']").get_attribute("class")


def test_sizes_computed_from_values_say_where_they_appear(page, server, artifacts):
    """Unique's outputs have sizes no input shape gives: Costs asks for them named by the tensor
    and operator where each first appears (not as a bare Unique_0_o0__d0), linked to its node."""
    from .browser_models import official_node_models

    summary = upload(page, server, official_node_models()["test_unique_sorted_with_axis"], "unique.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    form = costs.locator(".cost-dims")
    assert "computed from the inputs' values, not their shapes" in form.text_content()
    where = form.locator(".cost-dim-where").first
    assert where.text_content() == "dim 0 of Y (Unique)"
    assert where.locator("a").get_attribute("data-node") == "n0"
    form.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "costs-dims-from-values.png"))
    for field in form.locator("input[type=number]").all():
        field.fill("3")
    form.locator("button[type=submit]").click()
    counted = page.locator("#costs[data-ready=true] .cost-dims", has_text="Counted at these sizes")
    counted.wait_for()  # the sizes given stay, to be changed
    assert counted.locator("input[name=Unique_0_o1__d0]").input_value() == "3"
    assert "dim 0 of indices (Unique)" in counted.text_content()


def test_a_scan_bodys_nodes_say_their_flops_are_over_every_step(page, server):
    from .browser_models import official_node_models

    summary = upload(page, server, official_node_models()["test_scan9_sum"], "scan.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    row = page.locator("#cost-table tbody tr[data-node='n0/body/n0']")
    cell = row.locator(".cost-runs")
    assert cell.text_content() == "6 (3 runs)", cell.text_content()
    assert "Scan's steps" in cell.get_attribute("title")
    # the node's own panel, in its body, says so too
    page.goto(f"{server}/models/{summary['id']}#path=n0%2Fbody&node=n0%2Fbody%2Fn0")
    page.wait_for_function("() => (document.querySelector('#node-costs') || {}).textContent?.includes('runs')")
    assert "6 · over 3 runs of its graph" in page.locator("#node-costs").text_content()


def test_unnamed_first_axes_follow_each_other(page, server):
    """Three inputs whose batch is unnamed, as scikit-learn exports them (a[0], b[0], c[0]): a
    size typed for one fills the others, in Costs and in Run, until one is given a size of its own."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Concat", ["a", "b", "c"], ["y"], name="join", axis=1)],
        "columns",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None, 2]) for n in "abc"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 6])],
    )
    summary = upload(page, server, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "cols.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    fields = {n: costs.locator(f".cost-dims input[name='{n}[0]']") for n in "abc"}
    fields["b"].fill("8")
    assert [fields[n].input_value() for n in "abc"] == ["8", "8", "8"]
    fields["c"].fill("5")  # typed into: b keeps its own 8, a (never typed into) follows
    assert [fields[n].input_value() for n in "abc"] == ["5", "8", "5"]
    page.click("#btn-run")
    run = {n: page.locator(f"#run-form input.run-dim[aria-label='{n}[0]']") for n in "abc"}
    run["a"].fill("4")
    assert [run[n].input_value() for n in "abc"] == ["4", "4", "4"]


def test_an_ifs_costlier_branch_is_counted_and_said(page, server, artifacts):
    from .browser_models import if_model

    summary = upload(page, server, if_model(), "if.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    note = costs.locator(".cost-branches")
    assert note.text_content().startswith(
        "The If's costlier branch is counted: which one runs is known only when it runs."
    )
    # what each branch costs, the one left out too
    assert (
        note.locator(".cost-branch-flops li").text_content() == "branch: else_branch 12 FLOPs (counted), then_branch 6"
    )
    assert note.get_attribute("title") == "n1: n1/else_branch counted, n1/then_branch left out"
    assert (
        costs.locator(".props").text_content().startswith("Parameters6 (24 B)FLOPs18")
    )  # Sigmoid 6 + else 12, not then 6
    # the flag given: the branch it takes is counted, whichever costs more
    costs.locator("select.cost-flag[name=cond]").select_option("1")
    given = page.locator("#costs[data-ready=true] .cost-branches .cost-branch-given")
    given.wait_for()
    assert given.text_content() == "The If's branch that cond = true takes is counted."
    costs = page.locator("#costs[data-ready=true]")
    li = costs.locator(".cost-branch-flops li")
    assert li.text_content() == "branch: then_branch 6 FLOPs (counted), else_branch 12"
    assert costs.locator(".props").text_content().startswith("Parameters6 (24 B)FLOPs12")  # Sigmoid 6 + then 6
    assert costs.locator("select.cost-flag[name=cond]").input_value() == "1"
    assert costs.locator(".cost-dims").count() == 0  # a flag is no size to give
    costs.locator(".cost-branches").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "costs-if-flag-given.png"))
    # and taken back: the costlier again
    costs.locator("select.cost-flag[name=cond]").select_option("")
    page.locator("#costs[data-ready=true] .cost-branches .cost-branch-given").wait_for(state="detached")
    assert page.locator("#costs .props").text_content().startswith("Parameters6 (24 B)FLOPs18")


def test_unnamed_nodes_are_told_apart_from_names_like_ids(page, server):
    """light_inception_v2 names a Conv "n15" and leaves its ConstantOfShape unnamed: the page
    calls the unnamed one by its place ("#1 (unnamed)"), never by the API's id "n1", which would
    read as the name of another node."""
    f = onnx.TensorProto.FLOAT
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="n1"),  # an exporter's name like an id
            helper.make_node("Relu", ["r"], ["y"]),  # unnamed: its id is n1 too
        ],
        "g",
        [helper.make_tensor_value_info("x", f, [1, 4])],
        [helper.make_tensor_value_info("y", f, [1, 4])],
    )
    summary = upload(page, server, helper.make_model(graph), "named_like_ids.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    names = page.locator("#cost-table tbody tr .cost-node").all_text_contents()
    assert sorted(names) == ["#1 (unnamed)", "n1"], names
    # the named node's panel says where it is, and its reader by place
    page.locator('#cost-table tr[data-node="n0"] a').click()
    page.wait_for_selector("#sidebar[data-panel=node]")
    panel = page.locator("#sidebar").text_content()
    assert "#0 in its graph" in panel and "Relu #1 (unnamed)" in panel, panel


def test_a_heat_map_of_one_value_has_one_step(page, server):
    """One box drawn with FLOPs (the rest none): the legend gives one step, "all N", not six
    steps each saying N (the KV-cache QA's "20 % 20 % 20 % …")."""
    w = numpy_helper.from_array(np.ones((4, 8), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 8])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(page, server, model, "one_matmul.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    page.click("#costs .cost-heat button[data-metric=flops]")
    legend = page.locator("#heat-legend:not([hidden])")
    legend.wait_for()
    steps = legend.locator(".heat-scale li").all_text_contents()
    assert steps == ["all 128"], steps
    assert "up to" not in legend.text_content()


def test_a_heat_map_with_no_box_above_zero_says_so_in_the_boxes_colour(page, server, artifacts):
    """The KV-cache QA: Parameters over a model without weights read "all 0" beside the hottest
    step's red swatch, the boxes all white."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu"), helper.make_node("Neg", ["y"], ["z"], name="neg")],
        "no_weights",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [1, 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    open_model(page, server, upload(page, server, model, "no_weights.onnx")["id"])
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    page.click("#costs .cost-heat button[data-metric=params]")
    page.locator("#heat-legend:not([hidden])").wait_for()
    scale = page.locator("#heat-legend .heat-scale li")
    assert scale.count() == 1 and scale.text_content() == "every box: none"
    swatch = scale.locator(".heat-swatch").evaluate("e => getComputedStyle(e).backgroundColor")
    box = page.locator('#graph g.box[data-node-id="n0"] .box-head').evaluate("e => getComputedStyle(e).fill")
    page.locator("#heat-legend").screenshot(path=str(artifacts / "heat-legend-none.png"))
    assert swatch == box, (swatch, box)
    # not said twice: the note of no cost goes with it
    assert page.locator("#heat-legend .heat-notes .heat-zero").count() == 0


def test_a_heat_map_of_zeros_beside_unknowns_says_the_others(page, server, artifacts):
    """FLOPs of a MatMul of a symbolic size (unknown) and a Transpose (0): the one colour is of the
    other boxes, the MatMul's step its own ("unknown (1)"), and the total unknown, not 0."""
    w = onnx.numpy_helper.from_array(np.ones((16, 8), np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
            helper.make_node("Transpose", ["h"], ["t"], name="tr", perm=[1, 0]),
        ],
        "symbolic",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["B", 16])],
        [helper.make_tensor_value_info("t", onnx.TensorProto.FLOAT, None)],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    open_model(page, server, upload(page, server, model, "symbolic.onnx")["id"])
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    page.click("#costs .cost-heat button[data-metric=flops]")
    legend = page.locator("#heat-legend:not([hidden])")
    legend.wait_for()
    assert legend.locator(".heat-scale li").all_text_contents() == ["every other box: none"]
    assert "unknown (1)" in legend.text_content()
    assert legend.locator(".heat-ask").text_content() == "Give B in Costs to count them."
    legend.screenshot(path=str(artifacts / "heat-legend-others.png"))
    page.locator("#costs").screenshot(path=str(artifacts / "costs-symbolic.png"))


def test_sizes_counted_that_onnxruntime_never_ran_are_said(page, server):
    """QA23 F8: Costs counted a UNet at 31×33, which its Concat refuses, without a word. A speech
    front end the smoke run ran at batch 1, sequence 512: counted at 1000 samples, said so."""
    from .browser_models import reflect_padded

    summary = upload(page, server, reflect_padded(200, fixed=False), "padded.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    assert page.locator("#cost-unrun").count() == 0
    page.fill("#costs .cost-dims input[name=batch]", "1")
    page.fill("#costs .cost-dims input[name=sequence]", "1000")
    page.click("#costs .cost-dims button[type=submit]")
    page.locator("#cost-unrun").wait_for()
    assert page.locator("#cost-unrun").text_content() == (
        "Counted, not run: onnxruntime ran the model at batch 1, sequence 512. Whether it takes these sizes, Run tells."
    )


def two_input_encoder():
    """input_ids and attention_mask, both [batch, sequence]: an embedding masked."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    emb = nh.from_array(np.random.default_rng(0).standard_normal((100, 8)).astype(np.float32), "emb")
    graph = h.make_graph(
        [
            h.make_node("Gather", ["emb", "input_ids"], ["x"], name="embed"),
            h.make_node("Cast", ["attention_mask"], ["m"], name="cast", to=T.FLOAT),
            h.make_node("Unsqueeze", ["m", "last"], ["m3"], name="unsqueeze"),
            h.make_node("Mul", ["x", "m3"], ["y"], name="mask"),
        ],
        "encoder",
        [
            h.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence"]),
            h.make_tensor_value_info("attention_mask", T.INT64, ["batch", "sequence"]),
        ],
        [h.make_tensor_value_info("y", T.FLOAT, ["batch", "sequence", 8])],
        [emb, nh.from_array(np.array([-1], np.int64), "last")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def fixed_shapes(page, server, mid: str) -> dict:
    import onnx

    fixed = onnx.load_from_string(page.request.get(f"{server}/api/models/{mid}/download").body())
    return {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in [*fixed.graph.input, *fixed.graph.output]
    }


def last_ops(page, server, mid: str) -> list:
    return page.request.get(f"{server}/api/models/{mid}/revisions").json()["revisions"][-1]["ops"]


def test_make_static_fixes_every_input_naming_the_sizes_in_one_edit(page, server):
    """An encoder's input_ids and attention_mask share batch and sequence: one made static alone
    is refused (they no longer fit, QA25 #3); Costs' "Make static" writes the sizes into both at
    once, the outputs re-inferred."""
    summary = upload(page, server, two_input_encoder(), "encoder.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    page.fill("#costs input[name=batch]", "1")
    page.fill("#costs input[name=sequence]", "16")
    page.click("#cost-fix-dims")
    wait_revision(page, 1)
    assert fixed_shapes(page, server, summary["id"]) == {
        "input_ids": [1, 16],
        "attention_mask": [1, 16],
        "y": [1, 16, 8],
    }
    # recorded as the sizes of those dims, not as whole shapes a recipe would impose on the next export
    assert last_ops(page, server, summary["id"]) == [{"op": "fix_dims", "dims": {"batch": 1, "sequence": 16}}]


def test_an_inputs_named_dim_given_a_size_is_given_to_the_inputs_sharing_it(page, server):
    """input_ids made [1, 16] on its panel: attention_mask, naming batch and sequence too, takes
    them in the same edit (alone, the edit was refused: the two no longer fit)."""
    summary = upload(page, server, two_input_encoder(), "encoder.onnx")
    open_model(page, server, summary["id"])
    page.click("#graph [data-io=input][data-name=input_ids]")
    form = page.locator("#sidebar .ed-io-type")
    form.locator("input[name=dim-0]").fill("1")
    form.locator("input[name=dim-1]").fill("16")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert fixed_shapes(page, server, summary["id"]) == {
        "input_ids": [1, 16],
        "attention_mask": [1, 16],
        "y": [1, 16, 8],
    }
    assert last_ops(page, server, summary["id"]) == [{"op": "fix_dims", "dims": {"batch": 1, "sequence": 16}}]


def test_the_rest_of_a_long_table_is_offered_in_words_that_count(page, server):
    """QA28: "Show 415 of 415 nodes" under the first 50 rows: it shows them all, and says so."""
    t = onnx.TensorProto.FLOAT
    nodes = [helper.make_node("Relu", [f"t{k}"], [f"t{k + 1}"], name=f"r{k}") for k in range(60)]
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("t0", t, [1, 4])],
        [helper.make_tensor_value_info("t60", t, [1, 4])],
    )
    open_model(page, server, upload(page, server, helper.make_model(g), "chain.onnx")["id"])
    more = page.locator("#sidebar .cost-more")
    more.wait_for()
    assert more.text_content() == "Show all 60 nodes"
    more.click()
    assert page.locator("#cost-table tbody tr").count() == 60 and more.is_hidden()


def test_a_weight_two_nodes_read_is_counted_on_the_first_and_said_on_the_other(page, server, artifacts):
    """QA29 #7: a rotary cache six nodes read showed its parameters on each row, six times what
    the total counts. The first reader's row counts it; the other says "+ 16 shared"."""
    w = numpy_helper.from_array(np.eye(4, dtype=np.float32), "tied")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "tied"], ["h"], name="first"),
            helper.make_node("MatMul", ["h", "tied"], ["y"], name="second"),
        ],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])],
        [w],
    )
    summary = upload(page, server, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "tied.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    first = page.locator("#cost-table tbody tr[data-node=n0] td").nth(2)
    second = page.locator("#cost-table tbody tr[data-node=n1] td").nth(2)
    assert first.text_content() == "16"
    assert second.text_content() == "0+ 16 shared"
    assert second.locator(".cost-shared").get_attribute("title") == "read here too, counted on the row of first"
    page.locator("#cost-table").screenshot(path=str(artifacts / "costs-shared-weight.png"))


def _if_of_batch_costs(page, server):
    """if_model with a symbolic batch, opened on its Model panel: its Costs, counted."""
    from .browser_models import if_model

    model = if_model()
    for v in (*model.graph.input[:1], *model.graph.output):
        v.type.tensor_type.shape.dim[0].dim_param = "batch"
    for branch in model.graph.node[1].attribute:
        branch.g.output[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    open_model(page, server, upload(page, server, model, "if_batch.onnx")["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    return costs


def test_an_ifs_flag_can_be_given_before_any_size(page, server):
    """QA35 #6: with the inputs' sizes not given yet, Costs showed the formula and size fields but
    not the If's flag, though the server counts the branch a flag picks at any sizes."""
    costs = _if_of_batch_costs(page, server)
    assert costs.locator(".cost-dims input[name=batch]").count() == 1
    costs.locator("select.cost-flag[name=cond]").select_option("1")
    page.locator("#costs[data-ready=true] .cost-branch-given").wait_for()
    # Sigmoid 3·batch + then's Add (of its [2, 3] constant: 6), in a formula, the flag said
    assert (
        page.locator("#costs .props")
        .text_content()
        .startswith("Parameters6 (24 B)FLOPs3·batch + 6The If's branch that cond = true takes is counted.")
    )


def test_a_flag_picked_while_sizes_are_typed_and_counted_is_kept(page, server):
    """QA45 #2: the flag picked, the sizes typed and Count pressed before the flag's counts came
    back — the sizes were counted without the flag (the costlier branch, 100× a decoder's step
    with its cache) and the flag's own answer, drawn last, dropped the sizes typed."""
    costs = _if_of_batch_costs(page, server)
    held = []  # the flag's answer, held back until the sizes are counted

    def hold(route):
        if "batch" not in route.request.url:
            held.append(route)
        else:
            route.continue_()

    page.route("**/stats?dims=*", hold)
    costs.locator("select.cost-flag[name=cond]").select_option("1")
    costs.locator(".cost-dims input[name=batch]").fill("2")
    with page.expect_response(lambda r: "/stats?" in r.url and "batch" in r.url) as counted:
        costs.locator(".cost-dims button[type=submit]").click()
    assert "cond" in counted.value.url  # the flag went with the sizes
    page.locator("#costs[data-ready=true] .cost-branch-given").wait_for()
    for route in held:  # the flag's own answer, late: not drawn over the later one
        route.continue_()
    page.wait_for_timeout(300)
    props = page.locator("#costs .props").text_content()
    assert props.startswith("Parameters6 (24 B)FLOPs12"), props  # Sigmoid 3·2 + then's 6, not else's 12
    assert page.locator("#costs select.cost-flag[name=cond]").input_value() == "1"
    assert page.locator("#costs .cost-dims input[name=batch]").input_value() == "2"
