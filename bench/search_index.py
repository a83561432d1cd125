"""How long Find's index of a big graph takes to build (views/search.py SearchIndex), against
loading the same model with onnx.load in the same run: a LLaMA-like graph of --layers layers
(tests/browser/scale_models.py; 19k nodes at 200), medians of --runs alternated runs. With
--dynamo, its scopes in metadata as torch's dynamo exporter writes them, and each node the
namespace, class hierarchy and stack trace that exporter writes too (Find searches those).

    .venv/bin/python bench/search_index.py [--layers 200] [--runs 6] [--dynamo]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import onnx

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=200)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--dynamo", action="store_true")
    args = parser.parse_args()
    from browser.scale_models import llama_like

    from app.views.search import SearchIndex

    model = llama_like(args.layers, dynamo=args.dynamo)
    if args.dynamo:
        add_torch_notes(model)
    data = model.SerializeToString()
    index, load = [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        onnx.load_from_string(data)
        load.append(time.perf_counter() - t)
        t = time.perf_counter()
        SearchIndex(model)
        index.append(time.perf_counter() - t)
    ms = statistics.median(index) * 1000
    floor = statistics.median(load) * 1000
    print(f"{len(model.graph.node):,} nodes: index {ms:.0f} ms, onnx.load {floor:.1f} ms, ratio {ms / floor:.1f}x")


def add_torch_notes(model: onnx.ModelProto) -> None:
    """What dynamo writes on each node besides its scopes: the module path with classes, the
    class hierarchy and the stack trace of its FX op (shared by that op's few nodes)."""
    for k, n in enumerate(model.graph.node):
        scopes = next((p.value for p in n.metadata_props if p.key == "pkg.torch.onnx.name_scopes"), "[]")
        levels = [x.strip(" '") for x in scopes.strip("[]").split(",") if x.strip(" '")][:-1]  # not the op
        classes = [f"transformers.models.llama.modeling_llama.Llama{x.rpartition('.')[2].title()}" for x in levels]
        line = 200 + k // 3  # an FX op's nodes share its trace and its name
        module = "/".join(f"{lv}: {c}" for lv, c in zip(levels, classes, strict=True))
        n.metadata_props.add(key="namespace", value=f"{module}/op_{line}: aten.op_{line}.default")
        n.metadata_props.add(key="pkg.torch.onnx.class_hierarchy", value=repr(classes))
        n.metadata_props.add(
            key="pkg.torch.onnx.stack_trace",
            value=f'File "/opt/conda/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py", '
            f"line {line}, in forward\n    hidden_states = self.op_{line}(hidden_states)",
        )


if __name__ == "__main__":
    main()
