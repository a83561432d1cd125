"""Find by module scope (app/views/search.py): torch's dynamo exporter names its nodes
node_MatMul_12 and writes the module path only in node metadata (`pkg.torch.onnx.name_scopes`,
`namespace`), so `q_proj` and `layers.0 MatMul` must find a module's nodes through the scope the
drawing groups them by, as they find /model/layers.0/self_attn/q_proj/MatMul by name in a
TorchScript export — which keeps its answers as they were."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from browser.scale_models import llama_like
from onnx import TensorProto, helper
from onnx import numpy_helper as nh
from testkit import upload

from app.views.scopes import scope_in_graph
from app.views.search import SCOPE_MODULE, SCOPE_PART, SCOPE_WITHIN, SearchIndex

H = 8  # hidden size
LAYERS = 12  # layers.1 and layers.10/layers.11: a prefix that is no whole module
ROOT = "__main__.Llama"
# each module of a layer and the class torch's metadata names it by
CLASSES = {
    "": "transformers.models.llama.modeling_llama.LlamaDecoderLayer",
    "self_attn": "transformers.models.llama.modeling_llama.LlamaAttention",
    "mlp": "transformers.models.llama.modeling_llama.LlamaMLP",
}
LINEAR = "torch.nn.modules.linear.Linear"


class Dynamo:
    """Builds a graph as torch.onnx.export(..., dynamo=True) writes one: nodes node_<Op>_<k>,
    tensors named after the FX node, the module path in metadata_props on every node (the
    keys in torch's order), weights named by their module."""

    def __init__(self, keys=("namespace", "name_scopes"), legacy_names: bool = False):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.keys = keys
        self.legacy_names = legacy_names  # TorchScript's /model/layers.0/self_attn/q_proj/MatMul, no metadata
        self.count = 0

    def node(self, op: str, inputs: list[str], module: str, fx: str, **attrs) -> str:
        """A node of `module` ("model.layers.0.self_attn.q_proj", "" for the root module)."""
        self.count += 1
        out = f"{fx}_{self.count}"
        if self.legacy_names:
            path = "/" + re.sub(r"\.(?!\d)", "/", module) if module else ""  # /model/layers.0/self_attn
            n = helper.make_node(op, inputs, [out], name=f"{path}/{op}_{self.count}", **attrs)
            self.nodes.append(n)
            return out
        n = helper.make_node(op, inputs, [out], name=f"node_{op}_{self.count}", **attrs)
        parts = module.split(".") if module else []
        levels = [".".join(parts[: i + 1]) for i in range(len(parts))]
        # only whole modules are levels: "model.layers" (a ModuleList) is not one
        levels = [lv for lv in levels if not lv.endswith(".layers")]
        if "namespace" in self.keys:
            spaces = [f": {ROOT}"] + [f"{lv}: {self._class(lv)}" for lv in levels] + [f"{fx}: aten.{fx}.default"]
            n.metadata_props.add(key="namespace", value="/".join(spaces))
        n.metadata_props.add(
            key="pkg.torch.onnx.class_hierarchy",
            value=repr([ROOT, *(self._class(lv) for lv in levels), f"aten.{fx}.default"]),
        )
        n.metadata_props.add(key="pkg.torch.onnx.fx_node", value=f"%{fx} : call_function[target=aten.{fx}]")
        if "name_scopes" in self.keys:
            n.metadata_props.add(key="pkg.torch.onnx.name_scopes", value=repr(["", *levels, fx]))
        n.metadata_props.add(key="pkg.torch.onnx.stack_trace", value='File "modeling_llama.py", line 1')
        self.nodes.append(n)
        return out

    @staticmethod
    def _class(level: str) -> str:
        last = level.rsplit(".", 1)[-1]
        if last.endswith("proj"):
            return LINEAR
        if last.isdigit():
            return CLASSES[""]
        return CLASSES.get(last, "torch.nn.Module")

    def linear(self, x: str, module: str, fx: str) -> str:
        w = f"p_{module.replace('.', '_')}_weight"
        self.inits.append(nh.from_array(np.eye(H, dtype=np.float32), w))
        return self.node("MatMul", [x, w], module, fx)

    def layer(self, x: str, i: int) -> str:
        L = f"model.layers.{i}"
        A = f"{L}.self_attn"
        q = self.linear(x, f"{A}.q_proj", "linear")
        k = self.linear(x, f"{A}.k_proj", "linear_1")
        v = self.linear(x, f"{A}.v_proj", "linear_2")
        kt = self.node("Transpose", [k], A, "transpose", perm=[0, 2, 1])
        scores = self.node("MatMul", [q, kt], A, "matmul")
        probs = self.node("Softmax", [scores], A, "softmax", axis=-1)
        ctx = self.node("MatMul", [probs, v], A, "matmul_1")
        o = self.linear(ctx, f"{A}.o_proj", "linear_3")
        h = self.node("Add", [x, o], L, "add")
        gate = self.linear(h, f"{L}.mlp.gate_proj", "linear_4")
        act = self.node("Sigmoid", [gate], f"{L}.mlp.act_fn", "silu")
        up = self.linear(h, f"{L}.mlp.up_proj", "linear_5")
        m = self.node("Mul", [act, up], f"{L}.mlp", "mul")
        down = self.linear(m, f"{L}.mlp.down_proj", "linear_6")
        return self.node("Add", [h, down], L, "add_1")

    def model(self, layers: int = LAYERS) -> onnx.ModelProto:
        x = self.node("Identity", ["input"], "", "clone")  # the root module's own op: no scope
        for i in range(layers):
            x = self.layer(x, i)
        x = self.linear(x, "lm_head", "linear_7")
        self.nodes[-1].output[0] = "logits"
        g = helper.make_graph(
            self.nodes,
            "main_graph",
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 4, H])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 4, H])],
            self.inits,
        )
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], producer_name="pytorch")
        onnx.checker.check_model(model)
        return model


