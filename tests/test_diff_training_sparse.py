"""Compare names what changed in sparse initializers and in training graphs (QA22 p5): a sparse
initializer renamed is listed as renamed (it showed only as its reader's inputs changing), one
whose values changed as changed; a training algorithm's node edited is a changed node under
train[k].algo with a line saying where, and a binding changed is named (all of it read
"training_info: changed")."""

from __future__ import annotations

import copy

import numpy as np
from browser.browser_models import sparse_training_model as sparse_model
from onnx import helper, numpy_helper
from testkit import diff_between


def test_a_sparse_initializer_renamed_is_listed_as_renamed(client):
    old = sparse_model()
    new = copy.deepcopy(old)
    new.graph.sparse_initializer[0].values.name = "S_renamed"
    new.graph.node[0].input[1] = "S_renamed"
    d = diff_between(client, old, new)
    assert {"from": "S", "to": "S_renamed"} in d["tensors"]["renamed"]
    assert d["tensors"]["added"] == [] and d["tensors"]["removed"] == []
    assert d["nodes"]["changed"] == []  # the Add reads the same tensor under its new name


def test_sparse_values_changed_and_added(client):
    old = sparse_model()
    new = copy.deepcopy(old)
    new.graph.sparse_initializer[0].values.CopyFrom(numpy_helper.from_array(np.array([1.5, 4.0], np.float32), "S"))
    extra = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([7.0], np.float32), "T"),
        numpy_helper.from_array(np.array([0], np.int64), "T_indices"),
        [2, 3],
    )
    new.graph.sparse_initializer.append(extra)
    d = diff_between(client, old, new)
    assert d["tensors"]["changed"] == [{"name": "S", "change": "sparse values changed"}]
    assert d["tensors"]["added"] == ["T"]
    assert not d["same_content"]


def test_a_training_graph_edit_is_a_changed_node_and_a_line(client):
    old = sparse_model()
    new = copy.deepcopy(old)
    algo = new.training_info[0].algorithm
    algo.node[1].op_type = "Add"  # W_new = W + step
    new.training_info[0].update_binding[0].value = "step"
    d = diff_between(client, old, new)
    changed = d["nodes"]["changed"]
    assert [(c["node"], c["name"], c["op_type"]) for c in changed] == [("train[0].algo/n1", "update", "Add")]
    lines = d["model"]["training_info"]
    assert "0 algorithm: 1 node changed" in lines
    assert "0 update_binding 'W': 'W_new' → 'step'" in lines
    assert d["counts"]["changed"] == 1


def test_training_alike_says_nothing(client):
    old = sparse_model()
    new = copy.deepcopy(old)
    new.producer_name = "other"
    d = diff_between(client, old, new)
    assert "training_info" not in d["model"] and d["model"]["producer_name"] == ["", "other"]
