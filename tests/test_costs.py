"""Measure (issue 15): GET .../stats counts parameters, FLOPs (a multiply-accumulate is 2) and
output bytes per node, equal to hand-computed values on small models; unknown stays unknown."""

from __future__ import annotations

import math
import os

import numpy as np
import onnx
import pytest
from browser.browser_models import position_slice_model
from onnx import TensorProto, helper, numpy_helper
from testkit import ONNX_DATA, upload

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=17) -> bytes:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def weight(name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.ones(shape, np.float32), name)


def stats(client, data: bytes, query: str = "") -> dict:
    mid = upload(client, data).get_json()["id"]
    r = client.get(f"/api/models/{mid}/stats{query}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def by_name(answer: dict) -> dict:
    return {n["name"]: n for n in answer["nodes"]}


def test_a_small_cnn_by_hand(client):
    data = model(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"], name="relu"),
            helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("ReduceMean", ["p"], ["y"], name="mean", keepdims=0),
        ],
        [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", F, None)],
        [weight("w", 4, 3, 3, 3), weight("b", 4)],
    )
    answer = stats(client, data)
    nodes = by_name(answer)
    # Conv: 256 outputs x 27 MACs x 2, + 256 bias adds; 108 + 4 weights
    assert (nodes["conv"]["flops"], nodes["conv"]["params"], nodes["conv"]["output_bytes"]) == (14080, 112, 1024)
    assert nodes["relu"]["flops"] == 256
    assert (nodes["pool"]["flops"], nodes["pool"]["output_bytes"]) == (64 * 4, 256)  # 4x4x4 out, 2x2 window
    assert nodes["mean"]["flops"] == 64  # one per input element
    assert answer["totals"] == {
        "params": 112,
        "param_bytes": 448,
        "flops": 14080 + 256 + 256 + 64,
        "activation_bytes": 1024 + 1024 + 256 + 4,
        # alive at once, at most: the Relu's input and output (x, 768 bytes, is gone by then)
        "peak_activation_bytes": 1024 + 1024,
        "peak_node": nodes["relu"]["node"],
    }
    assert [nodes[n]["live_bytes"] for n in ("conv", "relu", "pool", "mean")] == [768 + 1024, 2048, 1280, 260]
    assert answer["ops"] == {"Conv": 1, "Relu": 1, "MaxPool": 1, "ReduceMean": 1}
    assert answer["unknown"]["flops_nodes"] == 0 and nodes["conv"]["node"] == "n0"


def test_matmul_gemm_einsum_and_symbolic_dims(client):
    data = model(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
            helper.make_node("Gemm", ["a", "g", "gc"], ["o"], name="gemm", transB=1),
            helper.make_node("Einsum", ["p", "q"], ["e"], name="ein", equation="bij,bjk->bik"),
        ],
        [
            helper.make_tensor_value_info("x", F, ["N", 16]),
            helper.make_tensor_value_info("a", F, [2, 16]),
            helper.make_tensor_value_info("p", F, [2, 3, 4]),
            helper.make_tensor_value_info("q", F, [2, 4, 5]),
        ],
        [helper.make_tensor_value_info(n, F, None) for n in ("h", "o", "e")],
        [weight("w", 16, 32), weight("g", 8, 16), weight("gc", 8)],
    )
    unknown = stats(client, data)
    assert by_name(unknown)["mm"]["flops"] is None and by_name(unknown)["mm"]["output_bytes"] is None
    assert unknown["unknown"]["dims"] == ["N"] and unknown["unknown"]["flops_ops"] == {"MatMul": 1}
    assert unknown["totals"]["flops"] == 528 + 240  # the known ones only: never a silent 0 for MatMul
    nodes = by_name(stats(client, data, "?dims=N=2"))
    assert nodes["mm"]["flops"] == 2 * (2 * 32) * 16
    assert nodes["gemm"]["flops"] == 2 * 16 * 16 + 16  # M=2 N=8 K=16, + C
    assert nodes["ein"]["flops"] == 2 * 2 * 3 * 4 * 5  # = 2 x out (30) x K (4)
    assert nodes["gemm"]["params"] == 8 * 16 + 8


def test_totals_of_nothing_known_but_free_nodes_are_unknown_not_zero(client):
    """A MatMul of symbolic sizes and a Transpose (no FLOPs): before the sizes are given, the known
    FLOPs sum to 0 and the activations too; both totals are unknown (null), not 0."""
    data = model(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
            helper.make_node("Transpose", ["h"], ["t"], name="tr", perm=[1, 0]),
        ],
        [helper.make_tensor_value_info("x", F, ["N", 16])],
        [helper.make_tensor_value_info("t", F, None)],
        [weight("w", 16, 8)],
    )
    answer = stats(client, data)
    assert by_name(answer)["tr"]["flops"] == 0 and by_name(answer)["mm"]["flops"] is None
    assert answer["totals"]["flops"] is None and answer["totals"]["activation_bytes"] is None
    sized = stats(client, data, "?dims=N=2")["totals"]
    assert sized["flops"] == 2 * 2 * 8 * 16 and sized["activation_bytes"] == 2 * (2 * 8 * 4)


def test_the_activation_formula_says_what_it_leaves_out(client):
    """QA: "16 bytes·B in all" while NonZero's and its readers' outputs were of unknown size."""
    data = model(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
            helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
            helper.make_node("Transpose", ["nz"], ["t"], name="tr"),
        ],
        [helper.make_tensor_value_info("x", F, ["B", 4])],
        [helper.make_tensor_value_info("h", F, None), helper.make_tensor_value_info("t", TensorProto.INT64, None)],
        [weight("w", 4, 2)],
    )
    formula = stats(client, data)["formula"]
    assert formula["activation_bytes"] == [{"coefficient": 8, "symbols": {"B": 1}}]  # h: B×2 floats
    assert formula["unknown_outputs"] == 2  # nz, t


def test_attention_constants_and_unknown_ops(client):
    data = model(
        [
            helper.make_node("Attention", ["q", "k", "v"], ["att"], name="att"),
            helper.make_node(
                "Constant", [], ["c"], name="const", value=numpy_helper.from_array(np.ones(3, np.float32))
            ),
            helper.make_node("Unique", ["s"], ["tv"], name="uniq"),
        ],
        [
            helper.make_tensor_value_info("q", F, [1, 2, 4, 8]),
            helper.make_tensor_value_info("k", F, [1, 2, 6, 8]),
            helper.make_tensor_value_info("v", F, [1, 2, 6, 8]),
            helper.make_tensor_value_info("s", F, [10]),
        ],
        [helper.make_tensor_value_info(n, F, None) for n in ("att", "c", "tv")],
        [numpy_helper.from_array(np.array([3], np.int64), "kk")],
        opset=23,
    )
    answer = stats(client, data)
    nodes = by_name(answer)
    scores = 1 * 2 * 4 * 6
    assert nodes["att"]["flops"] == 2 * scores * (8 + 8) + 3 * scores
    assert nodes["const"]["params"] == 3 and nodes["const"]["flops"] == 0
    assert nodes["uniq"]["flops"] is None  # no formula: unknown, never 0
    assert answer["unknown"]["flops_ops"] == {"Unique": 1}
    assert answer["totals"]["params"] == 3 + 1  # the Constant's 3 and kk's 1 (read by nothing)


