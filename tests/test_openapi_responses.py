"""Real answers against openapi.json, as an outside client checks them (QA33 #3): each answer's
status is declared for its path and method, and its body fits the schema declared there
(jsonschema, Draft 2020-12, the dialect of OpenAPI 3.1). Also the contract's edges a script
leans on: unknown top-level fields refused (QA33 #6), the Bearer scheme in any case (#9)."""

from __future__ import annotations

import io

import numpy as np
import onnx
import pytest
from jsonschema import Draft202012Validator
from onnx import TensorProto, helper, numpy_helper
from referencing import Registry
from referencing.jsonschema import DRAFT202012
from test_bad_input import small_model
from testkit import upload

from app import create_app
from app.api.recipes import RECIPE_BODY_FIELDS
from app.api.routes import EDIT_BATCH_FIELDS

TOKEN = "s3cret-token-qa33"


def _loop_model() -> onnx.ModelProto:
    """A Loop whose trip count is a graph input: stats' loops[].trip_count names it (a string)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "one"], ["acc_out"]), helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2]),
        ],
        [numpy_helper.from_array(np.ones(2, np.float32), "one")],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trip_count", "", "x"], ["y"], body=body)],
        "g",
        [
            helper.make_tensor_value_info("trip_count", TensorProto.INT64, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


class Contract:
    """openapi.json as a client holds answers to it."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.registry = Registry().with_resource("urn:openapi", DRAFT202012.create_resource(doc))
        self.checked: list[tuple[str, str, int]] = []

    def _operation(self, method: str, path: str) -> dict:
        item = self.doc["paths"].get(path)
        assert item is not None, f"{path} is not in openapi.json"
        return item[method.lower()]

    def _schema(self, response: dict) -> dict | None:
        while "$ref" in response:  # components/responses/...
            response = self.doc["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        content = response.get("content", {}).get("application/json")
        return None if content is None else content.get("schema")

    def check(self, method: str, path: str, r, status: int) -> dict:
        """The answer's body, once its status is `status`, declared, and its body fits."""
        body = r.get_json(silent=True)
        assert r.status_code == status, (method, path, r.status_code, body)
        declared = self._operation(method, path)["responses"]
        assert str(status) in declared, f"{method} {path} answered {status}, which openapi.json doesn't declare"
        schema = self._schema(declared[str(status)])
        if schema is not None:
            validator = Draft202012Validator(_rebased(schema), registry=self.registry)
            errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
            assert not errors, f"{method} {path} {status}: " + "; ".join(
                f"{list(e.path)}: {e.message[:200]}" for e in errors[:5]
            )
        self.checked.append((method, path, status))
        return body


def _rebased(schema):
    """#/components/... refs made absolute against the document's URN, for referencing."""
    if isinstance(schema, dict):
        return {k: ("urn:openapi" + v if k == "$ref" else _rebased(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_rebased(v) for v in schema]
    return schema


@pytest.fixture
def contract(client):
    return Contract(client.get("/api/openapi.json").get_json())


M = "/api/models/{id}"


def test_real_answers_fit_their_declared_schemas(client, contract):
    c = contract
    created = c.check("POST", "/api/models", upload(client, small_model().SerializeToString()), 201)
    mid = created["id"]
    c.check("GET", "/api/models", client.get("/api/models"), 200)
    c.check("GET", M, client.get(f"/api/models/{mid}"), 200)
    c.check("GET", f"{M}/graph", client.get(f"/api/models/{mid}/graph"), 200)
    c.check("GET", f"{M}/node", client.get(f"/api/models/{mid}/node?id=n0"), 200)
    c.check("GET", f"{M}/schema", client.get(f"/api/models/{mid}/schema?node=n1"), 200)
    c.check("GET", f"{M}/stats", client.get(f"/api/models/{mid}/stats"), 200)
    c.check("GET", f"{M}/search", client.get(f"/api/models/{mid}/search?q=mm"), 200)
    c.check("GET", f"{M}/revisions", client.get(f"/api/models/{mid}/revisions"), 200)
    c.check("POST", f"{M}/run", client.post(f"/api/models/{mid}/run", json={}), 200)
    edit = {"base": 0, "ops": [{"op": "rename_node", "node": "n0", "name": "mm2"}]}
    c.check("POST", f"{M}/edits", client.post(f"/api/models/{mid}/edits", json=edit), 200)
    c.check("POST", f"{M}/undo", client.post(f"/api/models/{mid}/undo", json={"base": 1}), 200)
    c.check("POST", f"{M}/redo", client.post(f"/api/models/{mid}/redo", json={"base": 0}), 200)
    recipe = c.check("GET", f"{M}/recipe", client.get(f"/api/models/{mid}/recipe?from=0&to=1"), 200)
    other = upload(client, small_model().SerializeToString()).get_json()["id"]
    dry = {"base": 0, "recipe": recipe, "dry_run": True}
    assert c.check("POST", f"{M}/recipe", client.post(f"/api/models/{other}/recipe", json=dry), 200)["dry_run"]
    applied = c.check(
        "POST", f"{M}/recipe", client.post(f"/api/models/{other}/recipe", json={**dry, "dry_run": False}), 200
    )
    assert applied["revisions"] == [1]

    loop = upload(client, _loop_model().SerializeToString()).get_json()["id"]
    stats = c.check("GET", f"{M}/stats", client.get(f"/api/models/{loop}/stats"), 200)
    assert stats["loops"][0]["trip_count"] == "trip_count"

    # QA35 #3: a model with external data (its files' names), a run saying a branch's inputs
    import io
    import zipfile

    from test_run_branches import _nested_ifs

    heavy = small_model()
    onnx.external_data_helper.convert_model_to_external_data(heavy, location="w.bin", size_threshold=0)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("m.onnx", heavy.SerializeToString())
        z.writestr("w.bin", numpy_helper.to_array(small_model().graph.initializer[0]).tobytes())
    external = c.check("POST", "/api/models", upload(client, buf.getvalue(), "m.zip"), 201)
    assert external["external_files"] == ["w.bin"]
    nested = upload(client, _nested_ifs().SerializeToString()).get_json()["id"]
    fed = {"x": {"values": [1.0, 2.0]}, "flag": {"values": [True]}, "step": {"values": [0]}}
    ran = c.check("POST", f"{M}/run", client.post(f"/api/models/{nested}/run", json={"inputs": fed}), 200)
    assert [b["ran"] for b in ran["branches"]] == ["then_branch", "then_branch"]

    tensor = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "t")
    data = c.check("POST", "/api/models", upload(client, tensor.SerializeToString(), "t.pb"), 201)
    assert data["kind"] == "tensor"
    c.check("GET", M, client.get(f"/api/models/{data['id']}"), 200)


def test_error_answers_fit_the_error_schema_with_declared_statuses(client, contract):
    c = contract
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    assert c.check("GET", M, client.get("/api/models/nope"), 404)["error"]["code"] == "unknown_model"
    assert c.check("GET", f"{M}/graph", client.get(f"/api/models/{mid}/graph?revision=x"), 400)["error"]["code"] == (
        "bad_revision"
    )
    edit = {"base": 0, "ops": [{"op": "rename_node", "node": "n0", "name": "mm2"}]}
    assert client.post(f"/api/models/{mid}/edits", json=edit).status_code == 200
    stale = c.check("POST", f"{M}/edits", client.post(f"/api/models/{mid}/edits", json=edit), 409)
    assert stale["error"]["head"] == 1 and stale["error"]["request_id"]
    deep = "main (float[1] x) => (float[1] y) {" + "(" * 300 + ")" * 300 + "}"  # ONNX text, brackets 300 deep
    r = client.post("/api/models", data={"file": (io.BytesIO(deep.encode()), "deep.onnxtxt")})
    assert c.check("POST", "/api/models", r, 422)["error"]["code"] == "too_deep"
    r = client.post(f"/api/models/{mid}/run", json={"dims": {"N": 2}})
    assert c.check("POST", f"{M}/run", r, 400)["error"]["code"] == "unknown_dim"
    r = client.get(f"/api/models/{mid}/search?q=mm&near=n9/body")
    assert c.check("GET", f"{M}/search", r, 404)["error"]["code"] == "unknown_graph"


def test_unknown_dims_are_400_from_edits_as_from_a_run(client):
    """QA33 #2: one fault, one status: a dim the model lacks named in a body is a malformed request."""
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    for op in ({"op": "fix_dims", "dims": {"N": 1}}, {"op": "rename_dim", "from": "N", "to": "M"}):
        r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
        assert (r.status_code, r.get_json()["error"]["code"]) == (400, "unknown_dim"), op
    r = client.post(f"/api/models/{mid}/run", json={"dims": {"N": 2}})
    assert (r.status_code, r.get_json()["error"]["code"]) == (400, "unknown_dim")


def test_every_operation_declares_what_any_call_may_answer(contract):
    security = contract.doc["components"]["securitySchemes"]["bearer"]
    assert security["scheme"] == "bearer" and {} in contract.doc["security"]  # the token is optional
    for path, item in contract.doc["paths"].items():
        for method, op in item.items():
            assert {"401", "421", "500", "503"} <= set(op["responses"]), (method, path)
            assert ("403" in op["responses"]) == (method != "get"), (method, path)


def test_unknown_top_level_fields_are_refused_naming_the_closest(client, contract):
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "allowInvalid": True, "ops": [{"op": "cleanup"}]})
    error = contract.check("POST", f"{M}/edits", r, 400)["error"]
    assert error["code"] == "bad_field"
    assert error["message"] == "unexpected field 'allowInvalid' (did you mean 'allow_invalid'?)"
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "bogus": 1, "ops": [{"op": "cleanup"}]})
    assert r.get_json()["error"]["message"] == "unexpected field 'bogus' (fields: base, ops, allow_invalid)"
    assert client.get(f"/api/models/{mid}/head").get_json()["head"] == 0  # nothing applied
    r = client.post(f"/api/models/{mid}/recipe", json={"base": 0, "recipe": {}, "dryRun": True})
    assert r.status_code == 400 and "did you mean 'dry_run'?" in r.get_json()["error"]["message"]


def test_the_request_bodies_declared_are_the_fields_the_server_takes(contract):
    schemas = contract.doc["components"]["schemas"]
    assert set(schemas["EditBatch"]["properties"]) == set(EDIT_BATCH_FIELDS)
    assert schemas["EditBatch"]["additionalProperties"] is False
    recipe = contract.doc["paths"][f"{M}/recipe"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert set(recipe["properties"]) == set(RECIPE_BODY_FIELDS)


def test_the_bearer_scheme_is_taken_in_any_case(tmp_path):
    guarded = create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "AUTH_TOKEN": TOKEN}).test_client()
    for scheme in ("Bearer", "bearer", "BEARER"):
        assert guarded.get("/api/models", headers={"Authorization": f"{scheme} {TOKEN}"}).status_code == 200, scheme
    assert guarded.get("/api/models", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    assert guarded.get("/api/models", headers={"Authorization": f"bearer {TOKEN}x"}).status_code == 401


def test_help_says_how_long_a_token_must_be():
    from app.cli import serve_parser

    assert "at least 12 characters" in " ".join(serve_parser().format_help().split())
