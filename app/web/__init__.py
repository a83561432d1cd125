"""Page routes: the model list, the model page, and the front-end libraries the page loads.

The pages are static shells; everything they show comes from the JSON API (docs/api.md),
fetched by the ES modules under app/static/js (or their bundle: scripts.py).
"""

from __future__ import annotations

import os
from urllib.parse import quote

from flask import Blueprint, abort, current_app, render_template, request, send_from_directory

from .scripts import page_scripts

bp = Blueprint("web", __name__)

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


@bp.get("/")
def index():
    entry, modules = page_scripts("pages/index-page.js")
    return render_template("index.html", entry=entry, preloads=modules)


@bp.get("/models/<model_id>")
def model_page(model_id: str):
    # The id is checked by the API when the page asks for the model; an unknown id is
    # shown as a "not found" message by the page itself.
    entry, modules = page_scripts("pages/model-page.js")
    prefetch = {"base": f"{request.script_root}/api/models/{quote(model_id, safe='')}", "modules": modules}
    return render_template("model.html", model_id=model_id, entry=entry, prefetch=prefetch)


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