def test_given_input_sizes_fix_every_shape_that_follows_from_them(client):
    data = position_slice_model().SerializeToString()
    fixed = onnx.ModelProto.FromString(data)
    for d in fixed.graph.input[0].type.tensor_type.shape.dim[:2]:
        d.dim_value = {"batch": 2, "seq": 8}[d.dim_param]
    by_onnx = onnx.shape_inference.infer_shapes(fixed, data_prop=True)
    p = [v.type.tensor_type.shape.dim for v in by_onnx.graph.value_info if v.name == "p"]
    assert not p or not all(d.HasField("dim_value") for d in p[0])  # why costs infer with ORT's

    asked = stats(client, data)
    assert asked["unknown"]["dims"] == ["batch", "seq"]  # the inputs' dims: never inference's unk__N
    assert asked["unknown"]["flops_ops"] == {"MatMul": 1, "Add": 1}
    answer = stats(client, data, "?dims=batch=2,seq=8")
    nodes = by_name(answer)
    assert nodes["mm"]["flops"] == 2 * 8 * 32 * 16 and nodes["mm"]["output_bytes"] == 8 * 32 * 4
    assert nodes["add"]["flops"] == 2 * 8 * 32
    assert answer["unknown"] == {
        "flops_nodes": 0,
        "flops_ops": {},
        "output_nodes": 0,
        "peak_outputs": 0,
        "dims": [],
        "dims_at": {},
    }
    assert answer["dims"] == {"batch": 2, "seq": 8}
    # once an edit fixes a dim, its size is no longer one to give: the answer leaves it out
    mid = client.get("/api/models").get_json()["models"][0]["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_io_shape", "name": "x", "shape": [2, "seq", 32]}]},
    )
    assert r.status_code == 200, r.get_json()
    after = client.get(f"/api/models/{mid}/stats?dims=batch=2,seq=8").get_json()
    assert after["dims"] == {"seq": 8} and after["input_dims"] == ["seq"]
    assert by_name(after)["mm"]["flops"] == nodes["mm"]["flops"]


def test_resnet50_costs_what_the_literature_says(client):
    """ResNet-50 at 224x224: ~4.1 GMACs (8.2 GFLOPs) and 25.56 M parameters (+ 53 K running
    means and variances of its BatchNorms, initializers too). The wheel's light copy makes its
    weights with ConstantOfShape of constant shapes: those count as the weights they are."""
    path = ONNX_DATA / "light" / "light_resnet50.onnx"
    answer = stats(client, path.read_bytes())
    assert 7.6e9 < answer["totals"]["flops"] < 8.4e9, answer["totals"]
    assert 25_557_032 + 53_120 <= answer["totals"]["params"] < 25_557_032 + 53_120 + 5_000, answer["totals"]
    first_conv = next(n for n in answer["nodes"] if n["op_type"] == "Conv")
    assert first_conv["params"] == 64 * 3 * 7 * 7  # its weight, read from a ConstantOfShape
    # weights made so are no activations: at most three 64x112x112 maps alive at once (the
    # stem's BatchNorm, Mul, Add chain), not the 100 MB of weights on top
    assert answer["totals"]["peak_activation_bytes"] == 3 * 64 * 112 * 112 * 4
    assert answer["unknown"]["flops_nodes"] == 0
    assert answer["ops"]["Conv"] == 53


def test_bad_dims_and_revisions_are_refused(client):
    mid = upload(
        client,
        model(
            [helper.make_node("Relu", ["x"], ["y"])],
            [helper.make_tensor_value_info("x", F, [2])],
            [helper.make_tensor_value_info("y", F, [2])],
        ),
    ).get_json()["id"]
    for query, code, words in [
        ("?dims=N", "bad_dims", "dims are NAME=N pairs separated by commas; 'N' is not one"),
        ("?dims=N=-1", "bad_dims", "N: a size is a whole number from 0, not -1"),
        ("?dims=N=1.5", "bad_dims", "N: a size is a whole number from 0, not 1.5"),
        ("?dims=N=1234567890123", "bad_dims", "N: 1234567890123 is too big a size (at most 1e+12)"),
        ("?revision=x", "bad_revision", None),
    ]:
        r = client.get(f"/api/models/{mid}/stats{query}")
        assert r.status_code == 400 and r.get_json()["error"]["code"] == code, query
        assert words is None or r.get_json()["error"]["message"] == words
    assert client.get(f"/api/models/{mid}/stats?revision=7").status_code == 404


@pytest.mark.parametrize("name", ["light_bvlc_alexnet", "light_squeezenet", "light_inception_v1"])
def test_real_models_have_every_flop_known(client, name):
    answer = stats(client, (ONNX_DATA / "light" / f"{name}.onnx").read_bytes())
    assert answer["unknown"]["flops_nodes"] == 0, answer["unknown"]
    assert answer["totals"]["flops"] > 1e8 and answer["totals"]["activation_bytes"] > 0


def test_control_flow_adds_nothing_of_its_own_and_one_branch_is_counted(client):
    """An If's branches are rows of their own, each node listed once; the If itself is 0, not
    an "unknown" that every model with control flow would carry. One branch runs: the totals
    count the costlier one (the else branch's two nodes, not the then branch's one)."""
    from browser.browser_models import if_model

    answer = stats(client, if_model().SerializeToString())
    nodes = by_name(answer)
    assert nodes["branch"]["flops"] == 0 and nodes["branch"]["node"] == "n1"
    assert (nodes["then_add"]["flops"], nodes["else_neg"]["flops"], nodes["else_relu"]["flops"]) == (6, 6, 6)
    assert nodes["then_add"]["node"] == "n1/then_branch/n0"
    assert answer["unknown"]["flops_nodes"] == 0
    [branch] = answer["branches"]
    assert (branch["node"], branch["counted"], branch["skipped"]) == ("n1", "n1/else_branch", "n1/then_branch")
    assert branch["why"].startswith("the costlier branch")
    assert answer["totals"]["flops"] == nodes["pre"]["flops"] + 12
    assert answer["totals"]["activation_bytes"] == 24 * 4  # pre, the If (y), else_neg, else_relu: not then_add


def test_an_if_on_a_constant_condition_counts_the_branch_it_takes(client):
    from browser.browser_models import if_model

    m = if_model()
    del m.graph.input[1]
    m.graph.initializer.append(numpy_helper.from_array(np.array(True), "cond"))
    answer = stats(client, m.SerializeToString())
    [branch] = answer["branches"]
    assert branch["counted"] == "n1/then_branch" and branch["why"] == "its condition is a constant"
    assert answer["totals"]["flops"] == by_name(answer)["pre"]["flops"] + 6


