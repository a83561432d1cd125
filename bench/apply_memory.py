"""`onnx-studio apply`'s peak memory and wall time on big models, against a floor measured in the
same run: a bare `onnx.load` + `onnx.save` of the same model (what any Python script replaying
edits pays at the least), each in a process of its own.

Models (made here, seeded random weights): an MLP of 8 MatMuls with its weights inside the
.onnx, and the same with them in one external data file. The recipe: three batches (metadata,
a rename of a node and of a tensor, a doc string) — edits that touch no weight, which is what
a recipe replayed on the next export mostly is. Peak RSS is the largest process apply waits for
(itself or a helper: RUSAGE_CHILDREN in a fresh process).

  .venv/bin/python bench/apply_memory.py [--mib 768] [--studio PATH-TO-A-CHECKOUT]

--studio runs another checkout's code (its `app` package) for a before/after table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
from matmul_chain import matmul_chain

ROOT = Path(__file__).resolve().parent.parent
LAYERS = 8

PEAK = """
import resource, subprocess, sys, time
t = time.perf_counter()
run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
took = time.perf_counter() - t
if run.returncode:
    sys.exit(run.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, took)
"""

FLOOR = """
import sys, onnx
model = onnx.load(sys.argv[1])
onnx.save(model, sys.argv[2])
"""


def mlp(mib: int) -> onnx.ModelProto:
    width = int((mib * (1 << 20) / 4 / LAYERS) ** 0.5)
    return matmul_chain(LAYERS, width, "mlp")


RECIPE = {
    "format": "onnx-studio-recipe/1",
    "batches": [
        {"ops": [{"op": "set_metadata", "key": "exported_by", "value": "bench"}]},
        {
            "ops": [
                {"op": "rename_node", "node": "@mm0", "name": "first"},
                {"op": "rename_tensor", "from": "h1", "to": "a"},
            ]
        },
        {"ops": [{"op": "set_model_field", "field": "doc_string", "value": "replayed"}]},
    ],
}


def measured(cmd: list[str], env: dict) -> tuple[int, float]:
    # run from the checkout asked for: `python -m` puts the working folder first on the path
    cwd = env["PYTHONPATH"]
    out = subprocess.run(
        [sys.executable, "-c", PEAK, *cmd], capture_output=True, text=True, env=env, cwd=cwd, check=True
    )
    peak, took = out.stdout.split()
    return int(peak), float(took)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=768)
    ap.add_argument("--studio", type=Path, default=ROOT, help="the checkout whose `app` runs")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.studio.resolve())}
    rows = []
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as tmp:
        folder = Path(tmp)
        (folder / "r.json").write_text(json.dumps(RECIPE))
        model = mlp(args.mib)
        for layout in ("inside", "external"):
            src = folder / layout
            src.mkdir()
            path = src / "model.onnx"
            if layout == "inside":
                onnx.save(model, path)
            else:
                onnx.save(model, path, save_as_external_data=True, location="model.data")
            size = sum(f.stat().st_size for f in src.iterdir())
            floor_peak, floor_s = measured([sys.executable, "-c", FLOOR, str(path), str(folder / "copy.onnx")], env)
            apply = [sys.executable, "-m", "app.cli", "apply", str(path), str(folder / "r.json")]
            apply += ["-o", str(folder / f"out-{layout}.onnx")]
            peak, took = measured(apply, env)
            rows.append((layout, size, peak, took, floor_peak, floor_s))
            print(rows[-1], file=sys.stderr)
            for f in folder.glob("out-*"):
                f.unlink()
            for f in folder.glob("copy*"):
                f.unlink()
    print(
        "| weights | model | apply: peak RSS (× model) | wall | onnx.load + save: peak RSS (× model) | wall | apply ÷ floor wall |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for layout, size, peak, took, floor_peak, floor_s in rows:
        print(
            f"| {layout} | {size / 2**20:.0f} MiB | {peak / 2**20:.0f} MiB ({peak / size:.2f}×) | {took:.1f} s"
            f" | {floor_peak / 2**20:.0f} MiB ({floor_peak / size:.2f}×) | {floor_s:.1f} s | {took / floor_s:.2f}× |"
        )


if __name__ == "__main__":
    main()
