"""Replay (issue 15): GET .../recipe gives the edits from one revision to another, and
`onnx-studio apply` replays them headless with the same gates: on the model they came from it
makes the very bytes the server stored; on the next export of the model it makes the same edits."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

STUDIO = Path(sys.executable).parent / "onnx-studio"


def conv_model(seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [w, b],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def edit(client, mid: str, base: int, *ops) -> int:
    r = client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": list(ops)})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["revision"]


def npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def apply(tmp_path: Path, model: bytes, recipe: dict, *flags: str) -> subprocess.CompletedProcess:
    (tmp_path / "in.onnx").write_bytes(model)
    (tmp_path / "r.json").write_text(json.dumps(recipe))
    cmd = [str(STUDIO), "apply", str(tmp_path / "in.onnx"), str(tmp_path / "r.json"), "-o", str(tmp_path / "out.onnx")]
    return subprocess.run([*cmd, *flags], capture_output=True, text=True, timeout=300)


@pytest.fixture
def history(client):
    """A model with four edit batches: an attribute, names, metadata, and weights from an .npy."""
    mid = upload(client, conv_model()).get_json()["id"]
    bias = np.arange(4, dtype=np.float32)
    blob = client.post("/api/blobs", data={"file": (io.BytesIO(npy(bias)), "b.npy")}).get_json()["blob"]
    rev = edit(client, mid, 0, {"op": "set_attribute", "node": "@conv", "name": "dilations", "value": [1, 1]})
    rev = edit(
        client,
        mid,
        rev,
        {"op": "rename_node", "node": "@relu", "name": "activation"},
        {"op": "rename_tensor", "from": "c", "to": "conv_out"},
    )
    rev = edit(client, mid, rev, {"op": "set_metadata", "key": "exported_by", "value": "studio"})
    rev = edit(client, mid, rev, {"op": "set_initializer", "name": "b", "value": {"npy": blob}})
    return mid, rev, bias


def test_a_recipe_lists_the_batches_between_two_revisions(client, history):
    mid, head, _ = history
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    assert (recipe["format"], recipe["from"], recipe["to"]) == ("onnx-studio-recipe/1", 0, head)
    assert [b["revision"] for b in recipe["batches"]] == [1, 2, 3, 4]
    assert [op["op"] for op in recipe["ops"]] == [
        "set_attribute",
        "rename_node",
        "rename_tensor",
        "set_metadata",
        "set_initializer",
    ]
    assert len(recipe["blobs"]) == 1  # the .npy the last batch names travels with it
    part = client.get(f"/api/models/{mid}/recipe?from=1&to=3").get_json()
    assert [b["revision"] for b in part["batches"]] == [2, 3]
    r = client.get(f"/api/models/{mid}/recipe?from=1&download=1")
    assert (
        r.headers["Content-Disposition"].startswith("attachment")
        and "r1-r4.recipe.json" in r.headers["Content-Disposition"]
    )


def test_a_recipe_follows_the_history_tree(client, history):
    mid, _, _ = history
    client.post(f"/api/models/{mid}/undo")
    client.post(f"/api/models/{mid}/undo")  # at revision 2
    branch = edit(client, mid, 2, {"op": "set_model_field", "field": "doc_string", "value": "other way"})
    recipe = client.get(f"/api/models/{mid}/recipe?to={branch}").get_json()
    assert [b["revision"] for b in recipe["batches"]] == [1, 2, branch]
    r = client.get(f"/api/models/{mid}/recipe?from=3&to={branch}")
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "not_an_ancestor"
    assert client.get(f"/api/models/{mid}/recipe?to=99").status_code == 404
    assert client.get(f"/api/models/{mid}/recipe?from=x").status_code == 400


def test_replayed_on_its_own_model_a_recipe_makes_the_servers_bytes(client, history, tmp_path):
    mid, head, bias = history
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    original = client.get(f"/api/models/{mid}/download?revision=0").data
    run = apply(tmp_path, original, recipe)
    assert run.returncode == 0, run.stderr
    assert "4 batch(es) applied" in run.stdout
    out = (tmp_path / "out.onnx").read_bytes()
    assert out == client.get(f"/api/models/{mid}/download?revision={head}").data
    model = onnx.load_from_string(out)
    onnx.checker.check_model(model, full_check=True)
    assert [n.name for n in model.graph.node] == ["conv", "activation"]
    assert np.array_equal(numpy_helper.to_array(model.graph.initializer[1]), bias)


def test_rewiring_replays_to_the_servers_bytes(client, tmp_path):
    """add_node + set_node_input (which may reorder nodes), then simplify and convert_float16
    (onnxruntime's tools, in the helper; Cast nodes at the edges), give the same bytes headless."""
    mid = upload(client, conv_model()).get_json()["id"]
    head = edit(
        client,
        mid,
        0,
        {"op": "add_node", "op_type": "Sigmoid", "name": "gate", "inputs": ["c"]},
        {"op": "set_node_input", "node": "@relu", "index": 0, "tensor": "gate_out"},
    )
    head = edit(client, mid, head, {"op": "simplify"}, {"op": "convert_float16"})
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, conv_model(), recipe)
    assert run.returncode == 0, run.stderr
    out = (tmp_path / "out.onnx").read_bytes()
    assert out == client.get(f"/api/models/{mid}/download?revision={head}").data
    assert [n.name for n in onnx.load_from_string(out).graph.node] == [
        "graph_input_cast0",
        "conv",
        "gate",
        "relu",
        "graph_output_cast0",
    ]