def test_peak_activations_follow_each_tensors_last_reader(client):
    """A residual keeps its input alive across the branch: x (400 B) lives until the Add reads
    it, so the peak is x + the branch's two live tensors, not any two outputs; unknown sizes
    give no peak rather than a wrong one."""
    relu = [helper.make_node("Relu", [a], [b], name=b) for a, b in (("x", "a"), ("a", "b"), ("b", "c"))]
    data = model(
        [*relu, helper.make_node("Add", ["x", "c"], ["y"], name="add")],
        [helper.make_tensor_value_info("x", F, [100])],
        [helper.make_tensor_value_info("y", F, None)],
    )
    answer = stats(client, data)
    assert answer["totals"]["peak_activation_bytes"] == 400 * 3  # x + b + c, at the last Relu
    # what is alive as each node writes: x+a, x+a+b less a, x+b+c less b, x+c+y
    assert [n["live_bytes"] for n in answer["nodes"]] == [800, 1200, 1200, 1200]
    assert answer["totals"]["peak_node"] == "n1"  # the first node at the peak
    symbolic = model(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        [helper.make_tensor_value_info("x", F, ["N"])],
        [helper.make_tensor_value_info("y", F, None)],
    )
    assert stats(client, symbolic)["totals"]["peak_activation_bytes"] is None
    assert stats(client, symbolic, "?dims=N=10")["totals"]["peak_activation_bytes"] == 80


def test_a_reshape_is_a_view_of_its_input_not_memory_of_its_own(client):
    """Reshape (like Squeeze, Unsqueeze, Flatten, Identity) hands on its input's buffer, as
    onnxruntime runs it: it writes no bytes, in the totals, the formula and the peak, and its
    input stays alive as long as the view is read."""

    def reshaped(dim) -> bytes:
        nodes = [
            helper.make_node("Relu", ["x"], ["a"], name="a"),
            helper.make_node("Reshape", ["a", "flat"], ["r"], name="r"),
            helper.make_node("Relu", ["r"], ["b"], name="b"),
            helper.make_node("Add", ["r", "b"], ["y"], name="y"),
        ]
        flat = numpy_helper.from_array(np.array([-1], np.int64), "flat")
        return model(
            nodes, [helper.make_tensor_value_info("x", F, [dim])], [helper.make_tensor_value_info("y", F, None)], [flat]
        )

    answer = stats(client, reshaped(100))
    rows = by_name(answer)
    assert rows["r"]["output_bytes"] == 400 and rows["r"]["view_of"] == "a"
    assert "view_of" not in rows["b"]
    assert answer["totals"]["activation_bytes"] == 3 * 400  # a, b, y: not r
    # x+a as a is written (x then gone); a alone as r views it; a+b; a+b+y: a lives until the Add reads r
    assert [n["live_bytes"] for n in answer["nodes"]] == [800, 400, 800, 1200]
    formula = stats(client, reshaped("N"))["formula"]
    assert formula["activation_bytes"] == [{"coefficient": 12, "symbols": {"N": 1}}]


