"""The OpenAPI 3.1 document for the API: every /api route (tests hold it to app.url_map), edit
ops with the field schemas their declarations give."""

from __future__ import annotations

from flask import jsonify

from . import bp
from .openapi_schemas import SCHEMAS, edit_schemas

_ERROR = {"$ref": "#/components/responses/Error"}
_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}, "description": "model id"}
_REF = {"name": "ref", "in": "path", "required": True, "schema": {"type": "string"}, "description": "tensor ref"}
_REV_Q = {
    "name": "revision",
    "in": "query",
    "schema": {"type": "integer"},
    "description": "another revision than the head",
}
_PATH_Q = {
    "name": "path",
    "in": "query",
    "schema": {"type": "string"},
    "description": "graph path; empty for the main graph",
}
_BASE_BODY = {
    "required": False,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"base": {"type": "integer", "description": "refuse (409) unless this is the head"}},
            }
        }
    },
}


_RECIPE_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["base", "recipe"],
                "properties": {
                    "base": {"type": "integer", "description": "the head the recipe is replayed on (409 otherwise)"},
                    "recipe": {"$ref": "#/components/schemas/Recipe"},
                    "allow_invalid": {"type": "boolean", "default": False},
                    "dry_run": {"type": "boolean", "default": False, "description": "apply and check, store nothing"},
                },
                "additionalProperties": False,
            }
        },
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["base", "recipe"],
                "properties": {
                    "base": {"type": "integer"},
                    "recipe": {"type": "string", "format": "binary", "description": "the .recipe.json file"},
                    "allow_invalid": {"type": "boolean", "default": False},
                    "dry_run": {"type": "boolean", "default": False},
                },
            }
        },
    },
}


def _json(ref: str, desc: str = "OK") -> dict:
    return {"description": desc, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}


def _json_body(schema: dict) -> dict:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _query(name: str, schema: dict, description: str = "", required: bool = False) -> dict:
    out = {"name": name, "in": "query", "schema": schema, "required": required}
    return {**out, "description": description} if description else out


def _upload(description: str, fields: dict | None = None) -> dict:
    return {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "file": {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                            "description": description,
                        },
                        **(fields or {}),
                    },
                    "required": ["file"],
                }
            }
        },
    }


def _get(summary: str, params: list, ok: dict, *errors: str, description: str = "") -> dict:
    op = {"summary": summary, "parameters": params, "responses": {"200": ok, **{e: _ERROR for e in errors}}}
    return {"get": {**op, "description": description} if description else op}


_SEARCH_DESCRIPTION = (
    "Every graph at any depth (subgraphs, functions, training graphs) is searched. "
    "Ranks: op type exact > op type prefix > name exact > name prefix > name substring > "
    "module scope (a node's module from torch's metadata or its name: `q_proj`, `layers.0`) > "
    "op type substring > tensor name > attribute (value in the node panel's text, or its name); "
    "at equal rank the graph `near` first, then model order. `op:`, `name:`, `tensor:` or "
    "`attr:` before the text narrows it to one field (`name:` module scopes too); `perm=[0,2,1,3]` finds an attribute by "
    "name and value. Several words (`layer.7 MatMul`) also find the nodes that every word finds, "
    "ranked by the weakest word."
)
_EDITS_400 = (
    "Refused before any op runs when an op breaks its declared contract (a missing, unexpected or "
    'wrongly typed field): the message names the op\'s index, the op and the field, e.g. `op #2 (set_io_shape): field "shape" is required`.'
)


