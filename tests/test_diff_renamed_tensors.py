"""Compare (QA 14): two exports of one model spell their intermediate tensors differently
("/fc/Add_output_0" → "/fc/Add_out0") and number their constants from elsewhere
("onnx::Const_1" → "onnx::Const_2"). GET .../diff lists such tensors once as renamed
(tensors.renamed, tensors.renamed_count) instead of every node touching them as changed, in the
main graph, in subgraphs and in function bodies — and still names a node wired to another
producer, a node added, a weight whose values changed."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
from onnx import TensorProto, helper, numpy_helper
from testkit import diff_between


def torch_spelling(node: str) -> str:
    return f"{node}_output_0"


def re_export_spelling(node: str) -> str:
    return f"{node}_out0"


class Export:
    """What a small exporter writes: nodes named by scope, each one's output spelled by `spell`,
    constants numbered "onnx::Const_<n>" from `first_const` (torch numbers them in one count)."""

    def __init__(self, spell, first_const: int) -> None:
        self.spell, self.next_const = spell, first_const
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[TensorProto] = []
        self.value_info: list[onnx.ValueInfoProto] = []

    def const(self, values, dtype=np.float32) -> str:
        name = f"onnx::Const_{self.next_const}"
        self.next_const += 1
        self.initializers.append(numpy_helper.from_array(np.array(values, dtype), name))
        return name

    def node(self, op: str, name: str, inputs: list[str], output: str | None = None) -> str:
        out = output or self.spell(name)
        self.nodes.append(helper.make_node(op, inputs, [out], name=name))
        if output is None:
            self.value_info.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 4]))
        return out


def mlp(
    spell=torch_spelling,
    first_const: int = 1,
    identity: bool = False,
    mul_reads_fc: bool = False,
    weight: str = "fc.weight",
    weight_seed: int = 0,
) -> onnx.ModelProto:
    """x → MatMul → Add → [Identity] → Relu → Mul 0.5 → Add 2.0 → Mul 2.0 → Reshape → y. The two
    constants 2.0 are told apart by who reads them; mul_reads_fc: the Mul reads the Add before
    the Relu (a real rewiring)."""
    e = Export(spell, first_const)
    w = np.random.default_rng(weight_seed).standard_normal((4, 4)).astype(np.float32)
    e.initializers += [numpy_helper.from_array(w, weight), numpy_helper.from_array(np.ones(4, np.float32), "fc.bias")]
    h = e.node("MatMul", "/fc/MatMul", ["x", weight])
    fc = e.node("Add", "/fc/Add", [h, "fc.bias"])
    h = e.node("Identity", "/fc/Identity", [fc]) if identity else fc
    h = e.node("Relu", "/act/Relu", [h])
    h = e.node("Mul", "/act/Mul", [fc if mul_reads_fc else h, e.const(0.5)])
    h = e.node("Add", "/act/Add", [h, e.const(2.0)])
    h = e.node("Mul", "/out/Mul", [h, e.const(2.0)])
    e.node("Reshape", "/out/Reshape", [h, e.const([4], np.int64)], output="y")
    graph = helper.make_graph(
        e.nodes,
        "main_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        e.initializers,
        value_info=e.value_info,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def changed(d: dict) -> list[tuple[str, list[str]]]:
    return [(c["name"], c["fields"]) for c in d["nodes"]["changed"]]


def test_a_re_export_that_only_renames_tensors_changes_no_node(client):
    d = diff_between(client, mlp(), mlp(re_export_spelling, first_const=2))
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}
    intermediate = ["/fc/MatMul", "/fc/Add", "/act/Relu", "/act/Mul", "/act/Add", "/out/Mul"]
    # "onnx::Const_2" and "_3" are on both sides, other constants each: who reads them tells
    consts = [(f"onnx::Const_{k}", f"onnx::Const_{k + 1}") for k in (1, 2, 3, 4)]
    assert d["tensors"]["renamed"] == [
        {"from": torch_spelling(n), "to": re_export_spelling(n)} for n in intermediate
    ] + [{"from": a, "to": b} for a, b in consts]
    assert d["tensors"]["renamed_count"] == 10
    assert (d["tensors"]["added"], d["tensors"]["removed"], d["tensors"]["changed"]) == ([], [], [])
    assert d["model"] == {}  # value_info renamed with its tensor
    assert not d["same_content"]  # names a person reads did change


def test_an_added_identity_is_the_node_added_and_its_reader_the_one_changed(client):
    d = diff_between(client, mlp(), mlp(re_export_spelling, first_const=2, identity=True))
    assert [(n["name"], n["op_type"]) for n in d["nodes"]["added"]] == [("/fc/Identity", "Identity")]
    assert changed(d) == [("/act/Relu", ["inputs: ['/fc/Add_output_0'] → ['/fc/Identity_out0']"])]
    assert d["nodes"]["removed"] == []
    assert d["model"] == {"graph": ["value_info '/fc/Identity_out0' added"]}


def test_a_weight_renamed_with_its_values_kept_is_renamed_not_removed_and_added(client):
    d = diff_between(client, mlp(), mlp(weight="linear.weight"))
    assert d["tensors"]["renamed"] == [{"from": "fc.weight", "to": "linear.weight"}]
    assert (d["tensors"]["added"], d["tensors"]["removed"], d["tensors"]["changed"]) == ([], [], [])
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}


def test_a_weight_renamed_with_other_values_is_removed_and_added(client):
    d = diff_between(client, mlp(), mlp(weight="linear.weight", weight_seed=1))
    assert (d["tensors"]["added"], d["tensors"]["removed"], d["tensors"]["renamed"]) == (
        ["linear.weight"],
        ["fc.weight"],
        [],
    )
    assert changed(d) == [("/fc/MatMul", ["inputs: ['x', 'fc.weight'] → ['x', 'linear.weight']"])]


def test_a_node_wired_to_another_producer_is_changed_through_the_renames(client):
    d = diff_between(client, mlp(), mlp(re_export_spelling, first_const=2, mul_reads_fc=True))
    assert changed(d) == [
        ("/act/Mul", ["inputs: ['/act/Relu_output_0', 'onnx::Const_1'] → ['/fc/Add_out0', 'onnx::Const_2']"])
    ]
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 1}


def test_a_name_taken_over_by_an_inserted_node_changes_its_reader(client):
    """An Identity inserted after /fc/Add takes over its output's name, /fc/Add writes a new one:
    the Relu, written alike on both sides, now reads another tensor."""
    new = mlp()
    add = next(n for n in new.graph.node if n.name == "/fc/Add")
    add.output[0] = "/fc/Add_pre"
    at = list(new.graph.node).index(add) + 1
    new.graph.node.insert(at, helper.make_node("Identity", ["/fc/Add_pre"], ["/fc/Add_output_0"], name="extra"))
    d = diff_between(client, mlp(), new)
    assert [n["name"] for n in d["nodes"]["added"]] == ["extra"]
    assert changed(d) == [
        (
            "/act/Relu",
            [
                "inputs: ['/fc/Add_output_0'] → ['/fc/Add_output_0'] "
                "('/fc/Add_output_0' now names another tensor; the old one is '/fc/Add_pre')"
            ],
        )
    ]
    assert d["tensors"]["renamed"] == [{"from": "/fc/Add_output_0", "to": "/fc/Add_pre"}]


def if_model(spell) -> onnx.ModelProto:
    """A Relu, then an If whose branches read the Relu's output from the outer graph."""

    def branch(name: str, ops: list[str]) -> onnx.GraphProto:
        nodes, h = [], spell("/pre/Relu")
        for op in ops:
            out = spell(f"/{name}/{op}")
            nodes.append(helper.make_node(op, [h], [out], name=f"/{name}/{op}"))
            h = out
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(h, TensorProto.FLOAT, [4])])

    nodes = [
        helper.make_node("Relu", ["x"], [spell("/pre/Relu")], name="/pre/Relu"),
        helper.make_node(
            "If",
            ["c"],
            ["y"],
            name="/if",
            then_branch=branch("then", ["Neg", "Abs"]),
            else_branch=branch("else", ["Sigmoid"]),
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def test_tensors_renamed_inside_subgraphs_and_read_from_outside_change_nothing(client):
    d = diff_between(client, if_model(torch_spelling), if_model(re_export_spelling))
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}
    assert d["tensors"]["renamed"] == [
        {"from": torch_spelling(n), "to": re_export_spelling(n), **({"graph": g} if g else {})}
        for n, g in (  # (make_node writes attributes in name order)
            ("/pre/Relu", ""),
            ("/else/Sigmoid", "n1/else_branch"),
            ("/then/Neg", "n1/then_branch"),
            ("/then/Abs", "n1/then_branch"),
        )
    ]


FUNCTION_MAIN = """
<ir_version: 10, opset_import: ["" : 18, "local.fns" : 1]>
main (float[N, 4] X) => (float[N, 4] Y) {
  Y = local.fns.Act (X)
}
"""


def fn_model(body: str) -> onnx.ModelProto:
    model = onnx.parser.parse_model(FUNCTION_MAIN + '<domain: "local.fns", opset_import: ["" : 18]>\n' + body)
    onnx.checker.check_model(model, full_check=True)
    return model


def test_tensors_renamed_in_a_function_body_change_no_node_of_it(client):
    old = fn_model("Act (X) => (Y) {\n  a = Relu (X)\n  Y = Neg (a)\n}")
    new = fn_model("Act (Z) => (Y) {\n  a_1 = Relu (Z)\n  Y = Neg (a_1)\n}")
    d = diff_between(client, old, new)
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}
    # its input is a field of the function's own; the body's tensor is renamed
    assert [(f["function"], f["fields"], f["nodes"]) for f in d["functions"]["changed"]] == [
        ("local.fns.Act", ["inputs: ['X'] → ['Z']"], {"added": 0, "removed": 0, "changed": 0})
    ]
    assert d["tensors"]["renamed"] == [{"from": "a", "to": "a_1", "graph": "fn[0]"}]


def chain(spell, length: int) -> onnx.ModelProto:
    names = [spell(f"/r{k}") for k in range(length - 1)] + ["y"]
    nodes = [
        helper.make_node("Relu", [x], [y], name=f"/r{k}")
        for k, (x, y) in enumerate(zip(["x", *names[:-1]], names, strict=True))
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "g", [value("x", TensorProto.FLOAT, [1])], [value("y", TensorProto.FLOAT, [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_thousands_of_renames_are_counted_and_the_first_ones_listed(client):
    d = diff_between(client, chain(torch_spelling, 301), chain(re_export_spelling, 301))
    assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}
    assert d["tensors"]["renamed_count"] == 300
    assert len(d["tensors"]["renamed"]) == 200
    assert d["tensors"]["renamed"][0] == {"from": "/r0_output_0", "to": "/r0_out0"}