def test_quantization_replays_to_the_servers_bytes(client, tmp_path):
    mid = upload(client, conv_model()).get_json()["id"]
    head = edit(client, mid, 0, {"op": "quantize_dynamic", "op_types": ["Conv"]})
    run = apply(tmp_path, conv_model(), client.get(f"/api/models/{mid}/recipe").get_json())
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out.onnx").read_bytes() == client.get(f"/api/models/{mid}/download?revision={head}").data


def test_static_quantization_replays_with_its_calibration_data(client, tmp_path):
    """The uploaded calibration .npy travels in the recipe: headless, the same bytes."""
    mid = upload(client, conv_model()).get_json()["id"]
    samples = np.random.default_rng(3).standard_normal((4, 1, 3, 8, 8)).astype(np.float32)
    blob = client.post("/api/blobs", data={"file": (io.BytesIO(npy(samples)), "cal.npy")}).get_json()["blob"]
    head = edit(client, mid, 0, {"op": "quantize_static", "calibration": {"x": {"npy": blob}}, "per_channel": True})
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    assert list(recipe["blobs"]) == [blob]
    run = apply(tmp_path, conv_model(), recipe)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out.onnx").read_bytes() == client.get(f"/api/models/{mid}/download?revision={head}").data


def test_a_recipe_edits_the_next_export_of_the_model(client, history, tmp_path):
    """Other weights, same structure: the same renames, attribute, metadata and bias."""
    mid, _, bias = history
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, conv_model(seed=7), recipe)
    assert run.returncode == 0, run.stderr
    model = onnx.load(str(tmp_path / "out.onnx"))
    assert [n.name for n in model.graph.node] == ["conv", "activation"]
    assert model.graph.node[1].input[0] == "conv_out"
    assert {p.key: p.value for p in model.metadata_props} == {"exported_by": "studio"}
    assert np.array_equal(numpy_helper.to_array(model.graph.initializer[1]), bias)
    weights = numpy_helper.to_array(model.graph.initializer[0])
    assert np.array_equal(weights, numpy_helper.to_array(onnx.load_from_string(conv_model(7)).graph.initializer[0]))


