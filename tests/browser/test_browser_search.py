"""Find in the whole model: from the main graph, a Conv two subgraphs down is listed with its
breadcrumb, and picking it opens its graph with the node selected; the list closes."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import nested_search_model

from .browser_pages import hash_params, open_model, upload, wait_ready

INNER_CONV = "n4/then_branch/n0/body/n0"
BODY = "n4/then_branch/n0/body"


def open_find(page, query: str):
    """Open Find with the keyboard, type `query`, wait for its results to be listed."""
    page.locator("#graph").click(position={"x": 5, "y": 300})
    page.keyboard.press("/")
    search = page.locator("#search-input")
    search.fill(query)
    page.wait_for_function(
        "q => document.getElementById('search-results').dataset.query === q && "
        "document.getElementById('search-status').textContent !== 'Searching…'",
        arg=query,
    )
    return search


def test_find_a_nested_conv_from_the_main_graph_and_open_it(page, server, artifacts):
    summary = upload(page, server, nested_search_model(), "vad_like.onnx")
    open_model(page, server, summary["id"])
    assert page.locator(f"#graph [data-node-id='{INNER_CONV}']").count() == 0

    open_find(page, "Conv")
    first = page.locator("#search-results .search-result").first
    page.wait_for_selector(f"#search-results .search-result[data-result='{INNER_CONV}']")
    assert first.get_attribute("data-result") == INNER_CONV  # the op type ranks first
    assert first.get_attribute("data-path") == BODY
    assert first.locator(".sr-op").text_content() == "Conv"
    assert first.locator(".sr-name").text_content() == "inner_conv"
    assert first.locator(".sr-place").text_content() == "main_graph › If If_0 · then_branch › Loop Loop_3 · body"
    # then the ConvTranspose (op type prefix), then the Relu whose name holds "conv"
    rows = page.locator("#search-results .search-result")
    assert [rows.nth(i).get_attribute("data-result") for i in range(3)] == [INNER_CONV, "n2", "n3"]
    assert "this graph" in rows.nth(1).text_content() and rows.nth(2).locator(".sr-why").count() == 0
    assert page.locator("#search-status").text_content() == "7 found"
    page.locator("#graph-search").screenshot(path=str(artifacts / "search-results-breadcrumbs.png"))

    first.click()
    page.wait_for_selector(f"#graph[data-state=ready] [data-node-id='{INNER_CONV}'].selected")
    assert page.locator("#graph-search").is_hidden()  # the list closed
    assert page.locator("#sidebar .panel-title").text_content() == "Conv"
    assert page.locator("#sidebar .panel-subtitle").text_content() == "inner_conv"
    crumbs = [t.strip() for t in page.locator("#breadcrumb .crumb").all_text_contents()]
    assert crumbs == ["main_graph", "If If_0 · then_branch", "Loop Loop_3 · body"]
    assert hash_params(page) == {
        "rev": "0",
        "path": "@If_0/then_branch/@Loop_3/body",
        "node": "@If_0/then_branch/@Loop_3/body/@inner_conv",
    }
    page.screenshot(path=str(artifacts / "search-opened-nested-conv.png"))

    # from inside the loop body: a result of the main graph takes the page back there (Enter picks the first)
    search = open_find(page, "my_conv_name")
    page.wait_for_selector("#search-results .search-result[data-result='n3']")
    search.press("Enter")
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='n3'].selected")
    assert page.locator("#graph-search").is_hidden()
    assert page.locator("#sidebar .panel-subtitle").text_content() == "my_conv_name"

    # a result in the graph on screen is selected in place
    open_find(page, "ConvTranspose")
    page.wait_for_selector("#search-results .search-result[data-result='n2']")
    page.locator("#search-results .search-result[data-result='n2']").click()
    page.wait_for_selector("#graph [data-node-id='n2'].selected")
    assert page.locator("#sidebar .panel-title").text_content() == "ConvTranspose"


def test_attribute_values_are_found_as_the_node_panel_shows_them(page, server, artifacts):
    summary = upload(page, server, nested_search_model(), "vad_like.onnx")
    open_model(page, server, summary["id"])
    for query, node, attr, why in [
        ("[0,2,1,3]", "n0", "perm", "attribute perm = [0, 2, 1, 3]"),
        ("int64", "n1", "to", "attribute to = 7 (INT64)"),
        ("0.1", "n6", "alpha", "attribute alpha = 0.1"),
    ]:
        open_find(page, query)
        row = page.locator(f"#search-results .search-result[data-result='{node}']")
        row.wait_for()
        assert why in row.locator(".sr-why").text_content()
        if node == "n1":
            page.locator("#graph-search").screenshot(path=str(artifacts / "search-attribute-value.png"))
        row.click()
        page.wait_for_selector(f"#graph [data-node-id='{node}'].selected")
        # the panel's editor holds the value as the result says it
        if node == "n1":  # Cast's to: 7, which the panel's picker names INT64
            picker = page.locator("#sidebar .attr[data-attr='to'] select[name=value]")
            assert picker.input_value() == "INT64" and why.endswith("= 7 (INT64)")
            page.locator("#node-attributes").screenshot(path=str(artifacts / "search-cast-attribute-panel.png"))
            continue
        shown = page.locator(f"#sidebar .attr[data-attr='{attr}'] input[name=value]").input_value()
        assert why.endswith(f"= {shown}")


def test_tensor_and_function_results_open_where_they_live(page, server):
    summary = upload(page, server, nested_search_model(), "vad_like.onnx")
    open_model(page, server, summary["id"])
    open_find(page, "tensor:acc_out")
    row = page.locator("#search-results .search-result[data-result-tensor='acc_out']")
    row.wait_for()
    assert row.get_attribute("data-path") == BODY
    row.click()
    wait_ready(page)
    page.wait_for_function("() => document.getElementById('sidebar').dataset.panel === 'tensor'")
    assert "tensor=acc_out" in page.url and "path=@If_0/then_branch/@Loop_3/body" in page.url

    open_find(page, "Sigmoid")
    row = page.locator("#search-results .search-result[data-result='fn[0]/n0']")
    row.wait_for()
    assert row.locator(".sr-place").text_content() == "main_graph › function local:Swish"
    row.click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='fn[0]/n0'].selected")
    assert page.locator("#sidebar .panel-title").text_content() == "Sigmoid"


def vad_like() -> onnx.ModelProto:
    """Like a voice-activity model: 5 nodes in the main graph, 684 inside the two If branches."""
    f = lambda name: h.make_tensor_value_info(name, T.FLOAT, [1, 4, 8, 8])  # noqa: E731

    def branch(tag: str, blocks: int) -> onnx.GraphProto:
        nodes, x = [], "x"
        for i in range(blocks):
            scope = f"/{tag}/block.{i}"
            nodes.append(
                h.make_node("Conv", [x, f"{tag}_w"], [f"{tag}_c{i}"], name=f"{scope}/Conv", kernel_shape=[1, 1])
            )
            nodes.append(h.make_node("Relu", [f"{tag}_c{i}"], [f"{tag}_r{i}"], name=f"{scope}/Relu"))
            x = f"{tag}_r{i}"
        nodes.append(h.make_node("Identity", [x], [f"{tag}_y"], name=f"/{tag}/out"))
        w = nh.from_array(np.full((4, 4, 1, 1), 0.1, np.float32), f"{tag}_w")
        return h.make_graph(nodes, f"{tag}_graph", [], [f(f"{tag}_y")], [w])

    nodes = [
        h.make_node("ReduceMean", ["x"], ["m"], name="/mean", keepdims=0),
        h.make_node("ReduceMax", ["m"], ["mx"], name="/max", keepdims=0),
        h.make_node("Constant", [], ["zero"], name="/zero", value=nh.from_array(np.array(0.0, np.float32))),
        h.make_node("Greater", ["mx", "zero"], ["speech"], name="/is_speech"),
        h.make_node(
            "If", ["speech"], ["y"], name="/If", then_branch=branch("encoder", 171), else_branch=branch("decoder", 170)
        ),
    ]
    graph = h.make_graph(nodes, "torch_jit", [f("x")], [f("y")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def test_a_model_living_in_its_if_branches(page, server, artifacts):
    model = vad_like()
    inner = sum(len(a.g.node) for a in model.graph.node[4].attribute)
    assert (len(model.graph.node), inner) == (5, 684)
    summary = upload(page, server, model, "vad_like.onnx")
    open_model(page, server, summary["id"])
    open_find(page, "Conv")
    assert page.locator("#search-status").text_content() == "341 found — the first 200 shown"
    first = page.locator("#search-results .search-result").first
    assert first.get_attribute("data-result") == "n4/else_branch/n0"  # helper sorts attributes: else first
    assert first.locator(".sr-place").text_content() == "torch_jit › If /If · else_branch"
    page.locator("#graph-search").screenshot(path=str(artifacts / "search-vad-like-conv.png"))
    open_find(page, "block.99/Conv")
    rows = page.locator("#search-results .search-result")
    assert [rows.nth(i).get_attribute("data-result") for i in range(rows.count())] == [
        "n4/else_branch/n198",
        "n4/then_branch/n198",
    ]
    rows.nth(1).click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='n4/then_branch/n198'].selected")
    assert page.locator("#sidebar .panel-subtitle").text_content() == "/encoder/block.99/Conv"


def test_a_weight_found_counts_the_nodes_reading_it(page, server):
    """A weight (an initializer, listed inside its reader's box, no line drawn) found and picked
    says how many nodes read it, in the results and the tensor bar (it said "0 consumers")."""
    from .browser_models import tiny_cnn

    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    open_find(page, "conv1.weight")
    hit = page.locator("#search-results .search-result[data-result-tensor='conv1.weight']")
    hit.wait_for()
    assert "1 consumer" in hit.locator(".sr-why").text_content()
    hit.click()
    bar = page.locator("#tensor-bar")
    bar.wait_for()
    assert "conv1.weight" in bar.text_content() and "→ 1 consumer" in bar.text_content()


def test_picking_a_tensor_far_down_brings_its_line_into_view(page, server, artifacts):
    """QA28: Find → a tensor selected it (the panel showed it) and left the drawing where it was,
    16,000 px away; a node's pick moved there. A tensor's pick goes to its producer."""
    nodes = [h.make_node("Relu" if k % 2 else "Sigmoid", [f"t{k}"], [f"t{k + 1}"], name=f"step{k}") for k in range(80)]
    g = h.make_graph(
        nodes,
        "chain",
        [h.make_tensor_value_info("t0", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("t80", T.FLOAT, [1, 4])],
    )
    mid = upload(page, server, h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), "chain.onnx")["id"]
    open_model(page, server, mid)
    producer = page.locator("#graph [data-node-id='n70']")

    def on_screen() -> bool:
        box, graph = producer.bounding_box(), page.locator("#graph").bounding_box()
        return bool(
            box and graph and graph["y"] <= box["y"] and box["y"] + box["height"] <= graph["y"] + graph["height"]
        )

    assert not on_screen()
    open_find(page, "t71")
    page.locator("#search-results .search-result[data-kind=tensor]").first.click()
    page.locator("#sidebar .panel-title").wait_for()
    page.wait_for_function(
        "() => { const b = document.querySelector(\"#graph [data-node-id='n70']\"); if (!b) return false;"
        " const r = b.getBoundingClientRect(), g = document.getElementById('graph').getBoundingClientRect();"
        " return r.top >= g.top && r.bottom <= g.bottom; }"
    )
    assert on_screen()
    page.screenshot(path=str(artifacts / "find-tensor-revealed.png"))