def find(client, mid, q, **params):
    r = client.get(f"/api/models/{mid}/search", query_string={"q": q, **params})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def nodes_of(answer) -> list[dict]:
    return [r for r in answer["results"] if r["kind"] == "node"]


@pytest.fixture
def dynamo(client):
    model = Dynamo().model()
    r = upload(client, model.SerializeToString(), "llama.dynamo.onnx")
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"], model


def test_q_proj_finds_each_layers_q_proj_node_by_its_module(client, dynamo):
    mid, model = dynamo
    answer = find(client, mid, "q_proj")
    found = nodes_of(answer)
    # why: the module from the part matched on (the page lists the node's groups beside it)
    assert [r["why"] for r in found] == ["module q_proj"] * LAYERS
    assert {r["op_type"] for r in found} == {"MatMul"} and {r["score"] for r in found} == {SCOPE_MODULE}
    want = [f"n{k}" for k, n in enumerate(model.graph.node) if n.input[-1].endswith("_q_proj_weight")]
    assert [r["node"] for r in found] == want
    # and the q_proj weights, by name, after them
    tensors = [r["name"] for r in answer["results"] if r["kind"] == "tensor"]
    assert tensors == [f"p_model_layers_{i}_self_attn_q_proj_weight" for i in range(LAYERS)]
    assert answer["total"] == 2 * LAYERS and not answer["truncated"]
    # the result keeps its shape: the fields docs/api.md lists for a node, no more
    assert set(found[0]) == {"kind", "path", "node", "name", "op_type", "domain", "breadcrumb", "why", "score"}


def test_layers_0_matmul_finds_layer_0s_matmuls(client, dynamo):
    mid, model = dynamo
    answer = find(client, mid, "layers.0 MatMul")
    found = nodes_of(answer)
    scopes = _graph_scopes(client, mid)
    want = [
        f"n{k}"
        for k, n in enumerate(model.graph.node)
        if n.op_type == "MatMul" and "model.layers.0" in scopes.get(f"n{k}", [])
    ]
    assert len(want) == 9 and [r["node"] for r in found] == want
    assert {r["why"] for r in found} == {"module layers.0 + op type"}
    assert {r["score"] for r in found} == {SCOPE_WITHIN}  # the weakest word: a module the node is in


