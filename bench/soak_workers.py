"""Worker memory under sustained load (QA18 F23: +20-28 MB per gunicorn worker over 8 minutes, still
growing): `onnx-studio serve --workers N` on SQLite, CLIENTS threads uploading small models, editing
them, asking for their graphs, summaries, downloads and the models list for ROUNDS rounds of
SECONDS each; each worker's RSS (and its helper processes') sampled after every round. A worker
whose RSS levels off once its caches are full is bounded; one that grows by the same amount each
round leaks.

  .venv/bin/python bench/soak_workers.py [--rounds 8] [--seconds 60] [--clients 6] [--workers 2]
      [--malloc-arena-max N]

`--malloc-arena-max`: glibc's MALLOC_ARENA_MAX for the server (threads each get an arena of their
own by default: memory freed in one is not given to another)."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_models import free_port, wait_http  # noqa: E402
from bench.serve_throughput import request  # noqa: E402
from tests.test_serve_workers import multipart, small_model  # noqa: E402

STUDIO = ROOT / ".venv" / "bin" / "onnx-studio"


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def client_loop(
    port: int, rng: random.Random, mine: list[tuple[str, int]], deadline: float, counts: dict, lock: threading.Lock
) -> None:
    """One client's requests until the deadline; `mine` (its models and their heads) carries over
    from round to round, so the store holds the same number of models after the first round and
    a worker's growth is its own, not the store's."""
    while time.monotonic() < deadline:
        what = rng.choice(["upload", "edit", "edit", "graph", "summary", "download", "list"] if mine else ["upload"])
        if what == "upload":
            body, ctype = multipart(small_model(rng.randrange(1 << 30), width=64), f"m{id(mine)}.onnx")
            status, answer = request(port, "POST", "/api/models", body, ctype)
            if status == 201:
                mine.append((json.loads(answer)["id"], 0))
                if len(mine) > 5:  # a client keeps a few models; the rest are deleted (the collector runs)
                    old, _ = mine.pop(0)
                    request(port, "DELETE", f"/api/models/{old}")
        else:
            k = rng.randrange(len(mine))
            mid, rev = mine[k]
            if what == "edit":
                op = {"op": "set_metadata", "key": "round", "value": str(rng.random())}
                status, answer = request(
                    port, "POST", f"/api/models/{mid}/edits", json.dumps({"base": rev, "ops": [op]}).encode()
                )
                if status == 200:
                    mine[k] = (mid, json.loads(answer)["revision"])
            elif what == "graph":
                status, _ = request(port, "GET", f"/api/models/{mid}/graph")
            elif what == "summary":
                status, _ = request(port, "GET", f"/api/models/{mid}")
            elif what == "download":
                status, _ = request(port, "GET", f"/api/models/{mid}/download")
            else:
                status, _ = request(port, "GET", "/api/models")
        with lock:
            counts[status] = counts.get(status, 0) + 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--malloc-arena-max", type=int, default=None)
    args = ap.parse_args()
    port = free_port()
    env = dict(os.environ)
    if args.malloc_arena_max:
        env["MALLOC_ARENA_MAX"] = str(args.malloc_arena_max)
    with tempfile.TemporaryDirectory(prefix="soak-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as tmp:
        cmd = [str(STUDIO), "serve", "--workers", str(args.workers), "--threads", "4", "--port", str(port)]
        server = subprocess.Popen(
            [*cmd, "--data-dir", tmp, "--log-level", "warning"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_http(f"http://127.0.0.1:{port}/readyz")
            print(f"workers {args.workers}, clients {args.clients}, MALLOC_ARENA_MAX {args.malloc_arena_max or '-'}")
            print("round | requests | worker RSS MB (each) | helpers RSS MB (sum, count)")
            counts: dict = {}
            lock = threading.Lock()
            clients: list[tuple[random.Random, list]] = [(random.Random(k), []) for k in range(args.clients)]
            for r in range(args.rounds):
                deadline = time.monotonic() + args.seconds
                threads = [
                    threading.Thread(target=client_loop, args=(port, rng, mine, deadline, counts, lock))
                    for rng, mine in clients
                ]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                workers = children(server.pid)
                rss = [rss_mb(w) for w in workers]
                kids = [h for w in workers for h in children(w)]
                helpers = sum(rss_mb(h) for h in kids)
                print(
                    f"{r + 1:5d} | {sum(counts.values()):8d} | {' '.join(f'{x:6.1f}' for x in rss)} | {helpers:7.1f} ({len(kids)})",
                    flush=True,
                )
            print("answers by status:", dict(sorted(counts.items())))
        finally:
            server.terminate()
            server.wait(60)


if __name__ == "__main__":
    main()
