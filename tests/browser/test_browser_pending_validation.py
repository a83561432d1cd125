"""A big model's page draws before its checks finish, then shows their verdict when they do."""

from __future__ import annotations

import threading

import pytest

from .browser_models import tiny_cnn
from .browser_pages import wait_ready

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


@pytest.fixture
def small_limit_server(tmp_path):
    """A server that treats any model over 2 nodes as big (checks in the background)."""
    from werkzeug.serving import make_server

    from app import create_app

    app = create_app({"DATA_DIR": str(tmp_path / "data"), "INFER_INLINE_NODES": 2})
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield app, f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        thread.join(timeout=10)
        httpd.server_close()


def test_validation_arrives_after_the_graph(page, small_limit_server, tmp_path):
    app, server = small_limit_server
    model = tiny_cnn()
    model.doc_string = f"pending {tmp_path}"  # new content: nothing cached
    record = app.extensions["store"].create_model("big.onnx", model.SerializeToString())
    first = page.request.get(f"{server}/api/models/{record.id}").json()
    assert first["validation"]["pending"] is True
    page.goto(f"{server}/models/{record.id}")
    wait_ready(page)
    page.wait_for_function("document.getElementById('model-validity').textContent === 'valid'", timeout=60_000)
    assert page.locator("#validation .check.ok").count() == 2  # checker and full check both pass
