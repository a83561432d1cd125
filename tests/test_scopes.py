"""Name scopes for grouping: from torch's node metadata or from path-like node names."""

from __future__ import annotations

import onnx
from browser.scale_models import bert_like
from hypothesis import example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from testkit import ONNX_DATA, upload

from app.views.scopes import ScopeTable, node_scope, scope_of


def _node(name="", **meta):
    n = helper.make_node("Relu", ["a"], ["b"], name=name)
    for k, v in meta.items():
        n.metadata_props.add(key=k.replace("__", "."), value=v)
    return n


def test_scope_from_torchscript_names():
    assert node_scope(_node("/model/layers.3/self_attn/q_proj/MatMul")) == [
        "/model",
        "/model/layers.3",
        "/model/layers.3/self_attn",
        "/model/layers.3/self_attn/q_proj",
    ]
    assert node_scope(_node("/MatMul")) == [] and node_scope(_node("conv1")) == []


def test_scope_from_dynamo_metadata():
    n = _node(
        "node_linear",
        pkg__torch__onnx__name_scopes="['', 'layers.0', 'layers.0.lin', 'linear']",
        namespace=": M/layers.0: B/layers.0.lin: Linear/linear: aten.linear.default",
    )
    assert node_scope(n) == ["layers.0", "layers.0.lin"]
    only_ns = _node("node_x", namespace=": M/layers.0: B/layers.0.lin: Linear/linear: aten.linear.default")
    assert node_scope(only_ns) == ["layers.0", "layers.0.lin"]
    garbage = _node("/a/b/Relu", pkg__torch__onnx__name_scopes="__import__('os')")
    assert node_scope(garbage) == ["/a", "/a/b"]  # never evaluated; falls back to the name


def test_torchs_placeholder_for_nodes_of_no_module_is_no_scope():
    """dynamo puts the inputs' Shape and sym_size ops in a scope of this name: no module of the model."""
    hook = "_empty_nn_module_stack_from_metadata_hook"
    n = _node("node_Shape_1", pkg__torch__onnx__name_scopes=f"['{hook}', 'sym_size_int_10']")
    assert node_scope(n) == []
    only_ns = _node("node_Shape_1", namespace=f"{hook}: {hook}/sym_size_int_10: aten.sym_size.int")
    assert node_scope(only_ns) == []


