"""POST /api/models/<id>/recipe: a recipe made on one export of a model (GET .../recipe) replayed
on the next export in the server, each batch gated as an edit is and stored as a revision of
its own, all or nothing — what `onnx-studio apply` does on the command line."""

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
from testkit import npy_blob, upload

from app.api import recipes
from app.errors import StoreUnavailable
from app.store import Store
from app.store.records import Edited

STUDIO = Path(sys.executable).parent / "onnx-studio"

SYMBOLIC_BATCH = [
    {"op": "set_io_shape", "name": "x", "shape": ["batch", 3, 8, 8]},
    {"op": "set_io_shape", "name": "y", "shape": ["batch", 4, 8, 8]},
]
DILATIONS = [{"op": "set_attribute", "node": "@conv", "name": "dilations", "value": [1, 1]}]
RENAME = [{"op": "rename_tensor", "from": "c", "to": "conv_out"}]
METADATA = [{"op": "set_metadata", "key": "exported_by", "value": "studio"}]
BATCHES = [SYMBOLIC_BATCH, DILATIONS, RENAME, METADATA]


def conv_model(seed: int = 0, conv_name: str = "conv", metadata: dict | None = None) -> bytes:
    """A Conv + Relu; `seed` gives other weights (another export), `conv_name` another node name."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], name=conv_name, pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [w, b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, metadata or {})
    return model.SerializeToString()


def uploaded(client, data: bytes) -> str:
    r = upload(client, data)
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def recipe_of(client, batches: list[list], seed: int = 0) -> dict:
    """The recipe of `batches` edited one by one into model A (of `seed`)."""
    mid = uploaded(client, conv_model(seed))
    for rev, ops in enumerate(batches):
        r = client.post(f"/api/models/{mid}/edits", json={"base": rev, "ops": ops})
        assert r.status_code == 200 and r.get_json()["revision"] == rev + 1, r.get_json()
    return client.get(f"/api/models/{mid}/recipe").get_json()


def history(client, mid: str) -> tuple[int, list]:
    """(head, [(revision, parent, ops)])"""
    data = client.get(f"/api/models/{mid}/revisions").get_json()
    return data["head"], [(r["revision"], r["parent"], r["ops"]) for r in data["revisions"]]


def applied(client, mid: str, body: dict, status: int = 200) -> dict:
    r = client.post(f"/api/models/{mid}/recipe", json=body)
    assert r.status_code == status, r.get_json()
    return r.get_json()


def cli_apply(tmp_path: Path, model: bytes, recipe: dict) -> bytes:
    """What `onnx-studio apply` writes for `recipe` on `model`."""
    (tmp_path / "in.onnx").write_bytes(model)
    (tmp_path / "r.json").write_text(json.dumps(recipe))
    cmd = [str(STUDIO), "apply", str(tmp_path / "in.onnx"), str(tmp_path / "r.json"), "-o", str(tmp_path / "out.onnx")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return (tmp_path / "out.onnx").read_bytes()


def test_a_recipe_from_one_export_makes_a_revision_per_batch_on_the_next(client, tmp_path):
    recipe = recipe_of(client, BATCHES)
    other = conv_model(seed=7)
    mid = uploaded(client, other)

    answer = applied(client, mid, {"base": 0, "recipe": recipe})

    assert (answer["revisions"], answer["batches"], answer["skipped"]) == ([1, 2, 3, 4], 4, 0)
    assert answer["revision"] == 4 and answer["summary"]["head"] == 4
    assert answer["changes"] == ["added metadata 'exported_by' = 'studio' to the model"]  # the last revision's
    assert answer["validation"]["ok"] and answer["validation"]["full"]["ok"]
    assert answer["validation"]["runtime"]["status"] == "ok"
    head, revisions = history(client, mid)
    assert head == 4
    assert revisions[1:] == [(k + 1, k, ops) for k, ops in enumerate(BATCHES)]

    edited = client.get(f"/api/models/{mid}/download").data
    onnx.checker.check_model(onnx.load_from_string(edited), full_check=True)
    model = onnx.load_from_string(edited)
    assert [d.dim_param for d in (model.graph.input[0].type.tensor_type.shape.dim[0],)] == ["batch"]
    assert model.graph.node[1].input[0] == "conv_out"
    assert {p.key: p.value for p in model.metadata_props} == {"exported_by": "studio"}
    weights = numpy_helper.to_array(model.graph.initializer[0])
    assert np.array_equal(weights, numpy_helper.to_array(onnx.load_from_string(other).graph.initializer[0]))
    assert edited == cli_apply(tmp_path, other, recipe)

    # B's own recipe holds the same batches again; Undo steps back one batch
    again = client.get(f"/api/models/{mid}/recipe").get_json()
    assert [b["ops"] for b in again["batches"]] == BATCHES
    assert client.post(f"/api/models/{mid}/undo", json={"base": 4}).get_json()["revision"] == 3


def test_the_page_uploads_the_recipe_as_a_file(client):
    recipe = recipe_of(client, [METADATA])
    mid = uploaded(client, conv_model(seed=3))
    form = {"base": "0", "recipe": (io.BytesIO(json.dumps(recipe).encode()), "model.r0-r1.recipe.json")}
    r = client.post(f"/api/models/{mid}/recipe", data=form, content_type="multipart/form-data")
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["revisions"] == [1]
    assert history(client, mid)[1][1][2] == METADATA


def test_a_recipes_revisions_say_so_and_one_undo_takes_them_all_back(client):
    """QA27: History showed a recipe's four revisions as four unrelated edits, and undoing it
    took four Undos: each revision says which run of which recipe and which batch it is, and
    `steps` undoes them at once (Redo brings them back one by one)."""
    recipe = recipe_of(client, BATCHES)
    mid = uploaded(client, conv_model(seed=7))
    applied(client, mid, {"base": 0, "recipe": recipe})
    revisions = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    tags = [r["recipe"] for r in revisions]
    assert tags[0] is None
    run = tags[1]["run"]
    assert [(t["run"], t["name"], t["batch"], t["batches"]) for t in tags[1:]] == [
        (run, "model.onnx r0→r4", k, 4) for k in range(1, 5)
    ]
    assert tags[2]["origin"] == "revision 2 of model.onnx"
    # the page's upload: named after its file; another run is another run
    stage = recipe_of(client, [[{"op": "set_metadata", "key": "stage", "value": "prod"}]], seed=1)
    form = {"base": "4", "recipe": (io.BytesIO(json.dumps(stage).encode()), "meta.recipe.json")}
    r = client.post(f"/api/models/{mid}/recipe", data=form, content_type="multipart/form-data")
    assert r.status_code == 200, r.get_json()
    last = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"][-1]["recipe"]
    assert last["name"] == "meta.recipe.json" and last["run"] != run and (last["batch"], last["batches"]) == (1, 1)

    r = client.post(f"/api/models/{mid}/undo", json={"base": 5, "steps": 5})
    assert r.status_code == 200 and r.get_json()["revision"] == 0
    assert client.post(f"/api/models/{mid}/redo", json={"base": 0}).get_json()["revision"] == 1
    r = client.post(f"/api/models/{mid}/undo", json={"base": 1, "steps": 3})
    assert r.status_code == 409 and "only 1 step(s) lead back" in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}/head").get_json()["head"] == 1  # all or none
    for steps in (0, -1, True, "2", 10**6):
        assert client.post(f"/api/models/{mid}/undo", json={"base": 1, "steps": steps}).status_code == 400


def test_a_refused_batch_stores_nothing_and_is_named(client):
    """The next export named its Conv otherwise: batch 2 (the Conv's attribute) can't be replayed
    by a recipe of names alone (written by hand, without the node marks GET .../recipe writes)."""
    recipe = recipe_of(client, BATCHES)
    names_alone = {**recipe, "batches": [{k: v for k, v in b.items() if k != "nodes"} for b in recipe["batches"]]}
    mid = uploaded(client, conv_model(seed=7, conv_name="Conv_0"))
    before = history(client, mid)

    error = applied(client, mid, {"base": 0, "recipe": names_alone}, 404)["error"]

    assert error["code"] == "unknown_node"
    # named as the recipe's source named it too: its History's revision 2
    assert (
        error["message"] == "batch 2 (revision 2 of model.onnx): op #1 (set_attribute): no node '@conv' in this model"
    )
    assert history(client, mid) == before == (0, [(0, None, [])])
    # with its marks, the recipe finds the Conv by what it reads, and says so
    answer = applied(client, mid, {"base": 0, "recipe": recipe})
    moved = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"][2]["changes"][0]
    assert moved == "the recipe's node 'conv' is 'Conv_0' here (the Conv after 'x', 'w', 'b')", answer


def test_a_gate_refusal_names_the_batch_and_allow_invalid_stores_it(client):
    """Conv's group 1 -> 2 on 3 input channels: onnx's checks pass it, onnxruntime can't run it."""
    group = [{"op": "set_attribute", "node": "@conv", "name": "group", "value": 2}]
    recipe = {"format": "onnx-studio-recipe/1", "batches": [{"ops": METADATA}, {"ops": group}]}
    mid = uploaded(client, conv_model(seed=7))

    error = applied(client, mid, {"base": 0, "recipe": recipe}, 422)["error"]
    assert error["code"] == "invalid_result"
    assert error["message"].startswith("batch 2 (set_attribute '@conv'): onnxruntime can't run the edited model")
    assert error.get("node") is None  # its id in batch 1's result, which no page shows
    assert history(client, mid)[0] == 0

    answer = applied(client, mid, {"base": 0, "recipe": recipe, "allow_invalid": True})
    assert answer["revisions"] == [1, 2]
    assert answer["validation"]["invalid"][0].startswith("onnxruntime can't run the edited model")


def test_the_reference_cases_gate_every_batch(client, gates_wait):
    """Cases that gate edits hold each batch to their outputs, not the first one alone."""
    mid = uploaded(client, conv_model(seed=7))
    r = client.post(f"/api/models/{mid}/checks", json={"inputs": {"x": {"random": {"seed": 1}}}})
    assert r.status_code == 201, r.get_json()
    assert client.patch(f"/api/models/{mid}/checks", json={"gate": True}).status_code == 200
    bias = [{"op": "set_initializer", "name": "b", "value": {"dtype": "FLOAT", "shape": [4], "values": [9.0] * 4}}]
    recipe = {"batches": [{"ops": METADATA}, {"ops": bias}]}

    error = applied(client, mid, {"base": 0, "recipe": recipe}, 422)["error"]

    assert error["message"].startswith("batch 2 (set_initializer 'b'): the edit changes what the model computes")
    assert history(client, mid)[0] == 0


def test_a_batch_that_changes_nothing_is_skipped(client):
    """The next export has the metadata already: its batch makes no revision."""
    recipe = recipe_of(client, [RENAME, METADATA])
    recipe["batches"].insert(1, {"revision": 9, "ops": []})  # a revision that attached data files
    recipe["ops"] = [op for b in recipe["batches"] for op in b["ops"]]
    mid = uploaded(client, conv_model(seed=2, metadata={"exported_by": "studio"}))

    answer = applied(client, mid, {"base": 0, "recipe": recipe})

    assert (answer["revisions"], answer["batches"], answer["skipped"]) == ([1], 1, 2)
    assert history(client, mid)[0] == 1
    nothing = applied(client, mid, {"base": 1, "recipe": {"ops": METADATA}})
    assert (nothing["revision"], nothing["unchanged"], nothing["revisions"], nothing["skipped"]) == (1, True, [], 1)


def test_the_files_a_recipe_carries_are_kept_for_the_next_recipe(client, tmp_path):
    """A bias from an .npy, replayed on another server: B's own recipe, downloaded later, carries
    the file again (that server had it from the recipe alone)."""
    from app import create_app

    bias = np.arange(4, dtype=np.float32)
    source = uploaded(client, conv_model())
    ops = [{"op": "set_initializer", "name": "b", "value": {"npy": npy_blob(client, bias)}}]
    assert client.post(f"/api/models/{source}/edits", json={"base": 0, "ops": ops}).status_code == 200
    recipe = client.get(f"/api/models/{source}/recipe").get_json()
    other = create_app({"DATA_DIR": str(tmp_path / "other"), "TESTING": True}).test_client()
    mid = uploaded(other, conv_model(seed=5))

    assert applied(other, mid, {"base": 0, "recipe": recipe})["revisions"] == [1]

    again = other.get(f"/api/models/{mid}/recipe")
    assert again.status_code == 200, again.get_json()
    assert again.get_json()["blobs"] == recipe["blobs"]
    model = onnx.load_from_string(other.get(f"/api/models/{mid}/download").data)
    assert np.array_equal(numpy_helper.to_array(model.graph.initializer[1]), bias)


def test_a_stale_base_is_refused(client):
    recipe = recipe_of(client, [METADATA])
    mid = uploaded(client, conv_model(seed=7))
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": RENAME}).status_code == 200

    error = applied(client, mid, {"base": 0, "recipe": recipe}, 409)["error"]

    assert error["code"] == "stale_base" and "revision 0 is no longer current" in error["message"]
    assert history(client, mid)[0] == 1


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ([1, 2], "bad_request", 'send a JSON object {"base": REVISION, "recipe": {...}}'),
        ({"recipe": {"ops": METADATA}}, "missing_base", '"base" must be the revision number'),
        ({"base": "0", "recipe": {"ops": METADATA}}, "missing_base", '"base" must be the revision number'),
        ({"base": 0}, "missing_recipe", 'send the recipe (GET .../recipe gives one) as "recipe"'),
        ({"base": 0, "recipe": "garbage"}, "bad_recipe", "a recipe is a JSON object"),
        ({"base": 0, "recipe": {"nothing": 1}}, "bad_recipe", 'neither "batches" nor "ops"'),
        ({"base": 0, "recipe": {"batches": [{"ops": 3}]}}, "bad_recipe", '"batches" must be a list'),
        ({"base": 0, "recipe": {"format": "x/9", "ops": []}}, "bad_recipe", "this onnx-studio reads"),
        ({"base": 0, "recipe": {"ops": METADATA}, "allow_invalid": "yes"}, "bad_request", '"allow_invalid" must be'),
    ],
)
def test_a_malformed_request_is_a_400_saying_what_is_wrong(client, body, code, words):
    mid = uploaded(client, conv_model())
    error = applied(client, mid, body, 400)["error"]
    assert error["code"] == code and words in error["message"], error
    assert history(client, mid)[0] == 0


