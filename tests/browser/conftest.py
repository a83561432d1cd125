"""Browser-test fixtures: a real ONNX Studio server on loopback and headless Debian Chromium.

Every test gets a fresh app with its own data folder (served by werkzeug in a thread);
the browser is shared by the session, each test gets its own context and page.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 860}
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m selects by marks and xdist groups by them
def pytest_collection_modifyitems(items):
    """Every test in this folder is a browser test, and they run one at a time in one xdist
    worker ("browser" group): two Chromiums drawing at once on 2 cores made timings flaky.
    (The wheel test keeps a group of its own: it makes no drawing while building.)"""
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.browser)
            if not item.get_closest_marker("xdist_group"):
                item.add_marker(pytest.mark.xdist_group("browser"))


# shutdown() waits for serve_forever's next poll: at the default 0.5 s that was ~0.4 s of every
# browser test (372 of them, one after another)
POLL_SECONDS = 0.02


def serve(config: dict):
    """A real server for `config` on 127.0.0.1: (base URL, stop())."""
    from app import create_app

    return serve_app(create_app(config))


def serve_app(app):
    """A real server for `app` on 127.0.0.1: (base URL, stop())."""
    from werkzeug.serving import make_server

    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, name="studio-server", daemon=True
    )
    thread.start()

    def stop():
        httpd.shutdown()
        thread.join(timeout=10)
        httpd.server_close()

    return f"http://127.0.0.1:{httpd.server_port}", stop


@pytest.fixture
def server(tmp_path):
    """Base URL of a real server (fresh app, empty store) on 127.0.0.1."""
    url, stop = serve({"DATA_DIR": str(tmp_path / "data")})
    try:
        yield url
    finally:
        stop()


@pytest.fixture(scope="module")
def module_server(tmp_path_factory):
    """A real server shared by a module's tests that only look at what it holds (models set up
    once: a big one's upload and graph JSON cost seconds each time)."""
    url, stop = serve({"DATA_DIR": str(tmp_path_factory.mktemp("shared") / "data")})
    try:
        yield url
    finally:
        stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"browser tests need Debian's chromium at {CHROMIUM} (make chromium installs it)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    """A page in a fresh context; fails the test on any uncaught JavaScript error or anything
    the page's Content-Security-Policy refuses."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(20_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    # what the Content-Security-Policy refuses (an inline style, a script) fails the test too
    pg.on("console", lambda msg: errors.append(msg.text) if "Content Security Policy" in msg.text else None)
    pg.js_errors = errors
    stray: list[str] = []
    try:
        yield pg
        if not pg.is_closed():
            stray = pg.evaluate(STRAY_TEXT)
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
    # a null or undefined the DOM's own append() wrote out as text (QA36: "nullnull" in a select)
    assert not stray, f"stray text nodes on the page: {stray}"


STRAY_TEXT = r"""() => {
  const found = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (/^(null|undefined|\[object Object\])+$/.test(n.data.trim())) found.push(n.parentElement.outerHTML.slice(0, 200));
  }
  return found;
}"""


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
