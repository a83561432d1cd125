"""A recipe replayed on the next export edits the nodes it edited, or refuses (QA27): a torch
export names functional ops by a counter (`/LeakyRelu_1`), so one more above shifts every name
after it, and a recipe holding names alone edited whichever node took the name — every gate
passing, nothing said."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper
from test_recipes import apply, edit
from testkit import upload


def export(*nodes: onnx.NodeProto) -> bytes:
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def leaky(name: str, src: str, dst: str, alpha: float = 0.1) -> onnx.NodeProto:
    return helper.make_node("LeakyRelu", [src], [dst], name=name, alpha=alpha)


def neg(name: str, src: str, dst: str) -> onnx.NodeProto:
    return helper.make_node("Neg", [src], [dst], name=name)


WEEK1 = export(
    neg("/b1/Neg", "x", "a"), leaky("/LeakyRelu", "a", "b"), neg("/b2/Neg", "b", "c"), leaky("/LeakyRelu_1", "c", "y")
)
# a no-op LeakyRelu at the top shifts the counter; an Identity after /b1/Neg
WEEK2 = export(
    leaky("/LeakyRelu", "x", "x1", alpha=1.0),
    neg("/b1/Neg", "x1", "a"),
    helper.make_node("Identity", ["a"], ["a1"], name="/Identity_7"),
    leaky("/LeakyRelu_1", "a1", "b"),
    neg("/b2/Neg", "b", "c"),
    leaky("/LeakyRelu_2", "c", "y"),
)
# /b2/Neg is followed by no LeakyRelu any more, yet a /LeakyRelu_1 still exists (after /b1/Neg)
WEEK3 = export(
    neg("/b1/Neg", "x", "a"),
    leaky("/LeakyRelu_1", "a", "b"),
    neg("/b2/Neg", "b", "c"),
    helper.make_node("Relu", ["c"], ["y"], name="/Relu"),
)


def alphas(data: bytes) -> dict[str, float]:
    model = onnx.load_from_string(data)
    return {n.name: helper.get_attribute_value(n.attribute[0]) for n in model.graph.node if n.op_type == "LeakyRelu"}


@pytest.fixture
def recipe(client) -> dict:
    """Week 1's fix: conv2's activation (/LeakyRelu_1) alpha 0.1 -> 0.2, made from the page (by position)."""
    mid = upload(client, WEEK1).get_json()["id"]
    edit(client, mid, 0, {"op": "set_attribute", "node": "n3", "name": "alpha", "value": 0.2})
    return client.get(f"/api/models/{mid}/recipe").get_json()


def test_a_recipe_marks_each_node_by_its_operator_and_what_it_reads(recipe):
    [batch] = recipe["batches"]
    assert batch["ops"][0]["node"] == "@%2FLeakyRelu_1"
    assert batch["nodes"] == {"@%2FLeakyRelu_1": {"op_type": "LeakyRelu", "domain": "", "after": ["@/b2/Neg"]}}


def test_replayed_on_a_shifted_export_it_edits_the_node_it_edited(client, recipe, tmp_path):
    mid = upload(client, WEEK2).get_json()["id"]
    r = client.post(f"/api/models/{mid}/recipe", json={"base": 0, "recipe": recipe})
    assert r.status_code == 200, r.get_json()
    said = "the recipe's node '/LeakyRelu_1' is '/LeakyRelu_2' here (the LeakyRelu after /b2/Neg)"
    assert r.get_json()["changes"][0] == said and r.get_json()["moved"] == [said]
    data = client.get(f"/api/models/{mid}/download").data
    assert alphas(data) == {"/LeakyRelu": 1.0, "/LeakyRelu_1": pytest.approx(0.1), "/LeakyRelu_2": pytest.approx(0.2)}
    history = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    assert history[-1]["ops"][0]["node"] == "@%2FLeakyRelu_2"  # recorded as it applied
    # the command line replays it the same
    run = apply(tmp_path, WEEK2, recipe)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out.onnx").read_bytes() == data


def test_a_name_now_on_another_node_with_none_like_it_is_refused(client, recipe, tmp_path):
    mid = upload(client, WEEK3).get_json()["id"]
    r = client.post(f"/api/models/{mid}/recipe", json={"base": 0, "recipe": recipe})
    assert r.status_code == 422, r.get_json()
    error = r.get_json()["error"]
    assert error["code"] == "recipe_node_moved"
    assert error["message"] == (
        "batch 1 (revision 1 of model.onnx; set_attribute '@/LeakyRelu_1'): the recipe's node '/LeakyRelu_1' was the LeakyRelu after /b2/Neg; here '/LeakyRelu_1' is"
        " the LeakyRelu after /b1/Neg, and no node here is the LeakyRelu after /b2/Neg: name the node to edit"
        " in the recipe"
    )
    assert client.get(f"/api/models/{mid}/revisions").get_json()["revisions"][-1]["revision"] == 0
    run = apply(tmp_path, WEEK3, recipe)
    assert run.returncode != 0 and "the recipe's node '/LeakyRelu_1' was the LeakyRelu after /b2/Neg" in run.stderr


def test_on_its_own_model_and_without_marks_a_recipe_replays_as_before(client, recipe):
    mid = upload(client, WEEK1).get_json()["id"]
    r = client.post(f"/api/models/{mid}/recipe", json={"base": 0, "recipe": recipe})
    assert r.status_code == 200 and not any("recipe's node" in c for c in r.get_json()["changes"])
    bare = {"ops": recipe["ops"]}  # hand-written: names alone, as they say
    mid = upload(client, WEEK2).get_json()["id"]
    assert client.post(f"/api/models/{mid}/recipe", json={"base": 0, "recipe": bare}).status_code == 200
    assert alphas(client.get(f"/api/models/{mid}/download").data)["/LeakyRelu_1"] == pytest.approx(0.2)


def test_a_dry_run_says_each_step_and_stores_nothing(client, recipe):
    mid = upload(client, WEEK2).get_json()["id"]
    r = client.post(f"/api/models/{mid}/recipe", json={"base": 0, "recipe": recipe, "dry_run": True})
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    assert answer["dry_run"] is True and answer["revision"] == 0 and answer["batches"] == 1
    [step] = answer["steps"]
    assert step["batch"] == 1 and step["origin"] == "revision 1 of model.onnx"
    assert step["changes"] == [
        "the recipe's node '/LeakyRelu_1' is '/LeakyRelu_2' here (the LeakyRelu after /b2/Neg)",
        "attribute 'alpha' of node \"/LeakyRelu_2\" (LeakyRelu) set to 0.2",
    ]
    assert client.get(f"/api/models/{mid}/revisions").get_json()["revisions"][-1]["revision"] == 0
    assert alphas(client.get(f"/api/models/{mid}/download").data)["/LeakyRelu_2"] == pytest.approx(0.1)
    bad = client.post(f"/api/models/{mid}/recipe", json={"base": 0, "recipe": recipe, "dry_run": "yes"})
    assert bad.status_code == 400 and '"dry_run"' in bad.get_json()["error"]["message"]
