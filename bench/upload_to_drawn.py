"""Upload-to-graph-drawn time in headless Chromium for the largest models in the onnx wheel's
test data, against floors measured in the same run: bare onnx.load of the file, and our server's
graph JSON time.

Run by hand:  .venv/bin/python bench/upload_to_drawn.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from app import create_app
from tests.browser.conftest import CHROMIUM_ARGS

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"


def largest_models(n: int) -> list[Path]:
    models = sorted(ONNX_DATA.rglob("*.onnx"), key=lambda p: len(onnx.load(p, load_external_data=False).graph.node))
    return models[-n:]


def serve(data_dir: str):
    import logging

    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # keep the table readable
    server = make_server("127.0.0.1", 0, create_app({"DATA_DIR": data_dir}), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", type=int, default=3)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    server = serve(tempfile.mkdtemp())
    base = f"http://127.0.0.1:{server.port}"
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        for path in largest_models(args.models):
            nodes = len(onnx.load(path).graph.node)
            load_t, json_t, ui_t = [], [], []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                onnx.load(path)
                load_t.append(time.perf_counter() - t0)
                page.goto(base + "/")
                t0 = time.perf_counter()
                page.set_input_files("input[type=file]", str(path))
                page.wait_for_url("**/models/**")
                page.wait_for_selector("#graph[data-state=ready]", timeout=120_000)
                ui_t.append(time.perf_counter() - t0)
                mid = page.url.split("/models/")[1].split("#")[0]
                t0 = time.perf_counter()
                page.request.get(f"{base}/api/models/{mid}/graph")
                json_t.append(time.perf_counter() - t0)
                drawn = page.locator("[data-node-id]").count()
                assert drawn == nodes, (path, drawn, nodes)
            rows.append(
                (
                    path.relative_to(ONNX_DATA),
                    nodes,
                    statistics.median(load_t),
                    statistics.median(json_t),
                    statistics.median(ui_t),
                )
            )
        browser.close()
    server.shutdown()
    print(f"{'model':45} {'nodes':>6} {'onnx.load':>10} {'graph JSON':>11} {'upload→drawn':>13} {'drawn/load':>11}")
    for name, nodes, lt, jt, ut in rows:
        print(f"{name!s:45} {nodes:6d} {lt * 1000:8.1f}ms {jt * 1000:9.1f}ms {ut * 1000:11.0f}ms {ut / lt:10.0f}x")


if __name__ == "__main__":
    main()
