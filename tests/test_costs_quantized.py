"""Costs of quantized models as runtimes run them (QA24 #3, #8): a QuantizeLinear/DequantizeLinear
of weights is part of the weight — its parameters on the row that computes with them (the Conv,
not the DequantizeLinear), no FLOPs, its output no activation (onnxruntime folds it into
QLinearConv, MatMulNBits) — and a MatMulNBits counts its N×K weights, not the bytes they are
packed in."""

from __future__ import annotations

import numpy as np
import onnx
from browser.browser_models import qdq_model
from onnx import helper
from test_costs import by_name, stats
from test_weight_only import tiny_lm
from testkit import upload


def test_a_qdq_models_weights_are_their_readers(client):
    answer = stats(client, qdq_model().SerializeToString())
    nodes = by_name(answer)
    # the int8 conv weight (108) and its zero point (1) are the Conv's; its scale s, which every
    # pair reads, is counted on the first row reading it (x's QuantizeLinear), said as shared
    assert nodes["x_QuantizeLinear"]["params"] == 2  # s and z
    assert nodes["conv"]["params"] == 108 + 1
    assert (nodes["conv"]["shared_params"], nodes["conv"]["shared_with"]) == (1, [nodes["x_QuantizeLinear"]["node"]])
    assert nodes["w_DequantizeLinear"]["params"] == 0 and nodes["w_DequantizeLinear"]["flops"] == 0
    # a float weight quantized in the graph (Q -> DQ of fc.weight): the MatMul's, once (its s and
    # wz counted on the rows before)
    assert nodes["fc"]["params"] == 320 and nodes["fc"]["shared_params"] == 2
    assert nodes["fc_QuantizeLinear"]["flops"] == 0 and nodes["fc_DequantizeLinear"]["params"] == 0
    # an activation's pair stays work on values: its FLOPs are counted
    assert nodes["x_QuantizeLinear"]["flops"] > 0
    # the dequantized weights are no activations: what is alive at most is the values'
    dq_outputs = 4 * 108 + 4 * 320
    assert answer["totals"]["activation_bytes"] < dq_outputs + 4 * 64
    assert answer["totals"]["params"] == 108 + 320 + 3  # every initializer once: s, z, wz
    assert sum(n["params"] for n in answer["nodes"]) == answer["totals"]["params"]  # the rows add up


def test_a_matmulnbits_counts_its_weights_not_their_bytes(client):
    mid = upload(client, tiny_lm().SerializeToString(), "lm.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_weights"}]})
    assert r.status_code == 200, r.get_json()
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    fc1 = next(n for n in model.graph.node if n.op_type == "MatMulNBits" and n.name.startswith("fc1"))
    attrs = {a.name: helper.get_attribute_value(a) for a in fc1.attribute}
    assert (attrs["K"], attrs["N"]) == (256, 512)
    blocks = -(-attrs["K"] // attrs["block_size"])
    inits = {t.name: t for t in model.graph.initializer}
    packed = inits[fc1.input[1]]
    assert packed.data_type == onnx.TensorProto.UINT8 and np.prod(packed.dims) == 512 * 256 // 2  # two a byte
    zeros = 512 * blocks if len(fc1.input) > 3 and fc1.input[3] else 0
    answer = client.get(f"/api/models/{mid}/stats?dims=batch=1").get_json()
    row = next(n for n in answer["nodes"] if n["name"] == fc1.name)
    # 256×512 weights, a scale per block of each column (and a zero point, when asymmetric)
    assert row["params"] == 256 * 512 + 512 * blocks + zeros, (row, attrs)
