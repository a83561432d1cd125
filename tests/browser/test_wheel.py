"""The packaged app draws: the sdist built from the repo (node present), the wheel built from that
sdist with no node on PATH, installed in a fresh venv and run from outside the repo.

The sdist is built from a copy of the repo's files (what git would check out, the front end not
built) so the build runs the front-end build for real and the tests sharing the repo's static
folder meanwhile are left alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from .browser_pages import wait_ready

pytestmark = [pytest.mark.wheel, pytest.mark.xdist_group("wheel")]

REPO = Path(__file__).resolve().parents[2]
# what the page loads, besides the Python package
PACKAGED = [
    "app/templates/model.html",
    "app/static/css/app.css",
    "app/static/js/pages/graph-prefetch.js",
    "app/static/js/pipeline/layout-worker.js",
    "app/static/dist/pipeline/layout-worker.js",
    "app/static/dist/manifest.json",
    "app/static/dist/pages/model-page.js",
    "app/static/vendor/dagre/dagre.min.js",
    "app/static/vendor/marked/marked.esm.js",
    "app/static/vendor/dompurify/purify.es.mjs",
]
VENDOR_URLS = ["/vendor/dagre/dagre.min.js", "/vendor/marked/marked.esm.js", "/vendor/dompurify/purify.es.mjs"]


def _run(cmd: list, env: dict, cwd: Path | None = None, timeout: float = 300) -> None:
    r = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def _env(path: str) -> dict:
    """This environment with `path` for PATH, and no PYTHONPATH pointing back at the repo."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = path
    return env


def _path_without_node() -> str:
    tools = ("node", "npm", "npx")
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not any(os.path.exists(os.path.join(d, t)) for t in tools))


def _checkout_copy(dest: Path) -> None:
    """The repo's files as a clone would have them (tracked or not ignored), with its node_modules."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        src = REPO / name
        if src.is_file() and not src.is_symlink():  # a deleted file still listed; node_modules as a link
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    (dest / "node_modules").symlink_to(REPO / "node_modules", target_is_directory=True)


def _model(path: Path) -> None:
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Sigmoid", ["r"], ["y"], name="sigmoid")]
    model = h.make_model(h.make_graph(nodes, "g", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    onnx.save(model, path)


def test_wheel_built_from_the_sdist_without_node_serves_a_page_that_draws(page, tmp_path):
    if shutil.which("node") is None or not (REPO / "node_modules").is_dir():
        pytest.fail("the wheel test builds the front end: it needs node on PATH and node_modules (make node-deps)")
    no_node = _path_without_node()
    assert shutil.which("node", path=no_node) is None and shutil.which("npm", path=no_node) is None

    # sdist from a checkout-like copy, node on PATH: setup.py builds the front end into it
    src, out = tmp_path / "src", tmp_path / "out"
    _checkout_copy(src)
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", out, src], _env(os.environ["PATH"]))
    (sdist,) = out.glob("onnx_studio-*.tar.gz")

    # wheel from the sdist, no node anywhere on PATH
    with tarfile.open(sdist) as tar:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python < 3.11.4 lacks it
        tar.extractall(tmp_path / "sdist", **safe)
    (unpacked,) = (tmp_path / "sdist").iterdir()
    assert not (unpacked / "node_modules").exists()
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", out, unpacked], _env(no_node))
    (wheel,) = out.glob("onnx_studio-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert set(PACKAGED) <= names, sorted(set(PACKAGED) - names)
    assert len([n for n in names if n.startswith("app/static/js/") and n.endswith(".js")]) > 20  # every layer
    assert not any("node_modules" in n for n in names)

    # a fresh venv, the wheel installed (its dependencies from the index or pip's cache)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], _env(no_node))
    _run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel], _env(no_node), timeout=600)

    # run from outside the repo, node still off PATH
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _model(elsewhere / "model.onnx")
    env = _env(no_node)
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import app; print(app.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(venv)), where  # the installed package, not the repo
    with open(tmp_path / "server.log", "w") as log:
        proc = subprocess.Popen(
            [
                venv / "bin" / "onnx-studio",
                "model.onnx",
                "--no-browser",
                "--port",
                "0",
                "--data-dir",
                tmp_path / "data",
            ],
            cwd=elsewhere,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    watchdog = threading.Timer(120, proc.kill)  # a server that never says where it listens
    watchdog.start()
    try:
        line = proc.stdout.readline()
        watchdog.cancel()
        assert " on http" in line, f"{line!r}\n{(tmp_path / 'server.log').read_text()[-3000:]}"
        url = line.split(" on ")[1].split()[0]

        responses: dict[str, int] = {}
        page.context.on("response", lambda r: responses.setdefault(r.url.split("?")[0], r.status))
        page.goto(url + "#path=&node=n0")  # a node selected: its operator doc renders Markdown
        wait_ready(page)
        assert page.locator("#graph [data-node-id]").count() >= 1
        # the doc shows as plain text at once, then as Markdown once marked and DOMPurify load
        page.locator("#sidebar .schema-doc[data-md=ready]").wait_for()
        # the layout worker's own requests may reach the context's events late, or not at all:
        # the drawing above proves the worker loaded dagre, and the server answers each of them
        direct = {u: page.request.get(url.split("/models/")[0] + u).status for u in VENDOR_URLS}
    finally:
        watchdog.cancel()
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()

    origin = url.split("/models/")[0]
    served = {u.removeprefix(origin): s for u, s in responses.items() if u.startswith(origin)}
    assert served.get("/static/dist/pages/model-page.js") == 200, served  # the bundle, not the modules
    modules = {u for u in served if u.startswith("/static/js/")}
    # the classic scripts a page names itself (<head>'s, the layout worker) come as they are
    classic = {
        "/static/js/pages/graph-prefetch.js",
        "/static/js/pages/scheme-choice.js",
        "/static/js/pipeline/layout-worker.js",
    }
    assert modules <= classic, served
    assert direct == dict.fromkeys(VENDOR_URLS, 200), direct
    assert all(served.get(u) == 200 for u in VENDOR_URLS[1:]), served  # the page's own: marked, DOMPurify
    assert not {u: s for u, s in served.items() if s >= 400}, served