def test_the_peak_leaves_out_and_counts_outputs_shape_inference_cant_size(client):
    """An op shape inference knows nothing of (a custom domain's) leaves one output unsized: the
    peak is still given for the rest, and says how many it left out."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="a"),
        helper.make_node("Mystery", ["a"], ["m"], name="m", domain="com.example"),
        helper.make_node("Relu", ["a"], ["b"], name="b"),
        helper.make_node("Add", ["a", "b"], ["y"], name="y"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, [100])], [helper.make_tensor_value_info("y", F, None)]
    )
    data = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    ).SerializeToString()
    answer = stats(client, data)
    assert answer["totals"]["peak_activation_bytes"] == 400 * 3  # a, b and y when the Add writes (x is gone)
    assert answer["unknown"]["peak_outputs"] == 1 and answer["unknown"]["output_nodes"] == 1


def evaluate(terms: list[dict], sizes: dict[str, int]) -> int:
    return sum(t["coefficient"] * math.prod(sizes[s] ** p for s, p in t["symbols"].items()) for t in terms)


def test_costs_as_formulas_in_the_inputs_dims(client):
    """FLOPs and activation bytes as polynomials in the inputs' symbolic dims: a torch-style
    position slice (its length read off the input's shape) gives 32·batch·seq + 1024·seq, which
    at any sizes is what counting at those sizes gives."""
    data = position_slice_model().SerializeToString()
    symbolic = stats(client, data)
    formula = symbolic["formula"]
    assert "nodes" not in formula
    assert formula["symbols"] == ["batch", "seq"] and formula["unknown_nodes"] == 0
    assert {r["op_type"]: r.get("flops_formula") for r in symbolic["nodes"] if r["flops"] is None} == {
        "Add": [{"coefficient": 32, "symbols": {"batch": 1, "seq": 1}}],
        "MatMul": [{"coefficient": 1024, "symbols": {"seq": 1}}],
    }
    assert formula["flops"] == [
        {"coefficient": 32, "symbols": {"batch": 1, "seq": 1}},  # the Add
        {"coefficient": 1024, "symbols": {"seq": 1}},  # the MatMul: 2 · seq · 32 · 16
    ]
    for batch, seq in ((1, 1), (2, 8), (3, 100)):
        counted = stats(client, data, f"?dims=batch={batch},seq={seq}")
        sizes = {"batch": batch, "seq": seq}
        assert evaluate(formula["flops"], sizes) == counted["totals"]["flops"]
        assert evaluate(formula["activation_bytes"], sizes) == counted["totals"]["activation_bytes"]
        # and each node's own, while the sizes aren't given, is what it counts at them
        for row, at in zip(symbolic["nodes"], counted["nodes"], strict=True):
            assert "flops_formula" not in at and "output_formula" not in at
            if row["flops"] is None:
                assert evaluate(row["flops_formula"], sizes) == at["flops"], row
            if row["output_bytes"] is None:
                assert evaluate(row["output_formula"], sizes) == at["output_bytes"], row
    # some sizes given: the formula is in the others alone (batch = 2: 64·seq + 1024·seq)
    part = stats(client, data, "?dims=batch=2")
    assert part["formula"]["symbols"] == ["seq"] and part["dims"] == {"batch": 2}
    assert part["formula"]["flops"] == [{"coefficient": 64 + 1024, "symbols": {"seq": 1}}]
    assert evaluate(part["formula"]["activation_bytes"], {"seq": 8}) == evaluate(
        formula["activation_bytes"], {"batch": 2, "seq": 8}
    )


def kv_cache_attention() -> bytes:
    """One attention head as a decoder exports it with a KV cache: q, k [batch, sequence, 16],
    past_key [batch, past_sequence, 16]; the present key (Concat on the sequence axis) declared
    [batch, total_sequence, 16], as optimum declares it."""
    nodes = [
        helper.make_node("Concat", ["past_key", "k"], ["present_key"], name="concat", axis=1),
        helper.make_node("Transpose", ["present_key"], ["kT"], name="t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kT"], ["scores"], name="scores"),
        helper.make_node("Softmax", ["scores"], ["probs"], name="softmax", axis=-1),
    ]
    inputs = [
        helper.make_tensor_value_info("q", F, ["batch", "sequence", 16]),
        helper.make_tensor_value_info("k", F, ["batch", "sequence", 16]),
        helper.make_tensor_value_info("past_key", F, ["batch", "past_sequence", 16]),
    ]
    outputs = [
        helper.make_tensor_value_info("probs", F, ["batch", "sequence", "total_sequence"]),
        helper.make_tensor_value_info("present_key", F, ["batch", "total_sequence", 16]),
    ]
    return model(nodes, inputs, outputs)


def test_a_kv_caches_attention_is_a_formula_in_the_past_and_new_lengths(client):
    """The outputs declare total_sequence, which inference carries back into the attention;
    formulas use what the inputs make it, past_sequence + sequence: scores 2·16·s·(p + s), the
    softmax 3·s·(p + s). A first step (past_sequence = 0) is a size too."""
    data = kv_cache_attention()
    answer = stats(client, data)
    formula = answer["formula"]
    assert formula["unknown_nodes"] == 0 and formula["symbols"] == ["batch", "sequence", "past_sequence"]
    assert formula["flops"] == [
        {"coefficient": 35, "symbols": {"batch": 1, "past_sequence": 1, "sequence": 1}},
        {"coefficient": 35, "symbols": {"batch": 1, "sequence": 2}},
    ]
    mid = client.get("/api/models").get_json()["models"][0]["id"]
    for past in (0, 5):
        sizes = {"batch": 2, "sequence": 3, "past_sequence": past}
        query = ",".join(f"{k}={v}" for k, v in sizes.items())
        counted = client.get(f"/api/models/{mid}/stats?dims={query}").get_json()
        assert counted["totals"]["flops"] == evaluate(formula["flops"], sizes) == 2 * 3 * (past + 3) * 35
    # the drawing keeps the model's own name for the declared dim
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    assert [o["shape"] for o in graph["outputs"]] == [
        ["batch", "sequence", "total_sequence"],
        ["batch", "total_sequence", 16],
    ]


def test_formulas_are_none_without_symbols_and_never_evaluate_a_dims_text(client):
    fixed = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [helper.make_tensor_value_info("x", F, [4])], [])
    assert stats(client, fixed)["formula"] is None
    # a dim's text is parsed, never run: a hostile one is just not a formula
    hostile = "__import__('os').system('touch /tmp/pwned')"
    data = model(
        [helper.make_node("Relu", ["x"], ["h"], name="r"), helper.make_node("Relu", ["h"], ["y"], name="s")],
        [helper.make_tensor_value_info("x", F, ["N"])],
        [helper.make_tensor_value_info("y", F, None)],
    )
    m = onnx.load_from_string(data)
    m.graph.value_info.append(helper.make_tensor_value_info("h", F, [hostile]))
    formula = stats(client, m.SerializeToString())["formula"]
    assert formula["unknown_nodes"] == 2  # r's output and s's input are the hostile dim
    assert not os.path.exists("/tmp/pwned")


def test_the_formula_algebra():
    from app.views.formula import Poly, parse_dim

    b, s = Poly.symbol("b"), Poly.symbol("s")
    assert parse_dim("2*s + 1", ["s"]).terms == (2 * s + 1).terms
    assert parse_dim("(s+1)**2", ["s"]).terms == (s * s + 2 * s + 1).terms
    assert parse_dim("7", ["s"]) == 7 and parse_dim("s - s", ["s"]) == 0
    for text in ("s/2", "floor(s)", "t + 1", "s**9", "x" * 100, "s.__class__", "s if s else 1"):
        assert parse_dim(text, ["s"]) is None, text
    with pytest.raises(TypeError):
        b < s  # noqa: B015 - a formula has no order
    with pytest.raises(TypeError):
        bool(b)
    with pytest.raises(TypeError):
        b // 2


def test_sizes_computed_from_values_are_located(client):
    """NonZero's count is no input's dim: asked for with where it first appears; given, it counts."""
    data = model(
        [
            helper.make_node("NonZero", ["x"], ["idx"], name="nz"),
            helper.make_node("Transpose", ["idx"], ["pairs"], name="t"),
            helper.make_node("Cast", ["pairs"], ["f"], name="cast", to=F),
            helper.make_node("MatMul", ["f", "w"], ["y"], name="mm"),
        ],
        [helper.make_tensor_value_info("x", F, [4, 4])],
        [helper.make_tensor_value_info("y", F, None)],
        [weight("w", 2, 8)],
    )
    answer = stats(client, data)
    (symbol,) = answer["unknown"]["dims"]
    assert answer["input_dims"] == [] and answer["unknown"]["flops_ops"] == {"MatMul": 1}
    assert answer["unknown"]["dims_at"] == {symbol: {"tensor": "idx", "axis": 1, "node": "n0", "op": "NonZero"}}
    mid = client.get("/api/models").get_json()["models"][0]["id"]
    given = client.get(f"/api/models/{mid}/stats?dims={symbol}=5").get_json()
    assert by_name(given)["mm"]["flops"] == 2 * 5 * 8 * 2 and given["unknown"]["dims"] == []
    assert given["unknown"]["dims_at"][symbol]["op"] == "NonZero"  # still said where, to change it


def test_recurrent_ops_by_hand(client):
    """RNN, GRU and LSTM: steps · batch · directions · hidden · (2 · gates · (input + hidden) +
    the element-wise work of a unit: RNN 2, GRU 11, LSTM 13, + 2 a gate with biases, + 6 for
    LSTM's peepholes), the sizes read from X, W and hidden_size (or R)."""
    steps, batch, inputs, hidden = 5, 3, 4, 6
    x = helper.make_tensor_value_info("x", F, [steps, batch, inputs])
    xb = helper.make_tensor_value_info("xb", F, [batch, steps, inputs])  # layout 1
    data = model(
        [
            helper.make_node("RNN", ["x", "rnn_w", "rnn_r"], ["rnn_y"], name="rnn"),  # no hidden_size: R's
            helper.make_node("GRU", ["x", "gru_w", "gru_r", "gru_b"], ["gru_y"], name="gru", hidden_size=hidden),
            helper.make_node(
                "LSTM",
                ["xb", "lstm_w", "lstm_r", "", "", "", "", "lstm_p"],
                ["lstm_y"],
                name="lstm",
                hidden_size=hidden,
                direction="bidirectional",
                layout=1,
            ),
        ],
        [x, xb],
        [helper.make_tensor_value_info(n, F, None) for n in ("rnn_y", "gru_y", "lstm_y")],
        [
            weight("rnn_w", 1, hidden, inputs),
            weight("rnn_r", 1, hidden, hidden),
            weight("gru_w", 1, 3 * hidden, inputs),
            weight("gru_r", 1, 3 * hidden, hidden),
            weight("gru_b", 1, 6 * hidden),
            weight("lstm_w", 2, 4 * hidden, inputs),
            weight("lstm_r", 2, 4 * hidden, hidden),
            weight("lstm_p", 2, 3 * hidden),
        ],
        opset=22,
    )
    nodes = by_name(stats(client, data))
    units = steps * batch * hidden
    assert nodes["rnn"]["flops"] == units * (2 * 1 * (inputs + hidden) + 2)
    assert nodes["gru"]["flops"] == units * (2 * 3 * (inputs + hidden) + 11 + 2 * 3)
    assert nodes["lstm"]["flops"] == 2 * units * (2 * 4 * (inputs + hidden) + 13 + 6)


def test_the_official_recurrent_tests_have_their_flops_known(client):
    from testkit import node_testcases

    cases = {n: c for n, c in node_testcases().items() if n.split("_")[1] in ("rnn", "gru", "lstm", "simple")}
    cases = {n: c for n, c in cases.items() if c.model.graph.node[0].op_type in ("RNN", "GRU", "LSTM")}
    assert len(cases) >= 8, sorted(cases)
    for name, case in cases.items():
        answer = stats(client, case.model.SerializeToString())
        assert answer["unknown"]["flops_nodes"] == 0 and answer["totals"]["flops"] > 0, (name, answer["unknown"])


def test_a_recurrent_ops_cost_as_a_formula_of_its_sequence_and_batch(client):
    x = helper.make_tensor_value_info("x", F, ["seq", "batch", 4])
    data = model(
        [helper.make_node("GRU", ["x", "w", "r"], ["", "h"], name="gru", hidden_size=6)],
        [x],
        [helper.make_tensor_value_info("h", F, None)],
        [weight("w", 1, 18, 4), weight("r", 1, 18, 6)],
        opset=22,
    )
    answer = stats(client, data)
    per_unit = 2 * 3 * (4 + 6) + 11
    assert answer["formula"]["flops"] == [{"coefficient": 6 * per_unit, "symbols": {"batch": 1, "seq": 1}}]
    assert by_name(stats(client, data, "?dims=seq=7,batch=2"))["gru"]["flops"] == 7 * 2 * 6 * per_unit


def test_a_scans_body_counts_once_per_step_and_nested_bodies_multiply(client):
    """A Scan's body runs once per step of its scanned axis: its nodes' FLOPs are over all the
    steps (their rows say how many runs), a Scan inside it multiplies again; an If's branches,
    whose taking is a value, stay at their holder's count."""
    from testkit import node_testcases

    answer = stats(client, node_testcases()["test_scan9_sum"].model.SerializeToString())
    add = next(n for n in answer["nodes"] if n["op_type"] == "Add")
    assert (add["flops"], add["runs"], answer["totals"]["flops"]) == (3 * 2, 3, 3 * 2)  # 3 steps of [2]

    def scan_body(inner_nodes, name):
        return helper.make_graph(
            inner_nodes,
            name,
            [helper.make_tensor_value_info(f"{name}_s", F, [2]), helper.make_tensor_value_info(f"{name}_x", F, [3, 2])],
            [helper.make_tensor_value_info(f"{name}_s2", F, [2])],
        )

    innermost = helper.make_graph(
        [helper.make_node("Add", ["i_s", "i_x"], ["i_s2"], name="add")],
        "inner",
        [helper.make_tensor_value_info("i_s", F, [2]), helper.make_tensor_value_info("i_x", F, [2])],
        [helper.make_tensor_value_info("i_s2", F, [2])],
    )
    outer_body = scan_body(
        [helper.make_node("Scan", ["o_s", "o_x"], ["o_s2"], name="inner_scan", body=innermost, num_scan_inputs=1)],
        "o",
    )
    data = model(
        [helper.make_node("Scan", ["s", "x"], ["s2"], name="outer_scan", body=outer_body, num_scan_inputs=1)],
        [helper.make_tensor_value_info("s", F, [2]), helper.make_tensor_value_info("x", F, [4, 3, 2])],
        [helper.make_tensor_value_info("s2", F, [2])],
    )
    nodes = by_name(stats(client, data))
    assert nodes["inner_scan"]["runs"] == 4 and nodes["inner_scan"]["flops"] == 0
    assert nodes["add"]["runs"] == 4 * 3 and nodes["add"]["flops"] == 4 * 3 * 2
    assert "runs" not in nodes["outer_scan"]


def test_quantized_convolutions_resize_and_more_by_hand(client):
    """QLinearConv and ConvInteger (what a QOperator quantization writes) count as the Conv they
    compute; Resize: nearest a copy (0), linear 3 per output element and resized axis; GridSample
    likewise per spatial axis."""
    u8 = TensorProto.UINT8
    scale = numpy_helper.from_array(np.array(0.1, np.float32), "scale")
    zero = numpy_helper.from_array(np.array(0, np.uint8), "zero")
    w = numpy_helper.from_array(np.ones((8, 3, 3, 3), np.uint8), "w")
    bias = numpy_helper.from_array(np.zeros(8, np.int32), "bias")
    data = model(
        [
            helper.make_node(
                "QLinearConv",
                ["xq", "scale", "zero", "w", "scale", "zero", "scale", "zero", "bias"],
                ["yq"],
                name="qconv",
            ),
            helper.make_node("ConvInteger", ["xq", "w"], ["yi"], name="iconv"),
            helper.make_node("Resize", ["img", "", "scales"], ["near"], name="near", mode="nearest"),
            helper.make_node("Resize", ["img", "", "scales"], ["lin"], name="lin", mode="linear"),
            helper.make_node("GridSample", ["img", "grid"], ["sampled"], name="sample", mode="linear"),
        ],
        [
            helper.make_tensor_value_info("xq", u8, [1, 3, 10, 10]),
            helper.make_tensor_value_info("img", F, [1, 2, 4, 4]),
            helper.make_tensor_value_info("grid", F, [1, 3, 3, 2]),
        ],
        [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in ("yq", "yi", "near", "lin", "sampled")],
        [scale, zero, w, bias, numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")],
        opset=19,
    )
    nodes = by_name(stats(client, data))
    out = 1 * 8 * 8 * 8
    assert nodes["qconv"]["flops"] == 2 * out * 3 * 3 * 3 + out  # with its bias
    assert nodes["iconv"]["flops"] == 2 * out * 3 * 3 * 3
    assert nodes["near"]["flops"] == 0
    assert nodes["lin"]["flops"] == (1 * 2 * 8 * 8) * 3 * 2  # two axes resized
    assert nodes["sample"]["flops"] == (1 * 2 * 3 * 3) * 3 * 2  # a lerp along each of 2 spatial axes


def test_top_k_dft_and_stft_by_hand(client):
    """TopK: a comparison per input element and level of a heap of K; DFT: 5·N·log2 N per
    transform of a power-of-2 length (an FFT), otherwise Bluestein's two FFTs of the power of 2
    at or past 2N−1 and its chirp products (QA23: not the direct sum, which made a 400-sample
    STFT 62 % of a speech encoder); STFT: each frame's DFT plus the window's product. An axis or
    a length that is no constant leaves them unknown."""
    i64 = TensorProto.INT64
    consts = [
        numpy_helper.from_array(np.array([3], np.int64), "k"),
        numpy_helper.from_array(np.array(16, np.int64), "n16"),
        numpy_helper.from_array(np.array(12, np.int64), "n12"),
        numpy_helper.from_array(np.array(-2, np.int64), "axis"),
        numpy_helper.from_array(np.array(4, np.int64), "step"),
        numpy_helper.from_array(np.hanning(16).astype(np.float32), "window"),
    ]
    data = model(
        [
            helper.make_node("TopK", ["scores", "k"], ["top", "top_at"], name="topk"),
            helper.make_node("DFT", ["sig", "n16", "axis"], ["fft"], name="fft"),
            helper.make_node("DFT", ["sig", "n12"], ["direct"], name="direct"),
            helper.make_node("DFT", ["sig", "", "free_axis"], ["free"], name="free"),
            helper.make_node("STFT", ["sig", "step", "window"], ["spec"], name="stft"),
        ],
        [
            helper.make_tensor_value_info("scores", F, [2, 100]),
            helper.make_tensor_value_info("sig", F, [2, 64, 1]),
            helper.make_tensor_value_info("free_axis", i64, []),
        ],
        [
            helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None)
            for n in ("top", "top_at", "fft", "direct", "free", "spec")
        ],
        consts,
        opset=20,
    )
    nodes = by_name(stats(client, data))
    assert nodes["topk"]["flops"] == 200 * 2  # a heap of 3: two levels
    assert nodes["fft"]["flops"] == 2 * (5 * 16 * 4)  # one transform a batch row, along axis -2
    # 12 is no power of 2: Bluestein's, through FFTs of 32 (at or past 2·12 − 1)
    assert nodes["direct"]["flops"] == 2 * (2 * (5 * 32 * 5) + 6 * (32 + 2 * 12))
    assert nodes["free"]["flops"] is None  # the axis is an input: not known before the run
    frames = (64 - 16) // 4 + 1
    assert nodes["stft"]["flops"] == 2 * frames * (5 * 16 * 4 + 16)


@pytest.mark.parametrize(
    "name",
    [
        "test_qlinearconv",
        "test_convinteger_with_padding",
        "test_resize_upsample_scales_linear",
        "test_resize_downsample_sizes_cubic",
        "test_cumprod_1d",
        "test_shrink_hard",
        "test_rotary_embedding",
        "test_bitcast_float32_to_int32",
        "test_center_crop_pad_crop",
        "test_basic_deform_conv_with_padding",
        "test_gridsample",
        "test_gridsample_nearest",
        "test_gridsample_bicubic",
        "test_top_k",
        "test_dft_opset19",
        "test_dft_irfft_opset19",
        "test_stft_with_window",
    ],
)
def test_these_official_tests_have_their_flops_known(client, name):
    from testkit import node_testcases

    cases = node_testcases()
    if name not in cases:
        pytest.skip(f"this onnx has no {name}")
    answer = stats(client, cases[name].model.SerializeToString())
    assert answer["unknown"]["flops_nodes"] == 0, answer["unknown"]


def test_a_for_loops_body_counts_once_per_trip_a_while_loops_once(client):
    """A Loop with a constant trip count, no condition of its own and a body passing its
    condition on as it is runs every trip: its body's FLOPs count per trip. A body that
    computes its condition may stop any time: counted once, as before."""
    b = TensorProto.BOOL

    def body(cond_node):
        return helper.make_graph(
            [helper.make_node("Add", ["acc", "one"], ["acc2"], name="step"), cond_node],
            "body",
            [
                helper.make_tensor_value_info("i", TensorProto.INT64, []),
                helper.make_tensor_value_info("c", b, []),
                helper.make_tensor_value_info("acc", F, [2]),
            ],
            [helper.make_tensor_value_info("c2", b, []), helper.make_tensor_value_info("acc2", F, [2])],
            [weight("one", 2)],
        )

    def loop_model(cond_node):
        return model(
            [helper.make_node("Loop", ["m", "", "start"], ["out"], name="loop", body=body(cond_node))],
            [helper.make_tensor_value_info("start", F, [2])],
            [helper.make_tensor_value_info("out", F, [2])],
            [numpy_helper.from_array(np.array(5, np.int64), "m")],
        )

    nodes = by_name(stats(client, loop_model(helper.make_node("Identity", ["c"], ["c2"], name="keep"))))
    assert nodes["step"]["runs"] == 5 and nodes["step"]["flops"] == 5 * 2
    nodes = by_name(stats(client, loop_model(helper.make_node("Not", ["c"], ["c2"], name="flip"))))
    assert "runs" not in nodes["step"] and nodes["step"]["flops"] == 2  # may stop at any trip: once


def test_a_dynamic_quantization_of_a_real_model_has_every_flop_known(client):
    """What the Quantize tool writes (ConvInteger, MatMulInteger, DynamicQuantizeLinear, the
    scales' Mul and Cast) is counted: its costs are no less known than the float model's."""
    from browser.browser_models import tiny_cnn

    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_dynamic"}]})
    assert r.status_code == 200, r.get_json()
    answer = client.get(f"/api/models/{mid}/stats").get_json()
    assert {"ConvInteger", "DynamicQuantizeLinear"} <= set(answer["ops"]), answer["ops"]
    assert answer["unknown"]["flops_nodes"] == 0, answer["unknown"]
    before = client.get(f"/api/models/{mid}/stats?revision=0").get_json()["totals"]["flops"]
    assert 0.9 < answer["totals"]["flops"] / before < 1.2  # the same products, a little quantizing


def test_a_qoperator_quantization_is_typed_and_counted_through(client):
    """A QOperator quantization writes onnxruntime's QLinearLeakyRelu, QLinearGlobalAveragePool,
    QGemm, QLinearSoftmax between standard operators: neither onnx's inference nor onnxruntime's
    symbolic one types them, so everything from the first one on had no shape and no cost. They
    are typed by their own rules, the standard operators after them by onnx's, and counted."""
    import io

    from browser.browser_models import tiny_cnn

    model = tiny_cnn()
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    x = model.graph.input[0]
    shape = [d.dim_value or 1 for d in x.type.tensor_type.shape.dim]
    buf = io.BytesIO()
    np.save(buf, np.random.default_rng(0).standard_normal([4, *shape[1:]]).astype(np.float32))
    blob = client.post("/api/blobs", data={"file": (io.BytesIO(buf.getvalue()), "x.npy")}).get_json()["blob"]
    op = {"op": "quantize_static", "quant_format": "QOperator", "calibration": {x.name: {"npy": blob}}}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    answer = client.get(f"/api/models/{mid}/stats").get_json()
    contrib = {op for op in answer["ops"] if op.startswith("com.microsoft.")}
    assert {"com.microsoft.QLinearLeakyRelu", "com.microsoft.QGemm"} <= contrib, answer["ops"]
    assert answer["unknown"]["flops_nodes"] == 0 and answer["unknown"]["output_nodes"] == 0, answer["unknown"]
    before = client.get(f"/api/models/{mid}/stats?revision=0").get_json()["totals"]["flops"]
    assert 0.9 < answer["totals"]["flops"] / before < 1.1  # the same work, in 8 bits
    # the drawing's types: the activation after the quantized LeakyRelu has its shape
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    relu = next(n for n in graph["nodes"] if n["op_type"] == "QLinearLeakyRelu")
    inferred = {v["name"]: v for v in graph["inferred_value_info"]}
    assert inferred[relu["outputs"][0]]["dtype"] == "UINT8" and len(inferred[relu["outputs"][0]]["shape"]) == 4


def test_quantized_add_and_concat_are_typed_by_their_rules(client):
    """com.microsoft's QLinearAdd broadcasts its A and B; QLinearConcat joins its X's on its
    axis (inputs: Y_scale, Y_zp, then X, X_scale, X_zp for each); what follows them is typed."""
    u8 = TensorProto.UINT8
    scale = numpy_helper.from_array(np.array(0.1, np.float32), "scale")
    zero = numpy_helper.from_array(np.array(0, np.uint8), "zero")
    nodes = [
        helper.make_node(
            "QLinearAdd", ["a", "scale", "zero", "b", "scale", "zero", "scale", "zero"], ["s"], domain="com.microsoft"
        ),
        helper.make_node(
            "QLinearConcat",
            ["scale", "zero", "s", "scale", "zero", "a", "scale", "zero"],
            ["c"],
            axis=1,
            domain="com.microsoft",
        ),
        helper.make_node("Transpose", ["c"], ["t"], perm=[1, 0, 2]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("a", u8, [2, 3, 4]), helper.make_tensor_value_info("b", u8, [1, 1, 4])],
        [helper.make_tensor_value_info("t", u8, None)],
        [scale, zero],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    shapes = {v["name"]: v["shape"] for v in client.get(f"/api/models/{mid}/types").get_json()["inferred_value_info"]}
    assert shapes["s"] == [2, 3, 4] and shapes["c"] == [2, 6, 4], shapes
    assert [n["flops"] for n in client.get(f"/api/models/{mid}/stats").get_json()["nodes"]][:2] == [24, 0]


def test_quantized_pools_and_where_are_typed_as_the_standard_ops_they_stand_for(client):
    u8 = TensorProto.UINT8
    q = ["scale", "zero"]
    nodes = [
        helper.make_node(
            "QLinearAveragePool", ["x", *q, *q], ["p"], kernel_shape=[2, 2], strides=[2, 2], domain="com.microsoft"
        ),
        helper.make_node("QLinearWhere", ["cond", "p", *q, "p", *q, *q], ["w"], domain="com.microsoft"),
        helper.make_node("Identity", ["w"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", u8, [1, 3, 8, 8]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, [1, 1, 4, 4]),
        ],
        [helper.make_tensor_value_info("out", u8, None)],
        [
            numpy_helper.from_array(np.array(0.1, np.float32), "scale"),
            numpy_helper.from_array(np.array(0, np.uint8), "zero"),
        ],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    shapes = {v["name"]: v["shape"] for v in client.get(f"/api/models/{mid}/types").get_json()["inferred_value_info"]}
    assert shapes["p"] == [1, 3, 4, 4], shapes
    flops = [n["flops"] for n in client.get(f"/api/models/{mid}/stats").get_json()["nodes"]]
    assert flops == [1 * 3 * 4 * 4 * 4, 1 * 3 * 4 * 4, 0]  # out · kernel; 1 per element; a copy


def test_unnamed_input_dims_are_asked_for_by_input_and_axis(client):
    """Costs ask for an unnamed dim as "x[0]", are written in it as a formula (inference carries
    the name the dims are asked by), and given those sizes count every node."""
    from browser.browser_models import unnamed_dims_model

    data = unnamed_dims_model().SerializeToString()
    plain = stats(client, data)
    assert plain["input_dims"] == ["x[0]", "y[0]"] and plain["unknown"]["dims"] == ["x[0]", "y[0]"]
    formula = plain["formula"]
    assert formula["symbols"] == ["x[0]", "y[0]"] and formula["unknown_nodes"] == 0
    # the MatMul 2·4·3 per row of x; the Add 3 per row of its output, which broadcasting names
    # after x's rows or y's (onnxruntime's inference merges the two, either way: they are equal)
    nodes = {n["name"]: n for n in plain["nodes"]}
    assert nodes["mm"]["flops_formula"] == [{"coefficient": 24, "symbols": {"x[0]": 1}}]
    assert nodes["add"]["flops_formula"] in ([{"coefficient": 3, "symbols": {s: 1}}] for s in ("x[0]", "y[0]"))
    assert sum(t["coefficient"] for t in formula["flops"]) == 27
    sized = by_name(stats(client, data, "?dims=x[0]=5,y[0]=5"))
    assert sized["mm"]["flops"] == 2 * 5 * 3 * 4 and sized["add"]["flops"] == 5 * 3


def test_a_call_of_a_model_function_costs_its_body(client):
    """onnx.inliner puts each call's body where the call was (calls inside it too); each call is
    counted as its body's nodes, at the shapes it is called with, attributes substituted."""
    m = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
        g (float[2,4] x, float[4,8] w) => (float[2,8] y) {
          a = local.Block <alpha: float = 0.5>(x)
          b = Relu(a)
          c = local.Block <alpha: float = 0.2>(b)
          y = MatMul(c, w)
        }
        <domain: "local", opset_import: ["" : 17, "local" : 1]>
        Block <alpha>(x) => (y) {
          t = LeakyRelu <alpha: float = @alpha>(x)
          u = local.Twice(t)
          y = Add(u, x)
        }
        <domain: "local", opset_import: ["" : 17]>
        Twice (x) => (y) {
          y = Add(x, x)
        }
        """
    )
    answer = stats(client, m.SerializeToString())
    rows = {(r["node"], r["op_type"]): r for r in answer["nodes"]}
    # LeakyRelu 8 + Add 8 + Add 8 over [2, 4]; the Relu's 8; the MatMul's 2*2*8*4
    assert rows[("n0", "Block")]["flops"] == 24 and rows[("n0", "Block")]["flops_from"] == "function body"
    assert rows[("n2", "Block")]["flops"] == 24 and rows[("n1", "Relu")]["flops"] == 8
    assert answer["totals"]["flops"] == 24 + 8 + 24 + 128
    assert answer["unknown"]["flops_nodes"] == 0


def test_a_nested_call_forwarding_a_defaulted_attribute_is_costed(client):
    """Block forwards its `gain` (default 2) to ScaledAct's `beta`; the first call leaves gain to
    the default. onnx's inliner drops such an attribute (the Constant it feeds has no value): the
    calls' defaults are written into them first, so both identical calls are costed."""
    m = onnx.parser.parse_model(
        """
        <ir_version: 10, opset_import: ["" : 18, "local" : 1]>
        main (float[N, 4] X) => (float[N, 4] Y) <float[4, 4] W = {1,0,0,0, 0,2,0,0, 0,0,3,0, 0,0,0,4}> {
          H = local.Block <slope: float = 0.2> (X, W)
          Y = local.Block <slope: float = 0.05, gain: float = 3.0> (H, W)
        }
        <domain: "local", opset_import: ["" : 18, "local" : 1]>
        ScaledAct <alpha, beta: float = 0.5> (X) => (Y) {
          T1 = LeakyRelu <alpha: float = @alpha> (X)
          B = Constant <value_float: float = @beta> ()
          Y = Mul (T1, B)
        }
        <domain: "local", opset_import: ["" : 18, "local" : 1]>
        Block <slope, gain: float = 2.0> (X, W) => (Y) {
          M = MatMul (X, W)
          Y = local.ScaledAct <alpha: float = @slope, beta: float = @gain> (M)
        }
        """
    )
    answer = stats(client, m.SerializeToString(), "?dims=N=2")
    rows = {r["node"]: r for r in answer["nodes"]}
    # MatMul 2·2·4·4 + LeakyRelu 8 + Mul 8 per call
    assert rows["n0"]["flops"] == rows["n1"]["flops"] == 80
    assert answer["totals"]["flops"] == 160 and answer["unknown"]["flops_nodes"] == 0


def test_an_if_whose_branches_costs_are_unknown_says_so(client):
    from browser.browser_models import if_model

    m = if_model()
    for g in (m.graph.node[1].attribute[0].g, m.graph.node[1].attribute[1].g):
        for n in g.node:
            n.op_type, n.domain = "Mystery", "custom"
    m.opset_import.add(domain="custom", version=1)
    answer = stats(client, m.SerializeToString())
    [branch] = answer["branches"]
    assert branch["why"] == "neither branch's FLOPs are known: the one of more nodes (2) is counted, as unknown"
    # the else branch's two nodes, not the then branch's one: the partly unknown is not the cheaper
    assert branch["counted"] == "n1/else_branch" and answer["unknown"]["flops_ops"] == {"Mystery": 2}


def test_a_call_inside_an_if_branch_costs_its_body_and_weighs_in_the_branch_choice(client):
    m = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
        g (float[2,4] x, bool c) => (float[2,4] y) {
          y = If (c) <
            then_branch = t () => (float[2,4] ty) { ty = local.Block(x) },
            else_branch = e () => (float[2,4] ey) { ey = Relu(x) }
          >
        }
        <domain: "local", opset_import: ["" : 17]>
        Block (x) => (y) {
          t = Relu(x)
          u = Add(t, x)
          y = Mul(u, u)
        }
        """
    )
    answer = stats(client, m.SerializeToString())
    rows = {r["node"]: r for r in answer["nodes"]}
    assert rows["n0/then_branch/n0"]["flops"] == 24 and rows["n0/then_branch/n0"]["flops_from"] == "function body"
    [branch] = answer["branches"]
    assert branch["counted"] == "n0/then_branch" and branch["why"].startswith("the costlier branch")
    assert answer["totals"]["flops"] == 24 and answer["unknown"]["flops_nodes"] == 0


def test_flops_none_of_which_are_known_are_unknown_not_zero(client):
    """A graph of custom ops alone: its FLOPs are unknown (null), never a total of 0."""
    g = helper.make_graph(
        [helper.make_node("Foo", ["x"], ["y"], domain="my.ops")],
        "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("my.ops", 1)])
    answer = stats(client, m.SerializeToString())
    assert answer["totals"]["flops"] is None and answer["unknown"]["flops_ops"] == {"Foo": 1}
    # one known beside it: the known ones are summed (and the rest said unknown)
    m.graph.node.append(helper.make_node("Relu", ["x"], ["z"]))
    m.graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3]))
    answer = stats(client, m.SerializeToString())
    assert answer["totals"]["flops"] == 6 and answer["unknown"]["flops_nodes"] == 1


def test_windows_and_mel_banks_made_from_constants_cost_nothing_a_run(client):
    """QA23 F10: a speech front end's HannWindow and MelWeightMatrix were unknown FLOPs, marking
    its total incomplete. Made from constant sizes, onnxruntime folds them when the model loads
    (0 a run); a window of a size fed is made each run, 3 per element."""
    i64 = TensorProto.INT64
    consts = [
        numpy_helper.from_array(np.array(16, np.int64), "n"),
        numpy_helper.from_array(np.array(8, np.int64), "mels"),
        numpy_helper.from_array(np.array(16000, np.int64), "rate"),
        numpy_helper.from_array(np.array(0.0, np.float32), "low"),
        numpy_helper.from_array(np.array(8000.0, np.float32), "high"),
    ]
    data = model(
        [
            helper.make_node("HannWindow", ["n"], ["w"], name="hann"),
            helper.make_node("MelWeightMatrix", ["mels", "n", "rate", "low", "high"], ["bank"], name="mel"),
            helper.make_node("HammingWindow", ["size"], ["w2"], name="fed"),
        ],
        [helper.make_tensor_value_info("size", i64, [])],
        [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in ("w", "bank", "w2")],
        consts,
        opset=17,
    )
    answer = stats(client, data)
    nodes = by_name(answer)
    assert nodes["hann"]["flops"] == 0 and nodes["mel"]["flops"] == 0
    assert nodes["fed"]["flops"] is None  # its size is the input's value: known only at the run
    assert (
        "HannWindow" not in answer["unknown"]["flops_ops"] and "MelWeightMatrix" not in answer["unknown"]["flops_ops"]
    )


def test_a_view_reading_no_input_is_counted_as_writing_its_own(client):
    """CI's field mutants: a Reshape whose inputs were cut (the checker refuses it; the costs are
    still asked for) was taken for a view of input 0 and answered 500."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Reshape", [], ["y"], name="cut")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    nodes = {n["name"]: n for n in stats(client, model.SerializeToString())["nodes"]}
    assert "view_of" not in nodes["cut"]
