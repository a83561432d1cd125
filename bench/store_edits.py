"""Storage (issue 13): one attribute edit on a big model, checks included; what each edit adds
to the store; undo/redo; the download of an edited revision and the server's peak memory
meanwhile — against floors measured in the same run (bare onnx.load of the file; the disk's
copy speed), since machines here are noisy.

For each model: a fresh `onnx-studio serve` on an empty data folder, the model uploaded with
curl, then through the HTTP API: EDITS attribute edits (a float attribute nudged by 1 %, each
its own revision; the median time), undo and redo (medians), and the download of the last
edited revision (curl to a file). The server's peak RSS is its VmHWM, reset (clear_refs) before
each measured step.

  .venv/bin/python bench/store_edits.py [--models bert_base gpt2_medium ...] [--edits 5]

Models: bench/corpus (make_corpus.py: bert_base ~415 MiB, gpt2_medium ~1.3 GiB, llama_deep).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.bench_models import CORPUS, free_port, wait_http  # noqa: E402

MODELS = {name: CORPUS / f"{name}.onnx" for name in ("bert_base", "gpt2_medium", "llama_deep", "resnet50")}
FLOAT_ATTRS = ("epsilon", "alpha", "beta")


class Server:
    def __init__(self) -> None:
        self.port = free_port()
        self.data = Path(tempfile.mkdtemp(prefix="store-bench-", dir=ROOT / "bench" / "corpus"))
        self.proc = subprocess.Popen(
            [str(ROOT / ".venv/bin/onnx-studio"), "serve", "--port", str(self.port), "--data-dir", str(self.data)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        wait_http(self.base + "/api/models")

    def upload(self, path: Path) -> dict:
        """Upload with curl (the file streamed, as a person's browser sends it): the summary."""
        out = subprocess.run(
            ["curl", "-sf", "-F", f"file=@{path}", f"{self.base}/api/models"], capture_output=True, check=True
        ).stdout
        return json.loads(out)

    def settled(self, model_id: str) -> None:
        """Wait for the model's checks (validation, onnxruntime's smoke run), as a person who
        looks at the model before editing it does."""
        urllib.request.urlopen(f"{self.base}/api/models/{model_id}/validation", timeout=900).read()

    def reset_peak(self) -> None:
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")

    def peak_rss(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return 0

    def store_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.data.rglob("*") if f.is_file())

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        shutil.rmtree(self.data, ignore_errors=True)


def measure_each(names: list[str], measure) -> list[dict]:
    """`measure(path)` of each corpus model named (a missing one said and skipped), each row
    printed to stderr as it comes: the rows."""
    rows = []
    for name in names:
        if not MODELS[name].exists():
            print(f"{name}: {MODELS[name]} is missing (bench/make_corpus.py)", file=sys.stderr)
            continue
        rows.append(measure(MODELS[name]))
        print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def get(url: str) -> tuple[float, dict]:
    """(seconds, the JSON answer) of a GET."""
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=900) as r:
        answer = json.load(r)
    return time.perf_counter() - t, answer


