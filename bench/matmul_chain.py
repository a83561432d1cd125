"""The benchmarks' big model: a chain of square float MatMuls with seeded random weights (the
same bytes every run), sized by its layers and their width."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def matmul_chain(layers: int, width: int, name: str = "chain") -> onnx.ModelProto:
    """h0 [batch, width] -> MatMul by w0 .. w{layers-1} (weights scaled by 1/width, so the
    activations stay finite through any depth) -> h{layers}."""
    rng = np.random.default_rng(0)
    nodes, weights = [], []
    for k in range(layers):
        w = rng.standard_normal((width, width), dtype=np.float32) * np.float32(1 / width)
        weights.append(numpy_helper.from_array(w, f"w{k}"))
        nodes.append(helper.make_node("MatMul", [f"h{k}", f"w{k}"], [f"h{k + 1}"], name=f"mm{k}"))
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("h0", TensorProto.FLOAT, ["batch", width])],
        [helper.make_tensor_value_info(f"h{layers}", TensorProto.FLOAT, ["batch", width])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
