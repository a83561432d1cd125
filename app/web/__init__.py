"""Page routes: the model list, the model page, and the front-end libraries npm installed.

The pages are static shells; everything they show comes from the JSON API (docs/api.md),
fetched by the ES modules under app/static/js.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from urllib.parse import quote

from flask import Blueprint, abort, current_app, render_template, request, send_from_directory, url_for

bp = Blueprint("web", __name__)

_STATIC_IMPORT = re.compile(r'^\s*(?:import|export)\b[^;]*?\bfrom\s+"\./([\w-]+\.js)"', re.M)


@lru_cache(maxsize=8)
def module_closure(js_dir: str, entry: str) -> tuple[str, ...]:
    """Every module `entry` imports statically, directly or not (dynamic import()s stay lazy):
    the page names them all as modulepreload links, so the browser fetches them at once
    instead of discovering them one import level after another."""
    seen: list[str] = []
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        with open(os.path.join(js_dir, name), encoding="utf-8") as f:
            todo.extend(_STATIC_IMPORT.findall(f.read()))
    return tuple(sorted(seen[1:]))


def preloads(entry: str) -> tuple[str, ...]:
    return module_closure(os.path.join(current_app.static_folder, "js"), entry)

# /vendor/<package>/<file> -> node_modules/<folder>/<file>. Only these folders are served,
# and only their plain files (send_from_directory refuses anything that leaves the folder).
VENDOR = {
    "dagre": os.path.join("@dagrejs", "dagre", "dist"),   # graph layout (UMD, in the layout worker)
    "marked": os.path.join("marked", "lib"),              # Markdown -> HTML (ES module)
    "dompurify": os.path.join("dompurify", "dist"),       # HTML sanitiser (ES module)
}
VENDOR_SUFFIXES = (".js", ".mjs", ".js.map", ".mjs.map", ".LEGAL.txt")


@bp.get("/")
def index():
    return render_template("index.html", preloads=preloads("index-page.js"))


@bp.get("/models/<model_id>")
def model_page(model_id: str):
    # The id is checked by the API when the page asks for the model; an unknown id is
    # shown as a "not found" message by the page itself.
    prefetch = {"base": f"{request.script_root}/api/models/{quote(model_id, safe='')}",
                "modules": [url_for("static", filename=f"js/{m}") for m in preloads("model-page.js")]}
    return render_template("model.html", model_id=model_id, preloads=preloads("model-page.js"), prefetch=prefetch)


@bp.get("/vendor/<package>/<path:filename>")
def vendor(package: str, filename: str):
    folder = VENDOR.get(package)
    if folder is None or "/" in filename or not filename.endswith(VENDOR_SUFFIXES):
        abort(404)
    root = os.path.join(current_app.config["NODE_MODULES"], folder)
    response = send_from_directory(root, filename, max_age=3600)
    if filename.endswith((".js", ".mjs")):
        # ES modules need a JavaScript type whatever the host's mimetypes table says
        response.mimetype = "text/javascript"
    return response
