"""The pages load the esbuild bundle when it is built and current, else the ES modules."""

from __future__ import annotations

import os
import time

from app.web.scripts import page_scripts


def _write(path, text: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def test_bundle_when_current_modules_when_a_source_is_newer(app, tmp_path):
    now = time.time()
    js, dist = tmp_path / "js", tmp_path / "dist"
    # modules in layer folders import each other by relative paths, up and across
    _write(js / "pages" / "model-page.js", 'import { a } from "../lib/api.js";\nimport "./side.js";\n', now - 100)
    _write(js / "lib" / "api.js", 'export { b as a } from "../widgets/dom.js";\n', now - 100)
    _write(js / "widgets" / "dom.js", "export const b = 1;\n", now - 100)
    _write(js / "pages" / "side.js", "globalThis.c = 1;\n", now - 100)
    _write(dist / "pages" / "model-page.js", 'import{x}from"../chunk-AB12.js";\n', now - 50)
    _write(dist / "chunk-AB12.js", "export const x = 1;\n", now - 50)
    app.static_folder = str(tmp_path)
    with app.test_request_context("/"):
        entry, modules = page_scripts("pages/model-page.js")
        assert entry == "/static/dist/pages/model-page.js" and modules == ["/static/dist/chunk-AB12.js"]
        # a source edited after the build: the bundle is stale, the modules themselves are served
        os.utime(js / "widgets" / "dom.js", (now, now))
        entry, modules = page_scripts("pages/model-page.js")
        assert entry == "/static/js/pages/model-page.js"
        assert modules == ["/static/js/lib/api.js", "/static/js/pages/side.js", "/static/js/widgets/dom.js"]
        app.config["BUNDLE"] = False
        os.utime(dist / "pages" / "model-page.js", (now + 10, now + 10))
        assert page_scripts("pages/model-page.js")[0] == "/static/js/pages/model-page.js"
        app.config["BUNDLE"] = True
        assert page_scripts("pages/model-page.js")[0] == "/static/dist/pages/model-page.js"