def test_garbage_bodies_are_400s(client):
    mid = uploaded(client, conv_model())
    r = client.post(f"/api/models/{mid}/recipe", data=b"\x00garbage{", content_type="application/json")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_request"
    form = {"base": "0", "recipe": (io.BytesIO(b"{not json"), "broken.recipe.json")}
    r = client.post(f"/api/models/{mid}/recipe", data=form, content_type="multipart/form-data")
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"].startswith("broken.recipe.json is not a recipe: it is not JSON (")
    form = {"base": "0", "recipe": (io.BytesIO(b"\xfe\xff\x00{"), "model.onnx")}  # a binary file picked by mistake
    r = client.post(f"/api/models/{mid}/recipe", data=form, content_type="multipart/form-data")
    assert r.status_code == 400 and r.get_json()["error"]["message"] == (
        "model.onnx is not a recipe: it is no UTF-8 text (a .recipe.json from Download recipe is)"
    ), r.get_json()
    r = client.post(f"/api/models/{mid}/recipe", data={"base": "0"}, content_type="multipart/form-data")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "missing_file"
    assert history(client, mid)[0] == 0


def test_a_recipe_is_held_to_the_json_bodies_bound(client):
    mid = uploaded(client, conv_model())
    client.application.config["MAX_JSON_BYTES"] = 2000
    big = {"ops": METADATA, "padding": "x" * 3000}
    form = {"base": "0", "recipe": (io.BytesIO(json.dumps(big).encode()), "big.recipe.json")}
    r = client.post(f"/api/models/{mid}/recipe", data=form, content_type="multipart/form-data")
    assert r.status_code == 413 and r.get_json()["error"]["code"] == "body_too_big"
    r = client.post(f"/api/models/{mid}/recipe", json={"base": 0, "recipe": big})
    assert r.status_code == 413
    assert history(client, mid)[0] == 0


def test_a_change_landing_while_the_batches_replay_stores_none_of_them(client, monkeypatch):
    """A change that reaches the model between the replay and the commit leaves the model as
    that change made it, with no batch of the recipe."""
    recipe = recipe_of(client, BATCHES)
    mid = uploaded(client, conv_model(seed=7))
    replayed = recipes._replayed

    def replay_then_edit_elsewhere(*args):
        out = replayed(*args)
        s = recipes.store()
        head = s.revision(mid)
        s.commit_revision(mid, head.rev, s.blobs.get(head.blob), head.external, METADATA, ["elsewhere"])
        return out

    monkeypatch.setattr(recipes, "_replayed", replay_then_edit_elsewhere)
    error = applied(client, mid, {"base": 0, "recipe": recipe}, 409)["error"]

    assert error["code"] == "stale_base", error
    head, revisions = history(client, mid)
    assert head == 1 and [r[0] for r in revisions] == [0, 1]  # the other change only
    assert revisions[1][2] == METADATA


def test_the_batches_are_stored_in_one_transaction(client, monkeypatch):
    """The store failing on batch 3 of 4 (its database gone, say) leaves none of them stored."""
    recipe = recipe_of(client, BATCHES)
    mid = uploaded(client, conv_model(seed=7))
    record = Store._edited_record
    calls = []

    def fail_on_the_third(self, *args):
        calls.append(1)
        if len(calls) == 3:
            raise StoreUnavailable("the model index", "connection lost")
        return record(self, *args)

    monkeypatch.setattr(Store, "_edited_record", fail_on_the_third)
    error = applied(client, mid, {"base": 0, "recipe": recipe}, 503)["error"]

    assert error["code"] == "store_unavailable" and "connection lost" in error["message"], error
    assert history(client, mid)[0] == 0 and len(history(client, mid)[1]) == 1


def test_a_chain_of_revisions_is_stored_parent_after_parent(tmp_path):
    s = Store.in_folder(tmp_path)
    mid = s.create_model("m.onnx", conv_model()).id
    graph = s.blobs.get(s.revision(mid, 0).blob)
    revs = s.commit_revisions(mid, 0, [Edited(graph, {}, METADATA, ["a"]), Edited(graph, {}, RENAME, ["b"])])

    assert revs == [1, 2] and s.model(mid).head == 2
    assert [(r.rev, r.parent, r.changes) for r in s.revisions(mid)][1:] == [(1, 0, ["a"]), (2, 1, ["b"])]
    assert s.revision(mid, 2).tensors == s.revision(mid, 0).tensors  # the weights shared, not copied
