"""Compare (issue 15): GET .../diff names exactly what an edit changed — nodes matched by name,
then by structure; tensors by name and content; attributes of every type, subgraphs recursively,
metadata, inputs and outputs, model fields — between two revisions or two models."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from browser.browser_models import tiny_cnn
from onnx import TensorProto, helper, numpy_helper
from testkit import ONNX_DATA, upload

from app.views.io_pairs import paired, same_shapes


def edit(client, mid: str, *ops) -> int:
    head = client.get(f"/api/models/{mid}").get_json()["revision"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": head, "ops": list(ops)})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["revision"]


def diff(client, mid: str, query: str) -> dict:
    r = client.get(f"/api/models/{mid}/diff?{query}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def test_a_revision_against_itself_is_the_same(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    d = diff(client, mid, "from=0&to=0")
    assert d["same"] and d["counts"] == {"added": 0, "removed": 0, "changed": 0}


@pytest.mark.parametrize(
    ("ops", "expect"),
    [
        (
            [{"op": "set_attribute", "node": "n6", "name": "alpha", "value": 0.5}],
            {"changed": [("/classifier/fc/Gemm", ["attribute alpha: (none) → 0.5"])]},
        ),
        (
            [{"op": "rename_node", "node": "@gap", "name": "global_pool"}],
            {"changed": [("global_pool", ["name: 'gap' → 'global_pool'"])]},
        ),
        (
            [{"op": "delete_attribute", "node": "n1", "name": "alpha"}],
            {"changed": [("/features/act1/LeakyRelu", ["attribute alpha: 0.1 → (none)"])]},
        ),
        (
            [{"op": "insert_node", "tensor": "p1", "op_type": "Relu", "name": "extra"}],
            {"added": ["extra"], "changed": "one"},  # which tensor gets the new name is the op's choice
        ),
    ],
)
def test_each_edit_is_named_exactly(client, ops, expect):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    rev = edit(client, mid, *ops)
    d = diff(client, mid, f"from=0&to={rev}")
    changed = [(c["name"], c["fields"]) for c in d["nodes"]["changed"]]
    if expect.get("changed") == "one":
        ((name, fields),) = changed
        assert name in ("pool1", "gap") and len(fields) == 1 and fields[0].startswith(("inputs:", "outputs:"))
    else:
        assert changed == expect.get("changed", [])
    assert [n["name"] for n in d["nodes"]["added"]] == expect.get("added", [])
    assert d["nodes"]["removed"] == []
    assert not d["same"]


def test_rewiring_and_an_added_node_are_named_exactly(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    rev = edit(client, mid, {"op": "set_node_input", "node": "gap", "index": 0, "tensor": "r1"})
    d = diff(client, mid, f"from=0&to={rev}")
    assert [(c["name"], c["fields"]) for c in d["nodes"]["changed"]] == [("gap", ["inputs: ['p1'] → ['r1']"])]
    assert d["nodes"]["added"] == d["nodes"]["removed"] == []
    rev2 = edit(client, mid, {"op": "add_node", "op_type": "Relu", "name": "side", "inputs": ["p1"]})
    d = diff(client, mid, f"from={rev}&to={rev2}")
    assert [(n["name"], n["op_type"]) for n in d["nodes"]["added"]] == [("side", "Relu")]
    assert d["nodes"]["changed"] == d["nodes"]["removed"] == []


def test_weights_metadata_and_io(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    rev = edit(
        client,
        mid,
        {"op": "set_initializer", "name": "fc.bias", "value": {"dtype": "FLOAT", "shape": [10], "values": [1] * 10}},
        {"op": "set_metadata", "key": "owner", "value": "team-a"},
        {"op": "add_output", "tensor": "p1"},
        {"op": "set_model_field", "field": "doc_string", "value": "tuned"},
    )
    d = diff(client, mid, f"from=0&to={rev}")
    assert d["tensors"] == {
        "added": [],
        "removed": [],
        "changed": [{"name": "fc.bias", "change": "values changed"}],
        "renamed": [],
        "renamed_count": 0,
    }
    assert d["metadata"]["added"] == {"owner": "team-a"}
    assert d["outputs"]["added"] == ["p1"]
    assert d["model"]["doc_string"] == ["", "tuned"]
    assert d["nodes"]["changed"] == [] and d["nodes"]["added"] == []
    # the other way round: what was added is removed
    back = diff(client, mid, f"from={rev}&to=0")
    assert back["outputs"]["removed"] == ["p1"] and back["metadata"]["removed"] == {"owner": "team-a"}


def test_deleted_nodes_are_removed_and_the_rest_match(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    rev = edit(client, mid, {"op": "delete_node", "node": "n1", "reconnect": True})
    d = diff(client, mid, f"from=0&to={rev}")
    assert [n["name"] for n in d["nodes"]["removed"]] == ["/features/act1/LeakyRelu"]
    # the Conv keeps writing its own tensor (not one named after the node gone): pool1 reads it
    assert [(c["name"], c["fields"]) for c in d["nodes"]["changed"]] == [("pool1", ["inputs: ['r1'] → ['c1']"])]


def if_model(then_alpha: float) -> bytes:
    def branch(alpha: float, name: str) -> onnx.GraphProto:
        return helper.make_graph(
            [helper.make_node("LeakyRelu", ["x"], [f"{name}_y"], name=f"{name}_act", alpha=alpha)],
            name,
            [],
            [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [4])],
        )

    graph = helper.make_graph(
        [
            helper.make_node(
                "If", ["c"], ["y"], name="if", then_branch=branch(then_alpha, "then"), else_branch=branch(0.5, "else")
            )
        ],
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_subgraphs_are_diffed_recursively(client):
    mid = upload(client, if_model(0.1)).get_json()["id"]
    rev = edit(client, mid, {"op": "set_attribute", "node": "n0/then_branch/n0", "name": "alpha", "value": 0.3})
    d = diff(client, mid, f"from=0&to={rev}")
    by_node = {c["node"]: c for c in d["nodes"]["changed"]}
    inner = by_node["n0/then_branch/n0"]
    assert inner["fields"] == ["attribute alpha: 0.1 → 0.3"]
    assert by_node["n0"]["fields"] == ["subgraph then_branch: 1 node changed"]


def test_two_models_compare_by_name_and_content(client):
    a = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    other = tiny_cnn()
    other.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "conv1.weight"))
    b = upload(client, other.SerializeToString()).get_json()["id"]
    d = diff(client, b, f"other={a}")
    assert (d["from"]["model"], d["to"]["model"]) == (a, b)
    assert d["tensors"]["changed"] == [{"name": "conv1.weight", "change": "values changed"}]
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}
    assert client.get(f"/api/models/{b}/diff?other={a}&from=0").status_code == 400
    assert client.get(f"/api/models/{b}/diff?other=nope").status_code == 404


@pytest.mark.parametrize("name", ["light_inception_v1", "light_resnet50", "light_densenet121"])
def test_a_rename_in_a_real_model_is_the_one_change(client, name):
    data = (ONNX_DATA / "light" / f"{name}.onnx").read_bytes()
    mid = upload(client, data).get_json()["id"]
    model = onnx.load_from_string(data)
    k = len(model.graph.node) // 2
    rev = edit(client, mid, {"op": "rename_node", "node": f"n{k}", "name": "renamed_by_test"})
    d = diff(client, mid, f"from=0&to={rev}")
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 1}, d["counts"]
    (change,) = d["nodes"]["changed"]
    assert change["node"] == f"n{k}" and change["fields"] == [f"name: {model.graph.node[k].name!r} → 'renamed_by_test'"]


@pytest.mark.parametrize(
    ("ops", "check"),
    [
        (
            [{"op": "rename_tensor", "from": "p1", "to": "pooled"}],
            # the tensor's writer and reader name it otherwise, and are the same nodes
            lambda d: (
                d["nodes"]["changed"] == []
                and d["tensors"]["renamed"] == [{"from": "p1", "to": "pooled"}]
                and "graph" not in d["model"]  # its value_info renamed with it
            ),
        ),
        (
            [{"op": "set_io_shape", "name": "input", "shape": ["N", 3, 32, 32]}],
            lambda d: (
                d["inputs"]["changed"]
                == [
                    {
                        "name": "input",
                        "from": "FLOAT ⟨1×3×32×32⟩",
                        "to": "FLOAT ⟨N×3×32×32⟩",
                        "change": "FLOAT ⟨1×3×32×32⟩ → FLOAT ⟨N×3×32×32⟩",
                    }
                ]
                and d["counts"]["changed"] == 0
            ),
        ),
        (
            [{"op": "add_output", "tensor": "logits"}, {"op": "remove_output", "name": "probs"}],
            lambda d: d["outputs"]["removed"] == ["probs"] and d["outputs"]["added"] == ["logits"],
        ),
        (
            [{"op": "add_input", "name": "extra", "dtype": "FLOAT", "shape": [1]}],
            lambda d: d["inputs"]["added"] == ["extra"],
        ),
        (
            [{"op": "add_initializer", "name": "k", "value": {"dtype": "FLOAT", "shape": [2], "values": [1, 2]}}],
            lambda d: d["tensors"]["added"] == ["k"] and d["counts"] == {"added": 0, "removed": 0, "changed": 0},
        ),
        (
            [{"op": "set_node_op", "node": "n7", "op_type": "LogSoftmax"}],
            lambda d: [c["fields"] for c in d["nodes"]["changed"]] == [["op_type: 'Softmax' → 'LogSoftmax'"]],
        ),
        ([{"op": "convert_opset", "version": 18}], lambda d: d["model"]["opset_import"] == [{"": 17}, {"": 18}]),
        (
            [{"op": "extract_subgraph", "inputs": ["p1"], "outputs": ["probs"]}],
            lambda d: (
                {n["name"] for n in d["nodes"]["removed"]}
                == {"/features/conv1/Conv", "/features/act1/LeakyRelu", "pool1"}
                and d["inputs"]["added"] == ["p1"]
                and d["inputs"]["removed"] == ["input"]
            ),
        ),
    ],
    ids=[
        "rename_tensor",
        "set_io_shape",
        "outputs",
        "add_input",
        "add_initializer",
        "set_node_op",
        "convert_opset",
        "extract",
    ],
)
def test_the_other_ops_are_named_where_they_act(client, ops, check):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    rev = edit(client, mid, *ops)
    d = diff(client, mid, f"from=0&to={rev}")
    assert check(d), d


def test_renamed_inputs_and_outputs_are_renamed_not_added_and_removed(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    rev = edit(
        client,
        mid,
        {"op": "rename_tensor", "from": "input", "to": "image"},
        {"op": "rename_tensor", "from": "probs", "to": "scores"},
        {"op": "set_io_shape", "name": "image", "shape": ["N", 3, 32, 32]},
    )
    d = diff(client, mid, f"from=0&to={rev}")
    assert d["inputs"]["added"] == d["inputs"]["removed"] == [] == d["outputs"]["added"] == d["outputs"]["removed"]
    (inp,) = d["inputs"]["renamed"]
    assert inp == {"from": "input", "to": "image", "type": "FLOAT ⟨1×3×32×32⟩ → FLOAT ⟨N×3×32×32⟩"}
    assert d["outputs"]["renamed"] == [{"from": "probs", "to": "scores"}]
    # costs are counted with N at the 1 revision 0 fixes; back the other way, revision 0 has none to pin
    assert d["same_shapes"] == {"from": {}, "to": {"N": 1}, "names": {}}
    back = diff(client, mid, f"from={rev}&to=0")
    assert back["same_shapes"] == {"from": {"N": 1}, "to": {}, "names": {}}
    assert back["inputs"]["renamed"][0]["from"] == "image"


def detector_with_a_tail() -> onnx.ModelProto:
    """A detector's shape: pre [1, 8, 6] (boxes and scores per anchor), then post-processing to
    det_boxes [num_det, 4], the model's one output."""
    shape = numpy_helper.from_array(np.array([-1, 4], np.int64), "shape")
    starts, ends, axes = (
        numpy_helper.from_array(np.array([v], np.int64), n) for v, n in ((0, "s"), (4, "e"), (2, "a"))
    )
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["pre"], name="head"),
            helper.make_node("Slice", ["pre", "s", "e", "a"], ["boxes"], name="slice"),
            helper.make_node("Reshape", ["boxes", "shape"], ["det_boxes"], name="reshape"),
        ],
        "detector",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6])],
        [helper.make_tensor_value_info("det_boxes", TensorProto.FLOAT, ["num_det", 4])],
        [shape, starts, ends, axes],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_an_output_cut_before_the_old_one_is_added_not_the_old_one_renamed(client):
    """QA43 #1: cutting a detector's post-processing and renaming the new output put
    [1, 8, 6] at det_boxes' place: Compare said det_boxes was renamed, Run compared the two."""
    mid = upload(client, detector_with_a_tail().SerializeToString()).get_json()["id"]
    rev = edit(
        client,
        mid,
        {"op": "extract_subgraph", "inputs": ["x"], "outputs": ["pre"]},
        {"op": "rename_tensor", "from": "pre", "to": "output"},
    )
    d = diff(client, mid, f"from=0&to={rev}")
    assert d["outputs"]["renamed"] == []
    assert d["outputs"]["removed"] == ["det_boxes"] and d["outputs"]["added"] == ["output"]
    r = client.post(f"/api/models/{mid}/run", json={"revision": rev, "compare_to": 0})
    assert r.status_code == 200, r.get_json()
    assert "output" not in (r.get_json().get("renamed") or {}), r.get_json().get("renamed")


