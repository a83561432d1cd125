"""The pages load the esbuild bundle when it was built from the current sources (the manifest's
digest), else the ES modules; file dates play no part, as an installed package's are arbitrary."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from app.web.bundle_manifest import sources_digest
from app.web.scripts import layout_worker_script, page_scripts

MODULES = ["/static/js/lib/api.js", "/static/js/pages/side.js", "/static/js/widgets/dom.js"]


def _write(path, text: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def _sources(js, mtime: float) -> None:
    # modules in layer folders import each other by relative paths, up and across
    _write(js / "pages" / "model-page.js", 'import { a } from "../lib/api.js";\nimport "./side.js";\n', mtime)
    _write(js / "lib" / "api.js", 'export { b as a } from "../widgets/dom.js";\n', mtime)
    _write(js / "widgets" / "dom.js", "export const b = 1;\n", mtime)
    _write(js / "pages" / "side.js", "globalThis.c = 1;\n", mtime)


def _bundle(dist, sources: str, mtime: float, entries=("pages/model-page.js",)) -> None:
    _write(dist / "pages" / "model-page.js", 'import{x}from"../chunk-AB12.js";\n', mtime)
    _write(dist / "chunk-AB12.js", "export const x = 1;\n", mtime)
    manifest = {"sources": sources, "entries": list(entries), "bundle": "b1"}
    _write(dist / "manifest.json", json.dumps(manifest), mtime)


def scripts(app, entry: str) -> tuple[str, list[str]]:
    """What a request for a page is given now (each request decides afresh, once)."""
    with app.test_request_context("/"):
        return page_scripts(entry)


def worker(app) -> str:
    with app.test_request_context("/"):
        return layout_worker_script()


def test_bundle_when_built_from_the_current_sources_whatever_the_dates(app, tmp_path):
    now = time.time()
    js, dist = tmp_path / "js", tmp_path / "dist"
    _sources(js, now)
    # the bundle is older than its sources, as file dates may be after `pip install`
    _bundle(dist, sources_digest(str(js)), now - 1000)
    app.static_folder = str(tmp_path)
    entry, modules = scripts(app, "pages/model-page.js")
    assert entry == "/static/dist/pages/model-page.js" and modules == ["/static/dist/chunk-AB12.js"]
    # a source edited after the build: the bundle is stale, the modules themselves are served
    _write(js / "widgets" / "dom.js", "export const b = 2;\n", now + 1)
    entry, modules = scripts(app, "pages/model-page.js")
    assert entry == "/static/js/pages/model-page.js" and modules == MODULES
    # the edit undone: the sources hash as the bundle's again, even with a newer date
    _write(js / "widgets" / "dom.js", "export const b = 1;\n", now + 2)
    assert scripts(app, "pages/model-page.js")[0] == "/static/dist/pages/model-page.js"
    # a module added to the sources is a change too
    _write(js / "lib" / "new.js", "export {};\n", now - 2000)
    assert scripts(app, "pages/model-page.js")[0] == "/static/js/pages/model-page.js"
    (js / "lib" / "new.js").unlink()
    assert scripts(app, "pages/model-page.js")[0] == "/static/dist/pages/model-page.js"
    app.config["BUNDLE"] = False
    assert scripts(app, "pages/model-page.js")[0] == "/static/js/pages/model-page.js"


def test_modules_without_a_manifest_or_for_an_entry_it_does_not_name(app, tmp_path):
    now = time.time()
    js, dist = tmp_path / "js", tmp_path / "dist"
    _sources(js, now - 100)
    _bundle(dist, sources_digest(str(js)), now, entries=("pages/index-page.js",))
    app.static_folder = str(tmp_path)
    # a bundle newer than every source, but not built for this entry
    assert scripts(app, "pages/model-page.js") == ("/static/js/pages/model-page.js", MODULES)
    (dist / "manifest.json").unlink()  # half-built (the manifest is written last) or a bundle of old
    assert scripts(app, "pages/model-page.js") == ("/static/js/pages/model-page.js", MODULES)
    (dist / "manifest.json").write_text("{not json")
    assert scripts(app, "pages/model-page.js") == ("/static/js/pages/model-page.js", MODULES)


def test_the_layout_worker_is_the_builds_copy_with_dagre_when_the_bundle_is_current(app, tmp_path):
    now = time.time()
    js, dist = tmp_path / "js", tmp_path / "dist"
    _sources(js, now)
    _write(js / "pipeline" / "layout-worker.js", "importScripts(x);\n", now)
    _bundle(dist, sources_digest(str(js)), now)
    app.static_folder = str(tmp_path)
    # a bundle without the worker's copy (built before it had one): the source
    assert worker(app) == "/static/js/pipeline/layout-worker.js"
    _write(dist / "pipeline" / "layout-worker.js", "var dagre;\n", now)
    assert worker(app) == "/static/dist/pipeline/layout-worker.js"
    # sources edited since the build: the source worker, as the source modules
    _write(js / "pipeline" / "layout-worker.js", "importScripts(y);\n", now + 1)
    assert worker(app) == "/static/js/pipeline/layout-worker.js"


def test_the_model_page_preloads_the_bundles_chunks_itself(client, app):
    """The bundle's few chunks are <link rel=modulepreload>s of the page (the preload scanner
    fetches them with the page's first requests); graph-prefetch.js is left none to add."""
    entry, modules = scripts(app, "pages/model-page.js")
    html = client.get("/models/nothing-here").get_data(as_text=True)
    if entry.startswith("/static/dist/"):
        assert modules and all(f'<link rel="modulepreload" href="{m}">' in html for m in modules)
        assert 'data-modules="[]"' in html
        assert f'data-layout-worker="{worker(app)}"' in html
    else:  # an unbundled checkout: ~45 modules, added by the script after its own requests
        assert 'rel="modulepreload"' not in html


