"""rename_dim: a symbolic dim renamed in every input, output and value_info, bodies and
expressions of dims included (QA29 F9: "seq" renamed on one input left the others saying "seq",
and the Run and Costs panels asked for both); set_io_shape renaming a shared dim on one input
says the others still give the old name."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper
from test_recipes import apply
from testkit import upload


def tokens_model() -> onnx.ModelProto:
    """ids [batch, seq] added to itself (value_info: summed), doubled along seq by a Concat
    declared [batch, 2*seq], and an If whose branches give it or mask [batch, seq] back; a
    `pos` [batch, offset] other inputs don't share."""
    vi = helper.make_tensor_value_info
    branch = lambda name, source: helper.make_graph(  # noqa: E731
        [helper.make_node("Identity", [source], [name], name=f"{name}_copy")],
        name,
        [],
        [vi(name, TensorProto.FLOAT, ["batch", "seq"])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["ids", "ids"], ["summed"], name="add"),
            helper.make_node("Concat", ["summed", "summed"], ["doubled"], name="cat", axis=1),
            helper.make_node(
                "If",
                ["flag"],
                ["chosen"],
                name="choose",
                then_branch=branch("then_out", "summed"),
                else_branch=branch("else_out", "mask"),
            ),
            helper.make_node("Identity", ["pos"], ["pos_out"], name="pass"),
        ],
        "tokens",
        [
            vi("ids", TensorProto.FLOAT, ["batch", "seq"]),
            vi("mask", TensorProto.FLOAT, ["batch", "seq"]),
            vi("flag", TensorProto.BOOL, []),
            vi("pos", TensorProto.FLOAT, ["batch", "offset"]),
        ],
        [
            vi("doubled", TensorProto.FLOAT, ["batch", "2*seq"]),
            vi("chosen", TensorProto.FLOAT, ["batch", "seq"]),
            vi("pos_out", TensorProto.FLOAT, ["batch", "offset"]),
        ],
        value_info=[vi("summed", TensorProto.FLOAT, ["batch", "seq"])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m, full_check=True)
    return m


def dims(model: onnx.ModelProto) -> dict:
    graphs = [model.graph, *(a.g for n in model.graph.node for a in n.attribute if a.type == a.GRAPH)]
    return {
        v.name: [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim]
        for g in graphs
        for v in [*g.input, *g.output, *g.value_info]
    }


def post(client, ops: list):
    mid = upload(client, tokens_model().SerializeToString()).get_json()["id"]
    return mid, client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})


def stored(client, mid: str) -> onnx.ModelProto:
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(model, full_check=True)
    return model


def test_a_dim_is_renamed_in_every_declaration_bodies_and_expressions_too(client):
    mid, r = post(client, [{"op": "rename_dim", "from": "seq", "to": "sequence_length"}])
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == [
        "dim 'seq' renamed to 'sequence_length' in the main graph (2 inputs, 4 outputs, 1 value_info entry,"
        " 2 bodies inside it included)"
    ]
    assert dims(stored(client, mid)) == {
        "ids": ["batch", "sequence_length"],
        "mask": ["batch", "sequence_length"],
        "flag": [],
        "pos": ["batch", "offset"],
        "doubled": ["batch", "2*sequence_length"],
        "chosen": ["batch", "sequence_length"],
        "pos_out": ["batch", "offset"],
        "summed": ["batch", "sequence_length"],
        "then_out": ["batch", "sequence_length"],
        "else_out": ["batch", "sequence_length"],
    }


def test_an_unknown_name_is_refused_with_the_closest(client):
    _, r = post(client, [{"op": "rename_dim", "from": "sqe", "to": "sequence_length"}])
    assert r.status_code == 400  # a dim the model lacks, named in the body (docs/api.md: statuses)
    assert r.get_json()["error"]["message"] == (
        "op #1 (rename_dim): no input, output or value_info of the main graph names a dim 'sqe' (did you mean 'seq'?)"
    )


def test_a_name_already_used_merges_only_when_asked(client):
    _, r = post(client, [{"op": "rename_dim", "from": "seq", "to": "offset"}])
    assert r.status_code == 422
    assert r.get_json()["error"]["message"] == (
        "op #1 (rename_dim): 'offset' is already a dim of 'pos', 'pos_out'; renaming 'seq' to it would say the two"
        ' are one size, which the model doesn\'t say now (give "merge": true if they are)'
    )
    mid, r = post(client, [{"op": "rename_dim", "from": "seq", "to": "offset", "merge": True}])
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith("; merged with the 'offset' of 'pos', 'pos_out'")
    assert dims(stored(client, mid))["ids"] == ["batch", "offset"]


def test_bad_names_are_refused(client):
    for to, status, message in [
        ("", 400, 'op #1 (rename_dim): field "to" must be a non-empty name, got ""'),
        ("seq", 400, "op #1 (rename_dim): from and to are the same name"),
        (
            "1st",
            400,
            'op #1 (rename_dim): "to" must be a dim name like "sequence_length" (a letter or _ first); got \'1st\'',
        ),
    ]:
        _, r = post(client, [{"op": "rename_dim", "from": "seq", "to": to}])
        assert (r.status_code, r.get_json()["error"]["message"]) == (status, message)


def test_a_recipe_replays_the_rename(client, tmp_path):
    mid, r = post(client, [{"op": "rename_dim", "from": "seq", "to": "sequence_length"}])
    assert r.status_code == 200, r.get_json()
    recipe = client.get(f"/api/models/{mid}/recipe").get_json()
    assert recipe["batches"][0]["ops"] == [{"op": "rename_dim", "from": "seq", "to": "sequence_length"}]
    run = apply(tmp_path, tokens_model().SerializeToString(), recipe)
    assert run.returncode == 0, run.stderr
    assert dims(onnx.load(tmp_path / "out.onnx")) == dims(stored(client, mid))


def test_renaming_a_shared_dim_on_one_input_says_the_others_keep_it(client):
    mid, r = post(client, [{"op": "set_io_shape", "name": "ids", "shape": ["batch", "sequence_length"]}])
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == [
        "'ids' is now FLOAT ⟨batch×sequence_length⟩; value_info re-inferred (1 of 1 entry changed, 0 dropped),"
        " 1 output shape updated; the bodies' shapes re-inferred too (choose/then_branch); 'mask' still says 'seq',"
        " which 'ids' shared: rename_dim"
        ' renames a dim in every input, output and value_info ({"op": "rename_dim", "from": "seq", "to":'
        ' "sequence_length", "merge": true})'
    ]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 1, "ops": [{"op": "rename_dim", "from": "seq", "to": "sequence_length", "merge": True}]},
    )
    assert r.status_code == 200, r.get_json()
    assert {d for shape in dims(stored(client, mid)).values() for d in shape if isinstance(d, str)} == {
        "batch",
        "offset",
        "sequence_length",
        "2*sequence_length",
    }
