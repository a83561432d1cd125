"""First view (issue 10): time from navigation to a first view a person can read — node labels
at least 11 CSS px on screen, the page ready — ours and Netron's, in one run, on the cold path:
a fresh `onnx-studio serve` per model, the model uploaded through the API just before, a fresh
browser context (no cache). Then the same page again (server warm, browser still fresh).
Compared on page clocks (navigation start to the first readable view, as each page's own
performance.now() says), which neither Playwright's polling nor Netron's late `load` event
(its telemetry) blur; walls are printed beside them.

  .venv/bin/pip install -r bench/requirements.txt
  .venv/bin/python bench/first_view.py [--models NAME ...] [--runs 3] [--no-netron]

Models: the onnx wheel's real architectures (backend/test/data/light: Caffe2 conversions,
flat), flat exports (torch-style BERT with names and metadata stripped), a BERT with name
scopes, a 30k-node LLaMA-style export, a model whose nodes sit almost all inside If branches;
and bench/corpus's torch exports (resnet50, bert_base, llama_deep) when make_corpus.py made them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_models import CHROMIUM_ARGS, CORPUS, free_port, wait_http  # noqa: E402
from tests.browser.browser_pages import LABEL_SIZES  # noqa: E402
from tests.browser.scale_models import bert_like, llama_like  # noqa: E402

OUT = CORPUS / "first_view"
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
VIEWPORT = {"width": 1440, "height": 900}
READABLE_PX = 11


def flat(model: onnx.ModelProto) -> onnx.ModelProto:
    """No scope information: node names and metadata stripped (as PaddlePaddle/TF exports)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for node in model.graph.node:
        node.name = ""
        del node.metadata_props[:]
    return model


