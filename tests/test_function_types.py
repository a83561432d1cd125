"""Types inside model-local functions' bodies (QA 11, F7): GET .../types?path=fn[k] answers the
types of the body's values as at one call of the function (its input types, its attributes and
the function's defaults), with `typed_at` naming that call, how many calls there are and whether
others take other types."""

from __future__ import annotations

import onnx
import onnx.parser
from testkit import upload

# Block forwards its attributes to ScaledAct, one of them (`gain`) and `dtype` left to Block's
# defaults by block0: ScaledAct's Constant takes @beta = @gain = 2.0 and its Cast @to = @dtype = 10
NESTED = """
<ir_version: 10, opset_import: ["" : 18, "local.fns" : 1]>
main (float[N, 4] X) => (float16[N, 4] Y, float16[N, 4] Z) {
  Y = local.fns.Block <slope: float = 0.2> (X)
  Z = local.fns.Block <slope: float = 0.05, gain: float = 3.0> (X)
}
<domain: "local.fns", opset_import: ["" : 18, "local.fns" : 1]>
ScaledAct <alpha, beta: float = 0.5, to: int = 1> (X) => (Y) {
  T1 = LeakyRelu <alpha: float = @alpha> (X)
  B = Constant <value_float: float = @beta> ()
  P = Mul (T1, B)
  Y = Cast <to: int = @to> (P)
}
<domain: "local.fns", opset_import: ["" : 18, "local.fns" : 1]>
Block <slope, gain: float = 2.0, dtype: int = 10> (X) => (Y) {
  X2 = Transpose (X)
  M = MatMul (X, X2)
  Y = local.fns.ScaledAct <alpha: float = @slope, beta: float = @gain, to: int = @dtype> (M)
}
"""


def fn_model(text: str) -> onnx.ModelProto:
    return onnx.parser.parse_model(text)


def uploaded(client, model: onnx.ModelProto) -> str:
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def types(client, mid: str, path: str) -> tuple[dict, dict | None]:
    """({value name: (dtype, shape)}, typed_at) of GET .../types?path="""
    r = client.get(f"/api/models/{mid}/types", query_string={"path": path})
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    assert answer["path"] == path
    return {v["name"]: (v["dtype"], v["shape"]) for v in answer["inferred_value_info"]}, answer.get(
        "typed_at", "absent"
    )


def function_path(model: onnx.ModelProto, name: str) -> str:
    return f"fn[{[f.name for f in model.functions].index(name)}]"


def test_nested_functions_typed_with_the_calls_attributes_and_the_functions_defaults(client):
    model = fn_model(NESTED)
    mid = uploaded(client, model)
    block, act = function_path(model, "Block"), function_path(model, "ScaledAct")

    values, at = types(client, mid, block)
    assert at == {"node": "n0", "name": "", "calls": 2, "differ": False}
    # the inputs typed as the call's, the outputs too, and every value between
    assert values == {
        "X": ("FLOAT", ["N", 4]),
        "X2": ("FLOAT", [4, "N"]),
        "M": ("FLOAT", ["N", "N"]),
        "Y": ("FLOAT16", ["N", "N"]),  # Cast to @dtype, Block's default 10, through ScaledAct's @to
    }

    # ScaledAct is called only in Block's body: typed at that call, with Block's values
    values, at = types(client, mid, act)
    assert at == {"node": f"{block}/n2", "name": "", "calls": 1, "differ": False}
    assert values == {
        "X": ("FLOAT", ["N", "N"]),
        "T1": ("FLOAT", ["N", "N"]),
        "B": ("FLOAT", []),  # the Constant's @beta = @gain given a value: a scalar (without: no type)
        "P": ("FLOAT", ["N", "N"]),
        "Y": ("FLOAT16", ["N", "N"]),
    }

    # other graphs answer as before, without typed_at
    values, at = types(client, mid, "")
    assert at == "absent"


