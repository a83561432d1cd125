"""A big model's page draws before its checks finish, then shows their verdict when they do."""

from __future__ import annotations

import threading

import pytest
from flask import current_app

from .browser_models import tiny_cnn
from .browser_pages import wait_ready
from .conftest import serve_app


@pytest.fixture
def small_limit_server(tmp_path):
    """A server that treats any model over 2 nodes as big (checks in the background)."""
    from app import create_app

    app = create_app({"DATA_DIR": str(tmp_path / "data"), "INFER_INLINE_NODES": 2})
    url, stop = serve_app(app)
    try:
        yield app, url
    finally:
        stop()


def test_validation_arrives_after_the_graph(page, small_limit_server, tmp_path):
    app, server = small_limit_server
    model = tiny_cnn()
    model.doc_string = f"pending {tmp_path}"  # new content: nothing cached
    record = app.extensions["store"].create_model("big.onnx", model.SerializeToString())
    first = page.request.get(f"{server}/api/models/{record.id}").json()
    assert first["validation"]["pending"] is True
    page.goto(f"{server}/models/{record.id}")
    wait_ready(page)
    page.wait_for_function("() => document.getElementById('model-validity').textContent === 'valid'", timeout=60_000)
    assert page.locator("#validation .check.ok").count() == 3  # checker, full check and onnxruntime pass


def open_with_checks_held(page, small_limit_server, doc: str) -> list:
    """Store tiny_cnn (its doc_string `doc`: new content, nothing cached) and open its page with
    its GET .../validation held: the routes held, for wait_held and continue_()."""
    app, server = small_limit_server
    model = tiny_cnn()
    model.doc_string = doc
    record = app.extensions["store"].create_model("big.onnx", model.SerializeToString())
    held: list = []
    page.route("**/api/models/*/validation?*", lambda route: held.append(route))
    page.goto(f"{server}/models/{record.id}")
    wait_ready(page)
    return held


def wait_held(page, held: list) -> None:
    """Wait for the page's request to be held by the route (route handlers run as Playwright
    dispatches its events, which page calls do)."""
    for _ in range(100):
        if held:
            return
        page.wait_for_timeout(50)
    raise AssertionError("the request never came")


def test_checking_badge_while_the_checks_run(page, small_limit_server, tmp_path, artifacts, monkeypatch):
    """The toolbar says "Checking…" while the background checks run: on opening, and after an
    edit whose onnxruntime check went to the background (the checker's and the full check's
    verdicts come with the edit: its gate ran them)."""
    held = open_with_checks_held(page, small_limit_server, f"checking {tmp_path}")
    badge = page.locator("#model-validity")
    page.wait_for_function("() => document.getElementById('model-validity').textContent === 'Checking…'")
    assert badge.is_visible() and "badge-wait" in badge.get_attribute("class")
    page.screenshot(path=str(artifacts / "pending-checking.png"))
    wait_held(page, held)
    held.pop().continue_()
    page.wait_for_function("() => document.getElementById('model-validity').textContent === 'valid'", timeout=60_000)

    # an edit whose onnxruntime check can't wait (a base that ran slowly): it runs in the background
    from app.api import runtime

    monkeypatch.setattr(runtime, "GATE_WAITS_SECONDS", -1)
    monkeypatch.setattr(runtime, "SYNC_BYTES", 0)
    # the background run waits for the test: a tiny model's run done before the page's next
    # summary made "Checking…" last a few ms, which the test could miss (CI failed on 493f0f6)
    release = threading.Event()
    started = runtime.in_background

    def held_background(model_id: str, rev: int) -> None:
        app = current_app._get_current_object()  # the thread runs outside the request

        def later() -> None:
            if release.wait(60):
                with app.app_context():
                    started(model_id, rev)

        threading.Thread(target=later, daemon=True).start()

    monkeypatch.setattr(runtime, "in_background", held_background)
    page.click("#graph [data-node-id=n0]")
    page.locator("#sidebar .ed-rename-node input[name=name]").fill("conv_renamed")
    page.locator("#sidebar .ed-rename-node button[type=submit]").click()
    page.wait_for_function("() => document.getElementById('model-revision').textContent === 'rev 1'")
    page.wait_for_function("() => document.getElementById('model-validity').textContent === 'Checking…'")
    assert badge.is_visible()
    release.set()
    wait_held(page, held)
    held.pop().continue_()
    page.wait_for_function("() => document.getElementById('model-validity').textContent === 'valid'", timeout=60_000)


def test_checks_arriving_keep_an_open_form(page, small_limit_server, tmp_path):
    """The background checks answering redraw the validation section alone: a form the person
    opened meanwhile stays open with what they typed (a whole-panel redraw closed it)."""
    held = open_with_checks_held(page, small_limit_server, f"form {tmp_path}")
    page.wait_for_selector("#validation[data-pending=true]")
    page.click("#sidebar .ed-fields-toggle")
    page.locator("#sidebar .ed-model-fields input[name=producer_name]").fill("typed meanwhile")
    wait_held(page, held)
    held.pop().continue_()
    page.wait_for_selector("#validation[data-ok=true]", timeout=60_000)
    assert page.locator("#validation .check.ok").count() == 3
    field = page.locator("#sidebar .ed-model-fields input[name=producer_name]")
    assert field.is_visible() and field.input_value() == "typed meanwhile"
