"""Big-model benchmark (issue 5): server graph JSON vs bare onnx.load, browser time to first
drawn graph and to fully expanded, time to expand one group, peak server RSS vs file size, and
the same models in Netron, all in one run.

  .venv/bin/pip install -r bench/requirements.txt
  .venv/bin/python bench/make_corpus.py            # once: writes bench/corpus/
  .venv/bin/python bench/bench_models.py [--models resnet50 ...] [--no-netron] [--timeout 300]

Page hooks used: #graph[data-state=ready]; collapsed groups are [data-group-id][data-collapsed=true];
the toolbar's #expand-all expands every group and sets #graph[data-expanded=all] when drawn.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import onnx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.browser.conftest import CHROMIUM_ARGS  # noqa: E402  (the browser tests' launch flags)

CORPUS = ROOT / "bench" / "corpus"
MODELS = {
    "resnet50": CORPUS / "resnet50.onnx",
    "bert_base": CORPUS / "bert_base.onnx",
    "gpt2_medium": CORPUS / "gpt2_medium.onnx",
    "llama_deep": CORPUS / "llama_deep.onnx",
    "big_external": CORPUS / "big_external" / "big_external.onnx",
}


def m_inits(path: Path) -> list[str]:
    """Names of the biggest initializers (URL-quoted), for a preview request."""
    from urllib.parse import quote

    m = onnx.load(path, load_external_data=False)
    big = sorted(m.graph.initializer, key=lambda t: -int(__import__("numpy").prod(t.dims)))
    return [quote(t.name, safe="") for t in big[:1]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float = 60) -> None:
    end = time.time() + timeout
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except Exception:
            time.sleep(0.1)
    raise TimeoutError(url)


def model_size(path: Path) -> int:
    size = path.stat().st_size
    m = onnx.load(path, load_external_data=False)
    locs = {
        e.value for t in onnx.external_data_helper._get_all_tensors(m) for e in t.external_data if e.key == "location"
    }
    return size + sum((path.parent / loc).stat().st_size for loc in locs)


def floor_load(path: Path) -> float:
    code = f"import time,onnx;t=time.perf_counter();onnx.load({str(path)!r});print(time.perf_counter()-t)"
    return float(subprocess.check_output([sys.executable, "-c", code]).decode().split()[-1])


BUILD = """
import gc, json, sys, time
import onnx, orjson
from app.onnx_io.load import parse_model_file
from app.views import graph_view
path, rounds = sys.argv[1], int(sys.argv[2])
external = any(t.data_location == onnx.TensorProto.EXTERNAL for t in onnx.load(path, load_external_data=False).graph.initializer)
load, bare, build = [], [], []
for _ in range(rounds):  # interleaved, so all see the same machine
    if not external:  # with external data, onnx.load reads every weight: not a floor for us
        t = time.perf_counter(); m = onnx.load(path); load.append(time.perf_counter() - t)
        del m; gc.collect()
    t = time.perf_counter(); m = onnx.load(path, load_external_data=False); bare.append(time.perf_counter() - t)
    del m; gc.collect()
    t = time.perf_counter(); m = parse_model_file(path); orjson.dumps(graph_view(m, "")); build.append(time.perf_counter() - t)
    del m; gc.collect()
