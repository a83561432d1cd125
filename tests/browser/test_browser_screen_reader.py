"""What a screen reader is told and where the keyboard goes (QA41): the drawing's selection and
path said in the page's status region, a run's result said, a panel opened from the toolbar
taking the focus to its title, the model panel's index moving the focus with the scroll, an
attribute's error tied to its field."""

from __future__ import annotations

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload

ANNOUNCED = "document.getElementById('announcer').textContent"


def said(page, words: str) -> str:
    page.wait_for_function(f"() => {ANNOUNCED}.includes({words!r})")
    return page.evaluate(f"() => {ANNOUNCED}")


def test_moving_through_the_drawing_is_said(page, server):
    from test_unroll import loop_model

    summary = upload(page, server, loop_model(3), "loop.onnx")
    open_model(page, server, summary["id"])
    graph = page.locator("#graph")
    assert graph.get_attribute("role") == "application"
    assert "Arrow keys move between nodes" in page.locator("#graph-help").text_content()
    graph.focus()
    page.keyboard.press("ArrowDown")  # the first input
    assert said(page, "input ").startswith("input x; read by Loop n0 loop")
    page.keyboard.press("ArrowDown")
    assert (
        said(page, "Loop n0")
        == "Loop n0 loop; reads M, v0; read by Relu n1 after, output scans; Enter opens its subgraph"
    )
    page.keyboard.press("Enter")
    assert said(page, "body") == "g › Loop loop · body: 5 nodes; Backspace goes back"
    page.keyboard.press("Backspace")
    assert said(page, "g: 2 nodes") == "g: 2 nodes"


def test_a_toolbar_panel_takes_the_focus_and_a_run_says_its_result(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.wait_for_function("() => document.activeElement && document.activeElement.matches('#sidebar h2')")
    assert page.locator("#btn-run").get_attribute("aria-pressed") == "true"
    assert page.locator("#btn-model").get_attribute("aria-pressed") == "false"
    page.locator("#run-go").focus()
    page.keyboard.press("Enter")
    assert said(page, "Ran revision 0").startswith("Ran revision 0 in ")
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'run-go'")


def test_the_model_panels_index_takes_the_focus_to_its_section(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.locator(".panel-index-link[data-target='#model-tools']").click()
    page.wait_for_function(
        "() => document.activeElement.matches('#sidebar h3') && document.activeElement.textContent === 'Tools'"
    )


def test_an_attributes_error_is_tied_to_its_field(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n2")
    field = page.locator("#sidebar .attr[data-attr=strides] input[name=value]")
    field.fill("[1, x]")
    page.locator("#sidebar .attr[data-attr=strides] button[type=submit]").click()
    error = page.locator("#sidebar .attr[data-attr=strides] .field-error")
    error.wait_for()
    assert field.get_attribute("aria-invalid") == "true"
    assert error.get_attribute("id") in (field.get_attribute("aria-describedby") or "").split()
    assert page.get_by_role("button", name="Save strides").count() == 1


def test_escape_from_find_goes_back_where_it_was_opened(page, server):
    """QA41 #11: Find opened from its button, Escape left the keyboard on the drawing."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.locator("#btn-find").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.id === 'search-input'")
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.activeElement.id === 'btn-find'")
    page.locator("#graph").focus()
    page.keyboard.press("/")
    page.wait_for_function("() => document.activeElement.id === 'search-input'")
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.activeElement.id === 'graph'")
