"""The one graph walk (app/onnx_io/traverse.py) against a plain recursive walk written here, on
every official node-test model with subgraphs (If, Loop, Scan, SequenceMap, ...) and on a model
with functions, training graphs and GRAPHS attributes; addresses by position and by name
resolving to the same graphs and nodes; the opset of a node whether "" or "ai.onnx" spells the
default domain."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from testkit import node_testcases

from app.errors import NotFound
from app.onnx_io.address import named_address, resolve_graph, resolve_node
from app.onnx_io.traverse import fold, graphs_within, op_schema, opset_version, walk_graphs
from app.views.graph import count_subgraphs


def _held(node: onnx.NodeProto):
    """(attribute segment, graph) of each graph a node holds: the reference's own reading."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.name, a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            for k, g in enumerate(a.graphs):
                yield f"{a.name}[{k}]", g


def reference_walk(g, path: str = ""):
    """(path, graph) of g and every graph under it, depth first in node and attribute order."""
    yield path, g
    for i, n in enumerate(g.node):
        for seg, sub in _held(n):
            yield from reference_walk(sub, f"{path}/n{i}/{seg}" if path else f"n{i}/{seg}")


def reference_model_walk(model: onnx.ModelProto):
    yield from reference_walk(model.graph)
    for k, f in enumerate(model.functions):
        yield from reference_walk(f, f"fn[{k}]")
    for k, t in enumerate(model.training_info):
        if t.HasField("initialization"):
            yield from reference_walk(t.initialization, f"train[{k}].init")
        if t.HasField("algorithm"):
            yield from reference_walk(t.algorithm, f"train[{k}].algo")


def _bytes(g) -> bytes:
    return g.SerializeToString(deterministic=True)


def _models_with_subgraphs() -> dict[str, onnx.ModelProto]:
    cases = node_testcases().items()
    return {name: c.model for name, c in cases if c.model is not None and len(list(reference_walk(c.model.graph))) > 1}


SUBGRAPH_MODELS = _models_with_subgraphs()


def test_the_official_models_with_subgraphs_are_many():
    assert len(SUBGRAPH_MODELS) >= 40
    assert {"test_if", "test_loop11", "test_scan9_sum", "test_loop16_seq_none"} <= set(SUBGRAPH_MODELS)


@pytest.mark.parametrize("name", sorted(SUBGRAPH_MODELS))
def test_the_walk_visits_what_a_recursive_walk_visits(name):
    model = SUBGRAPH_MODELS[name]
    expected = list(reference_model_walk(model))
    walked = list(walk_graphs(model))
    assert [r.path for r in walked] == [p for p, _ in expected]
    assert [_bytes(r.container) for r in walked] == [_bytes(g) for _, g in expected]
    # one graph's tree: the same graphs in the same order, and the fold sees each once
    assert [_bytes(g) for g in graphs_within(model.graph)] == [_bytes(g) for _, g in reference_walk(model.graph)]
    assert fold(model.graph, lambda g, inner: 1 + sum(inner)) == len(list(reference_walk(model.graph)))
    assert count_subgraphs(model.graph) == len(list(reference_walk(model.graph))) - 1


@pytest.mark.parametrize("name", sorted(SUBGRAPH_MODELS))
def test_every_address_resolves_by_position_and_by_name(name):
    model = SUBGRAPH_MODELS[name]
    for ref in walk_graphs(model):
        assert resolve_graph(model, ref.path).path == ref.path
        named = named_address(model, ref.path)
        again = resolve_graph(model, named)
        assert again.path == ref.path and again.crumbs == ref.crumbs
        for i in range(len(ref.container.node)):
            nid = f"{ref.path}/n{i}" if ref.path else f"n{i}"
            by_name = named_address(model, nid)
            graph, index, _ = resolve_node(model, by_name)
            assert (graph.path, index) == (ref.path, i)
            name_ = ref.container.node[i].name
            unique = name_ and [n.name for n in ref.container.node].count(name_) == 1
            assert by_name.endswith("/@" + name_ if ref.path else "@" + name_) if unique else by_name.endswith(f"n{i}")