def if_heavy(branch_nodes: int = 340) -> onnx.ModelProto:
    """A voice-activity-style model: a few main-graph nodes, almost all of them inside the
    two branches of an If (Conv/Relu chains)."""

    def branch(tag: str) -> onnx.GraphProto:
        nodes, inits, x = [], [], "x"
        for i in range(branch_nodes // 2):
            w = f"{tag}_w{i}"
            inits.append(helper.make_tensor(w, TensorProto.FLOAT, [4, 4, 3], [0.01] * 48))
            nodes.append(helper.make_node("Conv", [x, w], [f"{tag}_c{i}"], pads=[1, 1], name=f"{tag}/conv{i}"))
            nodes.append(helper.make_node("Relu", [f"{tag}_c{i}"], [f"{tag}_r{i}"], name=f"{tag}/relu{i}"))
            x = f"{tag}_r{i}"
        nodes.append(helper.make_node("Identity", [x], [f"{tag}_out"]))
        out = helper.make_tensor_value_info(f"{tag}_out", TensorProto.FLOAT, [1, 4, 16])
        return helper.make_graph(nodes, tag, [], [out], initializer=inits)

    main = [
        helper.make_node("ReduceMean", ["x"], ["m"], keepdims=0, name="energy"),
        helper.make_node("Greater", ["m", "thr"], ["speech"], name="is_speech"),
        helper.make_node("If", ["speech"], ["y"], then_branch=branch("speech"), else_branch=branch("silence")),
    ]
    g = helper.make_graph(
        main,
        "vad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16])],
        initializer=[helper.make_tensor("thr", TensorProto.FLOAT, [], [0.5])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def corpus() -> dict[str, Path]:
    """name -> model file; generated models are written once under bench/corpus/first_view."""
    OUT.mkdir(parents=True, exist_ok=True)
    models = {p.stem.removeprefix("light_"): p for p in sorted(LIGHT.glob("light_*.onnx"))}
    made = {
        "bert_flat": lambda: flat(bert_like(12)),
        "bert_scoped": lambda: bert_like(12),
        "llama_30k": lambda: llama_like(320),
        "if_vad": if_heavy,
    }
    for name, make in made.items():
        path = OUT / f"{name}.onnx"
        if not path.exists():
            onnx.save(make(), path)
        models[name] = path
    for name in ("resnet50", "bert_base", "llama_deep"):
        path = CORPUS / f"{name}.onnx"
        if path.exists():
            models[f"torch_{name}"] = path
            flat_path = OUT / f"torch_{name}_flat.onnx"
            if name != "llama_deep" and not flat_path.exists():
                onnx.save(flat(onnx.load(path)), flat_path)
            if flat_path.exists():
                models[f"torch_{name}_flat"] = flat_path
    return models


class Server:
    """A fresh `onnx-studio serve` with an empty data folder."""

    def __init__(self) -> None:
        self.port = free_port()
        self.data = tempfile.mkdtemp()
        self.proc = subprocess.Popen(
            [str(ROOT / ".venv/bin/onnx-studio"), "serve", "--port", str(self.port), "--data-dir", self.data],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        wait_http(self.base + "/api/models")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def upload(server: Server, path: Path) -> str:
    """Store the model through the API with curl, streamed from the file (Playwright's request
    API holds the body in memory and took minutes on a 415 MB model)."""
    out = subprocess.run(
        ["curl", "-s", "-w", "\n%{http_code}", "-F", f"file=@{path}", f"{server.base}/api/models"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    body, _, status = out.rpartition("\n")
    assert status == "201", body
    return json.loads(body)["id"]


# Both pages tell the bench they are done with a console message rather than being polled:
# Playwright's selector polling runs its injected script on the page's thread every frame
# (10-20 ms of a 0.3 s first view in a CPU profile), while the page is loading.
DONE = "bench:done"
OURS_DONE = f"""
new PerformanceObserver((list, seen) => {{
  if (list.getEntries().some((m) => m.name === 'studio:ready')) {{ seen.disconnect(); console.debug('{DONE}'); }}
}}).observe({{type: 'mark'}});
"""


def readable_view(browser, url: str, timeout: float) -> dict:
    """Navigation to a ready page with its labels readable, in a fresh context."""
    ctx = browser.new_context(viewport=VIEWPORT)
    ctx.add_init_script(OURS_DONE)
    page = ctx.new_page()
    try:
        t0 = time.perf_counter()
        with page.expect_console_message(lambda m: m.text == DONE, timeout=timeout * 1000):
            page.goto(url, wait_until="commit")
        wall = time.perf_counter() - t0
        assert page.locator("#graph").get_attribute("data-state") == "ready"
        sizes = page.evaluate(LABEL_SIZES)
        ready = page.evaluate("() => (performance.getEntriesByName('studio:ready')[0] || {}).startTime") or 0
        return {
            "wall": wall,
            "page": ready / 1000,
            "labels": len(sizes),
            "smallest_px": round(min(sizes), 1) if sizes else None,
            "readable": bool(sizes) and min(sizes) >= READABLE_PX,
        }
    finally:
        ctx.close()


# Netron's page clock at the moment its first graph node is in the page (`drawn`), and at the
# frame that paints it (`painted`: the next animation frame, then a message after that frame's
# rendering; the same test ours uses for `studio:ready`, widgets/dom.js painted()). Recorded on
# <html> because Netron's page refuses Playwright's evaluate.
NETRON_DRAWN = """
new MutationObserver((_, seen) => {
  if (document.querySelector('body.default #origin g.node[transform]')) {
    const root = document.documentElement;
    root.setAttribute('data-drawn-at', String(performance.now()));
    seen.disconnect();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        root.setAttribute('data-painted-at', String(performance.now()));
        console.debug('DONE');
      };
      channel.port2.postMessage(null);
    });
  }
}).observe(document, {subtree: true, childList: true, attributes: true});
""".replace("DONE", DONE)


def netron_view(browser, path: Path, timeout: float) -> dict | None:
    """`netron FILE` opened as a returning user (its consent cookie set: no consent screen, and
    no bench click inside the measure), a fresh context; None when it did not draw in time."""
    port = free_port()
    proc = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "netron"), "--port", str(port), str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ctx = browser.new_context(viewport=VIEWPORT)
    try:
        wait_http(f"http://localhost:{port}/")
        ctx.add_cookies(
            [{"name": "consent", "value": str(int(time.time() * 1000)), "url": f"http://localhost:{port}/"}]
        )
        ctx.add_init_script(NETRON_DRAWN)
        page = ctx.new_page()
        t0 = time.perf_counter()
        with page.expect_console_message(lambda m: m.text == DONE, timeout=timeout * 1000):
            page.goto(f"http://localhost:{port}/", wait_until="commit")
        wall = time.perf_counter() - t0
        html = page.locator("html")
        return {
            "wall": wall,
            "drawn": float(html.get_attribute("data-drawn-at") or 0) / 1000,
            "page": float(html.get_attribute("data-painted-at") or 0) / 1000,
        }
    except Exception:
        return None
    finally:
        ctx.close()
        proc.terminate()
        proc.wait(10)


def measure(browser, path: Path, runs: int, timeout: float, netron: bool) -> dict:
    """Ours (cold, then warm) and Netron's, run by run in turn: a machine whose speed drifts
    during the bench (another tenant, a CPU cooling down) slows both pages alike."""
    row: dict = {"model": path.stem, "nodes": len(onnx.load(path, load_external_data=False).graph.node)}
    cold, warm, views = [], [], []
    for k in range(runs):
        print(f"  {path.stem}: run {k + 1}", file=sys.stderr, flush=True)
        server = Server()
        try:
            page = browser.new_page()
            model_id = upload(server, path)
            page.close()
            url = f"{server.base}/models/{model_id}"
            cold.append(readable_view(browser, url, timeout))
            warm.append(readable_view(browser, url, timeout))
        finally:
            server.close()
        if netron:
            views.append(netron_view(browser, path, timeout))
    row["cold"] = statistics.median(r["wall"] for r in cold)
    row["warm"] = statistics.median(r["wall"] for r in warm)
    row["cold_page"] = statistics.median(r["page"] for r in cold)
    row["warm_page"] = statistics.median(r["page"] for r in warm)
    row["readable"] = all(r["readable"] for r in cold + warm)
    row["smallest_px"] = min((r["smallest_px"] or 0) for r in cold + warm)
    if netron:
        done = [v for v in views if v]
        if len(done) == len(views):
            row["netron"] = statistics.median(v["page"] for v in done)
            row["netron_drawn"] = statistics.median(v["drawn"] for v in done)
            row["netron_wall"] = statistics.median(v["wall"] for v in done)
        else:
            row["netron"] = None
    return row


def main() -> None:
    models = corpus()
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=list(models), choices=list(models))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--no-netron", action="store_true")
    ap.add_argument("--table", type=Path, help="print the table of a saved run (its JSON lines) and stop")
    args = ap.parse_args()
    if args.table:
        print_table([json.loads(line) for line in args.table.read_text().splitlines() if line.startswith("{")])
        return
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for name in args.models:
            row = measure(browser, models[name], args.runs, args.timeout, not args.no_netron)
            rows.append(row)
            print(json.dumps(row), flush=True)
        browser.close()
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    """Page clocks (navigation start to the first readable view) compared; walls in brackets."""
    print(
        "\n| model | nodes | ours cold: page (wall) | ours warm: page (wall) | smallest label | Netron: painted, page (wall)"
        " | Netron: in the DOM | Netron ÷ ours cold | Netron ÷ ours warm | Netron in the DOM ÷ ours cold |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        netron = r.get("netron")
        cold = f"{netron / r['cold_page']:.1f}×" if netron else "—"
        warm = f"{netron / r['warm_page']:.1f}×" if netron and r.get("warm_page") else "—"
        shown = f"{netron:.2f} s ({r['netron_wall']:.2f} s)" if netron else "did not finish"
        # runs saved before the bench took Netron's painted frame have only its DOM time
        drawn = f"{r['netron_drawn']:.2f} s" if r.get("netron_drawn") else "—"
        drawn_cold = f"{r['netron_drawn'] / r['cold_page']:.1f}×" if r.get("netron_drawn") else "—"
        print(
            f"| {r['model']} | {r['nodes']:,} | {r['cold_page']:.2f} s ({r['cold']:.2f} s)"
            f" | {r.get('warm_page', 0):.2f} s ({r['warm']:.2f} s)"
            f" | {r['smallest_px']} px{'' if r['readable'] else ' (not readable)'}"
            f" | {shown} | {drawn} | {cold} | {warm} | {drawn_cold} |"
        )


if __name__ == "__main__":
    main()