def test_a_call_inside_an_if_branch_types_the_function_from_the_enclosing_graph(client):
    model = fn_model("""
    <ir_version: 9, opset_import: ["" : 18, "custom" : 1]>
    main (bool c, float[3, 5] X) => (float[3, 5] Y) {
      Y = If (c) <
        then_branch = then_g () => (float[3, 5] t) { t = custom.SquarePlus (X) },
        else_branch = else_g () => (float[3, 5] e) { e = Neg (X) }
      >
    }
    <domain: "custom", opset_import: ["" : 18]>
    SquarePlus (X) => (Y) {
      S = Mul (X, X)
      one = Constant <value_float: float = 1.0> ()
      flag = Constant <value: tensor = bool {1}> ()
      Y = If (flag) <
        then_branch = a () => (r) { r = Add (S, one) },
        else_branch = b () => (q) { q = Identity (S) }
      >
    }
    """)
    model.graph.node[0].name = "branch"
    mid = uploaded(client, model)

    values, at = types(client, mid, "fn[0]")
    assert at == {"node": "n0/then_branch/n0", "name": "", "calls": 1, "differ": False}
    assert values["X"] == ("FLOAT", [3, 5])  # read by the branch from the main graph
    assert values["S"] == ("FLOAT", [3, 5])
    assert values["one"] == ("FLOAT", [])
    # the body's own If branch: its values, and what it reads from the body, typed too
    values, at = types(client, mid, "fn[0]/n3/then_branch")
    assert at == {"node": "n0/then_branch/n0", "name": "", "calls": 1, "differ": False}
    assert values == {"r": ("FLOAT", [3, 5]), "S": ("FLOAT", [3, 5]), "one": ("FLOAT", [])}


def test_a_function_called_with_other_shapes_is_typed_at_its_first_call_and_says_they_differ(client):
    model = fn_model("""
    <ir_version: 8, opset_import: ["" : 17, "pkg.torch.nn" : 1]>
    torch_jit (float[batch, 16] input, float[16, 32] w1, float[32, 8] w2) => (float[batch, 8] output) {
       l1 = pkg.torch.nn.Linear (input, w1)
       output = pkg.torch.nn.Linear (l1, w2)
    }
    <domain: "pkg.torch.nn", opset_import: ["" : 17]>
    Linear (x, w) => (y) {
       y = MatMul (x, w)
    }
    """)
    model.graph.node[0].name = "/linear_0"
    mid = uploaded(client, model)
    values, at = types(client, mid, "fn[0]")
    assert at == {"node": "n0", "name": "/linear_0", "calls": 2, "differ": True}
    assert values == {"x": ("FLOAT", ["batch", 16]), "w": ("FLOAT", [16, 32]), "y": ("FLOAT", ["batch", 32])}


def test_calls_with_the_same_input_types_but_other_attribute_values_say_the_types_differ(client):
    # Block's second call casts to float64 through @dtype: its body's Y is typed otherwise
    model = fn_model(
        NESTED.replace(
            "Z = local.fns.Block <slope: float = 0.05, gain: float = 3.0> (X)",
            "Z = local.fns.Block <slope: float = 0.05, dtype: int = 11> (X)",
        )
    )
    model.graph.output[1].type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    mid = uploaded(client, model)
    values, at = types(client, mid, function_path(model, "Block"))
    assert at == {"node": "n0", "name": "", "calls": 2, "differ": True}
    assert values["Y"] == ("FLOAT16", ["N", "N"])  # as at the first call


def test_an_uncalled_function_and_one_whose_call_takes_unknown_types_have_none(client):
    model = fn_model("""
    <ir_version: 10, opset_import: ["" : 18, "local.fns" : 1, "vendor" : 1]>
    main (float[2, 3] X) => (Y) {
      t = vendor.Mystery (X)
      Y = local.fns.Act (t)
    }
    <domain: "local.fns", opset_import: ["" : 18]>
    Act (X) => (Y) { Y = Relu (X) }
    <domain: "local.fns", opset_import: ["" : 18]>
    Unused (X) => (Y) { Y = Sigmoid (X) }
    """)
    mid = uploaded(client, model)
    for path in ("fn[0]", "fn[1]"):  # Act: its input comes from an operator nothing types
        values, at = types(client, mid, path)
        assert values == {} and at is None, (path, values, at)


def test_the_types_of_a_revision_are_kept_and_a_bad_path_is_404(client, app):
    model = fn_model(NESTED)
    mid = uploaded(client, model)
    first = client.get(f"/api/models/{mid}/types?path=fn[1]").get_json()
    from app.api import documents

    documents._function_types.items.clear()  # another worker, or after a restart: from the store
    assert client.get(f"/api/models/{mid}/types?path=fn[1]").get_json() == first
    assert client.get(f"/api/models/{mid}/types?path=fn[7]").status_code == 404
