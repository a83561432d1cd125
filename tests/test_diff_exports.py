"""Compare across two exports of a model pairs nodes by what they are, not by a counter's name
(QA27: torch's `/LeakyRelu_1` was conv2's activation last week and conv1's this week; paired by
name, the diff said "alpha 0.1 → 1" of a node that was new and hid the real change)."""

from __future__ import annotations

import onnx
from test_recipe_node_marks import WEEK1, WEEK2
from testkit import upload


def test_a_shifted_counter_pairs_each_node_with_itself_and_shows_the_real_change(client):
    week1 = onnx.load_from_string(WEEK1)
    week1.graph.node[3].attribute[0].f = 0.2  # last week's fix of conv2's activation, /LeakyRelu_1
    old = upload(client, week1.SerializeToString()).get_json()["id"]
    new = upload(client, WEEK2).get_json()["id"]  # the fix not made again: alpha 0.1 on /LeakyRelu_2
    diff = client.get(f"/api/models/{new}/diff?other={old}").get_json()
    assert sorted(n["name"] for n in diff["nodes"]["added"]) == ["/Identity_7", "/LeakyRelu"]
    assert diff["nodes"]["removed"] == []
    changed = {n["name"]: n["fields"] for n in diff["nodes"]["changed"]}
    assert any("alpha" in f and "0.2" in f and "0.1" in f for f in changed["/LeakyRelu_2"]), changed
    assert not any("alpha" in f for f in changed.get("/LeakyRelu_1", [])), changed  # conv1's: 0.1 both weeks
