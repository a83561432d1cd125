"""Big models for the graph-at-scale tests (issue 5), built with onnx.helper at run time.

`llama_like(layers)`: a decoder-only transformer in the shape torch's TorchScript exporter
gives it — node names like /model/layers.3/self_attn/q_proj/MatMul, dynamic reshapes
(Shape/Gather/Unsqueeze/Concat), rotary embedding, RMSNorm — with the tensors that feed every
layer: the attention mask, the rotary cos/sin tables and a shared scale constant.
~128 nodes a layer: 240 layers is >= 30,000 nodes. `dynamo=True` names the nodes node_<k>
and puts the scopes in metadata_props "pkg.torch.onnx.name_scopes" instead (dynamo style).

`bert_like(layers)`: an encoder with embeddings, attention and an MLP per layer, scoped
/bert/encoder/layer.<i>/attention/self/... (~100 nodes a layer).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HIDDEN = 16
HEADS = 2
HEAD_DIM = HIDDEN // HEADS
SEQ = 4
VOCAB = 32


class Builder:
    """Collects nodes, initializers and value_info; names nodes TorchScript- or dynamo-style."""

    def __init__(self, dynamo: bool = False):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.value_info: list[onnx.ValueInfoProto] = []
        self.dynamo = dynamo
        self.counter = 0
        self.rng = np.random.default_rng(0)

    def tensor(self, base: str) -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    def node(
        self, op: str, inputs: list[str], scope: str, name: str, n_out: int = 1, shape=None, dtype=T.FLOAT, **attrs
    ) -> list[str] | str:
        """A node in `scope` ("/model/layers.3/self_attn"); returns its output name(s)."""
        outs = [self.tensor(f"{scope.strip('/').replace('/', '.') or 'root'}.{name}") for _ in range(n_out)]
        if self.dynamo:
            nd = h.make_node(op, inputs, outs, name=f"node_{op}_{len(self.nodes)}", **attrs)
            parts = [p for p in scope.strip("/").split("/") if p]
            levels = [".".join(parts[: i + 1]) for i in range(len(parts))]
            nd.metadata_props.add(key="pkg.torch.onnx.name_scopes", value=repr(["", *levels, name]))
        else:
            nd = h.make_node(op, inputs, outs, name=f"{scope}/{name}" if scope else f"/{name}", **attrs)
        self.nodes.append(nd)
        if shape is not None:
            for o in outs:
                self.value_info.append(h.make_tensor_value_info(o, dtype, shape))
        return outs if n_out > 1 else outs[0]

    def weight(self, name: str, shape) -> str:
        self.inits.append(nh.from_array(self.rng.standard_normal(shape).astype(np.float32) * 0.1, name))
        return name

    def const(self, scope: str, name: str, values, dtype=np.int64) -> str:
        return self.node(
            "Constant",
            [],
            scope,
            name,
            value=nh.from_array(np.array(values, dtype=dtype)),
            shape=list(np.array(values).shape),
            dtype=T.INT64 if dtype == np.int64 else T.FLOAT,
        )


def rms_norm(b: Builder, x: str, scope: str, wname: str) -> str:
    two = b.const(scope, "Constant", 2.0, np.float32)
    p = b.node("Pow", [x, two], scope, "Pow", shape=[1, SEQ, HIDDEN])
    m = b.node("ReduceMean", [p], scope, "ReduceMean", axes=[-1], keepdims=1, shape=[1, SEQ, 1])
    eps = b.const(scope, "Constant_1", 1e-6, np.float32)
    a = b.node("Add", [m, eps], scope, "Add", shape=[1, SEQ, 1])
    s = b.node("Sqrt", [a], scope, "Sqrt", shape=[1, SEQ, 1])
    d = b.node("Div", [x, s], scope, "Div", shape=[1, SEQ, HIDDEN])
    return b.node("Mul", [d, b.weight(wname, [HIDDEN])], scope, "Mul", shape=[1, SEQ, HIDDEN])


def split_heads(b: Builder, x: str, scope: str, tag: str) -> str:
    """Dynamic reshape [1, S, H] -> [1, heads, S, d] the way TorchScript exports view()."""
    shp = b.node("Shape", [x], scope, f"Shape_{tag}", shape=[3], dtype=T.INT64)
    i0 = b.const(scope, f"Constant_{tag}0", 0)
    g0 = b.node("Gather", [shp, i0], scope, f"Gather_{tag}0", axis=0, shape=[], dtype=T.INT64)
    i1 = b.const(scope, f"Constant_{tag}1", 1)
    g1 = b.node("Gather", [shp, i1], scope, f"Gather_{tag}1", axis=0, shape=[], dtype=T.INT64)
    ax = b.const(scope, f"Constant_{tag}2", [0])
    u0 = b.node("Unsqueeze", [g0, ax], scope, f"Unsqueeze_{tag}0", shape=[1], dtype=T.INT64)
    u1 = b.node("Unsqueeze", [g1, ax], scope, f"Unsqueeze_{tag}1", shape=[1], dtype=T.INT64)
    rest = b.const(scope, f"Constant_{tag}3", [HEADS, HEAD_DIM])
    cat = b.node("Concat", [u0, u1, rest], scope, f"Concat_{tag}", axis=0, shape=[4], dtype=T.INT64)
    r = b.node("Reshape", [x, cat], scope, f"Reshape_{tag}", shape=[1, SEQ, HEADS, HEAD_DIM])
    return b.node("Transpose", [r], scope, f"Transpose_{tag}", perm=[0, 2, 1, 3], shape=[1, HEADS, SEQ, HEAD_DIM])


def rotary(b: Builder, x: str, cos: str, sin: str, scope: str, tag: str) -> str:
    half = HEAD_DIM // 2
    s0, s1, s2, ax = (b.const(scope, f"Constant_r{tag}{k}", v) for k, v in enumerate(([0], [half], [HEAD_DIM], [3])))
    x1 = b.node("Slice", [x, s0, s1, ax], scope, f"Slice_{tag}0", shape=[1, HEADS, SEQ, half])
    x2 = b.node("Slice", [x, s1, s2, ax], scope, f"Slice_{tag}1", shape=[1, HEADS, SEQ, half])
    n = b.node("Neg", [x2], scope, f"Neg_{tag}", shape=[1, HEADS, SEQ, half])
    rot = b.node("Concat", [n, x1], scope, f"Concat_r{tag}", axis=-1, shape=[1, HEADS, SEQ, HEAD_DIM])
    a = b.node("Mul", [x, cos], scope, f"Mul_{tag}0", shape=[1, HEADS, SEQ, HEAD_DIM])
    c = b.node("Mul", [rot, sin], scope, f"Mul_{tag}1", shape=[1, HEADS, SEQ, HEAD_DIM])
    return b.node("Add", [a, c], scope, f"Add_{tag}", shape=[1, HEADS, SEQ, HEAD_DIM])


def decoder_layer(b: Builder, x: str, i: int, mask: str, cos: str, sin: str, scale: str) -> str:
    L = f"/model/layers.{i}"
    A = f"{L}/self_attn"
    h1 = rms_norm(b, x, f"{L}/input_layernorm", f"model.layers.{i}.input_layernorm.weight")
    q = b.node(
        "MatMul",
        [h1, b.weight(f"model.layers.{i}.self_attn.q_proj.weight", [HIDDEN, HIDDEN])],
        f"{A}/q_proj",
        "MatMul",
        shape=[1, SEQ, HIDDEN],
    )
    k = b.node(
        "MatMul",
        [h1, b.weight(f"model.layers.{i}.self_attn.k_proj.weight", [HIDDEN, HIDDEN])],
        f"{A}/k_proj",
        "MatMul",
        shape=[1, SEQ, HIDDEN],
    )
    v = b.node(
        "MatMul",
        [h1, b.weight(f"model.layers.{i}.self_attn.v_proj.weight", [HIDDEN, HIDDEN])],
        f"{A}/v_proj",
        "MatMul",
        shape=[1, SEQ, HIDDEN],
    )
    q, k, v = (split_heads(b, t, A, tag) for t, tag in ((q, "q"), (k, "k"), (v, "v")))
    q = rotary(b, q, cos, sin, A, "q")
    k = rotary(b, k, cos, sin, A, "k")
    kt = b.node("Transpose", [k], A, "Transpose_kt", perm=[0, 1, 3, 2], shape=[1, HEADS, HEAD_DIM, SEQ])
    sc = b.node("MatMul", [q, kt], A, "MatMul", shape=[1, HEADS, SEQ, SEQ])
    sc = b.node("Div", [sc, scale], A, "Div", shape=[1, HEADS, SEQ, SEQ])
    sc = b.node("Add", [sc, mask], A, "Add_mask", shape=[1, HEADS, SEQ, SEQ])
    p = b.node("Softmax", [sc], A, "Softmax", axis=-1, shape=[1, HEADS, SEQ, SEQ])
    o = b.node("MatMul", [p, v], A, "MatMul_1", shape=[1, HEADS, SEQ, HEAD_DIM])
    o = b.node("Transpose", [o], A, "Transpose_o", perm=[0, 2, 1, 3], shape=[1, SEQ, HEADS, HEAD_DIM])
    shp = b.const(A, "Constant_o", [1, SEQ, HIDDEN])
    o = b.node("Reshape", [o, shp], A, "Reshape_o", shape=[1, SEQ, HIDDEN])
    o = b.node(
        "MatMul",
        [o, b.weight(f"model.layers.{i}.self_attn.o_proj.weight", [HIDDEN, HIDDEN])],
        f"{A}/o_proj",
        "MatMul",
        shape=[1, SEQ, HIDDEN],
    )
    x = b.node("Add", [x, o], L, "Add", shape=[1, SEQ, HIDDEN])
    h2 = rms_norm(b, x, f"{L}/post_attention_layernorm", f"model.layers.{i}.post_attention_layernorm.weight")
    M = f"{L}/mlp"
    g = b.node(
        "MatMul",
        [h2, b.weight(f"model.layers.{i}.mlp.gate_proj.weight", [HIDDEN, 2 * HIDDEN])],
        f"{M}/gate_proj",
        "MatMul",
        shape=[1, SEQ, 2 * HIDDEN],
    )
    u = b.node(
        "MatMul",
        [h2, b.weight(f"model.layers.{i}.mlp.up_proj.weight", [HIDDEN, 2 * HIDDEN])],
        f"{M}/up_proj",
        "MatMul",
        shape=[1, SEQ, 2 * HIDDEN],
    )
    sg = b.node("Sigmoid", [g], f"{M}/act_fn", "Sigmoid", shape=[1, SEQ, 2 * HIDDEN])
    g = b.node("Mul", [g, sg], f"{M}/act_fn", "Mul", shape=[1, SEQ, 2 * HIDDEN])
    m = b.node("Mul", [g, u], M, "Mul", shape=[1, SEQ, 2 * HIDDEN])
    d = b.node(
        "MatMul",
        [m, b.weight(f"model.layers.{i}.mlp.down_proj.weight", [2 * HIDDEN, HIDDEN])],
        f"{M}/down_proj",
        "MatMul",
        shape=[1, SEQ, HIDDEN],
    )
    return b.node("Add", [x, d], L, "Add_1", shape=[1, SEQ, HIDDEN])


def llama_like(layers: int = 240, dynamo: bool = False) -> onnx.ModelProto:
    b = Builder(dynamo)
    ids = h.make_tensor_value_info("input_ids", T.INT64, [1, SEQ])
    logits = h.make_tensor_value_info("logits", T.FLOAT, [1, SEQ, VOCAB])
    x = b.node(
        "Gather",
        [b.weight("model.embed_tokens.weight", [VOCAB, HIDDEN]), "input_ids"],
        "/model/embed_tokens",
        "Gather",
        shape=[1, SEQ, HIDDEN],
    )
    # the attention mask: causal, built once, read by every layer
    R = "/model"
    tri = b.node(
        "Trilu",
        [b.const(R, "Constant_ones", np.ones((SEQ, SEQ), np.float32), np.float32)],
        R,
        "Trilu",
        upper=0,
        shape=[SEQ, SEQ],
    )
    neg = b.const(R, "Constant_neg", -1e9, np.float32)
    one = b.const(R, "Constant_one", 1.0, np.float32)
    inv = b.node("Sub", [one, tri], R, "Sub", shape=[SEQ, SEQ])
    mask = b.node("Mul", [inv, neg], R, "Mul_mask", shape=[SEQ, SEQ])
    mask = b.node(
        "Reshape", [mask, b.const(R, "Constant_mshape", [1, 1, SEQ, SEQ])], R, "Reshape_mask", shape=[1, 1, SEQ, SEQ]
    )
    # rotary tables
    E = "/model/rotary_emb"
    pos = b.node(
        "Range",
        [
            b.const(E, "Constant", 0.0, np.float32),
            b.const(E, "Constant_1", float(SEQ), np.float32),
            b.const(E, "Constant_2", 1.0, np.float32),
        ],
        E,
        "Range",
        shape=[SEQ],
    )
    freqs = b.node("Unsqueeze", [pos, b.const(E, "Constant_3", [1])], E, "Unsqueeze", shape=[SEQ, 1], dtype=T.FLOAT)
    freqs = b.node(
        "Mul", [freqs, b.weight("model.rotary_emb.inv_freq", [1, HEAD_DIM])], E, "Mul", shape=[SEQ, HEAD_DIM]
    )
    cos = b.node("Cos", [freqs], E, "Cos", shape=[SEQ, HEAD_DIM])
    sin = b.node("Sin", [freqs], E, "Sin", shape=[SEQ, HEAD_DIM])
    scale = b.const(R, "Constant_scale", float(np.sqrt(HEAD_DIM)), np.float32)  # the shared constant
    for i in range(layers):
        x = decoder_layer(b, x, i, mask, cos, sin, scale)
    x = rms_norm(b, x, "/model/norm", "model.norm.weight")
    b.node("MatMul", [x, b.weight("lm_head.weight", [HIDDEN, VOCAB])], "/lm_head", "MatMul", shape=[1, SEQ, VOCAB])
    b.nodes[-1].output[0] = "logits"
    outs = {o for n in b.nodes for o in n.output} - {"logits"}
    graph = h.make_graph(
        b.nodes, "llama_like", [ids], [logits], b.inits, value_info=[v for v in b.value_info if v.name in outs]
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="pytorch", producer_version="2.5")
    onnx.checker.check_model(model)
    return model


def bert_like(layers: int = 12) -> onnx.ModelProto:
    b = Builder()
    ids = h.make_tensor_value_info("input_ids", T.INT64, [1, SEQ])
    am = h.make_tensor_value_info("attention_mask", T.FLOAT, [1, SEQ])
    out = h.make_tensor_value_info("pooler_output", T.FLOAT, [1, HIDDEN])
    Emb = "/bert/embeddings"
    we = b.node(
        "Gather",
        [b.weight("bert.embeddings.word_embeddings.weight", [VOCAB, HIDDEN]), "input_ids"],
        f"{Emb}/word_embeddings",
        "Gather",
        shape=[1, SEQ, HIDDEN],
    )
    pe = b.node(
        "Slice",
        [
            b.weight("bert.embeddings.position_embeddings.weight", [SEQ, HIDDEN]),
            b.const(Emb, "Constant", [0]),
            b.const(Emb, "Constant_1", [SEQ]),
            b.const(Emb, "Constant_2", [0]),
        ],
        f"{Emb}/position_embeddings",
        "Slice",
        shape=[SEQ, HIDDEN],
    )
    x = b.node("Add", [we, pe], Emb, "Add", shape=[1, SEQ, HIDDEN])
    x = b.node(
        "LayerNormalization",
        [
            x,
            b.weight("bert.embeddings.LayerNorm.weight", [HIDDEN]),
            b.weight("bert.embeddings.LayerNorm.bias", [HIDDEN]),
        ],
        f"{Emb}/LayerNorm",
        "LayerNormalization",
        axis=-1,
        epsilon=1e-12,
        shape=[1, SEQ, HIDDEN],
    )
    # extended attention mask: (1 - mask) * -10000, read by every layer
    X = "/bert"
    m = b.node("Unsqueeze", ["attention_mask", b.const(X, "Constant", [1, 2])], X, "Unsqueeze", shape=[1, 1, 1, SEQ])
    m = b.node("Sub", [b.const(X, "Constant_1", 1.0, np.float32), m], X, "Sub", shape=[1, 1, 1, SEQ])
    mask = b.node("Mul", [m, b.const(X, "Constant_2", -10000.0, np.float32)], X, "Mul", shape=[1, 1, 1, SEQ])
    scale = b.const(X, "Constant_3", float(np.sqrt(HEAD_DIM)), np.float32)
    for i in range(layers):
        Lr = f"/bert/encoder/layer.{i}"
        S = f"{Lr}/attention/self"
        proj = {}
        for t in ("query", "key", "value"):
            mm = b.node(
                "MatMul",
                [x, b.weight(f"bert.encoder.layer.{i}.attention.self.{t}.weight", [HIDDEN, HIDDEN])],
                f"{S}/{t}",
                "MatMul",
                shape=[1, SEQ, HIDDEN],
            )
            ad = b.node(
                "Add",
                [b.weight(f"bert.encoder.layer.{i}.attention.self.{t}.bias", [HIDDEN]), mm],
                f"{S}/{t}",
                "Add",
                shape=[1, SEQ, HIDDEN],
            )
            proj[t] = split_heads(b, ad, S, t[0])
        kt = b.node("Transpose", [proj["key"]], S, "Transpose_kt", perm=[0, 1, 3, 2], shape=[1, HEADS, HEAD_DIM, SEQ])
        sc = b.node("MatMul", [proj["query"], kt], S, "MatMul", shape=[1, HEADS, SEQ, SEQ])
        sc = b.node("Div", [sc, scale], S, "Div", shape=[1, HEADS, SEQ, SEQ])
        sc = b.node("Add", [sc, mask], S, "Add", shape=[1, HEADS, SEQ, SEQ])
        p = b.node("Softmax", [sc], S, "Softmax", axis=-1, shape=[1, HEADS, SEQ, SEQ])
        o = b.node("MatMul", [p, proj["value"]], S, "MatMul_1", shape=[1, HEADS, SEQ, HEAD_DIM])
        o = b.node("Transpose", [o], S, "Transpose_o", perm=[0, 2, 1, 3], shape=[1, SEQ, HEADS, HEAD_DIM])
        o = b.node("Reshape", [o, b.const(S, "Constant_o", [1, SEQ, HIDDEN])], S, "Reshape_o", shape=[1, SEQ, HIDDEN])
        Ao = f"{Lr}/attention/output"
        o = b.node(
            "MatMul",
            [o, b.weight(f"bert.encoder.layer.{i}.attention.output.dense.weight", [HIDDEN, HIDDEN])],
            f"{Ao}/dense",
            "MatMul",
            shape=[1, SEQ, HIDDEN],
        )
        o = b.node(
            "Add",
            [b.weight(f"bert.encoder.layer.{i}.attention.output.dense.bias", [HIDDEN]), o],
            f"{Ao}/dense",
            "Add",
            shape=[1, SEQ, HIDDEN],
        )
        o = b.node("Add", [o, x], Ao, "Add", shape=[1, SEQ, HIDDEN])
        x = b.node(
            "LayerNormalization",
            [
                o,
                b.weight(f"bert.encoder.layer.{i}.attention.output.LayerNorm.weight", [HIDDEN]),
                b.weight(f"bert.encoder.layer.{i}.attention.output.LayerNorm.bias", [HIDDEN]),
            ],
            f"{Ao}/LayerNorm",
            "LayerNormalization",
            axis=-1,
            epsilon=1e-12,
            shape=[1, SEQ, HIDDEN],
        )
        Im = f"{Lr}/intermediate"
        f = b.node(
            "MatMul",
            [x, b.weight(f"bert.encoder.layer.{i}.intermediate.dense.weight", [HIDDEN, 4 * HIDDEN])],
            f"{Im}/dense",
            "MatMul",
            shape=[1, SEQ, 4 * HIDDEN],
        )
        f = b.node(
            "Add",
            [b.weight(f"bert.encoder.layer.{i}.intermediate.dense.bias", [4 * HIDDEN]), f],
            f"{Im}/dense",
            "Add",
            shape=[1, SEQ, 4 * HIDDEN],
        )
        e = b.node(
            "Div",
            [f, b.const(f"{Im}/intermediate_act_fn", "Constant", 1.4142135, np.float32)],
            f"{Im}/intermediate_act_fn",
            "Div",
            shape=[1, SEQ, 4 * HIDDEN],
        )
        e = b.node("Erf", [e], f"{Im}/intermediate_act_fn", "Erf", shape=[1, SEQ, 4 * HIDDEN])
        e = b.node(
            "Add",
            [e, b.const(f"{Im}/intermediate_act_fn", "Constant_1", 1.0, np.float32)],
            f"{Im}/intermediate_act_fn",
            "Add",
            shape=[1, SEQ, 4 * HIDDEN],
        )
        f = b.node("Mul", [f, e], f"{Im}/intermediate_act_fn", "Mul", shape=[1, SEQ, 4 * HIDDEN])
        f = b.node(
            "Mul",
            [f, b.const(f"{Im}/intermediate_act_fn", "Constant_2", 0.5, np.float32)],
            f"{Im}/intermediate_act_fn",
            "Mul_1",
            shape=[1, SEQ, 4 * HIDDEN],
        )
        Ou = f"{Lr}/output"
        f = b.node(
            "MatMul",
            [f, b.weight(f"bert.encoder.layer.{i}.output.dense.weight", [4 * HIDDEN, HIDDEN])],
            f"{Ou}/dense",
            "MatMul",
            shape=[1, SEQ, HIDDEN],
        )
        f = b.node(
            "Add",
            [b.weight(f"bert.encoder.layer.{i}.output.dense.bias", [HIDDEN]), f],
            f"{Ou}/dense",
            "Add",
            shape=[1, SEQ, HIDDEN],
        )
        f = b.node("Add", [f, x], Ou, "Add", shape=[1, SEQ, HIDDEN])
        x = b.node(
            "LayerNormalization",
            [
                f,
                b.weight(f"bert.encoder.layer.{i}.output.LayerNorm.weight", [HIDDEN]),
                b.weight(f"bert.encoder.layer.{i}.output.LayerNorm.bias", [HIDDEN]),
            ],
            f"{Ou}/LayerNorm",
            "LayerNormalization",
            axis=-1,
            epsilon=1e-12,
            shape=[1, SEQ, HIDDEN],
        )
    P = "/bert/pooler"
    first = b.node("Gather", [x, b.const(P, "Constant", 0)], P, "Gather", axis=1, shape=[1, HIDDEN])
    d = b.node(
        "Gemm",
        [first, b.weight("bert.pooler.dense.weight", [HIDDEN, HIDDEN]), b.weight("bert.pooler.dense.bias", [HIDDEN])],
        f"{P}/dense",
        "Gemm",
        transB=1,
        shape=[1, HIDDEN],
    )
    b.node("Tanh", [d], f"{P}/activation", "Tanh")
    b.nodes[-1].output[0] = "pooler_output"
    outs = {o for n in b.nodes for o in n.output} - {"pooler_output"}
    graph = h.make_graph(
        b.nodes, "bert_like", [ids, am], [out], b.inits, value_info=[v for v in b.value_info if v.name in outs]
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="pytorch", producer_version="2.5")
    onnx.checker.check_model(model)
    return model
