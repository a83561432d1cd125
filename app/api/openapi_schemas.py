"""Schemas of the API's JSON bodies for the OpenAPI document; edit ops come from their declarations."""

from __future__ import annotations

from ..edits import REGISTRY
from ..edits.contract import MAX_OPS
from .error_codes import catalogue

# a run's inputs and symbolic dims, as POST .../run and .../sensitivity take them
_RUN_INPUTS = {
    "inputs": {
        "type": "object",
        "description": 'input name -> {"npy": BLOB} (POST /api/blobs), {"values": JSON} (typed in: nested lists'
        " for a tensor, an object for a map, a list for a sequence) or"
        ' {"random": {"seed": S, "count"?: N}} (default: random, seed 0; a sequence input: N tensors of its'
        " declared shape, 2 by default; a categorical input: drawn from the vocabulary of the node looking it up; token ids: below the rows of the table they index)",
        "additionalProperties": {"type": "object"},
    },
    "dims": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
}


def op_ref(name: str) -> str:
    return f"#/components/schemas/EditOp.{name}"


def edit_schemas() -> dict:
    """One schema per edit op, as declared in app/edits, and the batch that holds them."""
    ops = {f"EditOp.{e.name}": e.schema() for e in REGISTRY.values()}
    batch = {
        "type": "object",
        "required": ["base", "ops"],
        "additionalProperties": False,  # the server refuses another field (400 bad_field)
        "properties": {
            "base": {"type": "integer", "description": "the revision the edits start from (the head)"},
            "allow_invalid": {
                "type": "boolean",
                "default": False,
                "description": "store the result even when a validation gate refuses it; validation.invalid says why",
            },
            "ops": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_OPS,
                "items": {
                    "oneOf": [{"$ref": op_ref(name)} for name in REGISTRY],
                    "discriminator": {"propertyName": "op", "mapping": {name: op_ref(name) for name in REGISTRY}},
                },
            },
        },
    }
    return {**ops, "EditBatch": batch}


# what every stored entry's summary says, a model's or a data file's
_STORED = {
    "id": {"type": "string"},
    "name": {"type": "string"},
    "revision": {"type": "integer"},
    "head": {"type": "integer", "description": "the model's current revision (edits, undo and redo start there)"},
    "can_undo": {"type": "boolean"},
    "can_redo": {"type": "boolean"},
    "size": {"type": "integer", "description": "bytes"},
    "kind": {"type": "string", "description": "model, or a data file's kind"},
    "source": {"type": "string", "description": "binary or text (ONNX text syntax)"},
}
_ITEMS = {"type": "array", "items": {"type": "object"}}