def test_a_batch_that_breaks_the_model_is_refused_as_the_server_refuses_it(tmp_path):
    """Conv's group 1 -> 2 on 3 input channels: onnx's checks pass it, onnxruntime can't run it."""
    recipe = {"ops": [{"op": "set_attribute", "node": "@conv", "name": "group", "value": 2}]}
    run = apply(tmp_path, conv_model(), recipe)
    assert run.returncode == 1 and not (tmp_path / "out.onnx").exists()
    # the gate's refusal is of the batch: its ops are said
    assert "batch 1 (set_attribute '@conv'): onnxruntime can't run the edited model" in run.stderr, run.stderr
    run = apply(tmp_path, conv_model(), recipe, "--allow-invalid")
    assert run.returncode == 0 and "refused by a gate" in run.stderr
    assert onnx.load(str(tmp_path / "out.onnx")).graph.node[0].attribute[-1].i == 2


def test_a_batch_that_hard_codes_a_dynamic_batch_is_refused_as_the_server_refuses_it(tmp_path):
    """The next export declares its batch dynamic and runs at 1 and 2: a recipe whose Reshape
    hard-codes a batch of 1 is refused, as the server's gate refuses it."""
    from test_runtime_gate import flattener

    shape = {"dtype": "INT64", "shape": [2], "values": [1, 6]}
    recipe = {"ops": [{"op": "set_initializer", "name": "shape", "value": shape}]}
    run = apply(tmp_path, flattener([-1, 6]).SerializeToString(), recipe)
    assert run.returncode == 1 and not (tmp_path / "out.onnx").exists()
    assert "it runs with batch at 1 but no longer at 2" in run.stderr, run.stderr


def shifted_conv_model() -> bytes:
    """conv_model's next export with an Identity at its top: every node one place down."""
    model = onnx.load_from_string(conv_model(seed=3))
    model.graph.node.insert(0, helper.make_node("Identity", ["x"], ["x_in"], name="entry"))
    model.graph.node[1].input[0] = "x_in"
    return model.SerializeToString()


def test_nodes_sent_by_position_are_recorded_by_name_and_replay_on_a_shifted_export(client, tmp_path):
    """The page names nodes by position ("n1"); recorded so, the next export's node at that place
    (another one) would be edited. Recorded by name, the recipe edits the nodes meant."""
    mid = upload(client, conv_model()).get_json()["id"]
    rev = edit(
        client,
        mid,
        0,
        {"op": "set_attribute", "node": "n0", "name": "dilations", "value": [1, 1]},
        {"op": "set_metadata", "key": "role", "value": "activation", "target": "n1"},
    )
    edit(client, mid, rev, {"op": "delete_node", "node": "n1", "reconnect": True})
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    assert [[(op["op"], op.get("node", op.get("target"))) for op in b["ops"]] for b in recipe["batches"]] == [
        [("set_attribute", "@conv"), ("set_metadata", "@relu")],
        [("delete_node", "@relu")],
    ]
    run = apply(tmp_path, shifted_conv_model(), recipe)
    assert run.returncode == 0, run.stderr
    model = onnx.load(str(tmp_path / "out.onnx"))
    assert [(n.name, n.op_type) for n in model.graph.node] == [("entry", "Identity"), ("conv", "Conv")]
    assert [a.name for a in model.graph.node[1].attribute] == ["pads", "dilations"]


def _unnamed_chain(top: bool = False) -> bytes:
    """x -> Relu -> LeakyRelu(0.1) -> LeakyRelu(0.2) -> y, no node named; `top`: an Identity first."""
    nodes = [
        helper.make_node("Relu", ["x0"], ["r"]),
        helper.make_node("LeakyRelu", ["r"], ["l1"], alpha=0.1),
        helper.make_node("LeakyRelu", ["l1"], ["y"], alpha=0.2),
    ]
    if top:
        nodes.insert(0, helper.make_node("Identity", ["x"], ["x0"]))
    else:
        nodes[0].input[0] = "x"
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_unnamed_nodes_are_recorded_by_what_they_write(client, tmp_path):
    """QA: nodes without names were recorded by position ("n2"); on a next export with a node
    added at its top, the first LeakyRelu got the second's alpha. Recorded by the value each
    writes (">y"), the same node is edited."""
    mid = upload(client, _unnamed_chain()).get_json()["id"]
    edit(client, mid, 0, {"op": "set_attribute", "node": "n2", "name": "alpha", "value": 0.3})
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    assert recipe["batches"][0]["ops"][0]["node"] == ">y"
    run = apply(tmp_path, _unnamed_chain(top=True), recipe)
    assert run.returncode == 0, run.stderr
    model = onnx.load(str(tmp_path / "out.onnx"))
    alphas = [helper.get_attribute_value(n.attribute[0]) for n in model.graph.node if n.op_type == "LeakyRelu"]
    assert alphas == [pytest.approx(0.1), pytest.approx(0.3)]


