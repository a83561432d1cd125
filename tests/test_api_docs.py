"""The OpenAPI document and docs/api.md against what the server really has: every /api route,
every edit op with the field schemas its declaration gives."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from app.edits import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_api_docs  # noqa: E402

DOCS = (ROOT / "docs" / "api.md").read_text()


@pytest.fixture
def doc(client):
    return client.get("/api/openapi.json").get_json()


def _api_routes(app) -> set[tuple[str, str]]:
    """(METHOD, OpenAPI path) of every /api rule: <model_id> -> {id}, <path:ref> -> {ref}."""
    out = set()
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: "{id}" if m[1] == "model_id" else f"{{{m[1]}}}", rule.rule)
            out |= {(method, path) for method in rule.methods - {"HEAD", "OPTIONS"}}
    return out


def _documented(doc) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in doc["paths"].items() for method in item}


def test_every_api_route_is_in_the_openapi_document_and_nothing_else(app, doc):
    routes = _api_routes(app)
    assert len(routes) > 20
    assert routes == _documented(doc)


def test_path_parameters_are_declared(doc):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == set(re.findall(r"\{(\w+)\}", path)), (method, path)


def _resolve(doc, schema: dict) -> dict:
    ref = schema.get("$ref", "")
    return doc["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else schema


def test_edit_ops_carry_their_declared_field_schemas(doc):
    items = doc["components"]["schemas"]["EditBatch"]["properties"]["ops"]["items"]
    ops = {s["properties"]["op"]["const"]: s for s in (_resolve(doc, r) for r in items["oneOf"])}
    assert ops == {name: e.schema() for name, e in REGISTRY.items()}
    assert set(items["discriminator"]["mapping"]) == set(REGISTRY)
    for name, schema in ops.items():
        assert schema["additionalProperties"] is False and schema["description"], name
        for field, fs in schema["properties"].items():
            if field == "op":
                continue
            assert fs.get("description"), (name, field)
            assert {"type", "anyOf", "enum"} & set(fs), (name, field, fs)  # a real type, never {}
    assert ops["set_io_shape"]["required"] == ["op", "name", "shape"]
    dtype = ops["add_input"]["properties"]["dtype"]
    assert dtype["type"] == "string" and "FLOAT" in dtype["enum"] and "UNDEFINED" not in dtype["enum"]
    assert ops["convert_opset"]["properties"]["version"] == {
        "type": "integer",
        "format": "int64",
        "minimum": 1,
        "description": "the opset version to convert to",
    }
    assert ops["delete_node"]["properties"]["reconnect"]["default"] is False


def test_api_ops_lists_the_same_schemas(client, doc):
    listed = client.get("/api/ops").get_json()["ops"]
    assert [o["op"] for o in listed] == list(REGISTRY)
    for o in listed:
        assert o["schema"] == _resolve(doc, {"$ref": f"#/components/schemas/EditOp.{o['op']}"})
        assert o["required"] == [f for f in o["schema"]["required"] if f != "op"]


def test_docs_edit_ops_section_is_written_from_the_declarations():
    assert make_api_docs.updated(DOCS) == DOCS, "docs/api.md is stale: run scripts/make_api_docs.py"


def _docs_op_sections() -> dict[str, str]:
    parts = re.split(r"^### `(\w+)`$", DOCS, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def test_docs_name_every_op_and_its_fields_as_the_openapi_document_does(doc):
    sections = _docs_op_sections()
    for ref in doc["components"]["schemas"]["EditBatch"]["properties"]["ops"]["items"]["oneOf"]:
        schema = _resolve(doc, ref)
        name = schema["properties"]["op"]["const"]
        assert name in sections, f"docs/api.md has no section for {name}"
        listed = dict(re.findall(r"^- `(\w+)` — .*\((required|optional)[;,]", sections[name], flags=re.M))
        fields = {f: ("required" if f in schema["required"] else "optional") for f in schema["properties"]}
        fields.pop("op")
        assert listed == fields, name


def test_docs_list_every_api_route(doc):
    for method, path in sorted(_documented(doc)):
        words = path.replace("{id}", "<id>").replace("{ref}", "<R>")
        assert re.search(rf"`{method} {re.escape(words)}(?=[`?\[ ])", DOCS), f"docs/api.md lacks {method} {words}"


def test_docs_and_openapi_list_the_error_catalogue(doc):
    """One catalogue (app/api/error_codes.py): docs/api.md's table is written from it, openapi's
    Error.code enumerates it, and batch_too_heavy names the ops the server counts (QA33 #2, #7)."""
    from app.api.error_codes import catalogue
    from app.edits.contract import WHOLE_MODEL_OPS, whole_model_words

    listed = re.findall(r"^\| `(\w+)` \| [\d, ]+ \|", DOCS, flags=re.M)
    assert listed == [e.code for e in catalogue()]
    code = doc["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]
    assert code["enum"] == listed
    heavy = next(line for line in DOCS.splitlines() if line.startswith("| `batch_too_heavy`"))
    assert whole_model_words() in heavy and all(op in heavy for op in WHOLE_MODEL_OPS)
    assert "fix_dims" in whole_model_words() and "compose" in heavy
