"""A laptop window and the keyboard (QA pass 12): the drawing entered by Tab and ↓, Enter on a
button that is only that button's, edit forms that open in view and close with Escape, the
toolbar readable at 1024 px."""

from __future__ import annotations

from .browser_models import tiny_cnn
from .browser_pages import hash_params, open_model, upload, wait_revision


def active(page) -> str:
    """The focused element, as `tag#id.class data-action`."""
    return page.evaluate(
        "() => { const a = document.activeElement; return `${a.tagName.toLowerCase()}#${a.id}"
        ".${a.className} ${a.dataset.action || ''}`; }"
    )


def test_the_drawing_is_entered_by_tab_then_arrow(page, server):
    page.set_viewport_size({"width": 1280, "height": 720})
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid)
    page.focus("#graph")
    ring = page.evaluate("() => getComputedStyle(document.getElementById('graph')).boxShadow")
    assert ring != "none", ring  # focus shows on the drawing
    page.keyboard.press("ArrowDown")  # nothing selected: the first input
    page.wait_for_function("() => location.hash.includes('input=')")
    assert hash_params(page)["input"] == "input"
    page.keyboard.press("ArrowDown")  # then along the lines, as ever
    page.wait_for_function("() => location.hash.includes('node=')")


def test_enter_on_a_button_does_not_also_fold_the_selected_group(page, server):
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid)
    group = page.locator("#graph g[data-group-id]").first
    gid = group.get_attribute("data-group-id")
    open_model(page, server, mid, f"#path=&group={gid}")
    frame = page.locator(f"#graph g[data-group-id='{gid}']")
    before = frame.get_attribute("data-collapsed")
    page.focus("#btn-history")
    page.keyboard.press("Enter")
    page.wait_for_selector("#sidebar[data-panel=history]")
    page.wait_for_timeout(300)  # a fold would be drawn by now
    assert page.locator(f"#graph g[data-group-id='{gid}']").get_attribute("data-collapsed") == before


def test_edit_forms_open_in_view_and_close_with_escape(page, server, artifacts):
    page.set_viewport_size({"width": 1280, "height": 720})
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n0")
    insert = page.locator("#sidebar [data-action=insert-after]")
    insert.click()
    field = page.locator("#sidebar .ed-action-area input").first
    field.wait_for()
    assert page.evaluate("() => document.activeElement.closest('.ed-action-area') !== null")
    page.keyboard.type("Rel")
    page.keyboard.press("Escape")
    page.locator("#sidebar .ed-action-area").wait_for(state="hidden")
    assert "insert-after" in active(page)  # back on the button that opened it
    assert hash_params(page)["node"]  # the node panel stays: Escape closed the form only
    # "+ Add attribute…" far down the panel: its form is brought into the window, its field focused
    page.locator("#sidebar .ed-add-attr-toggle").click()
    value = page.locator("#add-attribute select[name=name], #add-attribute input[name=name]").first
    value.wait_for()
    page.wait_for_function("() => document.activeElement.closest('#add-attribute') !== null")
    box = page.locator("#add-attribute").bounding_box()
    assert box and box["y"] + 40 < 720, box
    page.screenshot(path=str(artifacts / "add-attribute-in-view.png"))
    page.keyboard.press("Escape")
    page.locator("#add-attribute").wait_for(state="hidden")
    assert "ed-add-attr-toggle" in active(page)