def test_a_batch_with_no_ops_replays_as_nothing(tmp_path):
    """A revision that attached data files records no ops: its batch replays as nothing."""
    op = {"op": "set_metadata", "key": "k", "value": "v"}
    recipe = {"format": "onnx-studio-recipe/1", "batches": [{"revision": 1, "ops": []}, {"revision": 2, "ops": [op]}]}
    run = apply(tmp_path, conv_model(), recipe)
    assert run.returncode == 0, run.stderr
    assert {p.key: p.value for p in onnx.load(str(tmp_path / "out.onnx")).metadata_props} == {"k": "v"}


def test_bad_recipes_say_what_is_wrong(tmp_path):
    for recipe, words in [
        ({"nothing": 1}, 'neither "batches" nor "ops"'),
        ({"batches": [{"ops": 3}]}, '"batches" must be a list'),
        ({"ops": [{"op": "set_initializer", "name": "b", "value": {"npy": "ab" * 32}}]}, "does not carry it"),
        ({"ops": [{"op": "rename_node", "node": "@nope", "name": "x"}]}, "op #1 (rename_node)"),
        ([1, 2], "a recipe is a JSON object"),
        ("just a string", "a recipe is a JSON object"),
        ({"format": "onnx-studio-recipe/99", "ops": []}, "this onnx-studio reads 'onnx-studio-recipe/1'"),
        ({"batches": [{"ops": [{"op": "cleanup"}]}], "ops": []}, 'the recipe\'s "ops" differ from its "batches"'),
    ]:
        run = apply(tmp_path, conv_model(), recipe)
        assert run.returncode == 1 and words in run.stderr, (recipe, run.stderr)
    (tmp_path / "r.json").write_text("{not json")
    run = subprocess.run(
        [str(STUDIO), "apply", str(tmp_path / "in.onnx"), str(tmp_path / "r.json"), "-o", str(tmp_path / "o.onnx")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "is not JSON" in run.stderr


def test_same_outputs_passes_surgery_that_keeps_what_the_model_computes(client, tmp_path):
    """Renames (the output's too: compared with its old self), metadata: the same outputs, written."""
    mid = upload(client, conv_model()).get_json()["id"]
    edit(
        client,
        mid,
        0,
        {"op": "rename_tensor", "from": "y", "to": "scores"},
        {"op": "set_metadata", "key": "owner", "value": "vision"},
    )
    run = apply(tmp_path, conv_model(), client.get(f"/api/models/{mid}/recipe").get_json(), "--same-outputs")
    assert run.returncode == 0, run.stderr
    assert "scores (was y): as the model's on seeded random inputs (within 0 % of range)" in run.stdout
    assert (tmp_path / "out.onnx").exists()


def test_same_outputs_compares_the_outputs_a_recipe_keeps(client, tmp_path):
    """QA27: a recipe removing a debugging output was refused whole ("their outputs can't be
    compared"); the outputs it keeps are compared, the one it removes said."""
    mid = upload(client, conv_model()).get_json()["id"]
    edit(client, mid, 0, {"op": "add_output", "tensor": "c"})  # the export, with its debugging output
    export = client.get(f"/api/models/{mid}/download").data
    edit(client, mid, 1, {"op": "remove_output", "name": "c"}, {"op": "set_metadata", "key": "owner", "value": "ml"})
    recipe = client.get(f"/api/models/{mid}/recipe?from=1").get_json()
    run = apply(tmp_path, export, recipe, "--same-outputs")
    assert run.returncode == 0, run.stderr
    assert "c: removed by the recipe, not compared" in run.stdout
    assert "y: as the model's on seeded random inputs (within 0 % of range)" in run.stdout


def test_same_outputs_says_an_outputs_shape_changed(tmp_path):
    """An output of another shape has no values to put against the model's: it was said as "?
    of its range off" (QA43 #1), now with both shapes."""
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["y"], name="flat", axis=1)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    recipe = {
        "format": "onnx-studio-recipe/1",
        "ops": [{"op": "set_attribute", "node": "flat", "name": "axis", "value": 2, "type": "INT"}],
    }
    run = apply(tmp_path, model.SerializeToString(), recipe, "--same-outputs", "--tolerance", "1")
    assert run.returncode == 1, run.stderr
    assert "y is ⟨6×4⟩ on seeded random inputs, the model's ⟨2×12⟩: its shape changed" in run.stderr, run.stderr


def test_same_outputs_refuses_surgery_that_changes_them(client, tmp_path):
    mid = upload(client, conv_model()).get_json()["id"]
    bias = {"dtype": "FLOAT", "shape": [4], "values": [5, 0, 0, 0]}
    edit(client, mid, 0, {"op": "set_initializer", "name": "b", "value": bias})
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, conv_model(), recipe, "--same-outputs")
    assert run.returncode == 1 and not (tmp_path / "out.onnx").exists()
    assert "of its range off the model's on seeded random inputs (tolerance 0.1 %)" in run.stderr, run.stderr
    assert "nothing written (--allow-invalid writes it anyway)" in run.stderr
    # a looser tolerance than the change: written
    assert apply(tmp_path, conv_model(), recipe, "--same-outputs", "--tolerance", "1").returncode == 0
    (tmp_path / "out.onnx").unlink()
    assert apply(tmp_path, conv_model(), recipe, "--same-outputs", "--allow-invalid").returncode == 0
    assert (tmp_path / "out.onnx").exists()
    bad = apply(tmp_path, conv_model(), recipe, "--same-outputs", "--tolerance", "-1")
    assert bad.returncode == 2 and "--tolerance" in bad.stderr


