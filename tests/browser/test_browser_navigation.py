"""The drawing is the way in (issue 10): a double-click on an If/Loop/Scan box opens its subgraph,
coming back selects that node in the view it was left in; a click on a collapsed group selects
the group; Names/Attributes keep the selection in the window; data-type attributes by name;
slow edits say so."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from app.onnx_io.address import named_segment

from .browser_models import if_model, official_node_models
from .browser_pages import downloaded, open_model, reveal, upload, wait_ready, wait_revision
from .scale_models import bert_like

VIEWPORT = "#graph svg > g.viewport"


def transform(page) -> str:
    return page.locator(VIEWPORT).get_attribute("transform")


def selected_ids(page) -> list[str]:
    return page.locator("#graph .selected[data-node-id]").evaluate_all(
        "els => els.map(e => e.getAttribute('data-node-id'))"
    )


def wait_graph(page, node_id: str) -> None:
    page.wait_for_selector(f"#graph[data-state=ready] [data-node-id='{node_id}']")
    wait_ready(page)


def move_view(page) -> None:
    """Zoom in and pan: a view that is not the start view."""
    page.keyboard.press("+")
    box = page.locator("#graph").bounding_box()
    x, y = box["x"] + 60, box["y"] + box["height"] - 60  # the background, bottom left
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 30, y - 20, steps=4)
    page.mouse.move(x + 45, y - 25, steps=4)
    page.mouse.up()


def expect_back_on_if(page, before: str) -> None:
    wait_graph(page, "n1")
    page.wait_for_selector("#graph [data-node-id=n1].selected")
    assert selected_ids(page) == ["n1"]
    assert page.locator("#sidebar .panel-title").text_content() == "If"
    assert transform(page) == before
    assert "node=@branch" in page.url


def test_double_click_opens_a_branch_and_back_comes_back(page, server, artifacts):
    summary = upload(page, server, if_model(), "if.onnx")
    open_model(page, server, summary["id"])
    start = transform(page)
    move_view(page)
    before = transform(page)
    assert before != start
    if_box = page.locator("#graph [data-node-id=n1]")
    assert "⤷ then_branch (1 op) · else_branch (2 ops)" in if_box.text_content()  # each branch with its size
    page.screenshot(path=str(artifacts / "nav-if-main.png"))

    # the box: its first subgraph
    if_box.dblclick()
    wait_graph(page, "n1/then_branch/n0")
    assert "path=@branch/then_branch" in page.url
    assert "then_branch" in page.locator("#breadcrumb .crumb.current").text_content()
    # a graph opened fresh: the start view
    page.locator("#breadcrumb a.crumb").first.click()
    expect_back_on_if(page, before)

    # the "else_branch" word of its "⤷" line: that branch
    line = if_box.locator("text.t-sub")
    size = line.bounding_box()
    line.dblclick(position={"x": size["width"] * 0.85, "y": size["height"] / 2})
    wait_graph(page, "n1/else_branch/n1")
    page.screenshot(path=str(artifacts / "nav-if-else-branch.png"))
    page.keyboard.press("Alt+ArrowLeft")
    expect_back_on_if(page, before)

    # the "then_branch" word: that one; back with the browser's Back button
    line.dblclick(position={"x": size["width"] * 0.3, "y": size["height"] / 2})
    wait_graph(page, "n1/then_branch/n0")
    page.go_back()
    expect_back_on_if(page, before)
    page.screenshot(path=str(artifacts / "nav-if-back.png"))

    # Backspace too, and forward again with Enter on the selected If node
    page.locator("#graph").focus()
    page.keyboard.press("Enter")
    wait_graph(page, "n1/then_branch/n0")
    page.keyboard.press("Backspace")
    expect_back_on_if(page, before)


# A hashchange held back 400 ms when asked (installed before the page's scripts, so it is the
# window's first listener and can stop the page's own).
HOLD_HASHCHANGE = """
window.addEventListener('hashchange', (e) => {
  if (!window.holdNextHashchange || e.released) return;
  window.holdNextHashchange = false;
  e.stopImmediatePropagation();
  setTimeout(() => {
    const again = new HashChangeEvent('hashchange', {oldURL: e.oldURL, newURL: e.newURL});
    again.released = true;
    window.dispatchEvent(again);
  }, 400);
}, true);
"""

# Backspace the moment the subgraph is said (its drawing still under way), its hashchange held:
# the drawing ends first. It wrote the subgraph's hash over the one Backspace set, and the page
# stayed in the subgraph (a loaded CI run's screen-reader test).
BACKSPACE_WHEN_SAID = """() => {
  const said = new MutationObserver(() => {
    if (!document.getElementById('announcer').textContent.includes('then_branch')) return;
    said.disconnect();
    window.holdNextHashchange = true;
    document.getElementById('graph').dispatchEvent(new KeyboardEvent('keydown', {key: 'Backspace', bubbles: true}));
  });
  said.observe(document.getElementById('announcer'), {childList: true, characterData: true, subtree: true});
}"""


def test_backspace_while_a_subgraph_is_drawn_goes_back(page, server):
    page.add_init_script(HOLD_HASHCHANGE)
    summary = upload(page, server, if_model(), "if.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    page.wait_for_selector("#graph [data-node-id=n1].selected")
    page.evaluate(BACKSPACE_WHEN_SAID)
    page.locator("#graph").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('announcer').textContent === 'if_graph: 2 nodes'")
    wait_graph(page, "n1")
    page.wait_for_selector("#graph [data-node-id=n1].selected")
    assert "then_branch" not in page.url


def test_nested_subgraphs_come_back_to_their_holders(page, server):
    model = official_node_models()["test_loop16_seq_none"]
    body = next(a.g for a in model.graph.node[0].attribute if a.name == "body")
    nested_if = next(i for i, n in enumerate(body.node) if n.op_type == "If")
    summary = upload(page, server, model, "loop16.onnx")
    open_model(page, server, summary["id"])
    main_view = transform(page)

    page.locator("#graph [data-node-id=n0]").dblclick()
    wait_graph(page, "n0/body/n0")
    move_view(page)
    body_view = transform(page)
    page.locator(f"#graph [data-node-id='n0/body/n{nested_if}']").dblclick()
    wait_graph(page, f"n0/body/n{nested_if}/then_branch/n0")

    page.keyboard.press("Backspace")  # to the loop body: the If selected, the view as left
    page.wait_for_selector(f"#graph[data-state=ready] [data-node-id='n0/body/n{nested_if}'].selected")
    assert transform(page) == body_view
    assert page.locator("#sidebar .panel-title").text_content() == "If"
    page.locator("#breadcrumb a.crumb").first.click()  # to the main graph: the Loop selected
    page.wait_for_selector("#graph[data-state=ready] [data-node-id=n0].selected")
    assert transform(page) == main_view
    assert page.locator("#sidebar .panel-title").text_content() == "Loop"


def test_click_on_a_collapsed_group_selects_the_group(page, server, artifacts):
    summary = upload(page, server, bert_like(12), "bert_like.onnx")
    open_model(page, server, summary["id"])
    group = "/bert/encoder/layer.3"
    reveal(page, group=group)
    page.keyboard.press("Escape")
    box = page.locator(f"#graph [data-group-id='{group}'][data-collapsed=true]")
    size = box.bounding_box()
    # its head, its body under the text lines, its stripe: the group, never a node inside it
    for x, y in ((size["width"] * 0.3, 8), (size["width"] * 0.9, size["height"] - 4), (size["width"] - 30, 27)):
        page.keyboard.press("Escape")
        page.wait_for_selector("#sidebar[data-panel=model]")
        box.click(position={"x": x, "y": y})
        page.wait_for_timeout(400)  # longer than a reference line waits for a double-click
        page.wait_for_selector(f"#graph [data-group-id='{group}'].selected")
        assert page.locator("#sidebar").get_attribute("data-panel") == "group"
        assert page.locator("#sidebar .panel-kicker").text_content() == "Group"
        assert page.locator("#sidebar .panel-title").text_content() == "layer.3"
        assert page.locator("#graph .selected[data-node-id]").count() == 0
        assert box.get_attribute("data-collapsed") == "true"  # still collapsed
    page.screenshot(path=str(artifacts / "nav-group-selected.png"))
    # its reference lines ("↳ tensor · producer") still lead to the producer
    ref = box.locator("text[data-ref-kind=in]").first
    producer = ref.get_attribute("data-ref-from")
    ref.click()
    page.wait_for_selector(f"#graph [data-node-id='{producer}'].selected")
    assert page.locator("#sidebar").get_attribute("data-panel") == "node"


def in_window(page, selector: str, most: float = 1e9) -> bool:
    """Is the element inside the drawing's window (its top-left `most` px: an expanded group
    bigger than the window, its tab)?"""
    area = page.locator("#graph").bounding_box()
    r = page.locator(selector).bounding_box()
    return (
        r is not None
        and r["x"] >= area["x"]
        and r["y"] >= area["y"]
        and r["x"] + min(r["width"], most) <= area["x"] + area["width"]
        and r["y"] + min(r["height"], most) <= area["y"] + area["height"]
    )


def test_names_and_attributes_keep_the_selection_in_the_window(page, server, artifacts):
    summary = upload(page, server, bert_like(12), "bert_like.onnx")
    open_model(page, server, summary["id"])
    page.click("#expand-all")  # hundreds of named boxes above it: a line more or less each
    page.wait_for_selector("#graph[data-expanded=all][data-state=ready]:not([data-drawn=window])")
    # the last node (the pooler's Tanh), at the bottom of the drawing
    node = page.locator("#graph [data-node-id]", has=page.locator(".t-op", has_text="Tanh")).get_attribute(
        "data-node-id"
    )
    reveal(page, node=node)
    selector = f"#graph [data-node-id='{node}']"
    page.locator(selector).click()
    page.wait_for_selector(f"{selector}.selected")
    assert in_window(page, selector)
    for button in ("#btn-names", "#btn-attrs", "#btn-names", "#btn-attrs"):
        page.click(button)
        page.wait_for_timeout(100)
        wait_ready(page)
        assert in_window(page, selector), button
        assert page.locator(f"{selector}.selected").count() == 1
    page.screenshot(path=str(artifacts / "nav-names-toggled.png"))

    # a group selected (an expanded one: its tab): the same
    group = "/bert/encoder/layer.9"
    reveal(page, group=group)
    gsel = f"#graph [data-group-id='{group}']"
    page.wait_for_selector(f"{gsel}.selected")
    for button in ("#btn-names", "#btn-names"):
        page.click(button)
        page.wait_for_timeout(100)
        wait_ready(page)
        assert in_window(page, gsel, most=100), button


def cast_model() -> onnx.ModelProto:
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 3])
    y = h.make_tensor_value_info("y", T.FLOAT, [2, 3])
    nodes = [
        h.make_node("Cast", ["x"], ["c"], name="to_int", to=T.INT64),
        h.make_node("Cast", ["c"], ["y"], name="back", to=T.FLOAT),
        h.make_node("RandomNormalLike", ["x"], ["r"], name="noise", dtype=T.FLOAT16),
    ]
    out_r = h.make_tensor_value_info("r", T.FLOAT16, [2, 3])
    graph = h.make_graph(nodes, "casts", [x], [y, out_r])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])
    onnx.checker.check_model(model, full_check=True)
    return model


def test_data_type_attributes_by_name(page, server, artifacts):
    summary = upload(page, server, cast_model(), "casts.onnx")
    open_model(page, server, summary["id"])
    page.click("#graph [data-node-id=n0]")
    row = page.locator("#sidebar [data-attr=to]")
    picker = row.locator("select")
    assert picker.locator("option:checked").text_content() == "INT64"
    assert "7" in picker.get_attribute("title")
    # the schema's line names it too
    page.wait_for_selector("#sidebar [data-schema-attr=to] .attr-enum")
    assert page.locator("#sidebar [data-schema-attr=to] .attr-enum").text_content() == "INT64"
    assert page.locator("#sidebar [data-schema-attr=to] .attr-enum").get_attribute("title").endswith(" 7")

    page.click("#btn-attrs")
    page.wait_for_function(
        "() => (document.querySelector('#graph [data-node-id=n0]') || {}).textContent.includes('to=INT64')"
    )
    wait_ready(page)
    assert "dtype=FLOAT16" in page.locator("#graph [data-node-id=n2]").text_content()
    page.screenshot(path=str(artifacts / "nav-cast-attributes.png"))

    # the picker sends the number
    picker.select_option("INT32")
    row.locator("button[type=submit]").click()
    wait_revision(page, 1)
    model = downloaded(page, server, summary["id"])
    assert next(a.i for a in model.graph.node[0].attribute if a.name == "to") == T.INT32
    page.click("#graph [data-node-id=n0]")
    assert page.locator("#sidebar [data-attr=to] select option:checked").text_content() == "INT32"
    assert "to=INT32" in page.locator("#graph [data-node-id=n0]").text_content()


def test_a_slow_edit_says_saving(page, server, artifacts):
    summary = upload(page, server, cast_model(), "casts.onnx")
    open_model(page, server, summary["id"])
    status = page.locator("#wait-status")
    assert status.is_hidden()
    held = []
    page.route("**/api/models/*/edits", lambda route: held.append(route))  # answered when the test says

    page.click("#graph [data-node-id=n0]")
    page.locator("#sidebar [data-attr=to] select").select_option("INT32")
    page.locator("#sidebar [data-attr=to] button[type=submit]").click()
    page.wait_for_selector("#wait-status:not([hidden])")
    assert status.text_content() == "Saving…"
    page.wait_for_timeout(700)  # held for ~1 s in all
    page.screenshot(path=str(artifacts / "nav-saving.png"))
    assert status.is_visible() and status.text_content() == "Saving…"
    assert len(held) == 1
    held.pop().continue_()
    wait_revision(page, 1)
    page.wait_for_selector("#wait-status", state="hidden")
    page.unroute("**/api/models/*/edits")

    page.route("**/api/models/*/undo", lambda route: held.append(route))
    page.click("#btn-undo")
    page.wait_for_selector("#wait-status:not([hidden])")
    assert status.text_content() == "Undoing…"
    assert len(held) == 1
    held.pop().continue_()
    wait_revision(page, 0)
    page.wait_for_selector("#wait-status", state="hidden")


def test_a_link_from_before_a_delete_opens_the_same_node(page, server):
    """Links carry their revision and name nodes by name: a link written before a delete opens
    the node it named, not the one that took its position, in a subgraph too."""
    mid = upload(page, server, if_model(), "if.onnx")["id"]
    open_model(page, server, mid, "#path=n1%2Felse_branch&node=n1%2Felse_branch%2Fn1")
    page.wait_for_selector("#graph [data-node-id='n1/else_branch/n1'].selected")
    # the page writes the revision, and the If and the Relu by name
    assert page.url.endswith("#rev=0&path=@branch/else_branch&node=@branch/else_branch/@else_relu")
    named = page.url
    r = page.request.post(
        f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [{"op": "delete_node", "node": "pre"}]}
    )
    assert r.ok, r.text()  # the If moves up: n1 -> n0

    by_position = f"{server}/models/{mid}#rev=0&path=n1%2Felse_branch&node=n1%2Felse_branch%2Fn0"  # the Neg
    for link, node, op in [(by_position, "n0/else_branch/n0", "Neg"), (named, "n0/else_branch/n1", "Relu")]:
        page.goto("about:blank")
        page.goto(link)
        page.wait_for_selector(f"#graph[data-state=ready] [data-node-id='{node}'].selected")
        assert selected_ids(page) == [node]
        assert page.locator("#sidebar .panel-title").text_content() == op
        assert "#rev=1&path=@branch/else_branch&node=" in page.url

    # a link followed without reloading (the hash changes): n1 of revision 0 is the If
    page.evaluate("h => { location.hash = h; }", "#rev=0&path=&node=n1")
    page.wait_for_selector("#graph[data-state=ready] [data-node-id=n0].selected")
    assert page.locator("#sidebar .panel-title").text_content() == "If"
    assert page.url.endswith("#rev=1&path=&node=@branch")

    # the page spells names in addresses as the server does
    names = ["conv 1", "/model/layers.0/If", "x$&+,;=@y", "50%", "[0]#:?", "ünï €", "n3", "(~'!*)", '"<>`^{|}\\']
    spelled = page.evaluate(
        "async names => { const m = await import('/static/js/lib/address.js'); return names.map((n) => m.nameSegment(n)); }",
        names,
    )
    assert spelled == [named_segment(n) for n in names]


def branching() -> onnx.ModelProto:
    """x -> Relu -> (Sigmoid, Sigmoid) -> Add -> y: a fork and a join, drawn symmetric."""
    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="relu"),
        h.make_node("Sigmoid", ["r"], ["s"], name="sig1"),
        h.make_node("Sigmoid", ["r"], ["t"], name="sig2"),
        h.make_node("Add", ["s", "t"], ["y"], name="add"),
    ]
    graph = h.make_graph(
        nodes, "fork", [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])]
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_arrow_keys_step_along_the_lines(page, server):
    summary = upload(page, server, branching(), "fork.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    assert selected_ids(page) == ["n0"]
    page.locator("#graph").focus()

    def press(key: str, expected: str) -> None:
        page.keyboard.press(key)
        page.wait_for_function(
            "id => document.querySelector(`#graph g.box.selected[data-box='${id}']`)",
            arg=expected,
        )

    press("ArrowDown", "n1")  # of two readers as straight below, the first in the graph's order
    # the other reader, left or right of it as drawn, and round again
    x = {n: page.locator(f"#graph g.box[data-node-id='{n}']").bounding_box()["x"] for n in ("n1", "n2")}
    sideways = "ArrowRight" if x["n2"] > x["n1"] else "ArrowLeft"
    press(sideways, "n2")
    press(sideways, "n1")
    press("ArrowDown", "n3")  # the join
    press("ArrowUp", "n1")  # what makes its first input
    press("ArrowUp", "n0")
    assert page.locator("#sidebar .panel-title").text_content() == "Relu"
    # from the node up to the graph input's box, and the sidebar follows
    page.keyboard.press("ArrowUp")
    page.wait_for_selector("#sidebar[data-panel=input]")
    page.keyboard.press("ArrowDown")
    page.wait_for_function("() => document.querySelector('#sidebar .panel-title')?.textContent === 'Relu'")
    # ↑ goes back the way ↓ came: down through the second Sigmoid to the join, up to it again
    # (not to the join's first input), then up to the Relu
    press("ArrowDown", "n1")
    press(sideways, "n2")
    press("ArrowDown", "n3")
    press("ArrowUp", "n2")
    press("ArrowUp", "n0")


def test_down_follows_the_values_not_a_shape_read(page, server):
    """x -> Relu -> Exp -> Log -> Neg -> y, with a Shape of Relu's output read first in the graph's
    order (as torch writes them): ↓ from Relu goes down the data's line, ← → to the Shape."""
    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="relu"),
        h.make_node("Shape", ["r"], ["shape"], name="shape"),
        h.make_node("Exp", ["r"], ["e"], name="exp"),
        h.make_node("Log", ["e"], ["l"], name="log"),
        h.make_node("Neg", ["l"], ["y"], name="neg"),
    ]
    graph = h.make_graph(
        nodes,
        "side_read",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2]), h.make_tensor_value_info("shape", T.INT64, [1])],
    )
    summary = upload(page, server, h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), "side.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    x = {n: page.locator(f"#graph g.box[data-node-id='{n}']").bounding_box()["x"] for n in ("n1", "n2")}
    page.locator("#graph").focus()
    page.keyboard.press("ArrowDown")
    page.wait_for_selector("#graph g.box.selected[data-box='n2']")
    page.keyboard.press("ArrowRight" if x["n1"] > x["n2"] else "ArrowLeft")
    page.wait_for_selector("#graph g.box.selected[data-box='n1']")