def post(url: str, body: dict | None = None) -> tuple[float, dict]:
    req = urllib.request.Request(
        url, data=json.dumps(body or {}).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r:
        answer = json.load(r)
    return time.perf_counter() - t, answer


def edit_ops(path: Path, count: int) -> tuple[str, list[dict]]:
    """(what is edited, one op per edit): a float attribute (epsilon, alpha, beta) nudged by 1 %
    each time; on a model with none, a node renamed."""
    model = onnx.load(path, load_external_data=False)
    for node in model.graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.FLOAT and a.name in FLOAT_ATTRS and node.name:
                ops = [
                    {"op": "set_attribute", "node": node.name, "name": a.name, "value": a.f * (1.01 + 0.01 * k)}
                    for k in range(count)
                ]
                return f"{node.op_type}.{a.name}", ops
    node = next(n for n in model.graph.node if n.name)
    return "rename", [
        {"op": "rename_node", "node": node.name if k == 0 else f"{node.name}_r{k - 1}", "name": f"{node.name}_r{k}"}
        for k in range(count)
    ]


def floor_load(path: Path) -> float:
    t = time.perf_counter()
    onnx.load(path)
    return time.perf_counter() - t


def copy_speed(path: Path) -> float:
    """The disk's copy speed (bytes/s): the file copied to a new file on the same disk, synced."""
    dest = path.with_suffix(".copy")
    try:
        t = time.perf_counter()
        shutil.copyfile(path, dest)
        with open(dest, "rb+") as f:
            os.fsync(f.fileno())
        return path.stat().st_size / (time.perf_counter() - t)
    finally:
        dest.unlink(missing_ok=True)


def measure(path: Path, edits: int) -> dict:
    size = path.stat().st_size
    what, ops = edit_ops(path, edits)
    row: dict = {"model": path.stem, "size": size, "edited": what}
    row.update(onnx_load=floor_load(path), copy_speed=copy_speed(path))
    server = Server()
    try:
        t = time.perf_counter()
        summary = server.upload(path)
        row["upload"] = time.perf_counter() - t
        mid, rev = summary["id"], summary["revision"]
        server.settled(mid)
        row["store_after_upload"] = server.store_bytes()
        times, growth, peaks = [], [], []
        for k in range(edits):
            before = server.store_bytes()
            server.reset_peak()
            dt, answer = post(f"{server.base}/api/models/{mid}/edits", {"base": rev, "ops": [ops[k]]})
            rev = answer["revision"]
            times.append(dt)
            peaks.append(server.peak_rss())
            # a check the edit left to the background (onnxruntime's run of a big model) settles
            # before the next edit, as when a person looks at the result first
            server.settled(mid)
            growth.append(server.store_bytes() - before)
        row["edit"] = statistics.median(times)
        row["edit_max"] = max(times)
        row["edit_growth"] = statistics.median(growth)
        row["edit_peak_rss"] = max(peaks)
        undo, redo = [], []
        for _ in range(edits):
            undo.append(post(f"{server.base}/api/models/{mid}/undo")[0])
            redo.append(post(f"{server.base}/api/models/{mid}/redo")[0])
        row["undo"], row["redo"] = statistics.median(undo), statistics.median(redo)
        dest = path.with_suffix(".download")
        try:
            server.reset_peak()
            t = time.perf_counter()
            subprocess.run(["curl", "-sf", "-o", str(dest), f"{server.base}/api/models/{mid}/download"], check=True)
            with open(dest, "rb+") as f:
                os.fsync(f.fileno())
            row["download"] = time.perf_counter() - t
            row["download_peak_rss"] = server.peak_rss()
            row["download_bytes"] = dest.stat().st_size
            onnx.checker.check_model(str(dest))  # a whole, valid model
        finally:
            dest.unlink(missing_ok=True)
    finally:
        server.close()
    return row


def print_table(rows: list[dict]) -> None:
    mb = 1 << 20
    print(
        "| model | size | upload | edit (median, max): what | edit ÷ onnx.load | store growth per edit "
        "| undo / redo | download speed ÷ disk copy | peak RSS in download ÷ size |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        speed = r["download_bytes"] / r["download"]
        print(
            f"| {r['model']} | {r['size'] / mb:,.0f} MiB | {r['upload']:.1f} s "
            f"| {r['edit'] * 1000:.0f} ms ({r['edit_max'] * 1000:.0f} ms): {r.get('edited', '')} | {r['edit'] / r['onnx_load']:.2f}× "
            f"| {r['edit_growth'] / 1024:,.0f} KiB ({100 * r['edit_growth'] / r['size']:.3f} %) "
            f"| {r['undo'] * 1000:.0f} / {r['redo'] * 1000:.0f} ms "
            f"| {speed / mb:,.0f} MiB/s ÷ {r['copy_speed'] / mb:,.0f} MiB/s = {speed / r['copy_speed']:.2f}× "
            f"| {r['download_peak_rss'] / mb:,.0f} MiB = {100 * r['download_peak_rss'] / r['size']:.0f} % |"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["bert_base", "gpt2_medium"], choices=list(MODELS))
    ap.add_argument("--edits", type=int, default=5)
    ap.add_argument("--table", type=Path, help="print the table of a saved run (its JSON lines) and stop")
    args = ap.parse_args()
    if args.table:
        print_table([json.loads(line) for line in args.table.read_text().splitlines() if line.strip()])
        return
    rows = []
    for name in args.models:
        path = MODELS[name]
        if not path.exists():
            print(f"{name}: {path} missing (bench/make_corpus.py makes it)", file=sys.stderr)
            continue
        print(f"{name}: measuring", file=sys.stderr, flush=True)
        row = measure(path, args.edits)
        print(json.dumps(row), flush=True)
        rows.append(row)
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