def test_same_outputs_at_a_size_the_model_fixes_compares_at_its_own(client, tmp_path):
    """A recipe making conv_model's batch dynamic, checked with --dims batch=2 on the export that
    fixes it at 1: compared at 1, and said so (the result's values were the export's, fed at 1;
    "--dims batch=2" used to reach the result's run and clash with them)."""
    mid = upload(client, conv_model()).get_json()["id"]
    shape = {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 8, 8], "update_types": True}
    edit(client, mid, 0, shape)
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, conv_model(), recipe, "--same-outputs", "--dims", "batch=2")
    assert run.returncode == 0, run.stderr
    assert "--dims batch: the model has no such dim (it fixes those sizes), so compared at its own" in run.stdout
    assert "y: as the model's on seeded random inputs" in run.stdout


def test_same_outputs_runs_the_test_data_sets_beside_the_model(client, tmp_path):
    """The model's own test data: the result must give the outputs the model gives on them, and
    the expected values where the model gives those."""
    import onnxruntime as ort

    model = conv_model()
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    (y,) = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    folder = tmp_path / "test_data_set_0"
    folder.mkdir()
    (folder / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (folder / "output_0.pb").write_bytes(numpy_helper.from_array(y, "y").SerializeToString())
    mid = upload(client, model).get_json()["id"]
    edit(client, mid, 0, {"op": "set_metadata", "key": "k", "value": "v"})
    run = apply(tmp_path, model, client.get(f"/api/models/{mid}/recipe").get_json(), "--same-outputs")
    assert run.returncode == 0, run.stderr
    assert "y: as the model's on test_data_set_0" in run.stdout and "random" not in run.stdout
    # the expected values changed: the model no longer gives them, which is said, not blamed on the recipe
    (folder / "output_0.pb").write_bytes(numpy_helper.from_array(y + 1, "y").SerializeToString())
    run = apply(tmp_path, model, client.get(f"/api/models/{mid}/recipe").get_json(), "--same-outputs")
    assert run.returncode == 0, run.stderr
    assert "y: the model itself is" in run.stdout and "off test_data_set_0's expected values" in run.stdout


def test_same_outputs_takes_a_symbolic_dim_not_given_at_1(client, tmp_path):
    """--dims' default: a batch left symbolic runs at 1 on random inputs; given, at its size."""
    model = onnx.load_from_string(conv_model())
    for v in (*model.graph.input, *model.graph.output):
        v.type.tensor_type.shape.dim[0].dim_param = "batch"
    data = model.SerializeToString()
    mid = upload(client, data).get_json()["id"]
    edit(client, mid, 0, {"op": "set_metadata", "key": "k", "value": "v"})
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, data, recipe, "--same-outputs")
    assert run.returncode == 0, run.stderr
    assert "y: as the model's on seeded random inputs" in run.stdout
    (tmp_path / "out.onnx").unlink()
    assert apply(tmp_path, data, recipe, "--same-outputs", "--dims", "batch=3").returncode == 0