def _paths() -> dict:
    m = "/api/models/{id}"
    return {
        "/api/models": {
            "get": {"summary": "List stored models", "responses": {"200": _json("ModelList")}},
            "post": {
                "summary": "Store a model (further `file` parts: its external data files)",
                "requestBody": _upload(
                    "the model (.onnx, ONNX text, a data file or a .zip), then its data files",
                    {
                        "name": {"type": "string", "description": "what to list it by instead of its file's name"},
                        "member": {
                            "type": "string",
                            "description": "which model of an archive holding several to open: its path inside it",
                        },
                    },
                ),
                "responses": {"201": _json("Summary", "Stored"), "400": _ERROR, "413": _ERROR, "422": _ERROR},
            },
        },
        m: {
            **_get("Model summary (of the head, or of `revision`)", [_ID, _REV_Q], _json("Summary"), "404"),
            "delete": {
                "summary": "Delete a model and its revisions",
                "parameters": [_ID],
                "responses": {"204": {"description": "Deleted"}, "404": _ERROR},
            },
            "patch": {
                "summary": "Rename a model (its name as listed and as downloads are named; revisions unchanged)",
                "parameters": [_ID],
                "requestBody": _json_body(
                    {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
                ),
                "responses": {"200": _json("Summary"), "400": _ERROR, "404": _ERROR},
            },
        },
        f"{m}/head": _get(
            "The model's head revision and name, from the index alone (an open page polls it)",
            [_ID],
            {
                "description": "OK",
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["id", "name", "head"],
                            "properties": {
                                "id": {"type": "string"},
                                "name": {"type": "string"},
                                "head": {"type": "integer"},
                            },
                        }
                    }
                },
            },
            "404",
        ),
        f"{m}/graph": _get(
            "Graph JSON of the main graph, a subgraph or a function",
            [_ID, _PATH_Q, _REV_Q],
            _json("Graph"),
            "400",
            "404",
        ),
        f"{m}/validation": _get(
            "The validation state (checker, full check, inference errors); waits for it",
            [_ID, _REV_Q],
            _json("Validation"),
            "404",
        ),
        f"{m}/types": _get(
            "Types shape inference finds for values of one graph that the model doesn't record",
            [_ID, _PATH_Q, _REV_Q],
            _json("InferredTypes"),
            "404",
        ),
        f"{m}/search": _get(
            "Find nodes, tensors, graphs and functions anywhere in the model, best first",
            [
                _ID,
                _query(
                    "q", {"type": "string", "minLength": 1, "maxLength": 200}, "what to find (case-insensitive)", True
                ),
                _query("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 200}),
                _query("near", {"type": "string"}, "graph path on screen: its results first at equal rank"),
                _REV_Q,
            ],
            _json("SearchResults"),
            "400",
            "404",
            description=_SEARCH_DESCRIPTION,
        ),
        f"{m}/node": _get(
            "One node in full: metadata values and doc_string uncut; `address` its id by name",
            [_ID, _query("id", {"type": "string"}, "node id, by position or by name", True), _REV_Q],
            _json("Node"),
            "400",
            "404",
        ),
        f"{m}/trees": _get(
            "A tree ensemble node's trees: how many, how deep, the features they split on; one tree's rules",
            [
                _ID,
                _query("node", {"type": "string"}, "node id of a TreeEnsemble* node (ai.onnx.ml)", True),
                _query("tree", {"type": "integer", "minimum": 0}, "also this tree's rules"),
                _REV_Q,
            ],
            _json("Trees"),
            "400",
            "404",
            "422",
        ),
        f"{m}/coefficients": _get(
            "A linear model node's weights: a row per class or target with its intercept, the features by weight",
            [
                _ID,
                _query("node", {"type": "string"}, "node id of a LinearClassifier/LinearRegressor or linear SVM", True),
                _REV_Q,
            ],
            _json("Coefficients"),
            "400",
            "404",
            "422",
        ),
        f"{m}/locate": _get(
            "Where the graph and node a link made in revision `from` names are now, by position",
            [
                _ID,
                _query("from", {"type": "integer"}, "the revision the link was made in", True),
                _PATH_Q,
                _query("node", {"type": "string"}, "node id, by position or by name"),
                _REV_Q,
            ],
            _json("Located"),
            "400",
            "404",
            description="Each node along the address is followed by the name it had in revision `from` where "
            "that was unique, else by its operator and outputs; null for what is gone. 404 when the address "
            "names nothing in `from` either.",
        ),
        f"{m}/schema": _get(
            "The operator schema of one node at the model's opset",
            [_ID, _query("node", {"type": "string"}, "node id", True), _REV_Q],
            _json("NodeSchema"),
            "400",
            "404",
        ),
        f"{m}/operators": _get(
            "The operators the model's opsets offer, with their attributes", [_ID, _REV_Q], _json("Operators"), "404"
        ),
        f"{m}/text": _get(
            "The model in ONNX text syntax (onnx.printer)",
            [_ID, _query("download", {"type": "string"}, "any value: as a .onnxtxt attachment"), _REV_Q],
            {"description": "ONNX text", "content": {"text/plain": {"schema": {"type": "string"}}}},
            "404",
            "422",
        ),
        f"{m}/tensors/{{ref}}": _get(
            "Tensor preview: dtype, shape, stats and a window of values",
            [
                _ID,
                _REF,
                _query("offset", {"type": "integer", "minimum": 0}),
                _query("count", {"type": "integer", "minimum": 0}),
                _REV_Q,
            ],
            _json("TensorPreview"),
            "400",
            "404",
            "413",
            "422",
        ),
        f"{m}/npy/{{ref}}": _get(
            "A tensor as a .npy file (types numpy lacks widened; header X-Converted-From names the original)",
            [_ID, _REF, _REV_Q],
            {"description": ".npy file", "content": {"application/octet-stream": {}}},
            "404",
            "422",
        ),
        f"{m}/edits": {
            "post": {
                "summary": "Apply edit ops all-or-nothing as a new revision",
                "parameters": [_ID],
                "requestBody": _json_body({"$ref": "#/components/schemas/EditBatch"}),
                "responses": {
                    "200": _json("EditResult"),
                    "400": {**_ERROR, "description": _EDITS_400},
                    "404": _ERROR,
                    "409": _ERROR,
                    "422": _ERROR,
                },
            }
        },
        "/api/blobs": {
            "post": {
                "summary": 'Store an uploaded .npy for ops to name as {"npy": blob} (an .npz: each of its arrays; a TensorProto .pb: its values; an .onnx: for compose)',
                "requestBody": _upload(
                    "one .npy file, an .npz (numpy.savez) of several, a TensorProto .pb, or an .onnx"
                ),
                "responses": {"201": _json("Blob", "Stored"), "400": _ERROR, "413": _ERROR},
            }
        },
        "/api/blobs/{digest}": _get(
            "A stored .npy whole: an uploaded array, or a run's output (its preview's \"npy\")",
            [
                {
                    "name": "digest",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                    "description": "sha256 digest",
                },
                _query("name", {"type": "string"}, "the file name to save it as (its .npy added)"),
            ],
            {"description": ".npy file", "content": {"application/octet-stream": {}}},
            "404",
        ),
        f"{m}/as-blob": {
            "post": {
                "summary": "A revision of a stored model as one .onnx blob, to add to another with compose",
                "parameters": [_ID, _REV_Q],
                "responses": {"201": _json("Blob", "Stored"), "400": _ERROR, "404": _ERROR},
            }
        },
        f"{m}/data-files": {
            "post": {
                "summary": "Attach the external data files the model's tensors name but it lacks, as a new revision",
                "parameters": [_ID],
                "requestBody": _upload('the missing files; with a form field "base": the head revision'),
                "responses": {
                    "201": _json("EditResult", "Attached"),
                    "400": _ERROR,
                    "404": _ERROR,
                    "409": _ERROR,
                    "422": _ERROR,
                },
            }
        },
        f"{m}/undo": {
            "post": {
                "summary": "Move the head back: to its parent, or `steps` revisions back (a recipe's batches at once)",
                "parameters": [_ID],
                "requestBody": {
                    "required": False,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "base": {"type": "integer", "description": "409 unless it is the head"},
                                    "steps": {"type": "integer", "minimum": 1, "default": 1},
                                },
                            }
                        }
                    },
                },
                "responses": {"200": _json("Summary"), "400": _ERROR, "404": _ERROR, "409": _ERROR},
            }
        },
        f"{m}/redo": {
            "post": {
                "summary": "Move the head forward again",
                "parameters": [_ID],
                "requestBody": _BASE_BODY,
                "responses": {"200": _json("Summary"), "400": _ERROR, "404": _ERROR, "409": _ERROR},
            }
        },
        f"{m}/restore": {
            "post": {
                "summary": "Make what an earlier revision holds the head again, as a new revision",
                "parameters": [_ID],
                "requestBody": _json_body(
                    {
                        "type": "object",
                        "required": ["base", "revision"],
                        "properties": {
                            "base": {"type": "integer", "description": "the head (409 unless it still is)"},
                            "revision": {"type": "integer", "description": "the revision to restore"},
                        },
                    }
                ),
                "responses": {"200": _json("EditResult"), "400": _ERROR, "404": _ERROR, "409": _ERROR},
            }
        },
        f"{m}/revisions": _get("Revision history with the ops of each", [_ID], _json("Revisions"), "404"),
        f"{m}/split": {
            "post": {
                "summary": "Split a revision into two new models at tensors (the model split stays as it is)",
                "parameters": [_ID],
                "requestBody": _json_body(
                    {
                        "type": "object",
                        "required": ["at"],
                        "additionalProperties": False,
                        "properties": {
                            "at": {
                                "type": "array",
                                "items": {"type": "string"},
                                "minItems": 1,
                                "description": "the tensors the first part ends with and the second starts from",
                            },
                            "revision": {"type": "integer", "description": "the revision to split (default: the head)"},
                            "dry_run": {
                                "type": "boolean",
                                "description": "say what the cut would make, store nothing (200)",
                            },
                        },
                    }
                ),
                "responses": {"200": _json("SplitResult"), "201": _json("SplitResult"), "400": _ERROR, "404": _ERROR},
            }
        },
        f"{m}/run": {
            "post": {
                "summary": "Run a revision with onnxruntime (CPU) on uploaded or random inputs",
                "parameters": [_ID],
                "requestBody": _json_body({"$ref": "#/components/schemas/RunRequest"}),
                "responses": {"200": _json("RunResult"), "400": _ERROR, "404": _ERROR, "422": _ERROR},
            }
        },
        f"{m}/checks": {
            **_get("The model's reference cases and tolerance", [_ID], _json("ReferenceCases"), "404"),
            "post": {
                "summary": "Keep a reference case: inputs, and the outputs every revision must give for them (recorded from a run unless given)",
                "parameters": [_ID],
                "requestBody": _json_body({"$ref": "#/components/schemas/ReferenceCaseRequest"}),
                "responses": {
                    "201": {
                        "description": '{"case", "verdict": the revision\'s, with the new case}',
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["case", "verdict"],
                                    "properties": {
                                        "case": {"type": "object", "description": "as GET .../checks lists it"},
                                        "verdict": {"$ref": "#/components/schemas/ReferenceVerdict"},
                                    },
                                }
                            }
                        },
                    },
                    "400": _ERROR,
                    "404": _ERROR,
                    "409": _ERROR,
                    "422": _ERROR,
                },
            },
            "patch": {
                "summary": "Set how close an output must be to its expected values, and whether the cases gate edits",
                "parameters": [_ID],
                "requestBody": _json_body(
                    {
                        "type": "object",
                        "properties": {
                            "tolerance": {"type": "number", "minimum": 0, "maximum": 1},
                            "gate": {
                                "type": "boolean",
                                "description": "refuse edits whose result fails a case",
                            },
                        },
                    }
                ),
                "responses": {"200": _json("ReferenceCases"), "400": _ERROR, "404": _ERROR},
            },
        },
        f"{m}/checks/copy": {
            "post": {
                "summary": "Take another model's reference cases (an earlier export's) that this model's inputs and outputs fit",
                "parameters": [_ID],
                "requestBody": _json_body(
                    {
                        "type": "object",
                        "required": ["from"],
                        "properties": {"from": {"type": "string", "description": "the other model's id"}},
                    }
                ),
                "responses": {
                    "200": {
                        "description": '{"kept": [NAME], "skipped": [{"name", "reason"}]}',
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    "400": _ERROR,
                    "404": _ERROR,
                },
            }
        },
        f"{m}/checks/{{name}}": {
            "delete": {
                "summary": "Drop a reference case",
                "parameters": [_ID, {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"204": {"description": "Deleted"}, "404": _ERROR},
            }
        },
        f"{m}/checks/verdict": _get(
            "Whether a revision gives each reference case's outputs (waits for it)",
            [_ID, _REV_Q],
            _json("ReferenceVerdict"),
            "404",
        ),
        f"{m}/sensitivity": {
            "post": {
                "summary": "Rank a QDQ revision's quantized tensors and weights by the accuracy each costs (against its float base)",
                "parameters": [_ID],
                "requestBody": _json_body({"$ref": "#/components/schemas/SensitivityRequest"}),
                "responses": {"200": _json("Sensitivity"), "400": _ERROR, "404": _ERROR, "422": _ERROR},
            }
        },
        "/api/sweeps/{token}": _get(
            "How far a sensitivity sweep sent with this progress token is",
            [{"name": "token", "in": "path", "required": True, "schema": {"type": "string"}}],
            {
                "description": "runs done and to do",
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {"done": {"type": "integer"}, "total": {"type": "integer"}},
                        }
                    }
                },
            },
            "400",
            "404",
        ),
        f"{m}/diff": _get(
            "What changed between two revisions, or between another model and this one",
            [
                _ID,
                _query("from", {"type": "integer", "default": 0}, "the older revision"),
                _query("to", {"type": "integer"}, "the newer revision (default: the head)"),
                _query("other", {"type": "string"}, "another model's id: compared with this one (not with from/to)"),
                _query("other_revision", {"type": "integer"}, "the other model's revision (default: its head)"),
                _REV_Q,
            ],
            _json("Diff"),
            "400",
            "404",
        ),
        f"{m}/readers": _get(
            "The nodes that read a value of a graph, those inside the bodies its nodes hold included",
            [
                _ID,
                _query("name", {"type": "string"}, "the value's name", required=True),
                _PATH_Q,
                _REV_Q,
            ],
            _json("Readers"),
            "400",
            "404",
        ),
        f"{m}/weight-ranges": _get(
            "How each weight tensor survives integer quantization, per tensor and per output channel",
            [
                _ID,
                _REV_Q,
                _query("bits", {"type": "integer", "enum": [4, 8, 16], "default": 8}, "the weights' width"),
            ],
            _json("WeightRanges"),
            "400",
            "404",
        ),
        f"{m}/stats": _get(
            "Parameters, FLOPs and output bytes per node and in all",
            [
                _ID,
                _REV_Q,
                _query("dims", {"type": "string"}, "values of symbolic dims: NAME=N,NAME=N"),
            ],
            _json("Stats"),
            "400",
            "404",
        ),
        f"{m}/target": _get(
            "The revision held to a deployment target's limits, rule by rule (each limit left out is no rule)",
            [
                _ID,
                _REV_Q,
                _query("max_opset", {"type": "integer", "minimum": 1}, "the newest ai.onnx opset the target takes"),
                _query("static", {"type": "string"}, "1: every fed input's dims must be known"),
                _query("control_flow", {"type": "string"}, "0: no If, Loop or Scan"),
                _query(
                    "ops",
                    {"type": "string"},
                    "the operator types the target takes, separated by commas (spaces and semicolons alike)",
                ),
                _query("standard", {"type": "string"}, "1: no operator of another domain than ai.onnx"),
                _query("max_nodes", {"type": "integer", "minimum": 1}, "the nodes it takes (bodies included)"),
            ],
            _json("TargetCheck"),
            "400",
            "404",
        ),
        f"{m}/recipe": {
            **_get(
                "The edits from one revision to another, to replay on another copy of the model",
                [
                    _ID,
                    _query("from", {"type": "integer", "default": 0}, "an ancestor of `to`"),
                    _query("to", {"type": "integer"}, "default: the head"),
                    _query("download", {"type": "string"}, "any value: as a .recipe.json attachment"),
                ],
                _json("Recipe"),
                "400",
                "404",
                "422",
            ),
            "post": {
                "summary": "Replay a recipe on the head: each batch gated as an edit, a revision each, all or nothing",
                "parameters": [_ID],
                "requestBody": _RECIPE_BODY,
                "responses": {
                    "200": {
                        "description": "the recipe applied, or (dry_run) checked",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "oneOf": [
                                        {"$ref": "#/components/schemas/RecipeApplied"},
                                        {"$ref": "#/components/schemas/RecipeDryRun"},
                                    ]
                                }
                            }
                        },
                    },
                    "400": _ERROR,
                    "404": _ERROR,
                    "409": _ERROR,
                    "413": _ERROR,
                    "422": _ERROR,
                },
            },
        },
        f"{m}/download": _get(
            "The revision's bytes (.onnx, or .zip with external data files)",
            [
                _ID,
                _REV_Q,
                _query(
                    "layout",
                    {"enum": ["as_stored", "embedded", "external"], "default": "as_stored"},
                    "embedded: external data inlined; external: tensors over 1 KiB moved to a .data file (a .zip)",
                ),
                _query(
                    "tests",
                    {"type": "string"},
                    "any value: a .zip as the model zoo packs a model, a test_data_set_N/ per reference case",
                ),
            ],
            {"description": "model file", "content": {"application/octet-stream": {}, "application/zip": {}}},
            "400",
            "404",
            "422",
        ),
        "/api/ops": _get("The edit ops this server knows, with their field schemas", [], _json("OpList")),
        "/api/openapi.json": _get("This document", [], {"description": "OK", "content": {"application/json": {}}}),
    }