def test_graph_json_counts_metadata_and_the_node_gives_it_whole(client):
    n = _node("/enc/layer.0/Relu", pkg__torch__onnx__stack_trace="x" * 5000, note="y" * 5000)
    g = helper.make_graph(
        [n],
        "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    node = graph["nodes"][0]
    assert graph["scopes"][node["scope"]] == ["/enc", "/enc/layer.0"]
    assert "metadata_props" not in node and node["metadata_count"] == 2
    full = client.get(f"/api/models/{mid}/node?id=n0").get_json()
    assert full["metadata_props"][0]["value"] == "x" * 5000 and full["metadata_props"][1]["value"] == "y" * 5000
    assert client.get(f"/api/models/{mid}/node").status_code == 400


# the scope table caches parses by the part of each value that decides the scope; the cache must
# never hand a node another node's scope, however odd its strings
_piece = st.text(alphabet="ab.,'\\/: []", max_size=6)


@st.composite
def _torch_values(draw):
    levels = draw(st.lists(_piece, max_size=4))
    last = draw(_piece)
    scopes = "[" + ", ".join(f"'{x}'" for x in ["", *levels, last]) + "]"
    return draw(st.sampled_from([scopes, scopes[:-1], draw(_piece)]))


@given(
    st.lists(
        st.tuples(
            st.text(alphabet="ab/.", max_size=8),
            st.none() | _torch_values(),
            st.none() | st.text(alphabet="ab:/ .", max_size=12),
        ),
        max_size=30,
    )
)
@example([("n1", "['', 'a', 'b']", None), ("n2", "['', 'a', 'b' 'c']", None)])  # same text before the last comma
@example([("n1", "['', ''", ": M/x: X/op: aten"), ("/p/q/n2", "['', ''", None)])  # unreadable: not cached by it
@settings(max_examples=300, deadline=None)
def test_scope_table_matches_parsing_each_node(nodes):
    table = ScopeTable()
    for name, name_scopes, namespace in nodes:
        k = table.index(name, name_scopes, namespace)
        expected = scope_of(name, name_scopes, namespace)
        assert (table.scopes[k] if k is not None else []) == expected


_keys = st.sampled_from(["pkg.torch.onnx.name_scopes", "namespace", "pkg.torch.onnx.stack_trace", "other"])


@given(
    st.lists(
        st.tuples(
            st.text(alphabet="ab/.", max_size=8),
            st.lists(st.tuples(_keys, _torch_values()), max_size=4, unique_by=lambda kv: kv[0]),
        ),
        max_size=30,
    )
)
@settings(max_examples=300, deadline=None)
def test_scope_table_reads_node_metadata_as_node_scope_does(nodes):
    # of_node tries the key position that held name_scopes on the previous node first; nodes
    # here list their keys in varying orders, so the guess is often wrong and must be checked
    table = ScopeTable()
    for name, meta in nodes:
        n = helper.make_node("Relu", ["a"], ["b"], name=name)
        for key, value in meta:
            n.metadata_props.add(key=key, value=value)
        k = table.of_node(n, n.metadata_props)
        assert (table.scopes[k] if k is not None else []) == node_scope(n)


def test_graph_json_scopes_equal_each_nodes_own(client):
    # torch-style metadata on every node, scopes shared and odd ones mixed in
    nodes = []
    for i in range(12):
        nodes.append(
            _node(
                f"node_{i}",
                pkg__torch__onnx__name_scopes=f"['', 'm', 'm.l{i % 3}', 'op_{i}']",
                namespace=f": M/m: A/m.l{i % 3}: B/op_{i}: aten.x",
            )
        )
    nodes.append(_node("/a/b/Relu"))
    nodes.append(_node("odd", pkg__torch__onnx__name_scopes="['', 'm', 'x', 'it''s']"))
    nodes.append(_node("plain"))
    for i, n in enumerate(nodes):
        n.input[0], n.output[0] = f"t{i}", f"t{i + 1}"
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(f"t{len(nodes)}", TensorProto.FLOAT, [1])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    for n, got in zip(nodes, graph["nodes"], strict=True):
        assert (graph["scopes"][got["scope"]] if "scope" in got else []) == node_scope(n), n.name
    assert len(graph["scopes"]) == 3 + 1 + 1  # m.l0..2, /a/b, odd


def test_scope_from_tensorflow_names():
    assert node_scope(_node("StatefulPartitionedCall/model/conv2d_3/Conv2D")) == [
        "StatefulPartitionedCall",
        "StatefulPartitionedCall/model",
        "StatefulPartitionedCall/model/conv2d_3",
    ]
    assert node_scope(_node("conv1")) == [] and node_scope(_node("/Relu")) == []


def test_a_graph_without_node_scopes_is_grouped_by_its_weights_names(client):
    """light_inception_v2 names its nodes n193 or nothing; its weights carry the blocks
    (inception_4a/double3x3b_w_0). Each node reading one is in that block; activations
    (r193) never decide a scope; the blocks are the network's, in its order."""
    path = ONNX_DATA / "light" / "light_inception_v2.onnx"
    model = onnx.load(path)
    mid = upload(client, path.read_bytes()).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    scope = {n["id"]: graph["scopes"][n["scope"]] for n in graph["nodes"] if "scope" in n}
    conv = next(i for i, n in enumerate(model.graph.node) if n.op_type == "Conv" and "inception_3a/1x1_w_0" in n.input)
    assert scope[f"n{conv}"] == ["inception_3a"]
    mul = next(i for i, n in enumerate(model.graph.node) if "inception_4a/double3x3a/bn/sc_w_0" in n.input)
    assert model.graph.node[mul].op_type != "ConstantOfShape"
    assert scope[f"n{mul}"] == ["inception_4a", "inception_4a/double3x3a", "inception_4a/double3x3a/bn"]
    # the ConstantOfShape making a weight is in the block of the weight it makes
    maker = next(i for i, n in enumerate(model.graph.node) if list(n.output) == ["inception_4a/double3x3a/bn/sc_w_0"])
    assert scope[f"n{maker}"] == scope[f"n{mul}"]
    # a node reading activations alone (a Relu) is in the block its producers share
    maker_of = {o: i for i, n in enumerate(model.graph.node) for o in n.output}
    relus = [i for i, n in enumerate(model.graph.node) if n.op_type == "Relu"]
    assert len(relus) > 50
    for i in relus:
        assert scope[f"n{i}"] == scope[f"n{maker_of[model.graph.node[i].input[0]]}"]
    # only the joins of two blocks' outputs (a reduction block's Concat and pool) have none
    loose = [n["op_type"] for n in graph["nodes"] if n["id"] not in scope]
    assert sorted(loose) == ["AveragePool", "AveragePool", "Concat", "Concat"]
    tops = list(dict.fromkeys(scope[n["id"]][0] for n in graph["nodes"] if n["id"] in scope))
    assert tops == ["conv1", "conv2"] + [
        f"inception_{b}" for b in ("3a", "3b", "3c", "4a", "4b", "4c", "4d", "4e", "5a", "5b")
    ] + ["loss3"]
    assert len(scope) == 912 and len(graph["nodes"]) == 916
    # the node endpoint says the same scope
    node = client.get(f"/api/models/{mid}/node?id=n{mul}").get_json()
    assert node["scope"] == scope[f"n{mul}"]


def test_torch_exports_keep_their_own_scopes(client):
    """A torch BERT: scopes from its "/"-led node names, as before; its weights' dotted names
    (bert.encoder.layer.0…) give nothing to nodes without a scope."""
    model = bert_like(2)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    for n, got in zip(model.graph.node, graph["nodes"], strict=True):
        assert (graph["scopes"][got["scope"]] if "scope" in got else []) == scope_of(n.name, None, None), n.name


def test_a_node_reading_a_weight_that_names_no_block_is_no_part_of_its_producers_block(client):
    """QA34 #4: light_squeezenet's conv10 (reading conv10_w_0), its Relu, pool and Softmax were in
    fire9, the block before them: Find listed the Softmax as "module fire9"."""
    path = ONNX_DATA / "light" / "light_squeezenet.onnx"
    model = onnx.load(path)
    mid = upload(client, path.read_bytes()).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph").get_json()
    scope = {n["id"]: graph["scopes"][n["scope"]] for n in graph["nodes"] if "scope" in n}
    conv10 = next(i for i, n in enumerate(model.graph.node) if "conv10_w_0" in n.input)
    assert [model.graph.node[i].op_type for i in range(conv10, len(model.graph.node))] == [
        "Conv",
        "Relu",
        "GlobalAveragePool",
        "Softmax",
    ]
    assert all(f"n{i}" not in scope for i in range(conv10, len(model.graph.node)))
    squeeze9 = next(i for i, n in enumerate(model.graph.node) if "fire9/squeeze1x1_w_0" in n.input)
    assert scope[f"n{squeeze9}"] == ["fire9"] and scope[f"n{squeeze9 + 1}"] == ["fire9"]  # its Relu too