def test_a_starting_server_compiles_the_pages_before_their_first_request(app):
    from app.web import warm_pages

    app.jinja_env.cache.clear()
    warm_pages(app)
    compiled = {key[1] for key, _ in app.jinja_env.cache.items()}
    assert {"base.html", "model.html", "index.html", "preloads.html"} <= compiled


REPO = Path(__file__).resolve().parents[1]
JS = REPO / "app" / "static" / "js"


def test_the_first_view_never_loads_icu_locale_data():
    """Intl's formatters and toLocaleString load ICU's locale data on first use: 15-20 ms on a
    fresh page. Nothing the page runs before its first paint may use them (lib/format.js
    formatInteger writes thousands separators instead)."""
    first_view = [
        *JS.glob("pipeline/*.js"),
        *JS.glob("renderers/*.js"),
        *JS.glob("pages/*.js"),
        *JS.glob("widgets/*.js"),
    ]
    first_view += [JS / "lib" / "format.js", JS / "lib" / "api.js", JS / "lib" / "address.js"]
    # dates are written by the history and models panels only, after the first view
    allowed = {
        'return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });',
        "return date.toLocaleString(undefined, parts);",  # shortDate: the models list's and pickers' columns
    }
    found = [
        f"{p.relative_to(JS)}:{i}"
        for p in first_view
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if not line.lstrip().startswith(("//", "*", "/*"))
        and re.search(r"\bIntl\.|\.toLocale\w*\(", line)
        and line.strip() not in allowed
    ]
    assert found == []


def test_format_integer_writes_thousands_separators():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    values = [0, 7, 999, 1000, 12345, 999999, 1000000, 1234567, -1234567, 30428, 2**53 - 1]
    script = (
        f'import {{ formatInteger }} from "{(JS / "lib" / "format.js").as_uri()}";\n'
        f"console.log(JSON.stringify({values}.map(formatInteger)));\n"
    )
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [f"{v:,}" for v in values]


def test_a_long_weight_name_keeps_its_last_parts():
    """QA28: every Conv of a Caffe2 ResNet read "gpu_…_w_0": a path's first parts go first
    ("…/res3_0_branch2a_w_0"), then its last part is cut in its middle; a torch module path's
    first parts at a "." (QA29); names without either are cut in their middles as before."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    cases = [
        ["gpu_0/res3_0_branch2a_w_0", 22],
        ["gpu_0/res3_0_branch2a_w_0", 16],
        ["/model/layers.0/self_attn/q_proj/MatMul", 30],
        ["onnx__Concat_very_long_prefix_N_then", 20],
        ["val_model.layers.0.self_attn.q_proj.weight_dq", 28],
        ["val_model.layers.0.self_attn.q_proj.weight_dq", 20],
    ]
    script = (
        f'import {{ fitMiddle }} from "{(JS / "pipeline" / "graph-model.js").as_uri()}";\n'
        "const measure = (s) => s.length;\n"  # a character a pixel
        f"console.log(JSON.stringify({json.dumps(cases)}.map(([s, w]) => fitMiddle(s, '', w, measure))));\n"
    )
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [
        "…/res3_0_branch2a_w_0",
        "…/res3_0_…2a_w_0",
        "…/self_attn/q_proj/MatMul",
        "onnx__Conc…ix_N_then",
        "…self_attn.q_proj.weight_dq",  # QA29: torch's module paths lose their first parts too
        "…q_proj.weight_dq",
    ]
