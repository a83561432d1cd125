"""Serving a team (issue 14): requests per second and p95 latency of the model summary, the
graph JSON (cached) and a small edit, with the built-in server (1 process) and gunicorn with 4
workers, on loopback, in one run. CLIENTS threads each keep asking for SECONDS; each client
edits a model of its own (edits of one model from several clients would mostly be refused
as stale). The load comes from this process's threads, on the same 2 cores as the server:
compare the rows with each other, not with another machine.

  .venv/bin/python bench/serve_throughput.py [--seconds 5] [--clients 8] [--workers 1 4]
      [--backends sqlite postgresql+s3]

`postgresql+s3`: the index in a PostgreSQL server and the blobs in moto_server (the tests' own,
tests/pg_server.py and tests/s3_server.py) on the same machine. moto is a Python S3 on the same
2 cores: its rows show what the app adds per request on those back ends, not what a real S3 costs.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_models import free_port, wait_http  # noqa: E402
from tests.browser.scale_models import bert_like  # noqa: E402
from tests.test_serve_workers import multipart  # noqa: E402


def request(port: int, method: str, path: str, body: bytes | None = None, ctype: str = "application/json"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": ctype} if body is not None else {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def scenario(port: int, clients: int, seconds: float, make_request) -> dict:
    latencies: list[float] = []
    failures = 0
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client(k: int) -> None:
        nonlocal failures
        n = 0
        while time.perf_counter() < deadline:
            n += 1
            t = time.perf_counter()
            status = make_request(k, n)
            dt = time.perf_counter() - t
            with lock:
                latencies.append(dt)
                failures += status >= 400

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p95_ms": 1000 * latencies[int(0.95 * (len(latencies) - 1))],
        "median_ms": 1000 * statistics.median(latencies),
        "failures": failures,
    }


def measure(workers: int, clients: int, seconds: float, back_end: list[str]) -> dict:
    port = free_port()
    data_dir = tempfile.mkdtemp(prefix="serve-bench-")
    args = ["serve", "--workers", str(workers), "--threads", "8", "--port", str(port), "--data-dir", data_dir]
    args += back_end
    proc = subprocess.Popen(
        [str(ROOT / ".venv/bin/onnx-studio"), *args, "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz")
        model = bert_like(2).SerializeToString()  # a 2-layer BERT-style graph: ~200 nodes
        ids = []
        for k in range(clients):
            body, ctype = multipart(model, f"m{k}.onnx")
            ids.append(json.loads(request(port, "POST", "/api/models", body, ctype)[1])["id"])
        for mid in ids:  # caches warm, as for a model people have opened
            request(port, "GET", f"/api/models/{mid}/graph?path=")
        heads = dict.fromkeys(ids, 0)

        def edit(k: int, n: int) -> int:
            mid = ids[k]
            ops = [{"op": "set_model_field", "field": "doc_string", "value": f"edit {n}"}]
            status, body = request(
                port, "POST", f"/api/models/{mid}/edits", json.dumps({"base": heads[mid], "ops": ops}).encode()
            )
            if status == 200:
                heads[mid] = json.loads(body)["revision"]
            return status

        return {
            "workers": workers,
            "summary": scenario(port, clients, seconds, lambda k, n: request(port, "GET", f"/api/models/{ids[k]}")[0]),
            "graph": scenario(
                port, clients, seconds, lambda k, n: request(port, "GET", f"/api/models/{ids[k]}/graph?path=")[0]
            ),
            "edit": scenario(port, clients, seconds, edit),
        }
    finally:
        proc.terminate()
        proc.wait(60)


STORES = {"sqlite": "SQLite + folder", "postgresql+s3": "PostgreSQL + S3 (moto)"}


@contextlib.contextmanager
def back_end(name: str) -> Iterator[Callable[[], list[str]]]:
    """The serve flags of a fresh store on that back end, one per call (its servers up meanwhile)."""
    if name == "sqlite":
        yield lambda: []
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from pg_server import PostgresServer
    from s3_server import BUCKET, s3_endpoint

    pg = PostgresServer()
    s3 = s3_endpoint()
    next(s3)
    try:
        yield lambda: [
            "--database-url",
            pg.database("bench_" + secrets.token_hex(4)),
            "--blob-url",
            f"s3://{BUCKET}/{secrets.token_hex(4)}",
        ]
    finally:
        s3.close()
        pg.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 4])
    ap.add_argument("--backends", nargs="*", choices=sorted(STORES), default=["sqlite"])
    args = ap.parse_args()
    rows = []
    for name in args.backends:
        with back_end(name) as flags:
            for w in args.workers:
                print(f"{name}, {w} worker(s): measuring", file=sys.stderr, flush=True)
                row = {**measure(w, args.clients, args.seconds, flags()), "store": STORES[name]}
                print(json.dumps(row), flush=True)
                rows.append(row)
    print("\n| workers | store | summary: req/s (p95) | graph JSON, cached: req/s (p95) | small edit: req/s (p95) |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for r in rows:
        cells = [
            f"{r[k]['rps']:.0f} ({r[k]['p95_ms']:.0f} ms)"
            + (f", {r[k]['failures']} failed" if r[k]["failures"] else "")
            for k in ("summary", "graph", "edit")
        ]
        server = "built-in server" if r["workers"] == 1 else "gunicorn"
        print(f"| {r['workers']} ({server}) | {r['store']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
