"""Script in every string a model holds never runs (issue 12): a model carrying markup and
`javascript:` links in each string location — names, op types, domains, doc strings (markdown),
attribute names and values, metadata at every level, dim names, functions — opened in the real
page and walked through its panels, the search, the text view and the history. A dialog, a
script that sets window.__pwned, or anything the page's CSP refuses (the page fixture fails on
that) fails the test."""

from __future__ import annotations

from onnx import TensorProto, helper

from .browser_pages import open_model, upload, wait_revision

PAYLOADS = [
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=2</script>",
    '"><svg onload="window.__pwned=3">',
    "[click](javascript:window.__pwned=4)",
    '<a href="javascript:window.__pwned=5">x</a>',
]


def hostile_strings_model():
    p = PAYLOADS
    fn = helper.make_function(
        "x" + p[0],
        "F" + p[1],
        ["a"],
        ["b"],
        [helper.make_node("Relu", ["a"], ["b"], name=p[2])],
        [helper.make_opsetid("", 17)],
        doc_string=p[3],
    )
    nodes = [
        helper.make_node("Relu", ["in" + p[0]], ["mid" + p[1]], name="relu" + p[2], doc_string=p[3] + p[4]),
        helper.make_node("LeakyRelu", ["mid" + p[1]], ["out" + p[2]], name=p[4], alpha=0.1),
        helper.make_node("F" + p[1], ["out" + p[2]], ["fout"], domain="x" + p[0], name="call" + p[0]),
        helper.make_node(
            "Custom" + p[2], ["fout"], ["y"], domain="evil" + p[1], name="custom", **{"attr" + p[0]: p[1], "note": p[4]}
        ),
    ]
    nodes[0].metadata_props.add(key="k" + p[0], value=p[1])
    graph = helper.make_graph(
        nodes,
        "graph" + p[1],
        [helper.make_tensor_value_info("in" + p[0], TensorProto.FLOAT, ["batch" + p[2], 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("w" + p[3], TensorProto.FLOAT, [1], [1.0])],
        doc_string=p[3] + p[0],
    )
    graph.metadata_props.add(key="gk" + p[2], value=p[3])
    model = helper.make_model(
        graph,
        opset_imports=[
            helper.make_opsetid("", 17),
            helper.make_opsetid("x" + p[0], 1),
            helper.make_opsetid("evil" + p[1], 1),
        ],
        functions=[fn],
        producer_name=p[0],
        producer_version=p[1],
        domain=p[2],
        doc_string=p[3] + "\n\n" + p[4],
    )
    helper.set_model_props(model, {p[0]: p[1], "k2" + p[2]: p[3] + p[4]})
    return model


def test_markup_in_every_string_never_runs(page, server, artifacts):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    summary = upload(page, server, hostile_strings_model(), "hostile_strings.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-fit")
    # the model panel (markdown doc strings, metadata, functions, opsets)
    page.click("#btn-model")
    page.wait_for_selector("#sidebar .panel-title")
    # every drawn box: nodes, inputs, outputs
    boxes = page.locator("#graph [data-node-id], #graph [data-io]")
    for i in range(boxes.count()):
        boxes.nth(i).click()
        page.wait_for_selector("#sidebar .panel-title")
    # an edit names the hostile node in the answer and the history
    page.click("#graph [data-node-id=n1]")
    panel = page.locator("#sidebar")
    panel.locator("[data-attr=alpha] input[name=value]").fill("0.2")
    panel.locator("[data-attr=alpha] button[type=submit]").click()
    wait_revision(page, 1)
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    # the search (results list the names) and the text view
    page.keyboard.press("Escape")
    page.locator("#graph").click(position={"x": 5, "y": 300})
    page.keyboard.press("/")
    page.fill("#search-input", "relu")
    page.wait_for_function("() => document.getElementById('search-status').textContent.includes('found')")
    page.keyboard.press("Escape")
    page.click("#btn-text")
    page.wait_for_selector("#text-view[data-state=ready]")
    page.screenshot(path=str(artifacts / "xss-walk.png"))
    page.keyboard.press("Escape")
    # the function's own graph
    page.goto(f"{server}/models/{summary['id']}#path=fn%5B0%5D")
    page.wait_for_selector("#graph[data-state=ready] [data-node-id]")
    page.click("#graph [data-node-id]")
    assert page.evaluate("() => window.__pwned") is None
    assert dialogs == []
    assert page.locator("#sidebar script, #sidebar [onerror], #sidebar [onload], a[href^='javascript:']").count() == 0
