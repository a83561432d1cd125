"""Subgraphs: GRAPH attributes open as graphs of their own, the breadcrumb leads back."""

from __future__ import annotations

from .browser_models import if_model, official_node_models
from .browser_pages import open_model, upload, wait_ready


def node_ids(page) -> list[str]:
    return sorted(
        page.locator("#graph [data-node-id]").evaluate_all("els => els.map(e => e.getAttribute('data-node-id'))")
    )


def crumbs(page) -> list[str]:
    return [t.strip() for t in page.locator("#breadcrumb .crumb").all_text_contents()]


def test_if_branch_via_attribute_link_and_back(page, server):
    summary = upload(page, server, if_model(), "if.onnx")
    open_model(page, server, summary["id"])
    assert node_ids(page) == ["n0", "n1"]

    page.click("#graph [data-node-id=n1]")
    panel = page.locator("#sidebar")
    assert panel.locator("[data-attr=then_branch] .subgraph-link").count() == 1
    panel.locator("[data-attr=then_branch] .subgraph-link").click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='n1/then_branch/n0']")
    assert node_ids(page) == ["n1/then_branch/n0"]
    assert "path=@branch/then_branch" in page.url
    assert len(crumbs(page)) == 2
    # x comes from the enclosing graph, `one` is the branch's own initializer
    assert page.locator("#graph [data-box='outer:x']").count() == 1
    assert "one ⟨2×3⟩" in page.locator("#graph [data-node-id='n1/then_branch/n0']").text_content()

    page.locator("#breadcrumb a.crumb").first.click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id=n0]")
    assert node_ids(page) == ["n0", "n1"]
    assert len(crumbs(page)) == 1

    # the browser's back button returns to the branch
    page.go_back()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='n1/then_branch/n0']")

    # the else branch, opened straight from a URL with a node selected
    page.goto(f"{server}/models/{summary['id']}#path=n1%2Felse_branch&node=n1%2Felse_branch%2Fn1")
    wait_ready(page)
    assert node_ids(page) == ["n1/else_branch/n0", "n1/else_branch/n1"]
    assert panel.locator(".panel-title").text_content() == "Relu"


def test_official_loop_with_nested_if(page, server):
    model = official_node_models()["test_loop16_seq_none"]
    loop = model.graph.node[0]
    body = next(a.g for a in loop.attribute if a.name == "body")
    nested_if = next(i for i, n in enumerate(body.node) if n.op_type == "If")
    then_branch = next(a.g for a in body.node[nested_if].attribute if a.name == "then_branch")

    summary = upload(page, server, model, "loop16.onnx")
    open_model(page, server, summary["id"])
    assert node_ids(page) == ["n0"]

    page.click("#graph [data-node-id=n0]")
    page.locator("#sidebar [data-attr=body] .subgraph-link").click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='n0/body/n0']")
    assert len(node_ids(page)) == len(body.node)

    page.click(f"#graph [data-node-id='n0/body/n{nested_if}']")
    page.locator("#sidebar [data-attr=then_branch] .subgraph-link").click()
    inner = f"n0/body/n{nested_if}/then_branch"
    page.wait_for_selector(f"#graph[data-state=ready] [data-node-id='{inner}/n0']")
    assert len(node_ids(page)) == len(then_branch.node)
    assert len(crumbs(page)) == 3

    page.locator("#breadcrumb a.crumb").nth(1).click()  # back to the loop body
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='n0/body/n0']")
    assert len(node_ids(page)) == len(body.node)
    assert len(crumbs(page)) == 2


def test_unknown_graph_path_offers_the_main_graph(page, server):
    summary = upload(page, server, if_model(), "if.onnx")
    page.goto(f"{server}/models/{summary['id']}#path=n7%2Fbody")
    page.wait_for_selector("#graph[data-state=error]")
    assert page.locator("#graph [data-node-id]").count() == 0
    page.locator("#graph a", has_text="Open the main graph").click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id=n1]")
    assert node_ids(page) == ["n0", "n1"]