def test_an_output_a_node_wrote_under_another_name_before_is_that_one_renamed():
    """QA44 #1: cut before a top-100 (det [batch, 100, 85]) with its output0 renamed output,
    declared [?, ?, 85] — types that agree with det's — the new output was det renamed. Its
    writer (the Concat) wrote output0 in the old graph: output0's rename, det removed. A plain
    rename (the same writer, the same value) still pairs."""
    f = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa: E731
    old = helper.make_graph(
        [
            helper.make_node("Concat", ["a", "b"], ["output0"], name="concat", axis=1),
            helper.make_node("Identity", ["output0"], ["det"], name="top"),
        ],
        "old",
        [f("a", ["batch", 50, 85]), f("b", ["batch", 50, 85])],
        [f("det", ["batch", 100, 85])],
    )
    cut = helper.make_graph(
        [helper.make_node("Concat", ["a", "b"], ["output"], name="concat", axis=1)],
        "cut",
        [f("a", ["batch", 50, 85]), f("b", ["batch", 50, 85])],
        [f("output", ["unk__99", "unk__151", 85])],
    )
    assert paired(old, cut, "output") == []
    renamed = helper.make_graph(
        [
            helper.make_node("Concat", ["a", "b"], ["output0"], name="concat", axis=1),
            helper.make_node("Identity", ["output0"], ["boxes"], name="top"),
        ],
        "renamed",
        [f("a", ["batch", 50, 85]), f("b", ["batch", 50, 85])],
        [f("boxes", ["batch", 100, 85])],
    )
    assert paired(old, renamed, "output") == [("det", "boxes")]


