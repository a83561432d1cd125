"""A transformer encoder block as a torch export writes it (QA37's NPU preparation): LayerNorms,
attention whose Reshape shapes come from Shape → Gather → Unsqueeze → Concat on symbolic batch
and sequence dims, Dropout and Identity nodes, and Gelu as its Erf form or (opset 20) the op."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WIDTH, HEADS, FFN = 64, 4, 256


def encoder_block(seed: int = 1, opset: int = 17, gelu_op: bool = False) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def weight(name: str, shape: list[int], scale: float = 0.1) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(name: str, value) -> str:
        inits.append(numpy_helper.from_array(np.array(value), name))
        return name

    def node(op: str, ins: list[str], out: str, name: str, **attrs) -> str:
        nodes.append(helper.make_node(op, ins, [out], name=name, **attrs))
        return out

    def linear(x: str, name: str, n_in: int, n_out: int) -> str:
        m = node("MatMul", [x, weight(f"{name}.w", [n_in, n_out])], f"{name}_mm", f"/{name}/MatMul")
        return node("Add", [m, weight(f"{name}.b", [n_out])], f"{name}_out", f"/{name}/Add")

    def layer_norm(x: str, name: str) -> str:
        ins = [x, weight(f"{name}.w", [WIDTH], 1.0), weight(f"{name}.b", [WIDTH])]
        return node("LayerNormalization", ins, name, f"/{name}/LayerNormalization", axis=-1, epsilon=1e-5)

    x = node("Identity", ["input_ids_embeds"], "x", "/Identity")
    ln1 = layer_norm(x, "ln1")
    shape = node("Shape", [ln1], "shape", "/attn/Shape")
    batch = node("Gather", [shape, const("zero", np.int64(0))], "batch", "/attn/Gather_0", axis=0)
    seq = node("Gather", [shape, const("one", np.int64(1))], "seq", "/attn/Gather_1", axis=0)
    batch1 = node("Unsqueeze", [batch, const("axis0", np.array([0], np.int64))], "batch1", "/attn/Unsqueeze_0")
    seq1 = node("Unsqueeze", [seq, "axis0"], "seq1", "/attn/Unsqueeze_1")
    heads = const("heads", np.array([HEADS, WIDTH // HEADS], np.int64))
    split = node("Concat", [batch1, seq1, heads], "split_shape", "/attn/Concat", axis=0)
    per_head = {}
    for part, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        r = node("Reshape", [linear(ln1, f"attn/{part}", WIDTH, WIDTH), split], f"{part}_r", f"/attn/{part}/Reshape")
        per_head[part] = node("Transpose", [r], f"{part}_t", f"/attn/{part}/Transpose", perm=perm)
    scores = node("MatMul", [per_head["q"], per_head["k"]], "scores", "/attn/MatMul_qk")
    scaled = node("Div", [scores, const("scale", np.float32(np.sqrt(WIDTH // HEADS)))], "scaled", "/attn/Div")
    probs = node("Dropout", [node("Softmax", [scaled], "probs", "/attn/Softmax", axis=-1)], "probs_d", "/attn/Dropout")
    context = node("MatMul", [probs, per_head["v"]], "context", "/attn/MatMul_pv")
    context = node("Transpose", [context], "context_t", "/attn/Transpose_out", perm=[0, 2, 1, 3])
    width = const("width", np.array([WIDTH], np.int64))
    joined = node("Concat", [batch1, seq1, width], "join_shape", "/attn/Concat_1", axis=0)
    context = node("Reshape", [context, joined], "context_r", "/attn/Reshape_out")
    attended = node("Dropout", [linear(context, "attn/o", WIDTH, WIDTH)], "attn_d", "/attn/Dropout_1")
    res1 = node("Add", [x, attended], "res1", "/Add_res1")
    hidden = linear(layer_norm(res1, "ln2"), "ffn/fc1", WIDTH, FFN)
    if gelu_op:
        act = node("Gelu", [hidden], "act", "/ffn/act/Gelu")
    else:
        d = node("Div", [hidden, const("sqrt2", np.float32(1.4142135))], "act_d", "/ffn/act/Div")
        e = node(
            "Add", [node("Erf", [d], "act_e", "/ffn/act/Erf"), const("one_f", np.float32(1))], "act_a", "/ffn/act/Add"
        )
        act = node(
            "Mul",
            [node("Mul", [hidden, e], "act_m", "/ffn/act/Mul"), const("half", np.float32(0.5))],
            "act",
            "/ffn/act/Mul_1",
        )
    out = node("Dropout", [linear(act, "ffn/fc2", FFN, WIDTH)], "ffn_d", "/ffn/Dropout")
    node("Identity", [node("Add", [res1, out], "res2", "/Add_res2")], "last_hidden_state", "/Identity_out")
    dims = ["batch", "sequence", WIDTH]
    graph = helper.make_graph(
        nodes,
        "encoder_block",
        [helper.make_tensor_value_info("input_ids_embeds", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="pytorch")
    model.ir_version = 8 if opset < 19 else 9
    onnx.checker.check_model(model, full_check=True)
    return model