# answered by any call, whatever it does: the caller's token, page or Host, or the server's state
# (docs/api.md, Error codes: "any route")
_ANY_CALL = {
    "401": {"$ref": "#/components/responses/Unauthorized"},
    "421": {"$ref": "#/components/responses/UnknownHost"},
    "500": {"$ref": "#/components/responses/ServerFault"},
    "503": {"$ref": "#/components/responses/Unavailable"},
}
_CHANGING = ("post", "put", "patch", "delete")  # another site's page is refused these (403 cross_site)


def _error_response(description: str) -> dict:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _with_every_calls_errors(paths: dict) -> dict:
    for item in paths.values():
        for method, op in item.items():
            extra = {
                **_ANY_CALL,
                **({"403": {"$ref": "#/components/responses/CrossSite"}} if method in _CHANGING else {}),
            }
            op["responses"] = {**op["responses"], **{k: v for k, v in extra.items() if k not in op["responses"]}}
    return paths


def document() -> dict:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ONNX Studio API",
            "version": "1",
            "description": "Open, view, edit and download ONNX models. Node ids, graph paths and tensor refs "
            "are described in docs/api.md; a node may be named by position (`n3`) or by name (`@conv1`). "
            "A method a path doesn't take answers 405 method_not_allowed, an unknown /api/ path 404 not_found, "
            "both as Error.",
        },
        # the token is optional: a server started without --auth-token needs none ({} below)
        "security": [{"bearer": []}, {}],
        "paths": _with_every_calls_errors(_paths()),
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "the server's --auth-token (at least 12 characters), when it has one; "
                    "this document too is served only with it",
                }
            },
            "responses": {
                "Error": _error_response("Refused"),
                "Unauthorized": _error_response("unauthorized: the server has an access token and it wasn't sent"),
                "CrossSite": _error_response("cross_site: sent by another site's page"),
                "UnknownHost": _error_response("unknown_host: a Host this server doesn't answer"),
                "ServerFault": _error_response("internal_server_error, blob_missing, store_damaged"),
                "Unavailable": _error_response("store_unavailable, helper_unavailable: ask again later (Retry-After)"),
            },
            "schemas": {**SCHEMAS, **edit_schemas()},
        },
    }


@bp.get("/openapi.json")
def openapi_json():
    return jsonify(document())