med = lambda xs: sorted(xs)[len(xs) // 2]
print(json.dumps({"load": med(load or bare), "structure": med(bare), "build": med(build)}))
"""


def cold_build(path: Path, rounds: int = 5) -> dict:
    """Median seconds of bare onnx.load (load: as users call it; structure: with
    load_external_data=False, which skips onnx's walk over every tensor) and of our whole graph
    JSON (parse the file, build, serialise) without any cache, alternating in one fresh process:
    the server's real cost for a graph. With external data, load is the structure-only load."""
    out = subprocess.check_output([sys.executable, "-c", BUILD, str(path), str(rounds)], cwd=ROOT)
    return json.loads(out.decode().splitlines()[-1])


class Studio:
    """`onnx-studio MODEL --no-browser` in its own process, so its RSS is measurable."""

    def __init__(self, path: Path):
        self.port = free_port()
        self.data = tempfile.mkdtemp()
        self.proc = subprocess.Popen(
            [
                str(ROOT / ".venv" / "bin" / "onnx-studio"),
                str(path),
                "--no-browser",
                "--port",
                str(self.port),
                "--data-dir",
                self.data,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.proc.stdout.readline()
        self.url = line.split(" on ")[1].split()[0]
        self.base = self.url.split("/models/")[0]
        self.model_id = self.url.split("/models/")[1]
        self.ps = psutil.Process(self.proc.pid)
        self.peak = 0

    def sample(self) -> None:
        with contextlib.suppress(psutil.Error):
            self.peak = max(self.peak, self.ps.memory_info().rss)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.data, ignore_errors=True)


def timed_get(url: str, studio: Studio) -> tuple[float, int]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        body = r.read()
    studio.sample()
    return time.perf_counter() - t0, len(body)


MARKS = """() => Object.fromEntries(performance.getEntriesByType('mark')
  .filter((m) => m.name.startsWith('studio:')).map((m) => [m.name.slice(7), Math.round(m.startTime)]))"""


def first_views(browser, studio: Studio, timeout: float, runs: int) -> dict:
    """Navigation to the first drawn graph, in a fresh browser context each time (nothing
    cached). first_view: the page's own clock, navigation start to its "ready" mark (set once
    the drawing is painted); first_view_wall: Playwright's goto until it sees #graph ready
    (adds the tool's own round trips). The median run of each, and the page's marks for it."""
    times = []
    for _ in range(runs):
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(studio.url)
        page.wait_for_selector("#graph[data-state=ready]", timeout=timeout * 1000)
        wall = time.perf_counter() - t0
        marks = page.evaluate(MARKS)
        times.append((marks.get("ready", wall * 1000) / 1000, wall, marks))
        studio.sample()
        ctx.close()
    times.sort(key=lambda t: t[0])
    median = times[len(times) // 2]
    return {
        "first_view": median[0],
        "first_view_wall": sorted(t[1] for t in times)[len(times) // 2],
        "first_view_marks": median[2],
        "first_views": [round(t[0], 2) for t in times],
    }


def browser_times(page, studio: Studio, timeout: float) -> dict:
    out = {}
    page.goto(studio.url)
    page.wait_for_selector("#graph[data-state=ready]", timeout=timeout * 1000)
    out["boxes"] = page.locator("[data-node-id], [data-group-id]").count()
    studio.sample()
    group = page.locator("[data-group-id][data-collapsed=true]").first
    if group.count():
        t0 = time.perf_counter()
        group.dblclick()
        page.wait_for_function("document.querySelector('#graph').dataset.state === 'ready'", timeout=timeout * 1000)
        out["expand_one"] = time.perf_counter() - t0
    if page.locator("#expand-all:not([disabled])").count():
        t0 = time.perf_counter()
        page.click("#expand-all")
        page.wait_for_selector("#graph[data-expanded=all][data-state=ready]", timeout=timeout * 1000)
        out["expanded_all"] = time.perf_counter() - t0
        out["boxes_expanded"] = page.locator("[data-node-id]").count()
    studio.sample()
    return out


def netron_time(page, path: Path, timeout: float) -> float | None:
    port = free_port()
    proc = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "netron"), "--port", str(port), str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_http(f"http://localhost:{port}/")
        t0 = time.perf_counter()
        page.goto(f"http://localhost:{port}/")
        accept = page.get_by_role("button", name="Accept")  # Netron's first-run consent screen
        graph = page.locator("body.default #origin g.node[transform]")
        while time.perf_counter() - t0 < timeout:
            if graph.count():
                return time.perf_counter() - t0
            if accept.count() and accept.is_visible():
                accept.click()
            page.wait_for_timeout(50)
        return None
    except Exception:
        return None
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    ap.add_argument("--no-netron", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--server-only", action="store_true", help="skip the browsers: server times and memory only")
    ap.add_argument("--runs", type=int, default=3, help="first views per model (the median is reported)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for name in args.models:
            path = MODELS[name]
            if not path.exists():
                print(f"skip {name}: {path} missing (run bench/make_corpus.py)")
                continue
            m = onnx.load(path, load_external_data=False)
            row = {"model": name, "nodes": len(m.graph.node), "bytes": model_size(path), "onnx_load": floor_load(path)}
            if name == "big_external":
                # the floor for weights we never load: the graph alone (onnx.load with external data is ~2.5 GiB of reading)
                row["onnx_load_with_data"] = row["onnx_load"]
            del m
            row.update({f"cold_{k}": v for k, v in cold_build(path).items()})
            studio = Studio(path)
            try:
                row["graph_json"], row["json_bytes"] = timed_get(
                    f"{studio.base}/api/models/{studio.model_id}/graph", studio
                )
                row["summary"], _ = timed_get(f"{studio.base}/api/models/{studio.model_id}", studio)
                row["validation"], _ = timed_get(f"{studio.base}/api/models/{studio.model_id}/validation", studio)
                row["types"], _ = timed_get(f"{studio.base}/api/models/{studio.model_id}/types", studio)
                first = next((t for t in m_inits(path)), None)
                if first:
                    row["preview"], _ = timed_get(
                        f"{studio.base}/api/models/{studio.model_id}/tensors/{first}?offset=1000&count=100", studio
                    )
                if not args.server_only:
                    time.sleep(2)  # the CLI's warm-up (graph JSON, checks, inferred types) settles
                    row.update(first_views(browser, studio, args.timeout, args.runs))
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    row.update(browser_times(page, studio, args.timeout))
                    page.close()
                row["peak_rss"] = studio.peak
            finally:
                studio.close()
            if not args.no_netron and not args.server_only:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                row["netron"] = netron_time(page, path, args.timeout)
                page.close()
            rows.append(row)
            print(json.dumps(row), flush=True)
        browser.close()
    print_table(rows) if not args.server_only else print_server_table(rows)


def print_server_table(rows: list[dict]) -> None:
    print(
        "\n| model | nodes | size | onnx.load | graph JSON built cold (×load, ×structure-only load) | graph JSON served | summary | validation | types | preview | peak RSS (×size) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['model']} | {r['nodes']:,} | {r['bytes'] / 2**20:,.0f} MiB | {r['cold_load']:.2f} s | {cold(r)} "
            f"| {r['graph_json']:.2f} s | {r['summary']:.2f} s | {r['validation']:.2f} s | {r['types']:.2f} s "
            f"| {r.get('preview', 0):.2f} s | {r['peak_rss'] / 2**20:,.0f} MiB ({r['peak_rss'] / r['bytes']:.2f}×) |"
        )


def cold(r: dict) -> str:
    return f"{r['cold_build']:.2f} s ({r['cold_build'] / r['cold_load']:.2f}×, {r['cold_build'] / r['cold_structure']:.2f}×)"


def print_table(rows: list[dict]) -> None:
    def s(v):
        return "—" if v is None else f"{v:.2f} s"

    print(
        "\n| model | nodes | size | onnx.load | graph JSON built cold (×load, ×structure-only load) | first view: page (wall) | expand one | all expanded | peak RSS (×size) | Netron wall (×ours wall) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        netron = r.get("netron")
        nr = f"{s(netron)} ({netron / r['first_view_wall']:.1f}×)" if netron else "did not finish in limit"
        print(
            f"| {r['model']} | {r['nodes']:,} | {r['bytes'] / 2**20:,.0f} MiB | {s(r['cold_load'])} | {cold(r)} "
            f"| {s(r.get('first_view'))} ({s(r.get('first_view_wall'))}) | {s(r.get('expand_one'))} | {s(r.get('expanded_all'))} "
            f"| {r['peak_rss'] / 2**20:,.0f} MiB ({r['peak_rss'] / r['bytes']:.2f}×) | {nr} |"
        )
    print("\nFirst view, page marks of the median run (ms from navigation):")
    for r in rows:
        if r.get("first_view_marks"):
            print(
                f"- {r['model']} (runs {r['first_views']}): "
                + ", ".join(f"{k} {v}" for k, v in r["first_view_marks"].items())
            )


if __name__ == "__main__":
    main()