def test_same_shapes_maps_differently_named_dims_and_skips_conflicts():
    def model(a, b):
        graph = helper.make_graph(
            [helper.make_node("Add", ["x", "y"], ["z"])],
            "g",
            [
                helper.make_tensor_value_info("x", TensorProto.FLOAT, a),
                helper.make_tensor_value_info("y", TensorProto.FLOAT, b),
            ],
            [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        )
        return helper.make_model(graph)

    # N is 1 at one place and 2 at another in the old model: no one size makes the shapes match
    assert same_shapes(model([1, "S"], [2, "S"]), model(["N", "seq"], ["N", "seq"])) == {
        "from": {},
        "to": {},
        "names": {"S": "seq"},
    }


def test_an_edit_two_bodies_down_is_counted_where_it_is(client):
    """QA20 F13: one attribute of a node in an If inside a Loop's body read "subgraph body: 2
    node(s) added, removed or changed" on the Loop (its If counted with the node)."""
    f = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [4])  # noqa: E731
    then_g = helper.make_graph(
        [helper.make_node("LeakyRelu", ["v"], ["t"], name="leaky", alpha=0.1)], "then", [], [f("t")]
    )
    else_g = helper.make_graph([helper.make_node("Neg", ["v"], ["e"], name="neg")], "else", [], [f("e")])
    body = helper.make_graph(
        [
            helper.make_node("If", ["c_in"], ["v_out"], name="pick", then_branch=then_g, else_branch=else_g),
            helper.make_node("Identity", ["c_in"], ["c_out"], name="keep"),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            f("v"),
        ],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), f("v_out")],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "c", "x"], ["y"], name="loop", body=body)],
        "g",
        [
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            f("x"),
        ],
        [f("y")],
    )
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    mid = upload(client, data).get_json()["id"]
    rev = edit(client, mid, {"op": "set_attribute", "node": "n0/body/n0/then_branch/n0", "name": "alpha", "value": 0.3})
    by_node = {c["node"]: c for c in diff(client, mid, f"from=0&to={rev}")["nodes"]["changed"]}
    assert by_node["n0"]["fields"] == ["subgraph body: 1 node changed, 1 more in its bodies"]
    assert by_node["n0/body/n0"]["fields"] == ["subgraph then_branch: 1 node changed"]


