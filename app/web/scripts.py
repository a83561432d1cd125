"""Which scripts a page loads: the esbuild bundle of its entry module when one is built from the
current sources (the front-end build writes it into static/dist with a manifest naming the
sources' digest: a few requests instead of ~45, which a threaded Python server answers one at a
time), else the ES modules themselves, so an edited source shows on reload without rebuilding.
Either way every module the entry imports statically is named, for the page to preload."""

from __future__ import annotations

import os
import posixpath
import re
from functools import lru_cache

from flask import current_app, g, url_for

from .bundle_manifest import read_manifest, source_files, sources_digest

SOURCES = "js"
BUNDLE = "dist"

# a static import of a module of ours: a relative path ("./x.js", "../layer/x.js")
_STATIC_IMPORT = re.compile(r'^\s*(?:(?:import|export)\b[^;]*?\bfrom|import)\s*"(\.{1,2}/[\w./-]+\.js)"', re.M)

# js folder -> (stat signature of its sources, their digest): hashing once per change, not per page
_digests: dict[str, tuple[tuple, str]] = {}


@lru_cache(maxsize=16)
def module_closure(js_dir: str, entry: str, stamp: str = "") -> tuple[str, ...]:
    """Every module `entry` imports statically, directly or not (dynamic import()s stay lazy),
    as paths relative to `js_dir`. `stamp` (a digest of the folder's files) keys the cache:
    edited sources or a rebuilt bundle import other modules."""
    seen: list[str] = []
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        with open(os.path.join(js_dir, name), encoding="utf-8") as f:
            found = _STATIC_IMPORT.findall(f.read())
        here = posixpath.dirname(name)
        todo.extend(posixpath.normpath(posixpath.join(here, rel)) for rel in found)
    return tuple(sorted(seen[1:]))


def current_sources_digest(js_dir: str) -> str:
    """The digest of the source modules, computed again only when one's size or mtime changed."""
    signature = tuple(
        (name, st.st_mtime_ns, st.st_size)
        for name in source_files(js_dir)
        for st in [os.stat(os.path.join(js_dir, name))]
    )
    cached = _digests.get(js_dir)
    if cached is None or cached[0] != signature:
        cached = _digests[js_dir] = (signature, sources_digest(js_dir))
    return cached[1]


def _bundle_stamp(static: str, entry: str, sources: str) -> str | None:
    """The bundle's digest when it holds `entry` and was built from sources hashing `sources`."""
    manifest = read_manifest(os.path.join(static, BUNDLE))
    if manifest is None or manifest.get("sources") != sources or entry not in manifest.get("entries", ()):
        return None
    return str(manifest.get("bundle", ""))


def _bundle_or_sources(entry: str) -> tuple[str, str]:
    """(folder under static, its stamp): the bundle when it is current and holds `entry`.
    Decided once per request (a page asks for its scripts and its worker: 45 stats each)."""
    decided = g.setdefault("_script_folders", {})
    if entry not in decided:
        decided[entry] = _decide(entry)
    return decided[entry]


def _decide(entry: str) -> tuple[str, str]:
    static = current_app.static_folder
    assert static is not None  # create_app always gives the app its static folder
    folder, stamp = SOURCES, current_sources_digest(os.path.join(static, SOURCES))
    bundle = _bundle_stamp(static, entry, stamp) if current_app.config.get("BUNDLE", True) else None
    return (BUNDLE, bundle) if bundle is not None else (folder, stamp)


# the layout worker: the build's copy carries dagre (one fetch for a starting worker), the
# source imports it from /vendor
WORKER = "pipeline/layout-worker.js"


def layout_worker_script() -> str:
    """URL of the layout worker's script (started with ?dagre=<dagre's URL> either way)."""
    static = current_app.static_folder or ""
    folder, _ = _bundle_or_sources("pages/model-page.js")
    if folder == BUNDLE and not os.path.isfile(os.path.join(static, BUNDLE, WORKER)):
        folder = SOURCES
    return url_for("static", filename=f"{folder}/{WORKER}")


def page_scripts(entry: str) -> tuple[str, list[str]]:
    """(URL of the page's entry script, URLs of every module it imports)."""
    static = current_app.static_folder
    assert static is not None  # create_app always gives the app its static folder
    folder, stamp = _bundle_or_sources(entry)
    imports = module_closure(os.path.join(static, folder), entry, stamp)
    return (
        url_for("static", filename=f"{folder}/{entry}"),
        [url_for("static", filename=f"{folder}/{m}") for m in imports],
    )
