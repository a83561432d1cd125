"""The OpenAPI 3.1 document for the API, with edit ops taken from the registry."""

from __future__ import annotations

from flask import jsonify

from ..edits import REGISTRY
from . import bp

_ERROR = {"$ref": "#/components/responses/Error"}
_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_REV_Q = {
    "name": "revision",
    "in": "query",
    "schema": {"type": "integer"},
    "description": "another revision than the head",
}


def _json(ref: str, desc: str = "OK") -> dict:
    return {"description": desc, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}


def _op_schema(entry) -> dict:
    props = {"op": {"const": entry.name}}
    for f in entry.required + entry.optional:
        props[f] = {}
    return {
        "type": "object",
        "description": entry.doc,
        "required": ["op", *entry.required],
        "properties": props,
        "additionalProperties": False,
    }


def document() -> dict:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ONNX Studio API",
            "version": "1",
            "description": "Open, view, edit and download ONNX models. Node ids, graph paths and tensor refs are described in docs/api.md.",
        },
        "paths": {
            "/api/models": {
                "get": {"summary": "List stored models", "responses": {"200": _json("ModelList")}},
                "post": {
                    "summary": "Store a model (further `file` parts: its external data files)",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "multipart/form-data": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "file": {"type": "array", "items": {"type": "string", "format": "binary"}}
                                    },
                                    "required": ["file"],
                                }
                            }
                        },
                    },
                    "responses": {"201": _json("Summary", "Stored"), "400": _ERROR, "413": _ERROR},
                },
            },
            "/api/models/{id}": {
                "get": {
                    "summary": "Model summary",
                    "parameters": [_ID],
                    "responses": {"200": _json("Summary"), "404": _ERROR},
                },
                "delete": {
                    "summary": "Delete a model and its revisions",
                    "parameters": [_ID],
                    "responses": {"204": {"description": "Deleted"}, "404": _ERROR},
                },
            },
            "/api/models/{id}/graph": {
                "get": {
                    "summary": "Graph JSON of the main graph, a subgraph or a function",
                    "parameters": [
                        _ID,
                        {
                            "name": "path",
                            "in": "query",
                            "schema": {"type": "string"},
                            "description": "graph path; empty for the main graph",
                        },
                        _REV_Q,
                    ],
                    "responses": {"200": _json("Graph"), "404": _ERROR},
                }
            },
            "/api/models/{id}/search": {
                "get": {
                    "summary": "Find nodes, tensors, graphs and functions anywhere in the model, best first",
                    "description": "Every graph at any depth (subgraphs, functions, training graphs) is searched. "
                    "Ranks: op type exact > op type prefix > name exact > name prefix > name substring > "
                    "op type substring > tensor name > attribute (value in the node panel's text, or its name); "
                    "at equal rank the graph `near` first, then model order. `op:`, `name:`, `tensor:` or "
                    "`attr:` before the text narrows it to one field; `perm=[0,2,1,3]` finds an attribute by "
                    "name and value.",
                    "parameters": [
                        _ID,
                        {
                            "name": "q",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string", "minLength": 1, "maxLength": 200},
                            "description": "what to find (case-insensitive)",
                        },
                        {
                            "name": "limit",
                            "in": "query",
                            "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 200},
                        },
                        {
                            "name": "near",
                            "in": "query",
                            "schema": {"type": "string"},
                            "description": "graph path on screen: its results first at equal rank",
                        },
                        _REV_Q,
                    ],
                    "responses": {"200": _json("SearchResults"), "400": _ERROR, "404": _ERROR},
                }
            },
            "/api/models/{id}/tensors/{ref}": {
                "get": {
                    "summary": "Tensor preview: dtype, shape, stats and a window of values",
                    "parameters": [
                        _ID,
                        {"name": "ref", "in": "path", "required": True, "schema": {"type": "string"}},
                        {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
                        {"name": "count", "in": "query", "schema": {"type": "integer", "minimum": 0}},
                        _REV_Q,
                    ],
                    "responses": {"200": _json("TensorPreview"), "404": _ERROR, "413": _ERROR, "422": _ERROR},
                }
            },
            "/api/models/{id}/edits": {
                "post": {
                    "summary": "Apply edit ops all-or-nothing as a new revision",
                    "parameters": [_ID],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EditBatch"}}},
                    },
                    "responses": {
                        "200": _json("EditResult"),
                        "400": _ERROR,
                        "404": _ERROR,
                        "409": _ERROR,
                        "422": _ERROR,
                    },
                }
            },
            "/api/models/{id}/undo": {
                "post": {
                    "summary": "Move the head to the previous revision",
                    "parameters": [_ID],
                    "responses": {"200": _json("Summary"), "409": _ERROR},
                }
            },
            "/api/models/{id}/redo": {
                "post": {
                    "summary": "Move the head forward again",
                    "parameters": [_ID],
                    "responses": {"200": _json("Summary"), "409": _ERROR},
                }
            },
            "/api/models/{id}/revisions": {
                "get": {
                    "summary": "Revision history with the ops of each",
                    "parameters": [_ID],
                    "responses": {"200": {"description": "OK"}, "404": _ERROR},
                }
            },
            "/api/models/{id}/download": {
                "get": {
                    "summary": "The revision's bytes (.onnx, or .zip with external data files)",
                    "parameters": [_ID, _REV_Q],
                    "responses": {
                        "200": {
                            "description": "model file",
                            "content": {"application/octet-stream": {}, "application/zip": {}},
                        },
                        "404": _ERROR,
                    },
                }
            },
            "/api/ops": {
                "get": {"summary": "The edit ops this server knows", "responses": {"200": {"description": "OK"}}}
            },
            "/api/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OK"}}}},
        },
        "components": {
            "responses": {
                "Error": {
                    "description": "Refused",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                }
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["code", "message"],
                            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                        }
                    },
                },
                "Shape": {"type": ["array", "null"], "items": {"type": ["integer", "string", "null"]}},
                "ModelList": {
                    "type": "object",
                    "properties": {"models": {"type": "array", "items": {"type": "object"}}},
                },
                "Summary": {
                    "type": "object",
                    "required": ["id", "revision", "ir_version", "opset_import"],
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "revision": {"type": "integer"},
                        "can_undo": {"type": "boolean"},
                        "can_redo": {"type": "boolean"},
                        "ir_version": {"type": "integer"},
                        "opset_import": {"type": "array"},
                        "producer_name": {"type": "string"},
                        "producer_version": {"type": "string"},
                        "domain": {"type": "string"},
                        "model_version": {"type": "integer"},
                        "doc_string": {"type": "string"},
                        "metadata_props": {"type": "array"},
                        "counts": {"type": "object"},
                        "validation": {"type": "object"},
                    },
                },
                "Attribute": {
                    "type": "object",
                    "required": ["name", "type", "value"],
                    "properties": {"name": {"type": "string"}, "type": {"type": "string"}, "value": {}},
                },
                "Node": {
                    "type": "object",
                    "required": ["id", "name", "op_type", "domain", "inputs", "outputs", "attributes"],
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "op_type": {"type": "string"},
                        "domain": {"type": "string"},
                        "inputs": {"type": "array", "items": {"type": "string"}},
                        "outputs": {"type": "array", "items": {"type": "string"}},
                        "attributes": {"type": "array", "items": {"$ref": "#/components/schemas/Attribute"}},
                    },
                },
                "Graph": {
                    "type": "object",
                    "required": ["nodes", "inputs", "outputs", "initializers"],
                    "properties": {
                        "nodes": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                        "inputs": {"type": "array"},
                        "outputs": {"type": "array"},
                        "initializers": {"type": "array"},
                    },
                },
                "SearchResults": {
                    "type": "object",
                    "required": ["results", "total", "truncated"],
                    "properties": {
                        "query": {"type": "string"},
                        "revision": {"type": "integer"},
                        "total": {"type": "integer", "description": "matches in all, shown or not"},
                        "truncated": {"type": "boolean", "description": "more matched than `limit`"},
                        "results": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["kind", "path", "name", "breadcrumb", "why", "score"],
                                "properties": {
                                    "kind": {"enum": ["node", "tensor", "graph", "function"]},
                                    "path": {"type": "string", "description": "graph path of the graph holding it"},
                                    "node": {"type": "string", "description": "node id (kind node)"},
                                    "name": {"type": "string"},
                                    "op_type": {"type": "string"},
                                    "domain": {"type": "string"},
                                    "role": {"enum": ["input", "output", "initializer", "value"]},
                                    "breadcrumb": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {"path": {"type": "string"}, "label": {"type": "string"}},
                                        },
                                    },
                                    "why": {"type": "string"},
                                    "score": {"type": "integer"},
                                },
                            },
                        },
                    },
                },
                "TensorPreview": {
                    "type": "object",
                    "required": ["dtype", "shape", "stats", "offset", "values"],
                    "properties": {
                        "dtype": {"type": "string"},
                        "shape": {"type": "array", "items": {"type": "integer"}},
                        "stats": {"type": ["object", "null"]},
                        "offset": {"type": "integer"},
                        "values": {"type": "array"},
                    },
                },
                "EditBatch": {
                    "type": "object",
                    "required": ["base", "ops"],
                    "properties": {
                        "base": {"type": "integer"},
                        "ops": {
                            "type": "array",
                            "minItems": 1,
                            "items": {"oneOf": [_op_schema(e) for e in REGISTRY.values()]},
                        },
                    },
                },
                "EditResult": {
                    "type": "object",
                    "required": ["revision", "changes"],
                    "properties": {
                        "revision": {"type": "integer"},
                        "changes": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
        },
    }


@bp.get("/openapi.json")
def openapi_json():
    return jsonify(document())