def _everywhere_model() -> onnx.ModelProto:
    """Subgraphs in a function, in a GRAPHS attribute and in a training graph, nested twice."""
    f = lambda name: h.make_tensor_value_info(name, T.FLOAT, [1])  # noqa: E731
    leaf = h.make_graph([h.make_node("Neg", ["x"], ["o"], name="neg")], "leaf", [], [f("o")])
    mid = h.make_graph(
        [h.make_node("If", ["c"], ["o"], name="inner_if", then_branch=leaf, else_branch=leaf)], "mid", [], [f("o")]
    )
    many = h.make_node("Custom", ["c"], ["m"], name="many", domain="my.ops")
    many.attribute.append(h.make_attribute("branches", [leaf, mid]))
    main = h.make_graph(
        [many, h.make_node("If", ["c"], ["y"], then_branch=mid, else_branch=leaf)],  # unnamed
        "main",
        [h.make_tensor_value_info("c", T.BOOL, [])],
        [f("y")],
    )
    fn = h.make_function(
        "my.fns", "Twice", ["c"], ["o"], [h.make_node("If", ["c"], ["o"], then_branch=mid, else_branch=leaf)], []
    )
    model = h.make_model(main, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("my.ops", 1)], functions=[fn])
    model.training_info.add().algorithm.CopyFrom(mid)
    return model


def test_functions_training_graphs_and_graphs_attributes_are_walked():
    model = _everywhere_model()
    expected = list(reference_model_walk(model))
    walked = list(walk_graphs(model))
    assert [r.path for r in walked] == [p for p, _ in expected]
    assert "n0/branches[1]/n0/else_branch" in [r.path for r in walked]
    assert "fn[0]/n0/then_branch/n0/then_branch" in [r.path for r in walked]
    assert "train[0].algo/n0/else_branch" in [r.path for r in walked]
    # the unnamed If stays positional; named nodes are named
    assert named_address(model, "n1/then_branch/n0/else_branch/n0") == "n1/then_branch/@inner_if/else_branch/@neg"
    assert named_address(model, "n0/branches[1]/n0") == "@many/branches[1]/@inner_if"


def test_name_addresses_refuse_what_they_cant_name():
    model = _everywhere_model()
    with pytest.raises(NotFound) as missing:
        resolve_node(model, "@nothing")
    assert missing.value.code == "unknown_node"
    with pytest.raises(NotFound) as deep:
        resolve_graph(model, "@nothing/body")
    assert deep.value.code == "unknown_graph"
    model.graph.node[1].name = "many"  # two nodes of the main graph named "many"
    with pytest.raises(NotFound) as twice:
        resolve_node(model, "@many")
    assert twice.value.code == "ambiguous_node"
    assert named_address(model, "n0") == "n0"  # a name two nodes share names neither
    with pytest.raises(NotFound):
        resolve_node(model, "@")  # no name: no node


def test_names_are_percent_encoded_like_attribute_names():
    model = _everywhere_model()
    model.graph.node[0].name = "/model/layers.0/If#1:[a]%"
    address = named_address(model, "n0/branches[0]/n0")
    assert address == "@%2Fmodel%2Flayers.0%2FIf%231%3A%5Ba%5D%25/branches[0]/@neg"
    assert resolve_node(model, address)[0].path == "n0/branches[0]"


# ------------------------------------------------------------------ opsets


def _leaky(import_domain: str, node_domain: str) -> onnx.ModelProto:
    x, y = h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info("y", T.FLOAT, [2])
    node = h.make_node("LeakyRelu", ["x"], ["y"], domain=node_domain, name="leaky")
    return h.make_model(h.make_graph([node], "g", [x], [y]), opset_imports=[h.make_opsetid(import_domain, 16)])


@pytest.mark.parametrize("imported", ["", "ai.onnx"])
@pytest.mark.parametrize("used", ["", "ai.onnx"])
def test_empty_and_ai_onnx_are_one_domain(imported, used):
    model = _leaky(imported, used)
    node = model.graph.node[0]
    assert opset_version(model, model.graph, used) == 16
    assert opset_version(model, model.graph, "ai.onnx" if used == "" else "") == 16
    schema = op_schema(model, model.graph, node)
    assert schema is not None and schema.name == "LeakyRelu" and schema.since_version == 16
    assert opset_version(model, model.graph, "com.microsoft") is None


def test_a_function_node_runs_at_the_functions_own_imports():
    model = _everywhere_model()
    fn = model.functions[0]
    fn.opset_import.add(domain="ai.onnx", version=13)
    assert opset_version(model, fn, "") == 13
    assert opset_version(model, model.graph, "") == 17
    assert op_schema(model, fn, fn.node[0]).since_version == 13  # If-13


def test_the_docs_panel_and_the_edit_path_read_one_opset(client):
    """A model importing "ai.onnx": the schema endpoint and an edit typing a new attribute from
    the schema agree (they used to look the opset up each its own way)."""
    from testkit import upload

    mid = upload(client, _leaky("ai.onnx", "").SerializeToString()).get_json()["id"]
    schema = client.get(f"/api/models/{mid}/schema?node=@leaky").get_json()
    assert schema["known"] and schema["opset_version"] == 16 and schema["node"] == "n0"
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "@leaky", "name": "alpha", "value": 0.2}]},
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == ["added attribute 'alpha' of node \"leaky\" (LeakyRelu) = 0.2"]