def test_a_layers_own_modules_rank_before_a_longer_layer_number(client, dynamo):
    """layers.1 is a whole module in model.layers.1.mlp, only part of model.layers.10: layer 1
    first, then layers 10 and 11; the layer's own ops (its residual Adds) before its submodules'."""
    mid, _ = dynamo
    found = nodes_of(find(client, mid, "layers.1", limit=1000))
    layer = [r["why"].removeprefix("module layers.") for r in found]
    ones = layer.count("1")
    assert ones == 15 and set(layer[:ones]) == {"1"} and set(layer[ones:]) == {"10", "11"}
    scores = [r["score"] for r in found]
    assert scores == sorted(scores, reverse=True)
    assert scores[:2] == [SCOPE_MODULE, SCOPE_MODULE] and {r["op_type"] for r in found[:2]} == {"Add"}
    assert set(scores[2:ones]) == {SCOPE_WITHIN} and set(scores[ones:]) == {SCOPE_PART}
    # a module within: self_attn's own ops first, then those of its projections
    attn = nodes_of(find(client, mid, "layers.2.self_attn"))
    assert [r["op_type"] for r in attn[:4]] == ["Transpose", "MatMul", "Softmax", "MatMul"]
    assert {r["score"] for r in attn[:4]} == {SCOPE_MODULE} and {r["score"] for r in attn[4:]} == {SCOPE_WITHIN}
    assert {r["why"] for r in attn} == {"module layers.2.self_attn"} and len(attn) == 8
    assert {r["why"] for r in nodes_of(find(client, mid, "ayers.2.self"))} == {"module layers.2.self_attn"}


def test_the_module_searched_is_the_one_the_drawing_groups_the_node_by(client, dynamo):
    mid, _ = dynamo
    scopes = _graph_scopes(client, mid)
    for q in ("mlp", "act_fn", "layers.11.mlp.down_proj", "MODEL.LAYERS.3"):
        found = nodes_of(find(client, mid, q, limit=1000))
        assert found, q
        for r in found:
            module = r["why"].removeprefix("module ")
            level = next(lv for lv in scopes[r["node"]] if q.lower() in lv.lower())  # the outermost
            assert level.endswith(module) and q.lower() in module.lower(), (q, r)
            node = client.get(f"/api/models/{mid}/node", query_string={"id": r["node"]}).get_json()
            assert node["scope"] == scopes[r["node"]]


def test_fields_name_searches_modules_too_op_and_attr_do_not(client, dynamo):
    mid, _ = dynamo
    assert len(nodes_of(find(client, mid, "name:q_proj"))) == LAYERS
    assert find(client, mid, "op:q_proj")["total"] == 0
    assert find(client, mid, "attr:q_proj")["total"] == 0
    assert len(nodes_of(find(client, mid, "op:MatMul layers.3"))) == 9
    # the root module's own op has no scope: found by what it is, not by "model"
    root = next(r for r in find(client, mid, "Identity")["results"] if r["kind"] == "node")
    assert root["node"] not in {r["node"] for r in nodes_of(find(client, mid, "model", limit=1000))}


@pytest.mark.parametrize("keys", [("name_scopes",), ("namespace",)], ids=["name_scopes only", "namespace only"])
def test_either_metadata_key_alone_gives_the_scope(client, keys):
    mid = upload(client, Dynamo(keys).model(3).SerializeToString()).get_json()["id"]
    found = nodes_of(find(client, mid, "layers.2 MatMul"))
    assert len(found) == 9 and {r["why"] for r in found} == {"module layers.2 + op type"}


def test_a_model_without_metadata_answers_as_before():
    """A TorchScript-style export: every scope is in its nodes' names, found by name exactly as
    before module scopes were searched (the same results, reasons and ranks)."""
    for model in (Dynamo(legacy_names=True).model(), llama_like(3)):
        index = SearchIndex(model)
        for q in ("q_proj", "layers.1", "layers.0 MatMul", "self_attn", "op:MatMul layers.2", "name:mlp", "model"):
            answer = index.search(q, limit=1000)
            assert answer == _without_scopes(index, q), q
            assert all(r["why"] in ("name", "name + op type", "op type + name") for r in nodes_of(answer)), q
        for q in ("q_proj", "layers.1", "self_attn", "model"):  # the nodes whose names hold it, in order,
            # the Constants (drawn inside their readers) after the boxes (QA28)
            named = [(n.op_type == "Constant", k) for k, n in enumerate(model.graph.node) if q in n.name]
            want = [f"n{k}" for _, k in sorted(named)]
            assert [r["node"] for r in nodes_of(index.search(q, limit=1000))] == want, q
    # names that say nothing and no metadata: nothing found by module, only the nodes reading its
    # weights (QA28: a Caffe2 export's blocks are named by their weights alone)
    bare = Dynamo(legacy_names=True).model(2)
    for k, n in enumerate(bare.graph.node):
        n.name = f"n{k}"
    found = nodes_of(SearchIndex(bare).search("q_proj"))
    readers = [f"n{k}" for k, n in enumerate(bare.graph.node) if any("q_proj" in i for i in n.input)]
    assert [r["node"] for r in found] == readers and readers
    assert all(r["why"].startswith("reads ") and "q_proj" in r["why"] for r in found)


