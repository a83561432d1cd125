"""onnxruntime's model tools on big models: convert_float16, quantize_dynamic, quantize_static
(calibrated on 8 samples), quantize_weights (4 bits, blocks of 32) and simplify through the HTTP API (checks and onnxruntime's gate
included), against the same tool run bare in the same run — onnxruntime's float16 converter on
the model loaded with onnx.load, quantize_dynamic and quantize_static from file to file, the
MatMulNBits quantizer on the loaded model (its Gemms made MatMuls first, as the studio does)
saving to a file, an onnxruntime session saving its
basic-optimized model — and what each adds to the store and the
server's peak memory meanwhile. The calibration samples are random: uniform token ids below
1,000 for integer inputs, normal values for float ones, symbolic dims 1 (the first) and 128.

For each model: a fresh `onnx-studio serve` on an empty data folder, the model uploaded with
curl and its checks settled, then each tool on revision 0 and undo. Peak RSS is the server's VmHWM (the quantizer runs in the helper process: its
own peak is the helper's, not counted here).

  .venv/bin/python bench/model_tools.py [--models bert_base gpt2_medium resnet50] [--tools quantize_weights ...]

Models: bench/corpus (make_corpus.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.store_edits import MODELS, Server, measure_each, post  # noqa: E402


def bare_float16(path: Path) -> float:
    from onnxruntime.transformers.float16 import convert_float_to_float16

    t = time.perf_counter()
    convert_float_to_float16(onnx.load(path), keep_io_types=True, disable_shape_infer=True)
    return time.perf_counter() - t


def bare_quantize(path: Path) -> float:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        quantize_dynamic(path, Path(d) / "q.onnx", weight_type=QuantType.QInt8)
        return time.perf_counter() - t


def bare_quantize_weights(path: Path) -> float:
    from onnxruntime.quantization import QuantFormat
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    from app.onnx_io.gemm_as_matmul import gemms_as_matmuls

    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        config = DefaultWeightOnlyQuantConfig(
            block_size=32, quant_format=QuantFormat.QOperator, op_types_to_quantize=("MatMul",)
        )
        model = onnx.load(path)
        gemms_as_matmuls(model, set())  # as the studio does: its Gemms quantized too
        quantizer = MatMulNBitsQuantizer(model, block_size=32, algo_config=config)
        quantizer.process()
        quantizer.model.save_model_to_file(str(Path(d) / "q.onnx"), use_external_data_format=True)
        return time.perf_counter() - t


def bare_simplify(path: Path) -> float:
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = str(Path(d) / "s.onnx")
        t = time.perf_counter()
        ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        return time.perf_counter() - t


SAMPLES = 8


def calibration(path: Path) -> dict[str, np.ndarray]:
    """SAMPLES random samples of each graph input, stacked along a new first axis."""
    model = onnx.load(path, load_external_data=False)
    rng = np.random.default_rng(0)
    initializers = {t.name for t in model.graph.initializer}
    samples = {}
    for v in model.graph.input:
        if v.name in initializers:
            continue
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else (1 if k == 0 else 128) for k, d in enumerate(t.shape.dim)]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if np.issubdtype(dtype, np.integer):
            samples[v.name] = rng.integers(0, 1000, (SAMPLES, *shape)).astype(dtype)
        else:
            samples[v.name] = rng.standard_normal((SAMPLES, *shape)).astype(dtype)
    return samples


class Samples:
    """onnxruntime's CalibrationDataReader over calibration()'s arrays."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays, self.next = arrays, 0

    def get_next(self):
        if self.next >= SAMPLES:
            return None
        self.next += 1
        return {name: a[self.next - 1] for name, a in self.arrays.items()}


def bare_quantize_static(path: Path) -> float:
    from onnxruntime.quantization import quantize_static

    arrays = calibration(path)
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        quantize_static(path, Path(d) / "q.onnx", Samples(arrays))  # type: ignore[arg-type]
        return time.perf_counter() - t


def static_op(server: Server, path: Path) -> dict:
    """quantize_static on calibration()'s arrays, each uploaded as an .npy (POST /api/blobs)."""
    given = {}
    with tempfile.TemporaryDirectory() as d:
        for name, arr in calibration(path).items():
            np.save(Path(d) / "x.npy", arr)
            out = subprocess.run(
                ["curl", "-sf", "-F", f"file=@{Path(d) / 'x.npy'}", f"{server.base}/api/blobs"],
                capture_output=True,
                check=True,
            ).stdout
            given[name] = {"npy": json.loads(out)["blob"]}
    return {"op": "quantize_static", "calibration": given}


TOOLS = (
    ("float16", lambda server, path: {"op": "convert_float16"}, bare_float16, "float16"),
    ("quantize", lambda server, path: {"op": "quantize_dynamic"}, bare_quantize, "int8 dynamic"),
    ("quantize_static", static_op, bare_quantize_static, f"int8 static ({SAMPLES} samples)"),
    (
        "quantize_weights",
        lambda server, path: {"op": "quantize_weights", "block_size": 32},
        bare_quantize_weights,
        "4-bit weights (blocks of 32)",
    ),
    ("simplify", lambda server, path: {"op": "simplify"}, bare_simplify, "simplify"),
)
CHOSEN = [t[0] for t in TOOLS]


def measure(path: Path) -> dict:
    row: dict = {"model": path.stem, "size": path.stat().st_size}
    for key, _, bare, _ in TOOLS:
        if key in CHOSEN:
            row[f"bare_{key}"] = bare(path)
    server = Server()
    try:
        mid = server.upload(path)["id"]
        server.settled(mid)
        for key, make_op, _, _ in TOOLS:
            if key not in CHOSEN:
                continue
            op = make_op(server, path)
            before = server.store_bytes()
            server.reset_peak()
            dt, answer = post(f"{server.base}/api/models/{mid}/edits", {"base": 0, "ops": [op]})
            row[key] = dt
            row[f"{key}_peak_rss"] = server.peak_rss()
            row[f"{key}_change"] = answer["changes"][0]
            row[f"{key}_runtime"] = (answer["validation"].get("runtime") or {}).get("status")
            server.settled(mid)
            row[f"{key}_growth"] = server.store_bytes() - before
            post(f"{server.base}/api/models/{mid}/undo")
    finally:
        server.close()
    return row


def print_table(rows: list[dict]) -> None:
    mb = 1 << 20
    print(
        "| model | size | tool | through the API (gate included) | bare tool | ratio | store growth | peak server RSS ÷ size | gate |"
    )
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        for key, _, _, label in TOOLS:
            if key not in CHOSEN:
                continue
            print(
                f"| {r['model']} | {r['size'] / mb:,.0f} MiB | {label} | {r[key]:.1f} s | {r[f'bare_{key}']:.1f} s "
                f"| {r[key] / r[f'bare_{key}']:.2f}× | {r[f'{key}_growth'] / mb:,.0f} MiB "
                f"| {r[f'{key}_peak_rss'] / mb:,.0f} MiB = {r[f'{key}_peak_rss'] / r['size']:.2f}× | {r[f'{key}_runtime']} |"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["resnet50", "bert_base", "gpt2_medium"], choices=list(MODELS))
    ap.add_argument("--tools", nargs="*", default=CHOSEN, choices=CHOSEN)
    args = ap.parse_args()
    CHOSEN[:] = args.tools
    rows = measure_each(args.models, measure)
    print_table(rows)


if __name__ == "__main__":
    main()
