"""Page routes: the model list, the model page, and the front-end libraries the page loads.

The pages are static shells; everything they show comes from the JSON API (docs/api.md),
fetched by the ES modules under app/static/js (or their bundle: scripts.py).
"""

from __future__ import annotations

import os
from urllib.parse import quote

from flask import Blueprint, abort, current_app, render_template, request, send_from_directory
from markupsafe import Markup

from .scripts import layout_worker_script, page_scripts

bp = Blueprint("web", __name__)


@bp.app_context_processor
def _page_globals() -> dict:
    return {"layout_worker_script": layout_worker_script}


# /vendor/<package>/<file> -> static/vendor/<package>/<file>: the files the page loads of the
# libraries npm installed, copied there by the front-end build (scripts/build_frontend.py) so an
# installed package carries them. Only these folders are served, and only their plain files
# (send_from_directory refuses anything that leaves the folder).
VENDOR = (
    "dagre",  # graph layout (UMD, in the layout worker)
    "marked",  # Markdown -> HTML (ES module)
    "dompurify",  # HTML sanitiser (ES module)
)
VENDOR_SUFFIXES = (".js", ".mjs", ".js.map", ".mjs.map", ".LEGAL.txt")


def warm_pages(app) -> None:
    """What a page's first request would otherwise pay for, done as the server starts: the
    templates compiled, the bundle's manifest and the sources' digest read, the MIME table
    loaded (~10 ms off a fresh server's first page and first static files)."""
    import mimetypes

    mimetypes.guess_type("x.js")
    for name in ("base.html", "model.html", "index.html", "preloads.html"):
        app.jinja_env.get_template(name)
    with app.test_request_context("/"):
        page_scripts("pages/model-page.js")
        page_scripts("pages/index-page.js")
        layout_worker_script()


@bp.get("/")
def index():
    entry, modules = page_scripts("pages/index-page.js")
    return render_template("index.html", entry=entry, preloads=modules)


@bp.get("/models/<model_id>")
def model_page(model_id: str):
    # The id is checked by the API when the page asks for the model; an unknown id is
    # shown as a "not found" message by the page itself.
    entry, modules = page_scripts("pages/model-page.js")
    # The bundle's few chunks are preloaded by the page's own <link>s: the preload scanner asks
    # for them with the page's first requests (added by graph-prefetch.js instead, they came
    # ~30 ms later, once that script had loaded). An unbundled checkout's ~45 source modules
    # are still added by that script, after the graph and the layout worker are asked for.
    early = modules if len(modules) <= HTML_PRELOADS_MAX else []
    summary, graph = embedded_data(model_id)
    prefetch = {
        "base": f"{request.script_root}/api/models/{quote(model_id, safe='')}",
        "modules": [] if early else modules,
        "graph": _has_graph(model_id),  # a data file (a SequenceProto .pb) has none to fetch
    }
    return render_template(
        "model.html",
        model_id=model_id,
        entry=entry,
        preloads=early,
        prefetch=prefetch,
        summary=summary,
        graph=graph,
    )


# more modules than this (an unbundled checkout) would queue the page's first requests
HTML_PRELOADS_MAX = 8


# A small model's summary and main graph come inside its page, as JSON data blocks (not
# scripts: nothing in them runs): the page starts drawing without the two requests its first
# script would make (a 0.4 s first view of a small model: ~50 ms sooner). Bigger graphs are
# fetched as before, so the page itself never waits for a big build.
EMBED_MAX_BYTES = 1 << 20


def _has_graph(model_id: str) -> bool:
    """Whether the page should fetch a graph: not for a stored data file (an unknown id's page
    asks anyway, and says what the API answers)."""
    from ..api.documents import store

    try:
        return store().model(model_id).kind == "model"
    except Exception:
        return True


def embedded_data(model_id: str) -> tuple[Markup | None, Markup | None]:
    """(summary JSON, main graph JSON) to write into the page, each escaped for a data block;
    (None, None) when the page should ask the API (big, not a model, or not readable: the page
    then shows what the API says)."""
    from ..api.documents import EMBED_MAX_NODES, graph_json, load
    from ..api.routes import summary_of

    try:
        summary = summary_of(model_id)
        if summary.get("kind", "model") != "model":
            return None, None
        head = _data_block(current_app.json.dumps(summary).encode())
        _, revision, model = load(model_id)
        if len(model.graph.node) > EMBED_MAX_NODES:
            return head, None
        graph = graph_json(revision, model, "", current_app.config["INFER_INLINE_NODES"])
    except Exception:  # unknown, unreadable: the page asks the API, which says what is wrong
        return None, None
    return head, (_data_block(graph) if len(graph) <= EMBED_MAX_BYTES else None)


def _data_block(body: bytes) -> Markup:
    """JSON for a <script type="application/json"> block: no "<", ">" or "&" left to end it
    (they only occur inside JSON strings, where their \\u escapes mean the same)."""
    return Markup(body.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026").decode("utf-8"))


@bp.get("/vendor/<package>/<path:filename>")
def vendor(package: str, filename: str):
    if package not in VENDOR or "/" in filename or not filename.endswith(VENDOR_SUFFIXES):
        abort(404)
    root = os.path.join(current_app.static_folder or "", "vendor", package)
    response = send_from_directory(root, filename, max_age=3600)
    if filename.endswith((".js", ".mjs")):
        # ES modules need a JavaScript type whatever the host's mimetypes table says
        response.mimetype = "text/javascript"
    return response
