"""Compare (QA 11, F3): GET .../diff diffs model-local functions' bodies as it diffs If/Loop
bodies — their nodes listed with ids under "fn[k]" (each side's own k), subgraphs inside them
recursively, counted — and names each changed function's own fields (inputs, outputs,
attributes and their defaults, opsets, doc string, metadata, value_info)."""

from __future__ import annotations

import onnx
import onnx.parser
from testkit import upload

MAIN = """
<ir_version: 10, opset_import: ["" : 18, "local.fns" : 1]>
main (float[N, 4] X) => (float[N, 4] Y) {
  H = local.fns.Block <slope: float = 0.2> (X)
  Y = local.fns.Inner (H)
}
"""

BLOCK = """
<domain: "local.fns", opset_import: ["" : 18, "local.fns" : 1]>
Block <slope, gain: float = 2.0> (X) => (Y) {
  a = LeakyRelu <alpha: float = @slope> (X)
  g = Constant <value_float: float = @gain> ()
  b = Mul (a, g)
  Y = local.fns.Inner (b)
}
"""

INNER = """
<domain: "local.fns", opset_import: ["" : 18]>
Inner (X) => (Y) {
  Y = Relu (X)
}
"""


def fn_model(main: str = MAIN, block: str = BLOCK, inner: str = INNER) -> onnx.ModelProto:
    model = onnx.parser.parse_model(main + block + inner)
    onnx.checker.check_model(model, full_check=True)
    return model


def uploaded(client, model: onnx.ModelProto) -> str:
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def edit(client, mid: str, *ops) -> int:
    head = client.get(f"/api/models/{mid}").get_json()["revision"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": head, "ops": list(ops)})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["revision"]


def diff(client, mid: str, query: str) -> dict:
    r = client.get(f"/api/models/{mid}/diff?{query}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def between(client, old: onnx.ModelProto, new: onnx.ModelProto) -> dict:
    """The diff of two uploaded models (?other=): function fields no edit op sets."""
    return diff(client, uploaded(client, new), f"other={uploaded(client, old)}")


def changed_function(d: dict, name: str = "local.fns.Block") -> dict:
    (entry,) = [f for f in d["functions"]["changed"] if f["function"] == name]
    return entry


def test_a_renamed_body_node_is_listed_with_its_path(client):
    mid = uploaded(client, fn_model())
    rev = edit(client, mid, {"op": "rename_node", "node": "fn[0]/n2", "name": "act_mul_renamed"})
    d = diff(client, mid, f"from=0&to={rev}")
    assert d["nodes"]["changed"] == [
        {
            "node": "fn[0]/n2",
            "other": "fn[0]/n2",
            "name": "act_mul_renamed",
            "op_type": "Mul",
            "fields": ["name: '' → 'act_mul_renamed'"],
        }
    ]
    assert d["nodes"]["added"] == d["nodes"]["removed"] == []
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 1}
    assert d["functions"] == {
        "added": [],
        "removed": [],
        "changed": [
            {
                "function": "local.fns.Block",
                "path": "fn[0]",
                "other": "fn[0]",
                "fields": [],
                "nodes": {"added": 0, "removed": 0, "changed": 1},
            }
        ],
    }
    assert d["model"] == {} and not d["same"] and not d["same_content"]


def test_a_node_added_to_a_body_and_an_attribute_changed_there(client):
    mid = uploaded(client, fn_model())
    add = {"op": "add_node", "op_type": "LeakyRelu", "name": "extra", "inputs": ["b"], "graph": "fn[0]"}
    rev = edit(client, mid, {**add, "attributes": {"alpha": 0.1}})
    d = diff(client, mid, f"from=0&to={rev}")
    assert d["nodes"]["added"] == [{"node": "fn[0]/n4", "name": "extra", "op_type": "LeakyRelu"}]
    assert d["nodes"]["changed"] == [] and d["nodes"]["removed"] == []
    assert d["counts"] == {"added": 1, "removed": 0, "changed": 0}
    assert changed_function(d)["nodes"] == {"added": 1, "removed": 0, "changed": 0}

    rev2 = edit(
        client,
        mid,
        {"op": "set_attribute", "node": "fn[0]/n4", "name": "alpha", "value": 0.3},
        {"op": "rename_node", "node": "fn[0]/n2", "name": "scale"},
    )
    d = diff(client, mid, f"from={rev}&to={rev2}")
    assert [(c["node"], c["other"], c["op_type"], c["fields"]) for c in d["nodes"]["changed"]] == [
        ("fn[0]/n2", "fn[0]/n2", "Mul", ["name: '' → 'scale'"]),
        ("fn[0]/n4", "fn[0]/n4", "LeakyRelu", ["attribute alpha: 0.1 → 0.3"]),
    ]
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 2}
    # from the start: the node added (its attribute part of it), the other renamed
    d = diff(client, mid, f"from=0&to={rev2}")
    assert d["counts"] == {"added": 1, "removed": 0, "changed": 1}
    assert changed_function(d)["nodes"] == {"added": 1, "removed": 0, "changed": 1}
    # back again: the node added is removed, by its id on the older side
    d = diff(client, mid, f"from={rev2}&to=0")
    assert d["nodes"]["removed"] == [{"node": "fn[0]/n4", "name": "extra", "op_type": "LeakyRelu"}]
    assert changed_function(d)["nodes"] == {"added": 0, "removed": 1, "changed": 1}