def test_dynamo_and_torchscript_exports_of_one_model_find_the_same_nodes():
    """scale_models.llama_like built both ways: the same nodes (by position) for module queries."""
    legacy, dynamo = SearchIndex(llama_like(12)), SearchIndex(llama_like(12, dynamo=True))
    for q in ("q_proj", "layers.1", "layers.0 MatMul", "self_attn", "rotary_emb", "down_proj MatMul"):
        a = [r["node"] for r in nodes_of(legacy.search(q, limit=1000))]
        b = [r["node"] for r in nodes_of(dynamo.search(q, limit=1000))]
        assert a and sorted(a) == sorted(b), q


def test_subgraphs_and_functions_are_searched_by_module_too():
    inner = Dynamo()
    y = inner.linear("x", "model.layers.0.self_attn.q_proj", "linear")
    inner.nodes[-1].output[0] = "y"
    body = helper.make_graph(inner.nodes, "then", [], [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)])
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y2"], name="node_Identity_9")],
        "else",
        [],
        [helper.make_tensor_value_info("y2", TensorProto.FLOAT, None)],
    )
    fn_body = Dynamo()
    fn_body.node("Relu", ["a"], "model.layers.0.mlp.act_fn", "relu")
    fn_body.nodes[-1].output[0] = "b"
    fn = helper.make_function("local", "Act", ["a"], ["b"], fn_body.nodes, [helper.make_opsetid("", 18)])
    g = helper.make_graph(
        [
            helper.make_node("If", ["c"], ["out"], name="node_If_0", then_branch=body, else_branch=other),
            helper.make_node("Act", ["out"], ["z"], name="node_Act_1", domain="local"),
        ],
        "main_graph",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [H]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        inner.inits,
    )
    model = helper.make_model(
        g, functions=[fn], opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]
    )
    index = SearchIndex(model)
    [hit] = nodes_of(index.search("q_proj"))
    assert hit["path"] == "n0/then_branch" and hit["why"] == "module q_proj"
    [hit] = nodes_of(index.search("act_fn"))
    assert hit["path"] == "fn[0]" and hit["op_type"] == "Relu"


def test_a_block_named_by_its_weights_is_found_as_the_drawing_groups_it():
    """Caffe2-style: nodes whose names are no paths, weights inception_4a/1x1_w_0: the drawing
    puts the Conv in inception_4a (and the Relus after it, through their producers): so does
    search."""
    w = nh.from_array(np.ones((2, 2, 1, 1), np.float32), "inception_4a/1x1_w_0")
    g = helper.make_graph(
        [
            helper.make_node("Conv", ["x", w.name], ["c"]),
            helper.make_node("Relu", ["c"], ["y"]),
            helper.make_node("Relu", ["y"], ["z"], name="tail"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [w],
    )
    found = nodes_of(SearchIndex(helper.make_model(g)).search("inception_4a"))
    assert [r["node"] for r in found] == ["n0", "n1", "n2"]
    assert {r["why"] for r in found} == {"module inception_4a"} and {r["score"] for r in found} == {SCOPE_MODULE}
    assert all(scope_in_graph(g, i) == ["inception_4a"] for i in range(3))


def _graph_scopes(client, mid) -> dict[str, list[str]]:
    """Each node's scope levels as the drawing gets them (the graph JSON)."""
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    return {n["id"]: graph["scopes"][n["scope"]] for n in graph["nodes"] if n.get("scope") is not None}


def _without_scopes(index: SearchIndex, q: str) -> dict:
    """What the index answered before module scopes were searched: with none of its nodes filed."""
    kept = index.scope_nodes
    index.scope_nodes = [[] for _ in kept]
    try:
        return index.search(q, limit=1000)
    finally:
        index.scope_nodes = kept
