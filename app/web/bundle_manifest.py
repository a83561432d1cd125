"""What the esbuild bundle in static/dist was built from: a digest of the page's source modules,
written by the front-end build (scripts/build_frontend.py) into static/dist/manifest.json.
The server sends the bundle only while the sources still hash the same; file dates would not
do, as an installed package's are arbitrary.

Standard library only: the build loads this file by path, where Flask may not be installed."""

from __future__ import annotations

import hashlib
import json
import os

MANIFEST = "manifest.json"


def source_files(js_dir: str) -> list[str]:
    """Every .js file under `js_dir` (what the package carries), as sorted relative POSIX paths."""
    found: list[str] = []
    for dirpath, _dirs, files in os.walk(js_dir):
        rel = os.path.relpath(dirpath, js_dir)
        found.extend(os.path.normpath(os.path.join(rel, n)).replace(os.sep, "/") for n in files if n.endswith(".js"))
    return sorted(found)


def files_digest(folder: str, names: list[str]) -> str:
    """sha256 over the names and contents of `names` (relative to `folder`)."""
    h = hashlib.sha256()
    for name in names:
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def sources_digest(js_dir: str) -> str:
    return files_digest(js_dir, source_files(js_dir))


def read_manifest(dist_dir: str) -> dict | None:
    try:
        with open(os.path.join(dist_dir, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None