def test_a_change_to_the_called_function_leaves_its_callers_alone(client):
    """Block calls Inner: a change in Inner's body is Inner's, not Block's nor main's."""
    old = fn_model()
    new = fn_model(inner=INNER.replace("Y = Relu (X)", "Y = Sigmoid (X)"))
    d = between(client, old, new)
    assert [f["function"] for f in d["functions"]["changed"]] == ["local.fns.Inner"]
    # an unnamed node of another op is another node, as in a graph
    assert d["nodes"]["removed"] == [{"node": "fn[1]/n0", "name": "", "op_type": "Relu"}]
    assert d["nodes"]["added"] == [{"node": "fn[1]/n0", "name": "", "op_type": "Sigmoid"}]
    assert d["counts"] == {"added": 1, "removed": 1, "changed": 0}
    assert changed_function(d, "local.fns.Inner")["nodes"] == {"added": 1, "removed": 1, "changed": 0}


def test_a_functions_own_fields_are_named_before_and_now(client):
    old = fn_model()
    new = fn_model()
    fn = new.functions[0]
    fn.attribute_proto[0].f = 3.0  # gain's default
    fn.doc_string = "a scaled activation"
    fn.opset_import[0].version = 17
    fn.metadata_props.add(key="origin", value="tests")
    d = between(client, old, new)
    entry = changed_function(d)
    assert entry["path"] == entry["other"] == "fn[0]"
    assert entry["fields"] == [
        "attribute gain: default 2 → default 3",
        "opset ai.onnx: 18 → 17",
        "doc_string: '' → 'a scaled activation'",
        "metadata 'origin' = 'tests' added",
    ]
    assert entry["nodes"] == {"added": 0, "removed": 0, "changed": 0}
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}
    assert not d["same_content"]


def test_attributes_inputs_and_outputs_of_a_function(client):
    old = fn_model()
    header = "Block <slope: float = 0.1, bias> (X, Z) => (Y)"  # gain gone: the body no longer checks
    new = onnx.parser.parse_model(MAIN + BLOCK.replace("Block <slope, gain: float = 2.0> (X) => (Y)", header) + INNER)
    entry = changed_function(between(client, old, new))
    assert entry["fields"] == [
        "inputs: ['X'] → ['X', 'Z']",
        "attribute slope: no default → default 0.1",
        "attribute gain: default 2 → (none)",
        "attribute bias: (none) → no default",
    ]


def test_functions_match_by_name_not_position(client):
    """Inner moved before Block: each still matched with itself, ids each side's own."""
    old = fn_model()
    new = onnx.parser.parse_model(MAIN + INNER + BLOCK.replace("b = Mul (a, g)", "b = Mul (g, a)"))
    d = between(client, old, new)
    entry = changed_function(d)
    assert (entry["path"], entry["other"]) == ("fn[1]", "fn[0]")
    (change,) = d["nodes"]["changed"]
    assert (change["node"], change["other"]) == ("fn[1]/n2", "fn[0]/n2")
    assert change["fields"] == ["inputs: ['a', 'g'] → ['g', 'a']"]


def test_added_and_removed_functions_are_named_not_their_nodes(client):
    old = fn_model()
    new = onnx.parser.parse_model(
        MAIN.replace("Y = local.fns.Inner (H)", "Y = local.fns.Outer (H)")
        + BLOCK
        + INNER
        + '<domain: "local.fns", opset_import: ["" : 18]>\nOuter (X) => (Y) {\n  Y = Tanh (X)\n}\n'
    )
    d = between(client, old, new)
    assert d["functions"]["added"] == ["local.fns.Outer"]
    assert d["functions"]["removed"] == [] and d["functions"]["changed"] == []
    # the main graph's call is another node; the added function's body is not listed node by node
    assert [(n["node"], n["op_type"]) for n in d["nodes"]["added"]] == [("n1", "Outer")]
    assert [(n["node"], n["op_type"]) for n in d["nodes"]["removed"]] == [("n1", "Inner")]
    assert d["counts"] == {"added": 1, "removed": 1, "changed": 0}
    d = between(client, new, old)
    assert d["functions"]["removed"] == ["local.fns.Outer"] and d["functions"]["added"] == []