def test_the_toolbar_at_1024_keeps_the_name_and_draws_nothing_over_undo(page, server, artifacts):
    page.set_viewport_size({"width": 1024, "height": 768})
    mid = upload(page, server, tiny_cnn(), "my_company_llama3_8b_instruct_finetuned_qdq_int8_v2.onnx")["id"]
    open_model(page, server, mid)
    page.locator("#model-validity:not([hidden])").wait_for()
    name = page.locator("#model-name").bounding_box()
    assert name and name["width"] >= 100, name  # was 0 px: which model is open, unsaid
    title = page.locator(".toolbar-title").bounding_box()
    undo = page.locator("#btn-undo").bounding_box()
    assert title and undo and title["x"] + title["width"] <= undo["x"], (title, undo)
    for badge in ("#model-revision", "#model-validity"):
        b = page.locator(badge).bounding_box()
        assert b and b["x"] + b["width"] <= title["x"] + title["width"] + 0.5, (badge, b, title)
    page.screenshot(path=str(artifacts / "toolbar-1024.png"), clip={"x": 0, "y": 0, "width": 1024, "height": 60})


def test_the_keyboard_keeps_its_place_after_a_save_and_an_undo(page, server):
    """Saved by Enter, the panel is drawn anew: the focus is back on the field saved, so the next
    Tab goes on from there; Undo pressed by Enter keeps its focus (it is disabled meanwhile)."""
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n1")
    field = page.locator("#sidebar .attr[data-attr=alpha] input[name=value]")
    field.focus()
    field.fill("0.2")
    page.keyboard.press("Enter")
    wait_revision(page, 1)
    page.wait_for_function("() => document.activeElement.closest('.attr[data-attr=alpha]') !== null")
    assert page.evaluate("() => document.activeElement.name") == "value"
    page.keyboard.press("Control+a")
    page.keyboard.type("0.3")
    page.keyboard.press("Enter")
    wait_revision(page, 2)
    page.focus("#btn-undo")
    page.keyboard.press("Enter")
    wait_revision(page, 1)
    page.wait_for_function("() => document.activeElement.id === 'btn-undo'")
    page.keyboard.press("Enter")  # again, without going back to it
    wait_revision(page, 0)
    # at its end Undo is off: the focus goes to Redo, so Enter redoes (not lost to the page)
    page.wait_for_function("() => document.activeElement.id === 'btn-redo'")
    page.keyboard.press("Enter")
    wait_revision(page, 1)


def test_a_long_model_name_elsewhere_does_not_push_the_panel_past_the_sidebar(page, server):
    page.set_viewport_size({"width": 1280, "height": 720})
    upload(page, server, tiny_cnn(), "my_company_llama3_8b_instruct_finetuned_qdq_int8_v2_with_more.onnx")
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid)
    page.locator("#sidebar button", has_text="Reference cases").click()
    page.locator("#ref-copy-from option").nth(1).wait_for(state="attached")
    widths = page.evaluate(
        "() => { const s = document.getElementById('sidebar'); return [s.scrollWidth, s.clientWidth]; }"
    )
    assert widths[0] <= widths[1], widths  # nothing cut off at the right, out of reach