SCHEMAS: dict = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {
                        "enum": [e.code for e in catalogue()],
                        "description": "docs/api.md's Error codes table says when each is answered",
                    },
                    "message": {"type": "string"},
                    "head": {"type": "integer", "description": "409 stale_base: the revision the model is at"},
                    "details": {"type": "array", "items": {"type": "string"}, "description": "further causes"},
                    "node": {"type": "string", "description": "id of the node the message is about"},
                    "fix": {
                        "type": "object",
                        "description": "a batch of edit ops the server would accept instead (a graph output re-declared)",
                        "properties": {
                            "label": {"type": "string"},
                            "ops": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                    "models": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "an uploaded archive's models (400 several_models): one to name as its member",
                    },
                    "request_id": {"type": "string", "description": "the server log's id of the request"},
                },
            }
        },
    },
    "Shape": {"type": ["array", "null"], "items": {"type": ["integer", "string", "null"]}},
    "ModelList": {
        "type": "object",
        "properties": {
            "models": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "revision": {"type": "integer", "description": "its head"},
                        "created": {"type": "number"},
                        "created_by": {
                            "type": ["string", "null"],
                            "description": "who uploaded it (the name signed in as, or X-Studio-Author); null: not said",
                        },
                        "edited": {"type": "number", "description": "when its head revision was made"},
                        "edited_by": {"type": ["string", "null"], "description": "who made its head revision"},
                        "moved": {
                            "type": ["object", "null"],
                            "description": "its head's last undo or redo, until an edit: {how: undo | redo, by, at, from, to} (as in GET .../revisions)",
                        },
                        "size": {"type": "integer", "description": "bytes, as a model"},
                        "disk_bytes": {
                            "type": ["integer", "null"],
                            "description": "what its revisions hold on disk (null: the blob store can't be reached)",
                        },
                        "kind": {"type": "string"},
                        "card": {"type": ["object", "null"], "description": "producer, opset, nodes of its head"},
                        "reference": {
                            "type": ["string", "null"],
                            "description": "its head against its reference cases (passed, failed), once checked",
                        },
                        "valid": {
                            "type": ["boolean", "null"],
                            "description": "whether onnx's checker passes its head, once checked (null before)",
                        },
                    },
                },
            },
            "disk_bytes": {"type": ["integer", "null"], "description": "the store's total, each blob once"},
            "other_bytes": {"type": ["integer", "null"]},
        },
    },
    "Summary": {
        "description": "a model's summary, or a data file's (a TensorProto, SequenceProto, MapProto or OptionalProto upload)",
        "oneOf": [{"$ref": "#/components/schemas/ModelSummary"}, {"$ref": "#/components/schemas/DataFileSummary"}],
    },
    "ModelSummary": {
        "type": "object",
        "required": ["id", "revision", "ir_version", "opset_import"],
        "properties": {
            **_STORED,
            "ir_version": {"type": "integer"},
            "opset_import": {"type": "array", "items": {"type": "object"}, "description": '[{"domain", "version"}]'},
            "producer_name": {"type": "string"},
            "producer_version": {"type": "string"},
            "domain": {"type": "string"},
            "model_version": {"type": "integer"},
            "doc_string": {"type": "string"},
            "graph_name": {"type": "string"},
            "metadata_props": {"type": "array", "items": {"type": "object"}, "description": '[{"key", "value"}]'},
            "counts": {
                "type": "object",
                "description": "nodes, initializers, inputs, outputs, value_info, … of the main graph",
            },
            "functions": {"type": "array", "items": {"type": "object"}, "description": "its model-local functions"},
            "training": {"type": "array", "items": {"type": "object"}, "description": "its training_info graphs"},
            "configuration": {
                "type": "array",
                "items": {"type": "object"},
                "description": "its deployment configurations",
            },
            "unread_inputs": {
                "type": "array",
                "items": {"type": "string"},
                "description": "main-graph inputs nothing reads (cleanup's unread_inputs removes them)",
            },
            "external_files": {
                "type": "array",
                "items": {"type": "string"},
                "description": "the external data files it has (their locations)",
            },
            "embeddable": {
                "type": "boolean",
                "description": "under protobuf's 2 GiB with its weights: the embedded download can be made",
            },
            "missing_data": {
                "type": "array",
                "items": {"type": "object"},
                "description": "those its tensors name and it lacks",
            },
            "validation": {"type": "object"},
            "duplicates": {
                "type": "array",
                "items": {"type": "object"},
                "description": "an upload: stored models of the same bytes",
            },
            "test_data_sets": {"type": "object", "description": "an upload's reference cases kept and skipped"},
            "left_out": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "why": {"type": "string"}},
                },
                "description": "an uploaded archive's members never unpacked (a path leaving it, a link), the first 20",
            },
            "left_out_count": {"type": "integer", "description": "how many were left out, when more than listed"},
        },
    },
    "DataFileSummary": {
        "type": "object",
        "required": ["id", "revision", "kind", "data"],
        "properties": {
            **_STORED,
            "kind": {"enum": ["tensor", "sequence", "map", "optional"]},
            "data": {"type": "object", "description": 'what it holds: {"kind", "name", "dtype", "shape", "ref", …}'},
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
            "address": {"type": "string", "description": "the id by name (GET .../node only)"},
            "name": {"type": "string"},
            "op_type": {"type": "string"},
            "domain": {"type": "string"},
            "inputs": {"type": "array", "items": {"type": "string"}},
            "outputs": {"type": "array", "items": {"type": "string"}},
            "attributes": {"type": "array", "items": {"$ref": "#/components/schemas/Attribute"}},
        },
    },
    "Coefficients": {
        "type": "object",
        "required": ["node", "op_type", "rows", "features", "post_transform", "rows_shown", "by_feature"],
        "properties": {
            "node": {"type": "string"},
            "op_type": {"type": "string"},
            "rows": {
                "type": "array",
                "description": "one per class (its label) or target (its index), with its intercept (null: none)",
                "items": {
                    "type": "object",
                    "properties": {"label": {"type": ["string", "integer"]}, "intercept": {"type": ["number", "null"]}},
                },
            },
            "features": {"type": "integer"},
            "post_transform": {"type": "string"},
            "rows_shown": {"type": "integer", "description": "rows whose weights each feature carries (the first 64)"},
            "by_feature": {
                "type": "array",
                "description": "the heaviest 200 features: their weight in each row and the L2 norm of those",
                "items": {
                    "type": "object",
                    "properties": {
                        "feature": {"type": "integer"},
                        "weights": {"type": "array", "items": {"type": ["number", "null"]}},
                        "norm": {"type": ["number", "null"]},
                    },
                },
            },
        },
    },
    "Trees": {
        "type": "object",
        "required": ["node", "op_type", "trees", "splits", "leaves", "depth", "features", "post_transform"],
        "properties": {
            "node": {"type": "string"},
            "op_type": {"type": "string"},
            "trees": {"type": "integer"},
            "splits": {"type": "integer"},
            "leaves": {"type": "integer"},
            "depth": {
                "type": "object",
                "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}, "mean": {"type": "number"}},
            },
            "features": {
                "type": "array",
                "description": "each feature split on: how often, the thresholds' range; the most used first",
                "items": {
                    "type": "object",
                    "properties": {
                        "feature": {"type": "integer"},
                        "splits": {"type": "integer"},
                        "min": {"type": ["number", "null"]},
                        "max": {"type": ["number", "null"]},
                    },
                },
            },
            "classes": {"type": "array", "items": {}},
            "targets": {"type": "integer"},
            "aggregate_function": {"type": "string"},
            "base_values": {"type": "array", "items": {"type": "number"}},
            "post_transform": {"type": "string"},
            "tree": {
                "type": "object",
                "description": "with ?tree=K: that tree's splits, leaves, depth and rules (at most 400 lines; `more` left)",
                "properties": {
                    "index": {"type": "integer"},
                    "splits": {"type": "integer"},
                    "leaves": {"type": "integer"},
                    "depth": {"type": "integer"},
                    "rules": {"type": "array", "items": {"type": "string"}},
                    "more": {"type": "integer"},
                },
            },
        },
    },
    "Graph": {
        "type": "object",
        "required": ["nodes", "inputs", "outputs", "initializers"],
        "properties": {
            "revision": {"type": "integer"},
            "path": {"type": "string"},
            "address": {"type": "string", "description": "the path by name"},
            "kind": {"type": "string", "description": "graph, function, …"},
            "name": {"type": "string"},
            "doc_string": {"type": "string"},
            "breadcrumb": {**_ITEMS, "description": '[{"path", "label"}]: the graphs holding it, outermost first'},
            "nodes": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            "scopes": {**_ITEMS, "description": "module scopes the nodes' names make"},
            "outer_scope": {**_ITEMS, "description": "a subgraph: the names it reads from the graphs around it"},
            "outer_value_info": {**_ITEMS, "description": "their types"},
            "inputs": {**_ITEMS, "description": '[{"name", "dtype", "shape", "type"}]'},
            "outputs": {**_ITEMS, "description": '[{"name", "dtype", "shape", "type"}]'},
            "initializers": {
                **_ITEMS,
                "description": '[{"name", "dtype", "shape", "ref", "external": its data in an external file, "values"?}]',
            },
            "value_info": {**_ITEMS, "description": "the types the model records"},
            "inferred_value_info": {**_ITEMS, "description": "the types shape inference adds"},
            "metadata_props": _ITEMS,
            "dim_expressions": {
                "type": "object",
                "description": "{DIM: [the dims it is made of]} for input dims that are expressions",
            },
            "quantization_annotation": _ITEMS,
            "inferred_types": {"type": "string", "description": "included, or later (GET .../types) on big graphs"},
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
            "converted_from": {
                "type": "string",
                "description": "a run's input or output of a type numpy lacks (as dtype): its values widened",
            },
            "shape": {"type": "array", "items": {"type": "integer"}},
            "stats": {"type": ["object", "null"]},
            "offset": {"type": "integer"},
            "values": {"type": "array", "items": {}, "description": "nested as the tensor's shape"},
        },
    },
    "EditResult": {
        "type": "object",
        "required": ["revision", "changes"],
        "properties": {
            "revision": {"type": "integer"},
            "changes": {"type": "array", "items": {"type": "string"}, "description": "what each op changed"},
            "validation": {"type": "object"},
            "summary": {"$ref": "#/components/schemas/Summary"},
        },
    },
    "Validation": {
        "type": "object",
        "properties": {
            "ok": {"type": ["boolean", "null"], "description": "onnx.checker's basic verdict (null while pending)"},
            "message": {"type": "string"},
            "pending": {"type": "boolean"},
            "full": {"type": "object", "description": "check_model(full_check=True)"},
            "inference_errors": {"type": "array", "items": {"type": "object"}},
            "runtime": {
                "type": "object",
                "description": (
                    "onnxruntime's smoke run: {status: ok | fails | pending | skipped, message, node, guessed,"
                    " seconds, ...}; a model with dynamic input dims that ran with them at 1 also has"
                    ' other_size: {size: 2, dims: ["batch", ...], status, message, node, alone?} (its run with them at 2;'
                    " alone, when several failed together: {dim: ok | fails} with each alone at 2, the others at 1);"
                    " nonfinite: {output: [NaN or ±Inf count, size]} of the run (an edit's answer also gives"
                    " new_nonfinite: those its base's run had none in); flags: {input: [false, true]}, the values"
                    " a boolean input an If's condition comes from was run at (each branch checked; a failure's"
                    " message begins 'with input = true:')"
                ),
            },
            "reference": {"$ref": "#/components/schemas/ReferenceVerdict"},
        },
    },
    "InferredTypes": {
        "type": "object",
        "required": ["path", "revision", "inferred_value_info"],
        "properties": {
            "path": {"type": "string"},
            "revision": {"type": "integer"},
            "inferred_value_info": {"type": "array", "items": {"type": "object"}},
            "typed_at": {
                "type": ["object", "null"],
                "description": "in a function's body: the call its types are as at (null: none with known input types)",
                "properties": {
                    "node": {"type": "string"},
                    "name": {"type": "string"},
                    "calls": {"type": "integer"},
                    "differ": {"type": "boolean"},
                },
            },
        },
    },
    "Located": {
        "type": "object",
        "required": ["revision", "from", "path", "node"],
        "properties": {
            "revision": {"type": "integer"},
            "from": {"type": "integer"},
            "path": {"type": ["string", "null"]},
            "node": {"type": ["string", "null"]},
        },
    },
    "NodeSchema": {
        "type": "object",
        "required": ["node", "op_type", "domain", "kind"],
        "properties": {
            "node": {"type": "string"},
            "op_type": {"type": "string"},
            "domain": {"type": "string"},
            "opset_version": {"type": ["integer", "null"]},
            "known": {"type": "boolean"},
            "kind": {"enum": ["schema", "function", "unknown"]},
            "source": {"type": "string", "description": "onnx, onnxruntime, or the model's function"},
            "since_version": {"type": ["integer", "null"]},
            "deprecated": {"type": "boolean"},
            "doc": {"type": "string"},
            "inputs": {**_ITEMS, "description": '[{"name", "type", "option", "description"}]'},
            "outputs": {**_ITEMS, "description": '[{"name", "type", "option", "description"}]'},
            "min_inputs": {"type": "integer"},
            "max_inputs": {"type": "integer"},
            "min_outputs": {"type": "integer"},
            "max_outputs": {"type": "integer"},
            "attributes": {**_ITEMS, "description": '[{"name", "type", "required", "default"?, "description"}]'},
            "type_constraints": {**_ITEMS, "description": '[{"name", "allowed", "description"}]'},
            "unknown_attributes": {"type": "array", "items": {"type": "string"}},
            "has_body": {"type": "boolean", "description": "onnx defines the operator by others (a function body)"},
        },
    },
    "Operators": {
        "type": "object",
        "required": ["operators"],
        "properties": {"operators": {"type": "array", "items": {"type": "object"}}},
    },
    "TargetCheck": {
        "type": "object",
        "required": ["revision", "ok", "nodes", "rules"],
        "properties": {
            "revision": {"type": "integer"},
            "ok": {"type": "boolean", "description": "every rule kept"},
            "nodes": {"type": "integer", "description": "the nodes that run, bodies included"},
            "rules": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["rule", "ok", "message"],
                    "properties": {
                        "rule": {"enum": ["max_opset", "static", "control_flow", "ops", "standard", "max_nodes"]},
                        "ok": {"type": "boolean"},
                        "message": {"type": "string"},
                        "nodes": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "the first node ids breaking it",
                        },
                        "names": {"type": "string"},
                        "inputs": {"type": "array", "items": {"type": "string"}},
                        "fix": {"type": "string", "description": "what in the Studio fixes it"},
                    },
                },
            },
        },
    },
    "SplitResult": {
        "type": "object",
        "required": ["parts"],
        "properties": {
            "parts": {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "description": "the two new models: each its summary (a dry run: its name alone) with the tensors it"
                " reads and writes, and its node count",
                "items": {
                    "type": "object",
                    "required": ["name", "inputs", "outputs", "nodes"],
                    "properties": {
                        "name": {"type": "string"},
                        "inputs": {"type": "array", "items": {"type": "string"}},
                        "outputs": {"type": "array", "items": {"type": "string"}},
                        "nodes": {"type": "integer"},
                    },
                },
            },
            "both": {
                "type": "integer",
                "description": "nodes the cut leaves on both sides (a skip connection around it)",
            },
            "crossing": {
                "type": "array",
                "items": {"type": "string"},
                "description": "the values the second part computes again: cut at them too to separate the parts",
            },
            "dry_run": {"type": "boolean"},
        },
    },
    "Revisions": {
        "type": "object",
        "required": ["head", "redo", "revisions"],
        "properties": {
            "head": {"type": "integer"},
            "redo": {"type": "array", "items": {"type": "integer"}, "description": "next redo first"},
            "moved": {
                "type": ["object", "null"],
                "description": "the head's last undo or redo, until an edit: {how: undo | redo, by: who (null: not said), at, from, to}",
            },
            "revisions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "revision": {"type": "integer"},
                        "parent": {"type": ["integer", "null"]},
                        "ops": {"type": "array", "items": {"type": "object"}},
                        "changes": {"type": "array", "items": {"type": "string"}},
                        "created": {"type": "number"},
                        "author": {
                            "type": ["string", "null"],
                            "description": "who made it: the name its browser signed in as, or a script's X-Studio-Author header (null: not said)",
                        },
                        "current": {"type": "boolean"},
                        "recipe": {
                            "type": ["object", "null"],
                            "description": 'the recipe batch it replays: {"run", "name", "batch", "batches", "origin"}',
                        },
                    },
                },
            },
        },
    },
    "RunRequest": {
        "type": "object",
        "properties": {
            "revision": {"type": "integer", "description": "default: the head"},
            **_RUN_INPUTS,
            "outputs": {
                "type": "array",
                "items": {"type": "string"},
                "description": "tensors to return (any intermediate one: an output for this run only); default: the graph's outputs",
            },
            "compare_to": {"type": "integer", "description": "run this revision on the same input values and compare"},
            "compare_model": {
                "type": "string",
                "description": "run another stored model (its head, or its revision compare_to) on the same input values and compare",
            },
            "locate": {
                "type": "boolean",
                "description": "with compare_to: compare.diverges names the first node whose output differs, compare.nodes each node's error against the other revision (rel_error, sqnr_db)",
            },
            "expected": {
                "type": "object",
                "additionalProperties": {"type": "object", "properties": {"npy": {"type": "string"}}},
                "description": 'output name -> {"npy": BLOB} of the values it should have (a test data set\'s output_0.pb uploaded): compared as compare_to compares',
            },
            "profile": {
                "type": "boolean",
                "description": "time each node of the main graph with onnxruntime's profiler (graph optimisations off; the median of 3 runs after a warm-up), and each operator of the graph onnxruntime optimises it into",
            },
        },
    },
    "RunResult": {
        "type": "object",
        "required": ["revision", "outputs", "inputs", "ms"],
        "properties": {
            "revision": {"type": "integer"},
            "outputs": {
                "type": "object",
                "description": "name -> dtype, shape, size, stats, values (as GET .../tensors), top? ({rows: [{index, top: [[k, value], ...]}], of}: the largest values along the last axis of an output with at most two axes past its leading 1s), npy? (a tensor output's whole .npy as onnxruntime gave it, kept as a blob: GET /api/blobs/{digest}; unreferenced, it goes 10 minutes or more after the run)",
            },
            "inputs": {
                "type": "object",
                "description": 'the values fed, previewed; one the run made says how: "random": {"seed", "role"?,'
                ' "from"?} (role "mask": an integer attention mask fed ones; "positions": position ids from, from + 1,'
                " …: after the past a longer mask covers, else after the length of the past key/value inputs; every input draws from a stream of its own for the seed)",
            },
            "ms": {"type": "number", "description": "onnxruntime's run, session creation left out"},
            "onnxruntime": {"type": "string"},
            "branches": {
                "type": "array",
                "description": "which branch each If ran (of the main graph, and of the branches that ran),"
                " where its condition follows from the inputs fed and constants",
                "items": {
                    "type": "object",
                    "required": ["node", "ran"],
                    "properties": {
                        "node": {"type": "string"},
                        "name": {"type": "string"},
                        "ran": {"type": "string", "enum": ["then_branch", "else_branch"]},
                        "input": {
                            "type": "string",
                            "description": "the graph input the condition comes from; absent: a constant (or several: inputs)",
                        },
                        "value": {
                            "type": ["boolean", "number"],
                            "description": "that input's value fed; without one, the constant the condition is",
                        },
                        "inputs": {
                            "type": "object",
                            "description": "the graph inputs it comes from and their values, when several",
                        },
                        "negated": {"type": "boolean", "description": "through an odd number of Not alone"},
                        "through": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "the ops on the way from the inputs (Cast, Equal …), when more than Not",
                        },
                    },
                },
            },
            "declared_mismatches": {
                "type": "array",
                "description": "graph outputs that came back in another shape than the model declares",
                "items": {
                    "type": "object",
                    "properties": {
                        "output": {"type": "string"},
                        "declared": {
                            "$ref": "#/components/schemas/Shape",
                            "description": "dims: a number, a name or null",
                        },
                        "shape": {"type": "array", "items": {"type": "integer"}},
                    },
                },
            },
            "compare": {
                "type": "object",
                "description": "outputs of both: {name: {equal, close, max_abs, max_rel (null: every difference is at a 0), max_rel_to_range, tolerance_needed (the smallest tolerance at which it is close; null: none), shape}}; renamed: {output: its name in the other revision}; inputs_renamed: {input: its name in the other revision} (fed this run's values); other_inputs: the other revision's inputs that did not get this run's values (it lacks the input, or its types or fixed sizes differ: they were made up for it); only_in: {here: this run's outputs the other lacks, there: the other's graph outputs none of this run's pairs with} (said, not compared)",
            },
            "expected": {
                "type": "object",
                "description": 'with "expected": {"close_tolerance", "outputs": {name: as compare\'s}}',
            },
            "profile": {
                "type": "object",
                "description": 'with "profile": {"nodes": [{"node", "name", "op_type", "time_us"}], "subgraph_nodes": [... "within": the main node whose time includes it], "ms", "runs", "optimized": false} timed with graph optimisations off (Constant nodes, initializers to onnxruntime, have no time); "optimized_run": {"ms", "nodes", "ops": [{"op_type", "time_us"}]}: the same runs as onnxruntime runs the model by default (fused, reordered nodes), by operator',
            },
        },
    },
    "ReferenceCaseRequest": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 100, "description": 'default: "case N"'},
            **_RUN_INPUTS,
            "expected": {
                "type": "object",
                "additionalProperties": {"type": "object", "properties": {"npy": {"type": "string"}}},
                "description": 'output name -> {"npy": BLOB}: the outputs the case must give (a test data set\'s); default: what the revision gives now',
            },
            "revision": {
                "type": "integer",
                "description": "the revision run to record the outputs (default: the head)",
            },
        },
    },
    "ReferenceCases": {
        "type": "object",
        "required": ["tolerance", "gate", "cases"],
        "properties": {
            "gate": {"type": "boolean", "description": "edits whose result fails a case are refused"},
            "tolerance": {
                "type": "number",
                "description": "an output passes when each value is within tolerance × itself + tolerance × the expected output's largest magnitude",
            },
            "cases": {
                "type": "array",
                "items": {
                    "type": "object",
                    "description": '{"name", "inputs": {NAME: {"npy", "dtype", "shape"}}, "expected": {...}, "dims", "recorded_from": REV | null, "created", "names": {"inputs", "outputs"} (the model\'s when the case was kept: what renames are followed by)}',
                },
            },
        },
    },
    "ReferenceVerdict": {
        "type": "object",
        "required": ["status", "cases"],
        "properties": {
            "revision": {"type": "integer"},
            "status": {"enum": ["none", "pending", "passed", "failed"]},
            "tolerance": {"type": "number"},
            "gate": {"type": "boolean", "description": "whether the cases gate edits"},
            "cases": {
                "type": "array",
                "items": {
                    "type": "object",
                    "description": '{"name", "status": "passed" | "failed" | "error", "message"?, "outputs": {NAME: {"passed", "equal", "close", "max_abs", "max_rel", "max_rel_to_range", "tolerance_needed", "rel_error", "sqnr_db", "shape", "was"?: its name in the case}}, "renamed"?: {the case\'s name: the model\'s now}, for inputs and outputs renamed since the case was kept}',
                },
            },
            "worst": {
                "type": "object",
                "description": '{"case", "output", "max_rel_to_range"}: the output furthest from its expected values (null: shape or type changed)',
            },
        },
    },
    "SensitivityRequest": {
        "type": "object",
        "required": ["base"],
        "properties": {
            "base": {"type": "integer", "description": "the float revision the quantization was made from"},
            "revision": {"type": "integer", "description": "the QDQ revision (default: the head)"},
            **_RUN_INPUTS,
            "samples": {
                "type": "object",
                "description": 'instead of "inputs": input name -> {"npy": BLOB} of samples along its first axis (as a calibration; the first 8 run)',
                "additionalProperties": {"type": "object"},
            },
            "progress": {
                "type": "string",
                "description": "a token of 8-64 letters, digits, _ or - to poll GET /api/sweeps/{token} by while the sweep runs",
            },
            "mode": {
                "type": "string",
                "enum": ["alone", "without"],
                "default": "alone",
                "description": "alone: each point (an activation tensor, a node's weights) the only one quantized; without: the only one left float",
            },
            "op_types": {
                "type": "array",
                "items": {"type": "string"},
                "description": "measure only the points a node of these operators owns (each a run of the whole model)",
            },
            "target": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "a relative error (0.01: 1 %): also find the fewest nodes to leave out for the simulated error to stay within it (plan)",
            },
        },
    },
    "Sensitivity": {
        "type": "object",
        "required": ["revision", "base", "mode", "outputs", "all", "points", "ms", "runs"],
        "properties": {
            "revision": {"type": "integer"},
            "base": {"type": "integer"},
            "mode": {"type": "string"},
            "outputs": {"type": "array", "items": {"type": "string"}, "description": "the float outputs measured"},
            "all": {
                "type": "object",
                "description": "every node quantized: {output (the furthest off), rel_error, sqnr_db}",
            },
            "points": {
                "type": "array",
                "items": {"type": "object"},
                "description": "{kind (activation | weights), tensors, dtype, of? (weights: their node), owners: [{node, name, op_type}] (the nodes to leave out to turn it float), output, rel_error, sqnr_db}: alone, the costliest first; without, the one whose turning float saves the most first",
            },
            "plan": {
                "type": "object",
                "description": "with target: {target, reached, nodes: [{node, name, op_type}] (the fewest to leave out), float (points they turn float), output, rel_error, sqnr_db (simulated with them left out), runs (the search's)}",
            },
            "samples": {"type": "integer", "description": "inputs each configuration ran on"},
            "ms": {"type": "number", "description": "one run of the switched model (median)"},
            "runs": {"type": "integer"},
            "seconds": {"type": "number"},
            "onnxruntime": {"type": "string"},
        },
    },
    "Diff": {
        "type": "object",
        "required": [
            "from",
            "to",
            "nodes",
            "tensors",
            "inputs",
            "outputs",
            "metadata",
            "functions",
            "model",
            "counts",
            "same",
        ],
        "description": "node ids in added and changed[].node are of the `to` side; in removed and changed[].other of `from`",
        "properties": {
            "from": {"type": "object"},
            "to": {"type": "object"},
            "nodes": {
                "type": "object",
                "properties": {
                    "added": {"type": "array", "items": {"type": "object"}},
                    "removed": {"type": "array", "items": {"type": "object"}},
                    "changed": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "node": {"type": "string"},
                                "other": {"type": "string"},
                                "name": {"type": "string"},
                                "op_type": {"type": "string"},
                                "fields": {"type": "array", "items": {"type": "string"}},
                            },
                        },
                    },
                },
            },
            "tensors": {"type": "object"},
            "inputs": {
                "type": "object",
                "description": "{added, removed, renamed: [{from, to, type?}] (in place: the old name gone, the new one nowhere in the old graph), changed: [{name, from, to}]}",
            },
            "outputs": {"type": "object", "description": "as inputs"},
            "metadata": {"type": "object"},
            "functions": {"type": "object"},
            "model": {
                "type": "object",
                "description": "model fields, opsets, graph fields: [from, to] or change lines",
            },
            "counts": {"type": "object"},
            "same": {"type": "boolean", "description": "the two serialize to the same bytes"},
            "same_content": {
                "type": "boolean",
                "description": "nothing differs but how tensors are stored (raw_data or typed fields, embedded or external)",
            },
            "same_shapes": {
                "type": "object",
                "description": "sizes that give both sides' inputs the same shapes (costs compared like for like): {from: {dim: n} (the from side's symbolic dims the to side fixes), to: {dim: n}, names: {from dim: to dim}}",
            },
            "ms": {"type": "number"},
        },
    },
    "Stats": {
        "type": "object",
        "required": ["revision", "dims", "input_dims", "totals", "nodes", "ops", "unknown"],
        "description": "FLOPs: a multiply-accumulate counts 2 (formulas in docs/api.md); null where unknown, never 0",
        "properties": {
            "revision": {"type": "integer"},
            "dims": {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "description": "the sizes given that this revision has a dim of (one fixed since is left out)",
            },
            "ignored": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "names given in dims that this revision has no dim of (a typo, one an edit fixed): why, and the closest",
            },
            "input_dims": {
                "type": "array",
                "items": {"type": "string"},
                "description": "the inputs' symbolic dims: given, every shape that follows from them is inferred",
            },
            "totals": {
                "type": "object",
                "properties": {
                    **{k: {"type": "integer"} for k in ("params", "param_bytes")},
                    **{
                        k: {
                            "type": ["integer", "null"],
                            "description": "the known nodes' sum (unknown says how many are left out); null: none known",
                        }
                        for k in ("flops", "activation_bytes")
                    },
                    "peak_activation_bytes": {
                        "type": ["integer", "null"],
                        "description": "most bytes alive at once in graph order, leaving out unknown.peak_outputs tensors of unknown size (null: an input's size unknown)",
                    },
                    "peak_node": {
                        "type": ["string", "null"],
                        "description": "the main graph's node whose outputs bring the peak",
                    },
                    "flops_lower_bound": {
                        "type": "boolean",
                        "description": "present (true) when a while loop's body is counted for one iteration:"
                        " its number of iterations unknown (loops)",
                    },
                },
            },
            "loops": {
                "type": "array",
                "description": "each Loop of a graph that runs: its count, else the symbol to give it as a size",
                "items": {
                    "type": "object",
                    "properties": {
                        "node": {"type": "string"},
                        "name": {"type": "string"},
                        "body": {"type": "string"},
                        "symbol": {
                            "type": ["string", "null"],
                            "description": "<name>.iterations; null: a constant count",
                        },
                        "iterations": {"type": ["integer", "null"], "description": "the count the totals use"},
                        "trip_count": {
                            "type": ["string", "integer", "null"],
                            "description": "the value giving its trip count (a tensor's name) when no constant",
                        },
                        "why": {"type": "string"},
                    },
                },
            },
            "branches": {
                "type": "array",
                "description": "each If that runs: the branch the totals count and why",
                "items": {
                    "type": "object",
                    "required": ["node", "counted", "skipped", "why", "by"],
                    "properties": {
                        "node": {"type": "string"},
                        "counted": {"type": "string", "description": "the graph path of the branch counted"},
                        "skipped": {"type": "string"},
                        "why": {"type": "string"},
                        "by": {
                            "type": "string",
                            "enum": ["constant", "given", "flops", "outer"],
                            "description": "what picked it: a constant condition, the values given in dims"
                            " for the inputs it comes from (branch_inputs), the costlier by FLOPs; outer: it sits"
                            " in a branch another If's choice leaves out (it never runs)",
                        },
                        "given": {"type": "object", "description": "by given: those inputs and their values"},
                        "flops": {
                            "type": "object",
                            "description": "each branch's FLOPs, then_branch and else_branch (null: a node unknown)",
                        },
                    },
                },
            },
            "branch_inputs": {
                "type": "array",
                "items": {"type": "string"},
                "description": "main-graph inputs an If's condition comes from: given in dims (use_cache_branch=1),"
                " the branch they pick is counted",
            },
            "graphs": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "each subgraph's path -> how it is named (unnamed nodes' rows say their graph)",
            },
            "nodes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "node": {"type": "string"},
                        "name": {"type": "string"},
                        "op_type": {"type": "string"},
                        "params": {"type": "integer"},
                        "shared_params": {
                            "type": "integer",
                            "description": "parameters of weights it reads that an earlier row counts (a weight is counted on its first reader's row)",
                        },
                        "shared_with": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "the rows counting those weights",
                        },
                        "flops": {"type": ["integer", "null"]},
                        "output_bytes": {"type": ["integer", "null"]},
                        "view_of": {
                            "type": "string",
                            "description": "a Reshape, Squeeze, Unsqueeze, Flatten or Identity: the input whose buffer its output is (no bytes written)",
                        },
                        "live_bytes": {
                            "type": ["integer", "null"],
                            "description": "activations alive as this node writes its outputs (main graph's nodes)",
                        },
                        "per_iteration": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "the Loops whose one iteration its flops count (their count unknown)",
                        },
                        "branch_skipped": {
                            "type": "string",
                            "description": "the If whose other branch is counted: this node is not in the totals",
                        },
                        "inner_flops": {
                            "type": ["integer", "null"],
                            "description": "an If's, Loop's or Scan's: its subgraphs' nodes as the totals count them",
                        },
                        "inner_params": {"type": "integer"},
                        "inner_flops_formula": {"type": "array", "items": {"type": "object"}},
                        "runs": {
                            "type": ["integer", "null"],
                            "description": "how many times the node's graph runs in one run of the model, when not"
                            " once (a Scan's body: once per step; a for loop's: per trip; null: unknown); its flops are over all of them",
                        },
                        **{
                            k: {
                                "type": "array",
                                "items": {"type": "object"},
                                "description": f"{what} as a polynomial in the inputs' symbolic dims (terms as in formula), "
                                "when it is unknown because sizes weren't given",
                            }
                            for k, what in (("flops_formula", "its FLOPs"), ("output_formula", "its output bytes"))
                        },
                    },
                },
            },
            "ops": {"type": "object", "additionalProperties": {"type": "integer"}},
            "formula": {
                "type": ["object", "null"],
                "description": 'FLOPs and activation bytes as polynomials in the inputs\' symbolic dims: {"symbols", "flops", "activation_bytes": [{"coefficient", "symbols": {NAME: power}}], "unknown_nodes" (whose FLOPs it leaves out), "unknown_outputs" (whose output bytes it leaves out)}; null without symbolic inputs',
            },
            "unknown": {
                "type": "object",
                "properties": {
                    "flops_nodes": {"type": "integer"},
                    "flops_ops": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "output_nodes": {"type": "integer"},
                    "peak_outputs": {
                        "type": "integer",
                        "description": "node outputs of unknown size the peak leaves out",
                    },
                    "dims": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "input dims not given; once all are, the data-dependent ones left",
                    },
                    "growing_dims": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "dims of a Loop's accumulators, which grow each iteration: not asked as sizes",
                    },
                    "dims_at": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "properties": {
                                "tensor": {"type": "string"},
                                "axis": {"type": "integer"},
                                "node": {"type": ["string", "null"]},
                                "op": {"type": ["string", "null"]},
                            },
                        },
                        "description": "where each size no input declares (asked for or given) first appears: that dim of that tensor, written by that node",
                    },
                },
            },
        },
    },
    "Recipe": {
        "type": "object",
        "required": ["format", "from", "to", "batches", "ops", "blobs"],
        "description": "the edits from one revision to another; `onnx-studio apply MODEL RECIPE -o OUT` replays it",
        "properties": {
            "format": {"const": "onnx-studio-recipe/1"},
            "model": {"type": "string"},
            "from": {"type": "integer"},
            "to": {"type": "integer"},
            "batches": {
                "type": "array",
                "description": "each revision's edit batch, replayed all-or-nothing as the server applied it",
                "items": {
                    "type": "object",
                    "properties": {
                        "revision": {"type": "integer"},
                        "ops": {"type": "array", "items": {"type": "object"}},
                        "nodes": {
                            "type": "object",
                            "description": "each node address the ops name: what the node was in the batch's base"
                            " ({op_type, domain, after: the node or tensor each input comes from}); replay edits"
                            " the node that still is that, or refuses (recipe_node_moved)",
                            "additionalProperties": {"type": "object"},
                        },
                    },
                },
            },
            "ops": {"type": "array", "items": {"type": "object"}, "description": "every op of the batches, in order"},
            "blobs": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "the .npy files ops name by digest, base64",
            },
        },
    },
    "RecipeApplied": {
        "type": "object",
        "required": ["revision", "changes", "revisions", "batches", "skipped"],
        "description": "as an edit answers for the last revision the recipe made",
        "properties": {
            "revision": {"type": "integer", "description": "the head now"},
            "changes": {"type": "array", "items": {"type": "string"}, "description": "the last revision's"},
            "validation": {"type": "object"},
            "summary": {"$ref": "#/components/schemas/Summary"},
            "revisions": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "the revision each batch that changed the model made, in order",
            },
            "batches": {"type": "integer", "description": "how many batches made a revision"},
            "skipped": {"type": "integer", "description": "how many changed nothing (or had no ops)"},
            "unchanged": {"type": "boolean", "description": "true when no batch changed anything"},
            "moved": {
                "type": "array",
                "items": {"type": "string"},
                "description": "the recipe's nodes this model names otherwise, found by what they read and edited there",
            },
            "steps": {
                "type": "array",
                "description": 'each batch: {batch (1-based), origin? ("revision 6 of week1.onnx"), changes, unchanged?}',
                "items": {"type": "object"},
            },
        },
    },
    "RecipeDryRun": {
        "type": "object",
        "required": ["dry_run", "revision", "batches", "skipped", "steps"],
        "description": "dry_run: every batch applied and checked, nothing stored",
        "properties": {
            "dry_run": {"const": True},
            "revision": {"type": "integer", "description": "the head, unchanged"},
            "batches": {"type": "integer"},
            "skipped": {"type": "integer"},
            "steps": {**_ITEMS, "description": "each batch: {batch, origin?, changes, unchanged?}"},
            "moved": {"type": "array", "items": {"type": "string"}},
            "validation": {"type": "object", "description": "the last batch's result's"},
        },
    },
    "Readers": {
        "type": "object",
        "required": ["name", "path", "readers", "truncated"],
        "properties": {
            "name": {"type": "string"},
            "path": {"type": "string", "description": "the graph asked about, by position"},
            "readers": {
                "type": "array",
                "description": "in graph order, a node's bodies' readers after it (bodies that define the name"
                " themselves left out); at most 1,000",
                "items": {
                    "type": "object",
                    "properties": {
                        "node": {"type": "string"},
                        "name": {"type": "string"},
                        "op_type": {"type": "string"},
                        "graph": {"type": "string", "description": "the path of the graph the node is in"},
                    },
                },
            },
            "truncated": {"type": "boolean"},
        },
    },
    "WeightRanges": {
        "type": "object",
        "required": ["revision", "bits", "weights"],
        "properties": {
            "revision": {"type": "integer"},
            "bits": {"type": "integer"},
            "weights": {
                "type": "array",
                "items": {"type": "object"},
                "description": "{tensor, shape, nodes: [{node, name, op_type}], channel_axis, per_tensor_sqnr_db, per_channel_sqnr_db (null: lossless), zeroed_per_tensor, zeroed_per_channel (shares of the nonzero values that round to 0), max_abs, std, outlier_ratio}: the most values lost to 0 first",
            },
        },
    },
    "Blob": {
        "type": "object",
        "description": 'an .npy: {"blob", "dtype", "shape"}; an .npz: {"arrays": {name: {"blob", "dtype", "shape"}}}; a TensorProto .pb: as an .npy, with "name"; an .onnx: {"blob", "kind": "model", "name", "nodes", "opset_import", "inputs", "outputs"}',
        "properties": {
            "blob": {
                "type": "string",
                "description": 'sha256 digest; ops name it as {"npy": blob} (an .onnx: {"onnx": blob})',
            },
            "dtype": {"type": "string", "description": "the numpy dtype"},
            "shape": {"type": "array", "items": {"type": "integer"}},
            "name": {"type": "string", "description": "a .pb's tensor name; an .onnx's graph name"},
            "converted_from": {
                "type": "string",
                "description": "a .pb of a type numpy lacks (BFLOAT16, FLOAT8E4M3FN, INT4...): kept widened to"
                " `dtype`, exactly; a run narrows it back for an input of that type",
            },
            "kind": {
                "type": "string",
                "description": '"model" for an .onnx; "sequence" or "map" for a SequenceProto (or OptionalProto) or MapProto .pb',
            },
            "count": {"type": "integer", "description": "a sequence's items, a map's entries"},
            "nodes": {"type": "integer"},
            "opset_import": {"type": "array", "items": {"type": "object"}},
            "inputs": {
                "type": "array",
                "items": {"type": "object"},
                "description": "an .onnx's graph inputs (no initializer)",
            },
            "outputs": {"type": "array", "items": {"type": "object"}},
            "arrays": {
                "type": "object",
                "description": "an .npz's arrays, each stored as an .npy blob of its own",
                "additionalProperties": {"type": "object"},
            },
        },
    },
    "OpList": {
        "type": "object",
        "required": ["ops"],
        "properties": {
            "ops": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["op", "required", "optional", "doc", "schema"],
                    "properties": {
                        "op": {"type": "string"},
                        "required": {"type": "array", "items": {"type": "string"}},
                        "optional": {"type": "array", "items": {"type": "string"}},
                        "doc": {"type": "string"},
                        "schema": {"type": "object", "description": "the JSON Schema of the op, as in EditBatch"},
                    },
                },
            }
        },
    },
}
