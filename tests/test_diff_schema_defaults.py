"""Compare (QA: legacy against dynamo torch exports): an attribute written at the default its
operator's schema gives it (at the node's opset, in its domain) is the same as the attribute left
out — `auto_pad = 'NOTSET'`, `axis = 0` on a Gather — so such nodes are not changed; an attribute
at another value, against one left out, still is."""

from __future__ import annotations

import onnx
import onnx.parser
from testkit import diff_between

LEFT_OUT = """
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[1, 2, 5, 5] X, int64[3] I) => (float[1, 2, 5, 5] Y, float[3, 2, 5, 5] G, float[1, 50] F, float[1, 2, 5, 5] L, float[1, 2, 5, 5] S) {
  W = Constant <value: tensor = float[2, 2, 1, 1] {1, 0, 0, 1}> ()
  Y = Conv <kernel_shape: ints = [1, 1]> (X, W)
  G = Gather (X, I)
  F = Flatten (X)
  L = LeakyRelu (X)
  S = local.Act (X)
}
<domain: "local", opset_import: ["" : 13]>
Act (X) => (Y) {
  Y = Softmax (X)
}
"""

WRITTEN = (
    LEFT_OUT.replace("Conv <kernel_shape", 'Conv <auto_pad: string = "NOTSET", group: int = 1, kernel_shape')
    .replace("Gather (X, I)", "Gather <axis: int = 0> (X, I)")
    .replace("Flatten (X)", "Flatten <axis: int = 1> (X)")
    .replace("LeakyRelu (X)", "LeakyRelu <alpha: float = 0.01> (X)")
    .replace("Softmax (X)", "Softmax <axis: int = -1> (X)")
)


def model(text: str) -> onnx.ModelProto:
    m = onnx.parser.parse_model(text)
    onnx.checker.check_model(m, full_check=True)
    return m


def changed(d: dict) -> list[tuple[str, list[str]]]:
    return [(c["op_type"], c["fields"]) for c in d["nodes"]["changed"]]


def test_attributes_at_their_schema_default_are_no_change_either_way(client):
    for old, new in ((LEFT_OUT, WRITTEN), (WRITTEN, LEFT_OUT)):
        d = diff_between(client, model(old), model(new))
        assert changed(d) == [], changed(d)
        assert d["functions"]["changed"] == []
        assert d["counts"] == {"added": 0, "removed": 0, "changed": 0}
        assert d["same_content"] and not d["same"]  # the bytes differ; nothing a person reads does


def test_a_value_other_than_the_default_is_still_a_change(client):
    other = (
        WRITTEN.replace('auto_pad: string = "NOTSET"', 'auto_pad: string = "SAME_UPPER"')
        .replace("Gather <axis: int = 0>", "Gather <axis: int = 1>")
        .replace("alpha: float = 0.01", "alpha: float = 0.1")
        .replace("Softmax <axis: int = -1>", "Softmax <axis: int = 1>")
    ).replace("float[3, 2, 5, 5] G", "float[1, 3, 5, 5] G")
    d = diff_between(client, model(LEFT_OUT), model(other))
    assert changed(d) == [
        ("Conv", ["attribute auto_pad: (none) → 'SAME_UPPER'"]),
        ("Gather", ["attribute axis: (none) → 1"]),
        ("LeakyRelu", ["attribute alpha: (none) → 0.1"]),
        ("Softmax", ["attribute axis: (none) → 1"]),  # in the function's body, at its opset 13
    ]
    assert [n["node"] for n in d["nodes"]["changed"]][-1] == "fn[0]/n0"


def test_the_default_is_the_one_of_the_node_s_opset(client):
    """Softmax's axis defaults to 1 before opset 13 and to -1 from 13 on: at opset 11, axis = -1
    written against left out is a change, axis = 1 is not."""
    at_11 = """
    <ir_version: 10, opset_import: ["" : 11]>
    main (float[2, 3] X) => (float[2, 3] Y) { Y = Softmax (X) }
    """
    d = diff_between(client, model(at_11), model(at_11.replace("Softmax (X)", "Softmax <axis: int = -1> (X)")))
    assert changed(d) == [("Softmax", ["attribute axis: (none) → -1"])]
    d = diff_between(client, model(at_11), model(at_11.replace("Softmax (X)", "Softmax <axis: int = 1> (X)")))
    assert changed(d) == []


def test_an_attribute_the_other_opset_lacks_is_the_same_at_its_default(client):
    """ReduceMean at 18 with noop_with_empty_axes = 0 (what torch's dynamo writes) against the
    same node at 17, which has no such attribute: axes moved from an input to an attribute is a
    change, the attribute at its default is not."""
    at_18 = """
    <ir_version: 10, opset_import: ["" : 18]>
    main (float[2, 3] X) => (float[2, 1] Y) {
      ax = Constant <value: tensor = int64[1] {1}> ()
      Y = ReduceMean <noop_with_empty_axes: int = 0> (X, ax)
    }
    """
    at_17 = """
    <ir_version: 10, opset_import: ["" : 17]>
    main (float[2, 3] X) => (float[2, 1] Y) {
      Y = ReduceMean <axes: ints = [1]> (X)
    }
    """
    d = diff_between(client, model(at_18), model(at_17))
    ((op, fields),) = changed(d)
    assert op == "ReduceMean"
    assert fields == ["inputs: ['X', 'ax'] → ['X']", "attribute axes: (none) → [1]"], fields