def test_find_results_show_names_whole_and_tell_a_screen_reader_which_is_active(page, server):
    import onnx
    from onnx import TensorProto
    from onnx import helper as h

    names = [
        "model.layers.20.self_attn.q_proj.MatMul_with_a_long_tail_1928",
        "model.layers.20.self_attn.q_proj.weight_x",
    ]
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    nodes = [h.make_node("Relu", ["x"], ["a"], name=names[0]), h.make_node("Relu", ["a"], ["y"], name=names[1])]
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    model = h.make_model(h.make_graph(nodes, "g", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    page.set_viewport_size({"width": 1024, "height": 768})
    mid = upload(page, server, model, "long.onnx")["id"]
    open_model(page, server, mid)
    page.keyboard.press("/")
    page.keyboard.type("q_proj")
    first = page.locator("#search-results li").first
    first.wait_for()
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length === 2")
    for name_el in page.locator("#search-results .sr-name").all():
        # the whole name on at most two lines: nothing cut at its end, where such names differ
        assert name_el.evaluate("n => n.scrollHeight <= n.clientHeight + 1 && n.scrollWidth <= n.clientWidth + 1")
        assert name_el.text_content() in names
    field = page.locator("#search-input")
    assert field.get_attribute("aria-activedescendant") == first.get_attribute("id")
    page.keyboard.press("ArrowDown")
    second = page.locator("#search-results li").nth(1)
    assert field.get_attribute("aria-activedescendant") == second.get_attribute("id")
    assert second.get_attribute("aria-selected") == "true" and first.get_attribute("aria-selected") == "false"


def test_compare_with_an_unrelated_model_lists_the_first_nodes_then_all_on_asking(page, server):
    import onnx
    from onnx import TensorProto
    from onnx import helper as h

    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [h.make_node("Relu", ["x" if k == 0 else f"t{k}"], [f"t{k + 1}" if k < 119 else "y"]) for k in range(120)]
    chain = h.make_model(h.make_graph(nodes, "chain", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(chain)
    other = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    mid = upload(page, server, chain, "chain.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-compare")
    picker = page.locator("#compare-with")
    picker.locator(f"option[value='model:{other}']").wait_for(state="attached")
    picker.select_option(f"model:{other}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    added = page.locator("#compare-added li")
    assert added.count() == 50
    more = page.locator("#sidebar .compare-more", has_text="Show all 120")
    more.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#compare-added li').length === 120")
    assert more.count() == 0
    # the button gone, the focus is on the first item it showed: Tab goes on from there
    place = "() => [...document.querySelectorAll('#compare-added li')].indexOf(document.activeElement.closest('li'))"
    assert page.evaluate(place) == 50
    # the other lists too: the model's value_info lines (one per value of the other model)
    for items in page.locator("#sidebar .compare-lines").all():
        assert items.locator("li").count() <= 50


def test_the_side_panel_hides_for_a_wide_drawing_and_stays_hidden(page, server, artifacts):
    page.set_viewport_size({"width": 1024, "height": 768})
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid)
    before = page.locator("#graph").bounding_box()
    page.keyboard.press("p")
    page.locator("#sidebar").wait_for(state="hidden")
    page.wait_for_function("() => document.getElementById('graph').getBoundingClientRect().width > 1000")
    toggle = page.get_by_role("button", name="Show the side panel")
    assert toggle.get_attribute("aria-expanded") == "false"
    page.screenshot(path=str(artifacts / "side-panel-hidden-1024.png"))
    page.reload()  # the choice is kept for the next page
    page.wait_for_selector("#graph[data-state=ready]")
    assert page.locator("#sidebar").is_hidden()
    toggle.click()
    page.locator("#sidebar").wait_for()
    page.keyboard.press("p")
    page.locator("#sidebar").wait_for(state="hidden")
    page.click("#btn-history")  # a toolbar panel asked for shows the side panel again
    page.locator("#sidebar[data-panel=history]").wait_for()
    after = page.locator("#graph").bounding_box()
    assert before and after and abs(after["width"] - before["width"]) < 1


def test_the_heat_legend_and_the_tensor_bar_stack_without_covering_each_other(page, server, artifacts):
    page.set_viewport_size({"width": 1024, "height": 768})
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid)
    page.locator("#costs[data-ready=true]").wait_for()
    page.click("#costs .cost-heat button[data-metric=flops]")
    legend = page.locator("#heat-legend:not([hidden])")
    legend.wait_for()
    page.evaluate("() => { location.hash = '#path=&tensor=conv1.weight'; }")
    bar = page.locator("#tensor-bar:not([hidden])")
    bar.wait_for()
    a, b = legend.bounding_box(), bar.bounding_box()
    assert a and b and (a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]), (a, b)
    # the bar's controls on one line, whatever the tensor's name
    buttons = [bar.locator(sel).bounding_box() for sel in (".tb-name", ".tb-next")]
    assert buttons[0] and buttons[1] and abs(buttons[0]["y"] - buttons[1]["y"]) < 12, buttons
    page.screenshot(path=str(artifacts / "heat-legend-and-tensor-bar.png"))