def test_a_node_inserted_before_a_branch_output_leaves_the_output_in_its_place(client):
    # QA20 F13: "output 'then_y' removed" and "output 'then_y' added" for one Identity inserted
    mid = upload(client, if_model(0.1)).get_json()["id"]
    rev = edit(client, mid, {"op": "insert_node", "graph": "n0/then_branch", "tensor": "then_y", "op_type": "Identity"})
    d = diff(client, mid, f"from=0&to={rev}")
    by_node = {c["node"]: c for c in d["nodes"]["changed"]}
    assert by_node["n0"]["fields"] == ["subgraph then_branch: 1 node added"], by_node["n0"]


def test_a_few_values_changed_are_said_with_their_values(client):
    """A Reshape's target shape edited from [1, 8] to [-1, 8]: Compare quotes the values (a
    person looks for the -1), where a weight's change stays "values changed"."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="flatten")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],  # any rank: [1, 2, 4] too
        [numpy_helper.from_array(np.array([1, 8], np.int64), "shape")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    rev = edit(
        client,
        mid,
        {"op": "set_initializer", "name": "shape", "value": {"dtype": "INT64", "shape": [2], "values": [-1, 8]}},
    )
    assert diff(client, mid, f"from=0&to={rev}")["tensors"]["changed"] == [
        {"name": "shape", "change": "values [1, 8] → [-1, 8]"}
    ]
    rev = edit(
        client,
        mid,
        {
            "op": "set_initializer",
            "name": "shape",
            "value": {"dtype": "INT64", "shape": [3], "values": [1, 2, 4]},
            "allow_type_change": True,
        },
    )
    assert diff(client, mid, f"from=0&to={rev}")["tensors"]["changed"] == [
        {"name": "shape", "change": "INT64 [2] → INT64 [3]: [1, 8] → [1, 2, 4]"}
    ]