def test_same_outputs_compares_at_the_sizes_the_recipe_fixes(client, tmp_path):
    """QA45 #4: a recipe making an encoder's frames 3000 (fix_dims, then renaming its input) was
    checked on random inputs of 1 frame, which the result refused ("its dim 2 is 1, but the model
    fixes it at 3000"): the sizes the recipe fixes are the ones compared at, and said."""
    model = onnx.load_from_string(conv_model())
    for v in (*model.graph.input, *model.graph.output):
        v.type.tensor_type.shape.dim[0].dim_param = "batch"
    data = model.SerializeToString()
    mid = upload(client, data).get_json()["id"]
    head = edit(client, mid, 0, {"op": "fix_dims", "dims": {"batch": 5}})
    edit(client, mid, head, {"op": "rename_tensor", "from": "x", "to": "pixels"})
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, data, recipe, "--same-outputs")
    assert run.returncode == 0, run.stderr
    assert "compared with batch at 5: the sizes the recipe fixes" in run.stdout
    assert "y: as the model's on seeded random inputs" in run.stdout
    # a size given that the result can't take: refused, naming it
    (tmp_path / "out.onnx").unlink()
    run = apply(tmp_path, data, recipe, "--same-outputs", "--dims", "batch=2")
    assert run.returncode == 1 and "fixes it at 5" in run.stderr, run.stderr


def test_same_outputs_of_a_recipe_that_cuts_the_model_names_what_it_cant_compare(client, tmp_path):
    """QA45 #5: a recipe renaming the input then cutting before the last node was refused with
    "…, none of them the model's", which read as blaming the input: the outputs are named."""
    mid = upload(client, conv_model()).get_json()["id"]
    head = edit(client, mid, 0, {"op": "rename_tensor", "from": "x", "to": "pixels"})
    edit(client, mid, head, {"op": "extract_subgraph", "inputs": ["pixels"], "outputs": ["c"]})
    run = apply(tmp_path, conv_model(), client.get(f"/api/models/{mid}/recipe").get_json(), "--same-outputs")
    assert run.returncode == 1 and not (tmp_path / "out.onnx").exists()
    assert (
        "none of the result's outputs (c) is one of the model's (y) or one renamed in its place: the recipe makes"
        " other outputs (a cut, say), which --same-outputs can't compare"
    ) in run.stderr, run.stderr
    assert "nothing written (without --same-outputs it is written)" in run.stderr
    # written anyway: no heading of outputs with nothing under it
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, conv_model(), recipe, "--same-outputs", "--allow-invalid")
    assert run.returncode == 0 and "outputs, against the model's" not in run.stdout, run.stdout


