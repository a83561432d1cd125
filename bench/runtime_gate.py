"""What the onnxruntime gate costs (issue 11): one check (stand-in written, load with graph
optimisations, one smoke run, in the warm worker) against a bare onnx.load of the same file,
on the light models the onnx wheel ships and on a model of over 1 GiB built here; and its share
of a whole edit request (set_metadata through the API, the checker gates and the store included).

  .venv/bin/python bench/runtime_gate.py [--big-gib 1.0] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import onnx
from matmul_chain import matmul_chain

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from app.onnx_io import runtime_check  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def big_model(folder: Path, gib: float) -> Path:
    """A chain of 4096x4096 float MatMuls (64 MiB of weights each) as one .onnx file."""
    side = 4096
    path = folder / "big_chain.onnx"
    onnx.save(matmul_chain(max(1, round(gib * 2**30 / (side * side * 4))), side), path)
    return path


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _peak_rss_mib() -> float | None:
    """The busiest worker's peak resident memory (VmHWM), MiB."""
    peaks = []
    for w in runtime_check._all_workers:
        if w.proc is None:
            continue
        try:
            for line in Path(f"/proc/{w.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            pass
    return round(max(peaks), 1) if peaks else None


def edit_request(path: Path, repeat: int) -> tuple[float, float]:
    """(median ms of a set_metadata edit through the API, median ms of its onnxruntime gate)."""
    from app import create_app

    # background work (derived data, the verdict) may still write in the store as it goes
    with tempfile.TemporaryDirectory(prefix="gate-bench-store-", ignore_cleanup_errors=True) as tmp:
        app = create_app({"DATA_DIR": tmp, "TESTING": True})
        client = app.test_client()
        record = app.extensions["store"].create_model(path.name, path.read_bytes())
        client.get(f"/api/models/{record.id}/validation")  # the base's checks and verdict, as after opening it
        edits, gates = [], []
        for base in range(repeat):
            op = {"op": "set_metadata", "key": "bench", "value": str(base)}
            start = time.perf_counter()
            r = client.post(f"/api/models/{record.id}/edits", json={"base": base, "ops": [op]})
            edits.append(time.perf_counter() - start)
            assert r.status_code == 200, r.get_json()
            gates.append(r.get_json()["validation"]["runtime"].get("seconds") or 0.0)
    return _ms(statistics.median(edits)), _ms(statistics.median(gates))


def measure(path: Path, repeat: int) -> dict:
    loads = []
    for _ in range(repeat):
        start = time.perf_counter()
        model = onnx.load(path)
        loads.append(time.perf_counter() - start)
    gates, verdict = [], {}
    for _ in range(repeat):
        start = time.perf_counter()
        verdict = runtime_check.check_model(model)
        gates.append(time.perf_counter() - start)
    load, gate = statistics.median(loads), statistics.median(gates)
    edit_ms, gate_in_edit_ms = edit_request(path, repeat)
    return {
        "model": path.name,
        "mib": round(path.stat().st_size / 2**20, 2),
        "nodes": len(model.graph.node),
        "load_ms": _ms(load),
        "gate_ms": _ms(gate),
        "ratio": round(gate / load, 1),
        "verdict": verdict.get("status"),
        "edit_ms": edit_ms,
        "gate_in_edit_ms": gate_in_edit_ms,
        "worker_peak_rss_mib": _peak_rss_mib(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big-gib", type=float, default=1.0, help="size of the built model (0: skip it)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per model; the median is reported")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()

    start = time.perf_counter()
    runtime_check.check_model(onnx.load(sorted(LIGHT.glob("*.onnx"))[0]))
    cold = time.perf_counter() - start
    print(f"first check, worker start included: {_ms(cold)} ms", file=sys.stderr)

    rows = [measure(p, args.repeat) for p in sorted(LIGHT.glob("*.onnx"))]
    if args.big_gib > 0:
        with tempfile.TemporaryDirectory(prefix="gate-bench-") as tmp:
            path = big_model(Path(tmp), args.big_gib)
            for w in runtime_check._all_workers:  # a fresh worker: its peak RSS is this model's
                w.stop()
            rows.append(measure(path, args.repeat))

    head = ["model", "mib", "nodes", "load_ms", "gate_ms", "ratio", "verdict", "edit_ms", "gate_in_edit_ms"]
    head.append("worker_peak_rss_mib")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(str(r[h]) for h in head) + " |")
    if args.json:
        args.json.write_text(json.dumps({"cold_ms": _ms(cold), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
