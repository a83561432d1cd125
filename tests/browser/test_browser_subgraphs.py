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
    # what the branches read from the main graph reaches the If as a dashed edge
    implicit = page.locator("#graph path.edge.implicit")
    assert implicit.count() == 1 and implicit.get_attribute("data-tensor") == "x"
    assert implicit.get_attribute("data-to") == "n1" and implicit.get_attribute("stroke-dasharray") == "5 4"

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
    # the branch's own panel says where it is as the breadcrumb does, not by the API's path
    page.keyboard.press("Escape")
    where = panel.locator(".graph-where")
    where.wait_for()
    assert where.text_content() == " › ".join(crumbs(page)) and "n1/then_branch" not in where.text_content()

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


def long_prefix_branch_model():
    """An If whose then_branch has no inputs of its own, reads `size` from outside and writes five
    outputs whose names share a 40-character prefix (as a function's expansion names them)."""
    from onnx import TensorProto, helper

    prefix = "AffineGrid_test_affine_grid_expanded_function_"
    ends = ["N_then", "C_then", "H_then", "W_then", "D_then"]
    then_branch = helper.make_graph(
        [helper.make_node("Split", ["size"], [prefix + e for e in ends], axis=0, num_outputs=5)],
        "then",
        [],
        [helper.make_tensor_value_info(prefix + e, TensorProto.INT64, [1]) for e in ends],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Split", ["size"], [prefix + e + "_e" for e in ends], axis=0, num_outputs=5)],
        "else",
        [],
        [helper.make_tensor_value_info(prefix + e + "_e", TensorProto.INT64, [1]) for e in ends],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["n", "c", "h", "w", "d"], then_branch=then_branch, else_branch=else_branch)],
        "g",
        [
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("size", TensorProto.INT64, [5]),
        ],
        [helper.make_tensor_value_info(o, TensorProto.INT64, [1]) for o in "nchwd"],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_long_names_keep_their_ends_and_a_branch_without_inputs_opens_on_what_it_reads(page, server):
    summary = upload(page, server, long_prefix_branch_model(), "branch.onnx")
    page.goto(f"{server}/models/{summary['id']}#path=n0%2Fthen_branch")
    wait_ready(page)
    labels = page.locator("#graph g.box[data-box^='output:']").evaluate_all(
        "els => els.map(e => e.querySelector('text').textContent)"
    )
    # cut in their middles: each label still ends with what tells it from the others
    assert len(labels) == 5 and len(set(labels)) == 5, labels
    assert all("…" in t for t in labels), labels
    assert sorted(t.split("…")[1][-6:] for t in labels) == sorted(["N_then", "C_then", "H_then", "W_then", "D_then"])
    # wider than the window at a readable size, with no inputs: the view opens on the value it
    # reads from the enclosing graph (where its reading starts), in the window
    area = page.locator("#graph").bounding_box()
    outer = page.locator("#graph g.box[data-box='outer:size']").bounding_box()
    assert area["x"] <= outer["x"] and outer["x"] + outer["width"] <= area["x"] + area["width"], (area, outer)
    assert area["y"] <= outer["y"] <= area["y"] + area["height"] / 3, (area, outer)


def test_a_body_declared_without_types_shows_the_inferred_ones(page, server):
    """The expanded LinearAttention's Scan body declares its inputs and outputs untyped: the
    boxes show what inference found, said to be inferred, and the value panel says where from."""
    model = official_node_models()["test_linear_attention_linear_expanded"]
    scan = next(i for i, n in enumerate(model.graph.node) if n.op_type == "Scan")
    body = next(a.g for a in model.graph.node[scan].attribute if a.name == "body")
    summary = upload(page, server, model, "linear_attention.onnx")
    page.goto(f"{server}/models/{summary['id']}#path=n{scan}%2Fbody")
    wait_ready(page)
    types = page.locator("#graph g.box[data-box^='input:'], #graph g.box[data-box^='output:']").evaluate_all(
        "els => els.map(e => [...e.querySelectorAll('text')].map(t => t.textContent).join(' | '))"
    )
    assert len(types) == len(body.input) + len(body.output), types
    assert all(t.endswith("(inferred)") and "FLOAT" in t for t in types), types
    assert not any("not declared" in t for t in types), types
    # what the body reads from outside: one link a line, each opening that value
    outside = page.locator("#sidebar ul.name-list [data-tensor]")
    read = {x for n in body.node for x in n.input} - {x for n in body.node for x in n.output}
    read -= {v.name for v in body.input} | {t.name for t in body.initializer}
    assert sorted(outside.all_text_contents()) == sorted(read - {""}), outside.all_text_contents()
    name = outside.first.get_attribute("data-tensor")
    outside.first.click()
    page.wait_for_selector(f"#sidebar .panel-title:text-is('{name}')")
    first = body.input[0].name
    page.click(f"#graph g.box[data-box='input:{first}']")
    panel = page.locator("#sidebar")
    panel.get_by_text("inferred by ONNX shape inference").wait_for()
    assert "FLOAT" in panel.text_content()


def test_a_body_reading_many_outer_values_lists_the_first_and_the_rest_on_a_click(page, server):
    from onnx import TensorProto, helper

    names = [f"x{k}" for k in range(30)]
    branch = helper.make_graph(
        [helper.make_node("Sum", names, ["s"])],
        "then",
        [],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x0"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=other)],
        "g",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])]
        + [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in names],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    summary = upload(page, server, model, "many.onnx")
    page.goto(f"{server}/models/{summary['id']}#path=n0%2Fthen_branch")
    wait_ready(page)
    links = page.locator("#sidebar ul.name-list [data-tensor]")
    links.first.wait_for()
    assert links.count() == 24
    page.click("#sidebar .name-list-more")
    assert sorted(links.all_text_contents()) == sorted(names)