def test_subgraphs_inside_a_body_are_diffed_recursively(client):
    block = """
<domain: "local.fns", opset_import: ["" : 18]>
Block <slope, gain: float = 2.0> (X) => (Y) {
  s = ReduceSum (X)
  c = Greater (s, s)
  Y = If (c) <
    then_branch = g1 () => (float[N, 4] t) { t = Relu (X) },
    else_branch = g2 () => (float[N, 4] e) { e = LeakyRelu <alpha: float = 0.1> (X) }
  >
}
"""
    main = MAIN.replace("Y = local.fns.Inner (H)", "Y = Identity (H)")
    model = onnx.parser.parse_model(main + block)
    mid = uploaded(client, model)
    rev = edit(client, mid, {"op": "set_attribute", "node": "fn[0]/n2/else_branch/n0", "name": "alpha", "value": 0.3})
    d = diff(client, mid, f"from=0&to={rev}")
    by_node = {c["node"]: c for c in d["nodes"]["changed"]}
    assert set(by_node) == {"fn[0]/n2", "fn[0]/n2/else_branch/n0"}
    inner = by_node["fn[0]/n2/else_branch/n0"]
    assert inner["other"] == "fn[0]/n2/else_branch/n0" and inner["fields"] == ["attribute alpha: 0.1 → 0.3"]
    assert by_node["fn[0]/n2"]["fields"] == ["subgraph else_branch: 1 node changed"]
    assert d["counts"]["changed"] == 2
    assert changed_function(d)["nodes"] == {"added": 0, "removed": 0, "changed": 2}


def test_a_function_called_from_an_if_body(client):
    """The function's body changes; the If whose branch calls it is no change of its own."""
    main = """
<ir_version: 10, opset_import: ["" : 18, "local.fns" : 1]>
main (float[N, 4] X, bool C) => (float[N, 4] Y) {
  Y = If (C) <
    then_branch = g1 () => (float[N, 4] t) { t = local.fns.Inner (X) },
    else_branch = g2 () => (float[N, 4] e) { e = Identity (X) }
  >
}
"""
    old = onnx.parser.parse_model(main + INNER)
    onnx.checker.check_model(old, full_check=True)
    mid = uploaded(client, old)
    rev = edit(client, mid, {"op": "rename_node", "node": "fn[0]/n0", "name": "inner_relu"})
    d = diff(client, mid, f"from=0&to={rev}")
    assert [(c["node"], c["fields"]) for c in d["nodes"]["changed"]] == [("fn[0]/n0", ["name: '' → 'inner_relu'"])]
    assert changed_function(d, "local.fns.Inner")["path"] == "fn[0]"


def test_metadata_set_on_a_function_is_its_field(client):
    mid = uploaded(client, fn_model())
    rev = edit(client, mid, {"op": "set_metadata", "target": "fn[1]", "key": "note", "value": "checked"})
    d = diff(client, mid, f"from=0&to={rev}")
    entry = changed_function(d, "local.fns.Inner")
    assert entry["fields"] == ["metadata 'note' = 'checked' added"]
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0} and d["metadata"]["added"] == {}


def test_functions_held_the_same_way_are_no_change(client):
    """A body's Constant written as raw_data or as float_data is the same function."""
    old = fn_model(
        block=BLOCK.replace("g = Constant <value_float: float = @gain> ()", "g = Constant <value = float[1] {2.0}> ()")
    )
    new = onnx.ModelProto()
    new.CopyFrom(old)
    t = new.functions[0].node[1].attribute[0].t
    raw = onnx.numpy_helper.to_array(t).tobytes()
    del t.float_data[:]
    t.raw_data = raw
    d = between(client, old, new)
    assert d["functions"] == {"added": [], "removed": [], "changed": []}
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}
    assert d["same_content"] and not d["same"]


def test_a_body_node_with_an_attribute_reference_diffs(client):
    """A body node whose alpha is `@gain` renamed, then its reference changed: the diff answered
    500 (onnx's get_attribute_value refuses a reference) (QA15 F2)."""
    import onnx.parser

    model = onnx.parser.parse_model("""
    <ir_version: 10, opset_import: ["" : 18, "local" : 1]>
    main (float[2] X) => (float[2] Y) { Y = local.Act <gain: float = 0.2> (X) }
    <domain: "local", opset_import: ["" : 18]>
    Act <gain, slope> (X) => (Y) { Y = LeakyRelu <alpha: float = @gain> (X) }
    """)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    ops = [{"op": "rename_node", "node": "fn[0]/n0", "name": "leaky"}]
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops}).status_code == 200
    r = client.get(f"/api/models/{mid}/diff?from=0&to=1")
    assert r.status_code == 200, r.get_json()
    [changed] = r.get_json()["nodes"]["changed"]
    assert changed["node"] == "fn[0]/n0" and changed["fields"] == ["name: '' → 'leaky'"]
    # the reference itself changed: said as references
    other = onnx.parser.parse_model(onnx.printer.to_text(model).replace("@gain", "@slope"))
    oid = upload(client, other.SerializeToString()).get_json()["id"]
    r = client.get(f"/api/models/{oid}/diff?other={mid}&other_revision=0")
    assert r.status_code == 200, r.get_json()
    [changed] = r.get_json()["nodes"]["changed"]
    assert changed["fields"] == ["attribute alpha: @gain → @slope"]