def test_an_arrow_step_into_a_collapsed_group_opens_it(page, server):
    summary = upload(page, server, bert_like(12), "bert_like.onnx")
    open_model(page, server, summary["id"])
    drawn = "() => [...document.querySelectorAll('#graph g.box[data-node-id]')].map(e => e.dataset.nodeId)"
    first_view = set(page.evaluate(drawn))
    assert page.locator("#graph [data-collapsed=true]").count() > 0
    start = page.locator("#graph g.box[data-node-id]").first.get_attribute("data-node-id")
    page.locator(f"#graph g.box[data-node-id='{start}']").click()
    page.locator("#graph").focus()
    sel = start
    for _ in range(12):  # down the main line until a step lands on a node the first view kept in a group
        page.keyboard.press("ArrowDown")
        page.wait_for_function(
            "was => { const s = document.querySelector('#graph g.box.selected[data-node-id]'); return s && s.dataset.nodeId !== was; }",
            arg=sel,
        )
        wait_ready(page)
        (sel,) = selected_ids(page)
        if sel not in first_view:
            break
    assert sel not in first_view, "no step went into a group"
    # its group opened: the node is drawn, selected, in the window, its panel open
    assert page.locator(f"#graph g.box[data-node-id='{sel}']").is_visible()
    assert in_window(page, f"#graph g.box[data-node-id='{sel}']")
    assert page.locator("#sidebar").get_attribute("data-panel") == "node"


