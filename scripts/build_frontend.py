"""Build the front end into the package, where an installed app finds it (gitignored output):
- app/static/dist: the pages' ES modules bundled by esbuild, with manifest.json naming the digest
  of the sources it was built from (the server sends the bundle only while they hash the same);
- app/static/vendor/<package>: the files the page loads of the libraries npm installs.
`make bundle` runs it; so does setup.py before an sdist or a wheel collects its files.

  python3 scripts/build_frontend.py            build (npm ci first when node_modules is missing)
  python3 scripts/build_frontend.py --ensure   build unless the built files match the sources
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = ("pages/model-page.js", "pages/index-page.js")
# the layout worker, a classic script: built as dist/<WORKER> with dagre's build in front of it,
# so a starting worker fetches one script instead of two in a row (app/web/scripts.py)
WORKER = "pipeline/layout-worker.js"
WORKER_DAGRE = ("@dagrejs/dagre", "dist/dagre.min.js")
# /vendor/<package>/ (app/web/__init__.py): the npm package it comes from, the files copied
VENDOR = {
    "dagre": ("@dagrejs/dagre", ("dist/dagre.min.js", "dist/dagre.min.js.map", "dist/dagre.min.js.LEGAL.txt")),
    "marked": ("marked", ("lib/marked.esm.js", "lib/marked.esm.js.map")),
    "dompurify": ("dompurify", ("dist/purify.es.mjs", "dist/purify.es.mjs.map")),
}
LICENSES = ("LICENSE", "LICENSE-MPL")  # shipped along with the code, never served


class FrontendError(RuntimeError):
    pass


def _manifest_module():
    """app/web/bundle_manifest.py, loaded by path: the build may run where Flask is missing."""
    spec = importlib.util.spec_from_file_location("bundle_manifest", ROOT / "app" / "web" / "bundle_manifest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bm = _manifest_module()


def _lock_digest(root: Path) -> str | None:
    """The vendor files come from what package-lock.json pins."""
    lock = root / "package-lock.json"
    return hashlib.sha256(lock.read_bytes()).hexdigest() if lock.is_file() else None


def _vendor_files(static: Path) -> list[Path]:
    return [static / "vendor" / name / Path(f).name for name, (_pkg, files) in VENDOR.items() for f in files]


def is_current(root: Path = ROOT) -> bool:
    """Whether the built files are there and were built from these sources and this lock file."""
    static = root / "app" / "static"
    manifest = bm.read_manifest(str(static / "dist"))
    return (
        manifest is not None
        and manifest.get("sources") == bm.sources_digest(str(static / "js"))
        and manifest.get("lock") == _lock_digest(root)
        and all((static / "dist" / e).is_file() for e in (*ENTRIES, WORKER))
        and all(f.is_file() for f in _vendor_files(static))
    )


def _need_tools(root: Path) -> Path:
    """esbuild from node_modules, running `npm ci` first when node_modules is missing."""
    esbuild = root / "node_modules" / ".bin" / "esbuild"
    if not (root / "node_modules").is_dir():
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise FrontendError(
                "app/static/dist and app/static/vendor are not built from these sources, and node/npm "
                "are not on PATH. Building from a git checkout needs node and npm (https://nodejs.org/): "
                "it runs `npm ci` and bundles the page scripts with esbuild. An sdist carries the front "
                "end built, so a wheel builds from it with no node."
            )
        print("build_frontend: npm ci", file=sys.stderr)
        _run([npm, "ci", "--no-audit", "--no-fund"], root)
    if not esbuild.exists():
        raise FrontendError(f"{esbuild} is missing: run `npm ci` (package.json lists esbuild)")
    return esbuild


def _run(cmd: list[str], root: Path) -> None:
    try:
        subprocess.run(cmd, cwd=root, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise FrontendError(f"{Path(cmd[0]).name} failed: {exc}") from exc


def _replace_dir(new: Path, old: Path) -> None:
    shutil.rmtree(old, ignore_errors=True)
    new.rename(old)


def build(root: Path = ROOT) -> None:
    esbuild = _need_tools(root)
    static = root / "app" / "static"
    js = static / "js"
    # the digest of the sources as they were before esbuild read them: a source edited during
    # the build makes the bundle stale, never the other way round
    sources = bm.sources_digest(str(js))

    # vendor files first: built beside the live folder, then swapped in
    vendor = static / ".vendor-new"
    shutil.rmtree(vendor, ignore_errors=True)
    for name, (pkg, files) in VENDOR.items():
        src = root / "node_modules" / pkg
        (vendor / name).mkdir(parents=True)
        for f in files:
            if not (src / f).is_file():
                raise FrontendError(f"{src / f} is missing: run `npm ci` (is package-lock.json current?)")
            shutil.copy2(src / f, vendor / name / Path(f).name)
        for lic in LICENSES:
            if (src / lic).is_file():
                shutil.copy2(src / lic, vendor / name / lic)
    _replace_dir(vendor, static / "vendor")

    dist = static / ".dist-new"  # same depth as dist: the source maps' relative paths hold
    shutil.rmtree(dist, ignore_errors=True)
    _run(
        [str(esbuild), *(str(js / e) for e in ENTRIES), "--bundle", "--format=esm", "--splitting", "--minify", "--sourcemap",
         "--target=es2022", f"--outbase={js}", f"--outdir={dist}", "--log-level=warning"],
        root,
    )  # fmt: skip
    _build_worker(esbuild, root, js, dist)
    outputs = sorted(p.relative_to(dist).as_posix() for p in dist.rglob("*") if p.is_file())
    manifest = {
        "sources": sources,
        "entries": list(ENTRIES),
        "bundle": bm.files_digest(str(dist), outputs),
        "lock": _lock_digest(root),
    }
    (dist / bm.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    _replace_dir(dist, static / "dist")


def _build_worker(esbuild: Path, root: Path, js: Path, dist: Path) -> None:
    """dist/<WORKER>: dagre's minified build (it defines the global `dagre`), then the worker
    minified (it imports dagre itself only where the global is missing: unbundled)."""
    pkg, file = WORKER_DAGRE
    dagre = root / "node_modules" / pkg / file
    out = dist / WORKER
    out.parent.mkdir(parents=True, exist_ok=True)
    _run(
        [str(esbuild), str(js / WORKER), "--minify", "--target=es2022", f"--outfile={out}", "--log-level=warning"], root
    )
    worker = out.read_text(encoding="utf-8")
    notice = (
        f"/* {pkg} (MIT License, shipped as app/static/vendor/dagre/LICENSE), then ONNX Studio's layout worker */\n"
    )
    out.write_text(notice + dagre.read_text(encoding="utf-8").rstrip() + ";\n" + worker, encoding="utf-8")


def ensure(root: Path = ROOT) -> bool:
    """Build unless the built files are current (as in an sdist); True when it built."""
    if is_current(root):
        return False
    build(root)
    return True


def main(argv: list[str]) -> int:
    try:
        if "--ensure" in argv:
            ensure()
        else:
            build()
    except FrontendError as exc:
        print(f"build_frontend: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
