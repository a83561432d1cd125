"""Model-local functions: entered from the calling node, drawn, described in the sidebar."""

from __future__ import annotations

from .browser_models import function_model
from .browser_pages import open_model, upload, wait_ready


def node_ids(page) -> list[str]:
    return sorted(
        page.locator("#graph [data-node-id]").evaluate_all("els => els.map(e => e.getAttribute('data-node-id'))")
    )


def test_enter_a_local_function_from_its_calling_node(page, server, artifacts):
    model = function_model()
    fn = model.functions[0]
    summary = upload(page, server, model, "fn.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")

    # the model panel lists the function
    assert panel.locator(".fn-list a.fn-link").text_content() == "ScaledRelu"

    # the calling node says what it calls and links into it
    page.click("#graph [data-node-id=n1]")
    assert panel.locator(".panel-kicker").text_content() == "Node · calls a model function"
    schema = panel.locator(".schema-section[data-schema=function]")
    schema.wait_for()
    assert "is a function defined in this model" in schema.text_content()
    panel.locator("a.enter-function").click()

    page.wait_for_selector("#graph[data-state=ready] [data-node-id='fn[0]/n0']")
    assert "path=fn%5B0%5D" in page.url
    assert node_ids(page) == [f"fn[0]/n{i}" for i in range(len(fn.node))]
    drawn_ops = page.locator("#graph [data-node-id] .t-op").all_text_contents()
    assert sorted(drawn_ops) == sorted(n.op_type for n in fn.node if n.op_type != "Constant")
    assert page.locator("#graph [data-node-id][data-const]").count() == sum(n.op_type == "Constant" for n in fn.node)
    # the Constant's value is the function attribute's, set by each call: drawn as the reference
    # (its proto field is an empty 0.0, once drawn as "= 0")
    const = page.locator("#graph [data-node-id='fn[0]/n0']").text_content()
    assert "@alpha" in const and "0" not in const, const
    assert "function com.studio:ScaledRelu" in page.locator("#breadcrumb").text_content()
    # the function's own inputs and outputs are boxes, typed as at its call (x: N×4)
    assert page.locator("#graph [data-io=input]").text_content().startswith("X")
    assert "FLOAT ⟨N×4⟩ (inferred)" in page.locator("#graph [data-io=output]").text_content()

    # the sidebar describes the function: attributes with defaults, opsets, doc, metadata
    fn_attrs = panel.locator(".fn-attrs")
    assert fn_attrs.locator("[data-fn-attr=alpha]").text_content().replace("\u00a0", " ").endswith("default 0.5")
    assert "ai.onnx v17" in panel.text_content()
    doc = panel.locator(".doc", has_text="Relu of")
    doc.locator("strong").wait_for()  # Markdown rendered
    assert doc.locator("strong").text_content() == "alpha"
    assert panel.locator(".graph-metadata [data-key=origin]").text_content() == "origintests"
    page.screenshot(path=str(artifacts / "function-view.png"))

    # the Constant reads `alpha` through ref_attr_name: shown as a reference, with the default
    page.click("#graph [data-node-id='fn[0]/n0']")
    attr = panel.locator("[data-attr=value_float]")
    assert attr.locator(".tag-ref").text_content() == "reference"
    assert attr.locator("input").count() == 0  # a reference is not edited as a value
    assert "takes the value of the function attribute alpha" in attr.text_content()
    assert "default 0.5" in attr.text_content()
    page.screenshot(path=str(artifacts / "function-ref-attr.png"))

    # back to the main graph through the breadcrumb
    page.locator("#breadcrumb a.crumb").first.click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id=n1]")
    wait_ready(page)
    assert node_ids(page) == ["n0", "n1"]
