"""Unroll through the HTTP API against a trivial edit of the same model in the same run (a
set_metadata batch: parse, store, the checks and onnxruntime's gate — the floor every edit
pays), on Loops of 5-node bodies run 16, 256 and 1024 times (tests/test_unroll.py's loop_model)
and on the written-out LinearAttention node tests (a Scan over the sequence).

For each model: a fresh upload to one `onnx-studio serve`, its checks settled, each edit timed
and undone; the median of `--repeat` runs.

  .venv/bin/python bench/unroll_loop.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from bench.store_edits import Server, post  # noqa: E402


def models(folder: Path) -> list[tuple[Path, str]]:
    from onnx.backend.test.case.node import collect_testcases
    from test_unroll import loop_model

    out = []
    for count in (16, 256, 1024):
        path = folder / f"loop_{count}.onnx"
        onnx.save(loop_model(count), path)
        out.append((path, "loop"))
    for case in collect_testcases(None):
        if case.name in ("test_linear_attention_gated_delta_expanded", "test_linear_attention_fp16_expanded"):
            path = folder / f"{case.name}.onnx"
            onnx.save(case.model, path)
            scan = next(i for i, n in enumerate(case.model.graph.node) if n.op_type == "Scan")
            out.append((path, f"n{scan}"))
    return out


def timed(server: Server, mid: str, ops: list[dict], repeat: int) -> tuple[float, dict]:
    seconds, answer = [], {}
    for _ in range(repeat):
        took, answer = post(f"{server.base}/api/models/{mid}/edits", {"base": 0, "ops": ops})
        seconds.append(took)
        post(f"{server.base}/api/models/{mid}/undo", {})
    return statistics.median(seconds), answer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    (ROOT / "bench" / "corpus").mkdir(exist_ok=True)
    server = Server()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for path, node in models(Path(tmp)):
                mid = server.upload(path)["id"]
                server.settled(mid)
                unroll_s, answer = timed(server, mid, [{"op": "unroll_loop", "node": node}], args.repeat)
                floor_s, _ = timed(server, mid, [{"op": "set_metadata", "key": "k", "value": "v"}], args.repeat)
                change = (answer.get("changes") or ["?"])[0]
                made = change.rsplit(": ", 1)[-1].split(" node")[0]
                rows.append((path.stem, change.split("(")[1].split(" iterations")[0], made, unroll_s, floor_s))
                print(rows[-1], file=sys.stderr)
    finally:
        server.close()
    print("| model | iterations | nodes made | unroll through the API | set_metadata, same model | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, count, made, u, f in rows:
        print(f"| {name} | {count} | {made} | {u:.3f} s | {f:.3f} s | {u / f:.2f}× |")


if __name__ == "__main__":
    main()
