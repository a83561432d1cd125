"""Addresses that survive edits: nodes named by name (`@conv1`) wherever the API takes a node id
or a graph path, links from an older revision followed to the same node (GET .../locate), and
the history naming nodes by name and operator."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload


def chain_model() -> onnx.ModelProto:
    """An unnamed Abs, Relu "first", Neg "second", LeakyRelu "third", If "branch" (its branches
    read `t` from outside; the then branch's Add is named, the else branch's nodes are not),
    and two unnamed Exps."""
    f = lambda name: h.make_tensor_value_info(name, T.FLOAT, [2])  # noqa: E731
    one = nh.from_array(np.ones(2, np.float32), "one")
    then_g = h.make_graph([h.make_node("Add", ["t", "one"], ["a"], name="then_add")], "then", [], [f("a")], [one])
    else_g = h.make_graph(
        [h.make_node("Neg", ["t"], ["e1"]), h.make_node("Neg", ["e1"], ["e2"])], "else", [], [f("e2")]
    )
    nodes = [
        h.make_node("Abs", ["x"], ["p"]),
        h.make_node("Relu", ["p"], ["r"], name="first"),
        h.make_node("Neg", ["r"], ["s"], name="second"),
        h.make_node("LeakyRelu", ["s"], ["t"], name="third"),
        h.make_node("If", ["c"], ["u"], name="branch", then_branch=then_g, else_branch=else_g),
        h.make_node("Exp", ["u"], ["v"]),
        h.make_node("Exp", ["v"], ["y"]),
    ]
    graph = h.make_graph(nodes, "chain", [f("x"), h.make_tensor_value_info("c", T.BOOL, [])], [f("y")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def _edit(client, mid: str, base: int, *ops) -> dict:
    r = client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": list(ops)})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def test_nodes_and_graphs_by_name_wherever_an_id_or_path_is_taken(client):
    mid = upload(client, chain_model().SerializeToString()).get_json()["id"]
    node = client.get(f"/api/models/{mid}/node?id=@branch/then_branch/@then_add").get_json()
    assert node["id"] == "n4/then_branch/n0" and node["address"] == "@branch/then_branch/@then_add"
    assert client.get(f"/api/models/{mid}/node?id=n5").get_json()["address"] == "n5"  # unnamed: by position
    assert client.get(f"/api/models/{mid}/node?id=@branch/else_branch/n1").get_json()["id"] == "n4/else_branch/n1"
    graph = client.get(f"/api/models/{mid}/graph?path=@branch/else_branch").get_json()
    assert graph["path"] == "n4/else_branch" and graph["address"] == "@branch/else_branch"
    assert [n["id"] for n in graph["nodes"]] == ["n4/else_branch/n0", "n4/else_branch/n1"]
    assert client.get(f"/api/models/{mid}/graph").get_json()["address"] == ""
    assert client.get(f"/api/models/{mid}/schema?node=@third").get_json()["op_type"] == "LeakyRelu"
    types = client.get(f"/api/models/{mid}/types?path=@branch/then_branch")
    assert types.status_code == 200 and types.get_json()["path"] == "@branch/then_branch"
    one = client.get(f"/api/models/{mid}/tensors/%40%40branch%2Fthen_branch%3Aone").get_json()
    assert one["shape"] == [2]
    search = client.get(f"/api/models/{mid}/search?q=Neg&near=@branch/else_branch").get_json()
    assert search["results"][0]["path"] == "n4/else_branch"  # the graph on screen first
    # edits name nodes either way; an unknown or ambiguous name is refused as such
    _edit(client, mid, 0, {"op": "rename_node", "node": "@branch/then_branch/@then_add", "name": "plus"})
    missing = client.post(
        f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "delete_node", "node": "@nothing"}]}
    )
    assert missing.status_code == 404 and missing.get_json()["error"]["code"] == "unknown_node"
    bad = client.get(f"/api/models/{mid}/node?id=@branch/then_branch/@then_add")
    assert bad.status_code == 404 and "no node named 'then_add'" in bad.get_json()["error"]["message"]


def test_a_link_from_before_a_delete_opens_the_same_node(client):
    mid = upload(client, chain_model().SerializeToString()).get_json()["id"]
    links = ["n0", "n3", "n4/then_branch/n0", "n4/else_branch/n1", "n5", "n6"]
    before = {nid: client.get(f"/api/models/{mid}/node?id={nid}").get_json() for nid in links}
    _edit(client, mid, 0, {"op": "delete_node", "node": "second", "reconnect": True})

    # by position, each old id now opens another node (or none)...
    assert client.get(f"/api/models/{mid}/node?id=n3").get_json()["name"] == "branch"
    # ...followed from revision 0, the same node
    for nid in links:
        r = client.get(f"/api/models/{mid}/locate?from=0&node={nid}").get_json()
        assert r["revision"] == 1 and r["from"] == 0
        now = client.get(f"/api/models/{mid}/node?id={r['node']}").get_json()
        assert (now["name"], now["op_type"], now["outputs"]) == (
            before[nid]["name"],
            before[nid]["op_type"],
            before[nid]["outputs"],
        ), nid
    moved = client.get(f"/api/models/{mid}/locate?from=0&path=n4/else_branch&node=n4/else_branch/n1").get_json()
    assert moved == {"revision": 1, "from": 0, "path": "n3/else_branch", "node": "n3/else_branch/n1"}
    # a name form link needs no revision: it means the same node in any
    assert client.get(f"/api/models/{mid}/node?id=@third").get_json()["id"] == "n2"


def test_a_link_to_a_node_that_is_gone_finds_nothing(client):
    mid = upload(client, chain_model().SerializeToString()).get_json()["id"]
    _edit(client, mid, 0, {"op": "delete_node", "node": "n5", "reconnect": True})  # the first, unnamed Exp
    gone = client.get(f"/api/models/{mid}/locate?from=0&node=n5&path=").get_json()
    assert gone["node"] is None and gone["path"] == ""  # not the other Exp that took its place
    # a renamed node is followed (QA26: a rename broke every link shared before it): the same
    # operator writing the same tensors, under a name the old graph didn't have
    _edit(client, mid, 1, {"op": "rename_node", "node": "third", "name": "renamed"})
    assert client.get(f"/api/models/{mid}/locate?from=0&node=@third").get_json()["node"] == "n3"
    assert client.get(f"/api/models/{mid}/locate?from=1&node=n3").get_json()["node"] == "n3"
    # deleted (its reader now reads "second"'s output): nothing is taken for it
    _edit(client, mid, 2, {"op": "delete_node", "node": "@renamed", "reconnect": True})
    assert client.get(f"/api/models/{mid}/locate?from=0&node=@third").get_json()["node"] is None
    assert client.get(f"/api/models/{mid}/locate?from=0&node=n9").status_code == 404  # not a node then either
    assert client.get(f"/api/models/{mid}/locate?node=n1").status_code == 400


def test_history_names_nodes_by_name_and_operator(client):
    mid = upload(client, chain_model().SerializeToString()).get_json()["id"]
    result = _edit(
        client,
        mid,
        0,
        {"op": "set_attribute", "node": "@third", "name": "alpha", "value": 0.5},
        {"op": "set_metadata", "target": "@branch/then_branch/@then_add", "key": "k", "value": "v"},
        {"op": "set_metadata", "target": "n0", "key": "k", "value": "v"},
        {"op": "rename_node", "node": "first", "name": "relu_1"},
        {"op": "set_node_op", "node": "n0", "op_type": "Neg"},
        {"op": "delete_node", "node": "@third", "reconnect": True},
    )
    assert result["changes"] == [
        "added attribute 'alpha' of node \"third\" (LeakyRelu) = 0.5",
        "added metadata 'k' = 'v' to the node \"then_add\" (Add)",
        "added metadata 'k' = 'v' to the node n0 (Abs)",
        'node "first" (Relu) renamed to "relu_1"',
        "node n0 (Abs) is now ai.onnx::Neg",
        "deleted node \"third\" (LeakyRelu); readers of 't' now read 's'",
    ]
    history = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    assert history[-1]["changes"] == result["changes"]
    refused = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 1, "ops": [{"op": "delete_attribute", "node": "@relu_1", "name": "alpha"}]},
    ).get_json()
    assert refused["error"]["message"] == "op #1 (delete_attribute): node \"relu_1\" (Relu) has no attribute 'alpha'"


def test_a_link_to_a_node_whose_output_was_renamed_still_finds_it(client):
    """insert_node after an unnamed node renames that node's output (p → p_pre): a link to it from
    before still opens it, found by what it reads; a node that only took over a deleted one's
    reads (writing a name the old graph had) is never taken for it."""
    mid = upload(client, chain_model().SerializeToString()).get_json()["id"]
    _edit(client, mid, 0, {"op": "insert_node", "tensor": "p", "op_type": "Relu", "name": "added"})
    now = client.get(f"/api/models/{mid}/locate?from=0&node=n0").get_json()["node"]
    node = client.get(f"/api/models/{mid}/node?id={now}").get_json()
    assert (node["op_type"], node["outputs"]) == ("Abs", ["p_pre"])
    # the first unnamed Exp (u → v) deleted while u is read elsewhere too: the second (v → y)
    # now reads u as the first did, but writes y, which the old graph had: not the first one
    _edit(client, mid, 1, {"op": "add_output", "tensor": "u"})
    _edit(client, mid, 2, {"op": "delete_node", "node": "n6", "reconnect": True})
    assert client.get(f"/api/models/{mid}/locate?from=2&node=n6").get_json()["node"] is None


def test_a_link_to_an_unnamed_node_named_since_still_finds_it(client):
    """QA33 #4: the docs say a node is followed by its operator and outputs; an unnamed Abs given a
    name was lost (its name was part of what it was matched by)."""
    mid = upload(client, chain_model().SerializeToString()).get_json()["id"]
    _edit(client, mid, 0, {"op": "rename_node", "node": "n0", "name": "abs_named"})
    _edit(client, mid, 1, {"op": "insert_node", "tensor": "s", "op_type": "Relu", "name": "post"})
    answer = client.get(f"/api/models/{mid}/locate?from=0&node=n0").get_json()
    assert answer == {"revision": 2, "from": 0, "path": None, "node": "n0"}
    # inside a body: the else branch's second unnamed Neg, named since (the If now n5)
    _edit(client, mid, 2, {"op": "rename_node", "node": "@branch/else_branch/n1", "name": "neg2"})
    answer = client.get(f"/api/models/{mid}/locate?from=0&node=n4/else_branch/n1").get_json()
    assert answer["node"] == "n5/else_branch/n1"


def test_a_graph_path_naming_no_graph_is_an_unknown_graph(client):
    """QA33 #2: `/types?path=zz` and `/graph?path=zz` answered unknown_node ("'zz' is not a node id")."""
    mid = upload(client, chain_model().SerializeToString()).get_json()["id"]
    for call in ("types", "graph"):
        r = client.get(f"/api/models/{mid}/{call}?path=zz")
        assert r.status_code == 404 and r.get_json()["error"]["code"] == "unknown_graph", (call, r.get_json())
    assert client.get(f"/api/models/{mid}/node?id=zz").get_json()["error"]["code"] == "unknown_node"
