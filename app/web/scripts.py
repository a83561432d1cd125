"""Which scripts a page loads: the esbuild bundle of its entry module when one is built and
newer than every source module (`make` builds it into static/dist: a few requests instead of
~45, which a threaded Python server answers one at a time), else the ES modules themselves.
Either way every module the entry imports statically is named, for the page to preload."""

from __future__ import annotations

import os
import posixpath
import re
from functools import lru_cache

from flask import current_app, url_for

SOURCES = "js"
BUNDLE = "dist"

# a static import of a module of ours: a relative path ("./x.js", "../layer/x.js")
_STATIC_IMPORT = re.compile(r'^\s*(?:(?:import|export)\b[^;]*?\bfrom|import)\s*"(\.{1,2}/[\w./-]+\.js)"', re.M)


@lru_cache(maxsize=16)
def module_closure(js_dir: str, entry: str, stamp: float = 0.0) -> tuple[str, ...]:
    """Every module `entry` imports statically, directly or not (dynamic import()s stay lazy),
    as paths relative to `js_dir`. `stamp` (the entry's mtime) keys the cache: a rebuilt bundle
    has new chunk names."""
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


def _newest_source(folder: str) -> float:
    """The newest mtime of a .js file anywhere under `folder`."""
    newest = 0.0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(".js"):
                newest = max(newest, os.stat(os.path.join(dirpath, name)).st_mtime)
    return newest


def _bundle_stamp(static: str, entry: str) -> float | None:
    """The bundle's mtime when it exists and no source module is newer, else None."""
    try:
        built = os.stat(os.path.join(static, BUNDLE, entry)).st_mtime
    except OSError:
        return None
    return built if built >= _newest_source(os.path.join(static, SOURCES)) else None


def page_scripts(entry: str) -> tuple[str, list[str]]:
    """(URL of the page's entry script, URLs of every module it imports)."""
    static = current_app.static_folder
    assert static is not None  # create_app always gives the app its static folder
    folder = SOURCES
    stamp = _bundle_stamp(static, entry) if current_app.config.get("BUNDLE", True) else None
    if stamp is not None:
        folder = BUNDLE
    else:
        stamp = 0.0
    imports = module_closure(os.path.join(static, folder), entry, stamp)
    return (
        url_for("static", filename=f"{folder}/{entry}"),
        [url_for("static", filename=f"{folder}/{m}") for m in imports],
    )
