"""A phone, a laptop at 200 % zoom and forced colours (QA41 findings 2, 3, 4 and 8): every
top-bar button within the window, the side panel under the drawing on a phone, the model's
name never drawn under the buttons, the models list scrolling only its table sideways, a real
outline on the focused drawing, and sort buttons big enough to hit."""

from __future__ import annotations

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload

LONG_NAME = "my_company_llama3_8b_instruct_finetuned_v2.onnx"

# the top bar's buttons and links on screen, as [id or text, left, top, right, bottom]
TOP_BAR_BUTTONS = """() => [...document.querySelectorAll('.topbar button, .topbar a.btn')]
  .filter((e) => e.offsetParent !== null)
  .map((e) => { const r = e.getBoundingClientRect();
    return [e.id || e.textContent.trim(), r.left, r.top, r.right, r.bottom]; })"""


def test_a_phone_reaches_every_top_bar_button_and_shows_the_panel_under_the_drawing(page, server, artifacts):
    page.set_viewport_size({"width": 390, "height": 844})
    mid = upload(page, server, tiny_cnn(), LONG_NAME)["id"]
    open_model(page, server, mid, "#path=&node=n0")
    buttons = page.evaluate(TOP_BAR_BUTTONS)
    assert {b[0] for b in buttons} >= {"btn-undo", "btn-model", "btn-text", "btn-download"}, buttons
    outside = [b for b in buttons if b[1] < 0 or b[3] > 390 or b[4] > 844]
    assert not outside, outside  # Compare, Model, Text form and Download were at x 394-715
    drawing = page.locator("#graph").bounding_box()
    panel = page.locator("#sidebar").bounding_box()
    assert drawing and panel
    assert panel["y"] >= drawing["y"] + drawing["height"] - 1, (drawing, panel)  # under it, not beside
    assert panel["x"] == 0 and panel["width"] == 390, panel  # across the width (was 300 px)
    assert drawing["width"] == 390 and drawing["height"] >= 250, drawing  # was 90 px wide
    # the drawing's tools on one row, not a 70 px column over the drawing
    tools = page.locator("#graph-tools").bounding_box()
    assert tools and tools["height"] <= 40, tools
    page.screenshot(path=str(artifacts / "narrow-390x844-node.png"))


def test_at_200_percent_zoom_the_model_name_is_not_under_the_buttons(page, server, artifacts):
    page.set_viewport_size({"width": 720, "height": 450})  # 1440×900 at 200 %
    mid = upload(page, server, tiny_cnn(), LONG_NAME)["id"]
    open_model(page, server, mid)
    page.locator("#model-validity:not([hidden])").wait_for()
    titles = [page.locator(s).bounding_box() for s in ("#model-name", "#model-revision", "#model-validity")]
    assert all(titles), titles
    for name, left, top, right, bottom in page.evaluate(TOP_BAR_BUTTONS):
        if name == "model-name":
            continue
        for t in titles:
            apart = right <= t["x"] or left >= t["x"] + t["width"] or bottom <= t["y"] or top >= t["y"] + t["height"]
            assert apart, (name, t)  # model-name x btn-undo, the badges x Redo/History/Run
    assert titles[0]["width"] >= 100, titles[0]  # the name readable (its box was 8 px, cut)
    page.screenshot(path=str(artifacts / "narrow-720x450-model.png"))


def test_the_models_list_on_a_phone_scrolls_only_its_table_sideways(page, server, artifacts):
    page.set_viewport_size({"width": 390, "height": 844})
    upload(page, server, tiny_cnn(), LONG_NAME)
    page.goto(server)
    page.locator("#models-table:not([hidden]) tbody tr").first.wait_for()
    assert page.evaluate("() => document.documentElement.scrollWidth") == 390  # was 816
    refresh = page.locator("#refresh-models").bounding_box()
    assert refresh and refresh["x"] + refresh["width"] <= 390, refresh
    page.screenshot(path=str(artifacts / "narrow-390x844-models.png"), full_page=True)


def test_in_forced_colours_the_focused_drawing_has_an_outline(page, server):
    page.emulate_media(forced_colors="active")
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid)
    page.focus("#graph")
    style = page.evaluate("() => getComputedStyle(document.getElementById('graph')).outlineStyle")
    assert style not in ("none", ""), style  # a box-shadow only: forced colours drop it


def test_the_costs_sort_buttons_are_24_px_targets(page, server):
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    sizes = page.evaluate(
        "() => [...document.querySelectorAll('#cost-table [data-sort]')].map((b) => {"
        " const r = b.getBoundingClientRect(); return [b.dataset.sort, r.width, r.height]; })"
    )
    assert len(sizes) >= 5, sizes
    small = [s for s in sizes if s[1] < 24 or s[2] < 24]
    assert not small, small  # "op" was 27×16, "Node" 50×18