def test_arrow_keys_on_a_selected_group_step_from_group_to_group(page, server):
    """A reader walking the collapsed layers of a BERT steps layer to layer: ↓ from a selected
    group selects what reads its values as drawn (the next layer, still collapsed), ↑ comes back."""
    summary = upload(page, server, bert_like(12), "bert_like.onnx")
    open_model(page, server, summary["id"])
    collapsed = "#graph g.group[data-collapsed=true]"
    closed = page.locator(collapsed).count()
    assert closed >= 3
    first = page.locator(collapsed).first.get_attribute("data-group-id")
    reveal(page, group=first)
    page.wait_for_selector(f"#graph g.group.selected[data-group-id='{first}']")
    page.locator("#graph").focus()

    def step(key: str, was: str) -> str:
        page.keyboard.press(key)
        page.wait_for_function(
            "was => { const s = document.querySelector('#graph g.group.selected'); return s && s.dataset.groupId !== was; }",
            arg=was,
        )
        wait_ready(page)
        return page.locator("#graph g.group.selected").get_attribute("data-group-id")

    second = step("ArrowDown", first)
    assert page.locator("#sidebar").get_attribute("data-panel") == "group"
    assert page.locator(collapsed).count() == closed  # nothing opened on the way
    assert step("ArrowUp", second) == first