@pytest.mark.parametrize("tool", ["convert_float16", "quantize_dynamic"])
def test_a_tool_on_weights_the_store_keeps_apart_replays_to_the_servers_bytes(client, tmp_path, tool):
    """Weights of 4 KiB and more go through the store's blobs on the server and stay in memory
    headless: both come back as if they had never been out (no explicit data_location)."""
    from test_model_tools import conv_net

    data = conv_net().SerializeToString()
    mid = upload(client, data).get_json()["id"]
    head = edit(client, mid, 0, {"op": tool})
    run = apply(tmp_path, data, client.get(f"/api/models/{mid}/recipe").get_json())
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out.onnx").read_bytes() == client.get(f"/api/models/{mid}/download?revision={head}").data


def test_same_outputs_on_a_model_that_takes_no_made_up_size_runs_where_it_does(client, tmp_path):
    """QA23 F5: a speech front end reflect-padding by 200 fails at the sizes --dims defaults to
    (1 sample): compared at the sizes its smoke run finds (said), and, where none is found, the
    failure names the sizes made up and --dims."""
    from browser.browser_models import reflect_padded

    data = reflect_padded(200, fixed=False).SerializeToString()
    mid = upload(client, data).get_json()["id"]
    edit(client, mid, 0, {"op": "set_metadata", "key": "k", "value": "v"})
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    run = apply(tmp_path, data, recipe, "--same-outputs")
    assert run.returncode == 0, run.stderr
    assert (
        "compared with batch at 1 and sequence at 512: the sizes the model runs at (--dims gives others)" in run.stdout
    )
    assert "y: as the model's on seeded random inputs" in run.stdout
    (tmp_path / "out.onnx").unlink()
    # padding by 2000: no size the smoke run tries runs it
    data = reflect_padded(2000, fixed=False).SerializeToString()
    mid = upload(client, data).get_json()["id"]
    edit(client, mid, 0, {"op": "set_metadata", "key": "k", "value": "v"})
    run = apply(tmp_path, data, client.get(f"/api/models/{mid}/recipe").get_json(), "--same-outputs")
    assert run.returncode == 1 and not (tmp_path / "out.onnx").exists()
    assert "(at batch, sequence at 1, sizes made up: give the model's with --dims NAME=N,...)" in run.stderr, run.stderr
    assert (
        apply(
            tmp_path,
            data,
            client.get(f"/api/models/{mid}/recipe").get_json(),
            "--same-outputs",
            "--dims",
            "batch=1,sequence=2500",
        ).returncode
        == 0
    )


