"""Build the bundled example model: a small image classifier with random weights.

Usage: python scripts/make_example_model.py OUT.onnx
"""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def weight(name, *shape):
        inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name))
        return name

    def conv_block(i, x, cin, cout):
        p = f"/features/block{i}"
        nodes.append(
            helper.make_node(
                "Conv",
                [x, weight(f"features.{i}.conv.weight", cout, cin, 3, 3), weight(f"features.{i}.conv.bias", cout)],
                [f"{p}/conv_out"],
                name=f"{p}/Conv",
                kernel_shape=[3, 3],
                pads=[1, 1, 1, 1],
                strides=[1, 1],
            )
        )
        nodes.append(
            helper.make_node(
                "BatchNormalization",
                [
                    f"{p}/conv_out",
                    weight(f"features.{i}.bn.scale", cout),
                    weight(f"features.{i}.bn.bias", cout),
                    weight(f"features.{i}.bn.mean", cout),
                    _ones(inits, f"features.{i}.bn.var", cout),
                ],
                [f"{p}/bn_out"],
                name=f"{p}/BatchNormalization",
                epsilon=1e-5,
            )
        )
        nodes.append(helper.make_node("Relu", [f"{p}/bn_out"], [f"{p}/relu_out"], name=f"{p}/Relu"))
        nodes.append(
            helper.make_node(
                "MaxPool",
                [f"{p}/relu_out"],
                [f"{p}/pool_out"],
                name=f"{p}/MaxPool",
                kernel_shape=[2, 2],
                strides=[2, 2],
            )
        )
        return f"{p}/pool_out"

    x = conv_block(0, "image", 3, 8)
    x = conv_block(1, x, 8, 16)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["/head/gap_out"], name="/head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["/head/gap_out"], ["/head/flat"], name="/head/Flatten", axis=1))
    nodes.append(
        helper.make_node(
            "Gemm",
            ["/head/flat", weight("head.fc.weight", 10, 16), weight("head.fc.bias", 10)],
            ["logits"],
            name="/head/fc/Gemm",
            transB=1,
            alpha=1.0,
            beta=1.0,
        )
    )
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="/head/Softmax", axis=-1))
    graph = helper.make_graph(
        nodes,
        "tiny_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])],
        inits,
        doc_string="Two conv blocks and a linear head.",
    )
    model = helper.make_model(
        graph,
        producer_name="onnx-studio-example",
        producer_version="1",
        opset_imports=[helper.make_opsetid("", 17)],
        doc_string="Example model bundled with ONNX Studio (random weights).",
    )
    model.ir_version = 8
    helper.set_model_props(model, {"author": "ONNX Studio", "license": "MIT", "task": "image-classification"})
    return model


def _ones(inits, name, n):
    inits.append(numpy_helper.from_array(np.ones(n, np.float32), name))
    return name


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/example.onnx")
    out.parent.mkdir(parents=True, exist_ok=True)
    m = build()
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, out)
    print(f"wrote {out}")