def test_a_model_with_external_data_is_written_with_external_data(client, tmp_path):
    """QA40 #1: the result was one .onnx of every weight (and each batch's model kept in memory
    twice: 19.7 GB for five batches of a 1.55 GiB model); now its weights over 1 KiB stay
    outside, in one file beside the result, and each batch is said as it starts."""
    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save_model(model, tmp_path / "in.onnx", save_as_external_data=True, location="in.data", size_threshold=0)
    files = [((tmp_path / "in.data").read_bytes(), "in.data")]
    mid = upload(client, (tmp_path / "in.onnx").read_bytes(), "in.onnx", extra=files).get_json()["id"]
    head = edit(client, mid, 0, {"op": "set_metadata", "key": "k", "value": "v"})
    head = edit(client, mid, head, {"op": "rename_node", "node": "@mm", "name": "project"})
    (tmp_path / "r.json").write_text(json.dumps(client.get(f"/api/models/{mid}/recipe").get_json()))
    cmd = [str(STUDIO), "apply", str(tmp_path / "in.onnx"), str(tmp_path / "r.json"), "-o", str(tmp_path / "out.onnx")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "batch 2 of 2: 1 op(s)…" in run.stderr and "its weights in out.onnx.data beside it" in run.stdout
    assert (tmp_path / "out.onnx.data").stat().st_mode & 0o777 == (tmp_path / "out.onnx").stat().st_mode & 0o777
    skeleton = onnx.load(str(tmp_path / "out.onnx"), load_external_data=False)
    assert [e.value for e in skeleton.graph.initializer[0].external_data if e.key == "location"] == ["out.onnx.data"]
    got = onnx.load(str(tmp_path / "out.onnx"))
    want = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision={head}&layout=embedded").data)
    assert got.graph.node == want.graph.node and got.metadata_props == want.metadata_props
    np.testing.assert_array_equal(numpy_helper.to_array(got.graph.initializer[0]), numpy_helper.to_array(w))


# what the apply process and the helpers it waits for held at most, in a process of its own
# (RUSAGE_CHILDREN: the largest child it ever waited for, so no earlier test's child counts)
PEAK_RSS = """
import resource, subprocess, sys
run = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=600)
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)
sys.exit(run.returncode)
"""


def test_a_model_past_2_gib_replays_with_its_weights_outside_and_never_held(tmp_path):
    """QA40 #1, QA42: apply edited the model whole — a batch held it 7-10 times over (9.0 GB for
    0.88 GiB) and one past protobuf's 2 GiB was refused. Now its graph is edited without its
    weights, as the server's edits are: a 2 GiB weight is copied to the result, never held."""
    n = (1 << 29) + (1 << 20)  # float32s: 2.004 GiB
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1, n])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "in.data"), ("offset", "0"), ("length", str(4 * n))):
        w.external_data.add(key=key, value=value)
    graph = helper.make_graph(
        [helper.make_node("Shape", ["w"], ["y"], name="shape")],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (tmp_path / "in.onnx").write_bytes(model.SerializeToString())
    with open(tmp_path / "in.data", "wb") as f:
        f.truncate(4 * n)  # a hole: no disk nor memory for the input's weights
        f.seek(4 * n - 4)
        f.write(np.float32(7).tobytes())
    recipe = {"format": "onnx-studio-recipe/1", "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    (tmp_path / "r.json").write_text(json.dumps(recipe))
    cmd = [str(STUDIO), "apply", str(tmp_path / "in.onnx"), str(tmp_path / "r.json"), "-o", str(tmp_path / "out.onnx")]
    run = subprocess.run([sys.executable, "-c", PEAK_RSS, *cmd, "--no-runtime"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "its weights in out.onnx.data beside it, as the model kept them outside" in run.stdout
    peak = int(run.stderr.split()[-1])
    assert peak < 1 << 29, f"{peak / 2**30:.2f} GiB held for a 2 GiB weight"
    (tmp_path / "in.data").unlink()  # the result reads nothing of the input
    out = onnx.load(str(tmp_path / "out.onnx"), load_external_data=False)
    assert {p.key: p.value for p in out.metadata_props} == {"k": "v"}
    data = tmp_path / "out.onnx.data"
    assert data.stat().st_size == 4 * n
    with open(data, "rb") as f:
        f.seek(4 * n - 4)
        assert np.frombuffer(f.read(), np.float32)[0] == 7
    data.unlink()


def test_a_model_whose_external_data_is_missing_or_short_is_refused_naming_it(tmp_path):
    """The weights are read from where the model names them as the batches need them: a file
    missing or cut short is said up front, naming its tensors, and nothing is written."""
    model = onnx.load_from_string(conv_model())
    onnx.save_model(model, tmp_path / "in.onnx", save_as_external_data=True, location="in.data", size_threshold=0)
    recipe = {"format": "onnx-studio-recipe/1", "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    (tmp_path / "r.json").write_text(json.dumps(recipe))
    cmd = [str(STUDIO), "apply", str(tmp_path / "in.onnx"), str(tmp_path / "r.json"), "-o", str(tmp_path / "out.onnx")]
    data = tmp_path / "in.data"
    data.write_bytes(data.read_bytes()[:100])
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and "the data of w" in run.stderr and "holds fewer bytes than they need" in run.stderr
    data.unlink()
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and f"'in.data', which is no file in {tmp_path.resolve()}" in run.stderr, run.stderr
    assert not (tmp_path / "out.onnx").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx", "r.json"]


def test_a_file_that_is_no_model_is_refused_in_one_sentence(tmp_path):
    recipe = {"format": "onnx-studio-recipe/1", "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    run = apply(tmp_path, b"\x00garbage\xff" * 28, recipe)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("onnx-studio apply: in.onnx is not a readable ONNX model: the protobuf data is")
    assert not (tmp_path / "out.onnx").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx", "r.json"]
