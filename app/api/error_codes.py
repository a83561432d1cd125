"""Every error `code` the API answers, with its HTTP statuses and when, in plain words: the one
catalogue docs/api.md's "Error codes" table is written from (scripts/make_api_docs.py) and
openapi's Error.code enumerates. tests/test_error_codes.py holds every code app/ raises, and its
status, to it: a script may branch on `code` without parsing messages."""

from __future__ import annotations

from dataclasses import dataclass

from werkzeug.http import HTTP_STATUS_CODES


@dataclass(frozen=True)
class ErrorCode:
    code: str
    statuses: tuple[int, ...]
    when: str
    everywhere: bool = False  # any route may answer it (auth, Host, the store, the helper)


def framework_code(status: int) -> str:
    """The code of an error werkzeug raises itself (an unknown path, a method a route doesn't take,
    an upload past the size limit): its status's name, 405 -> method_not_allowed."""
    return HTTP_STATUS_CODES.get(status, "error").lower().replace(" ", "_").replace("-", "_")


# the statuses werkzeug itself answers on /api/ paths (errors.py's _http_error words them)
FRAMEWORK_STATUSES = (400, 404, 405, 413, 416, 500)


def _heavy_ops() -> str:
    from ..edits.contract import MAX_WHOLE_MODEL_OPS, whole_model_words

    return f"more than {MAX_WHOLE_MODEL_OPS} whole-model ops ({whole_model_words()}) in one batch"


def _e(code: str, statuses: int | tuple[int, ...], when: str, everywhere: bool = False) -> ErrorCode:
    return ErrorCode(code, statuses if isinstance(statuses, tuple) else (statuses,), when, everywhere)


def catalogue() -> tuple[ErrorCode, ...]:
    """Every code, those any route may answer first, then by name."""
    everywhere = (
        _e(
            "unauthorized",
            401,
            "the server has an access token (`--auth-token`) and the request carries neither"
            " `Authorization: Bearer TOKEN` nor the login's cookie",
            True,
        ),
        _e(
            "cross_site",
            403,
            "a POST/PUT/PATCH/DELETE sent by another site's page (`Sec-Fetch-Site`, else `Origin`)",
            True,
        ),
        _e(
            "unknown_host",
            421,
            "a `Host` the server doesn't answer (loopback names and `--allowed-host` ones only)",
            True,
        ),
        _e("missing_host", 400, "a request without a `Host` header", True),
        _e(
            "body_too_big",
            413,
            "a JSON body past the server's bound (send big tensors as .npy, POST /api/blobs); a recipe past it",
            True,
        ),
        _e(
            "onnx_failed",
            422,
            "onnx's C++ (checker, inference, printer, parser, converter) or onnxruntime's model"
            " tools (float16 converter, quantizer, graph optimizer) crashed or hit the helper's memory, CPU or time"
            " limit on this content; remembered, not retried",
            True,
        ),
        _e("helper_unavailable", 503, "the helper process for onnx could not start (no verdict is made)", True),
        _e(
            "store_unavailable",
            503,
            "the model index (PostgreSQL) or the blob store (S3) can't be reached (down,"
            " not answering in time, restarting); the message names which; `Retry-After` says when to ask again",
            True,
        ),
        _e(
            "blob_missing",
            500,
            "a blob the index names is gone from the blob store (restored from an older backup?); the message names it",
            True,
        ),
        _e("store_damaged", 500, "a stored blob is shorter than the index records", True),
        _e(framework_code(404), 404, "no /api/ route has this path", True),
        _e(framework_code(405), 405, "the route doesn't take this method", True),
        _e(
            framework_code(413),
            413,
            "the upload is larger than the server accepts (`--max-upload-bytes`), or holds more files than it takes",
            True,
        ),
        _e(framework_code(416), 416, "a download's `Range` header asks for bytes the file doesn't have", True),
        _e(framework_code(500), 500, "a fault of the server (its log has the traceback under the `request_id`)", True),
    )
    by_name = (
        _e("already_attached", 422, "a data file attached that the model has already"),
        _e("already_output", 400, "add_output of a value that is a graph output already"),
        _e(
            "ambiguous_node",
            (400, 404),
            "`@name` names several nodes of its graph: 404 in an address (`?id=`,"
            " `?path=`), 400 for an edit op's bare node name",
        ),
        _e("bad_coefficients", 422, "a linear model node's coefficients can't be read"),
        _e(
            "bad_dims",
            400,
            "`dims` isn't NAME=N pairs of whole sizes (run, stats), a size past 1e12, or a BOOL flag past 1",
        ),
        _e("bad_external_data", 422, "a tensor's external data offset or length is no byte count"),
        _e(
            "bad_field",
            400,
            "an edit op's field (or a batch's, a recipe body's top-level field) is unknown or"
            " of the wrong type; the message names the op's index, the field and the closest known one",
        ),
        _e("bad_filename", 400, "an uploaded file has a name no file can have here"),
        _e(
            "bad_inputs",
            400,
            "a run's inputs can't be made: an .npy that can't be read or fed, values that don't fit the input",
        ),
        _e("bad_layout", 400, "download's `layout` is none of as_stored, embedded, external"),
        _e("bad_limit", 400, "search's `limit` is no whole number from 1 to 1000"),
        _e("bad_npy", 400, "an uploaded .npy, .npz or .pb can't be read as one array"),
        _e("bad_op", 400, "an item of `ops` is no object with an `op` name"),
        _e(
            "bad_path",
            (400, 404),
            "a graph path that is malformed, too deep or ends at a node (404); readers asked of a function body (400)",
        ),
        _e("bad_quantization", 422, "a quantized tensor can't be unpacked or dequantized"),
        _e("bad_recipe", 400, "the recipe sent is no recipe (no JSON, no batches, a malformed op)"),
        _e(
            framework_code(400),
            400,
            "the request is malformed in a way without a code of its own (a body that"
            " isn't the JSON object asked for, a flag that isn't true or false, a batch of more than 1000 ops,"
            " a multipart body werkzeug can't read); the message says what to send",
        ),
        _e("bad_revision", 400, "`?revision=` (or another revision parameter) is no whole number"),
        _e("bad_tar", 400, "an uploaded tar is unreadable or doesn't hold exactly one .onnx"),
        _e("bad_tensor", 422, "a stored tensor can't be decoded"),
        _e("bad_test_data", 400, "a test data set's files don't fit the model's inputs and outputs"),
        _e("bad_text_model", 400, "an upload that looks like ONNX text doesn't parse"),
        _e("bad_trees", 422, "a tree ensemble node's trees can't be read"),
        _e(
            "bad_value",
            (400, 422),
            "a field's value is refused: out of range, a name not allowed, what the"
            " model lacks for this op (an op type it has no node of, an opset too old) (400); convert_float16 on"
            " function bodies that can't take float16 (422)",
        ),
        _e("bad_window", 400, "a tensor preview's `offset`/`count` is negative or no integer"),
        _e("bad_zip", 400, "an uploaded zip is unreadable, holds too many files or not exactly one .onnx"),
        _e("batch_too_heavy", 422, _heavy_ops()),
        _e("breaks_body", 400, "an edit would give a subgraph's value a type its holder (If, Loop, Scan) can't take"),
        _e("cannot_print", 422, "onnx.printer can't render the model as text"),
        _e("cannot_reconnect", 400, "delete_node with `reconnect` of a node that has nothing to reconnect to"),
        _e("cannot_serialize", 422, "the edit made a model protobuf can't serialize"),
        _e(
            "conversion_failed",
            422,
            "convert_opset can't convert the model to that opset (the message says"
            " which node, and names a revision already at it)",
        ),
        _e("cycle", 400, "an edit would make a node read what it computes"),
        _e(
            "dangling_external_data",
            422,
            "an edit would leave a tensor naming an external data file the model has none of",
        ),
        _e("duplicate_file", 400, "the same file name sent twice in one upload"),
        _e(
            "duplicate_name",
            (400, 409),
            "a node name the graph has already (400); a reference case name the model has already (409)",
        ),
        _e("empty_file", 400, "an uploaded file with no bytes"),
        _e(
            "external_data_missing",
            422,
            "what is asked needs weights kept in an external data file the model"
            " lacks (a run, a tensor, an embedded download, a tool); attach it with POST .../data-files",
        ),
        _e("external_data_short", 422, "an external data file holds fewer bytes than its tensors need"),
        _e("extract_failed", 422, "extract_subgraph: onnx's extractor refuses the inputs and outputs named"),
        _e("function_clash", 422, "compose: both models define a function of one name differently"),
        _e("functions_too_large", 422, "a model-local function's calls expand to too many nodes"),
        _e("in_use", 400, "removing an input or initializer something still reads"),
        _e(
            "inference_failed", 422, "shape inference fails on the model (infer_shapes, set_io_shape with update_types)"
        ),
        _e(
            "invalid_result",
            422,
            "an edit's result fails a gate its base passed (onnx's checker, onnxruntime's"
            " run, the reference cases); nothing stored unless `allow_invalid`",
        ),
        _e("last_output", 400, "removing the graph's only output"),
        _e("missing_base", 400, "an edit, recipe or data-files request without `base`"),
        _e("missing_field", 400, "an edit op lacks a field it needs"),
        _e("missing_file", 400, "a multipart request without its file part"),
        _e("missing_input", 400, "calibration data lacks a graph input"),
        _e("missing_node", 400, "a call needing a node without `?id=`/`?node=`"),
        _e("missing_query", 400, "search without `?q=`"),
        _e("missing_recipe", 400, "a recipe request without `recipe`"),
        _e("missing_revision", 400, "locate without `?from=`"),
        _e(
            "name_taken",
            (400, 422),
            "a new name (node output, input, initializer, tensor) used already (400);"
            " rename_dim to a dim the model has already, without `merge` (422)",
        ),
        _e("no_nodes", 422, "sensitivity: no quantized node of the op types asked"),
        _e("no_schema", 400, "set_node_op to an operator with no schema at the model's opset"),
        _e(
            "not_a_model",
            400,
            "a data file (tensor, sequence, map) asked for what only a model has (graph,"
            " edits, reference cases, compose)",
        ),
        _e("not_an_ancestor", 422, "a recipe between revisions where the first isn't an ancestor of the second"),
        _e("not_computed", 400, "a run asked for a weight as an output"),
        _e("not_linear", 400, "coefficients of a node that is no linear model"),
        _e("not_onnx", 400, "an upload that is no readable ONNX model (malformed, truncated, no graph)"),
        _e("not_quantized", 422, "no QuantizeLinear/DequantizeLinear pair the other revision's nodes can take"),
        _e("not_text", 422, "a string tensor whose bytes are no UTF-8 text, asked for as .npy"),
        _e("not_trees", 400, "trees of a node that is no tree ensemble"),
        _e("nothing_missing", 422, "data files sent to a model that lacks none"),
        _e("nothing_to_redo", 409, "redo with nothing undone"),
        _e("nothing_to_undo", 409, "undo at the first revision, or more `steps` than lead back"),
        _e("number_out_of_range", 400, 'a JSON number past a double\'s range (send "Infinity")'),
        _e("opset_mismatch", 422, "compose: the two models' opsets can't be brought together"),
        _e("outside_folder", 422, "the missing data is at a path outside the model's folder: no upload can be it"),
        _e("query_too_long", 400, "a search query of more than 200 characters"),
        _e("recipe_node_moved", 422, "a recipe's node is another here than where it was recorded"),
        _e(
            "run_failed",
            (400, 422),
            "onnxruntime can't load or run the model (422; 400 when the inputs the request made can't be fed)",
        ),
        _e(
            "schema_mismatch",
            400,
            "a node would take more or fewer inputs, outputs or attributes than its schema allows",
        ),
        _e("several_files", 400, "several files sent where one is taken (several arrays: one .npz)"),
        _e("several_models", 400, "an upload holding several models: name one as `member` (`models` lists them)"),
        _e("shape_mismatch", 400, "a value's shape doesn't fit the input or initializer it is for"),
        _e("simplify_failed", 422, "simplify can't run the model through onnxruntime's optimizer"),
        _e("sparse_initializer", 422, "setting the values of a sparse initializer"),
        _e("stale_base", 409, "`base` is no longer the head; `head` says the revision the model is at"),
        _e("tar_bomb", 413, "an uploaded tar expands past 200x its compressed bytes"),
        _e("tar_too_big", 413, "an uploaded tar unpacks past the server's total"),
        _e("tensor_too_large", 413, "a tensor too big to preview"),
        _e(
            "too_big",
            (413, 422),
            "a test data file past its size limit (413); calibration data, a tool's"
            " model or a dequantized tensor past the server's bound (422)",
        ),
        _e("too_deep", 422, "ONNX text nesting brackets more than 256 deep"),
        _e("too_large", 422, "a download with weights inlined past protobuf's 2 GiB"),
        _e("too_long", 422, "a sensitivity sweep that would run too long"),
        _e(
            "too_many_cases",
            (400, 422),
            "a model keeping more than 20 reference cases (422; 400 from an upload's test data sets)",
        ),
        _e("too_many_points", 422, "a sensitivity sweep of too many quantization points"),
        _e("too_many_tensors", 422, "a compare with `locate` that would keep too many tensors"),
        _e(
            "type_mismatch",
            (400, 422),
            "freeze_input with a value of another type (400); compose joining values of two types (422)",
        ),
        _e(
            "unknown_attribute",
            (400, 404),
            "an attribute the node's schema or function doesn't declare (400);"
            " deleting an attribute the node hasn't (404)",
        ),
        _e(
            "unknown_blob",
            (404, 422),
            "an uploaded blob (POST /api/blobs) that isn't there (404); a recipe naming a file it doesn't carry (422)",
        ),
        _e("unknown_case", 404, "a reference case name the model hasn't"),
        _e("unknown_data_file", 422, "a data file sent that no tensor of the model names"),
        _e(
            "unknown_dim",
            400,
            "a symbolic dim the model's inputs don't name (run's `dims`, fix_dims, rename_dim; stats"
            " answers such names in `ignored` instead); the message names the closest",
        ),
        _e(
            "unknown_graph", 404, "a graph path (`?path=`, `?near=`, a node id's graph) naming a graph the model hasn't"
        ),
        _e("unknown_initializer", 404, "an edit op naming an initializer the graph hasn't"),
        _e(
            "unknown_input",
            (400, 404),
            "a run or calibration naming an input the model hasn't (400); an edit"
            " op naming a graph input it hasn't (404)",
        ),
        _e("unknown_io", 404, "set_io_shape naming no input or output of the graph"),
        _e("unknown_member", 400, "`member` names no model of the archive (`models` lists them)"),
        _e("unknown_metadata", 404, "set_metadata deleting a key the model hasn't"),
        _e("unknown_model", 404, "the model id in the path (or `other`, `from`, `compare_model`) isn't stored"),
        _e(
            "unknown_node",
            (400, 404),
            "a node id or name naming no node: 404 in an address (`?id=`, `?node=`,"
            " an edit op's `node`); 400 for a tool's list of node names (quantize `nodes`)",
        ),
        _e("unknown_op", 400, "an edit op this server doesn't know (GET /api/ops lists them)"),
        _e("unknown_operator", 400, "a tool's op-type list naming no operator of ONNX or onnxruntime"),
        _e(
            "unknown_output",
            (400, 404),
            "a run, case or compare naming an output the model hasn't (400); an edit op naming one (404)",
        ),
        _e("unknown_revision", 404, "a revision the model hasn't"),
        _e("unknown_sweep", 404, "a sensitivity progress token no sweep runs under"),
        _e(
            "unknown_tensor",
            (400, 404),
            "a run naming a tensor the main graph hasn't (400); a tensor ref, an"
            " edit op's tensor or a data file's item that isn't there (404)",
        ),
        _e("unknown_tree", 404, "a tree index past the ensemble's trees"),
        _e(
            "unknown_type",
            (400, 422),
            "a run's output whose type inference can't tell (400); add_output of a value without a type or shape (422)",
        ),
        _e("unsupported_attribute_type", 400, "an attribute of a type JSON can't set (a graph)"),
        _e("zip_bomb", 413, "an uploaded zip member expands past 200x its compressed size"),
        _e("zip_too_big", 413, "an uploaded zip unpacks past the server's total, or a member past its bound"),
    )
    return everywhere + tuple(sorted(by_name, key=lambda e: e.code))


def codes() -> dict[str, ErrorCode]:
    return {e.code: e for e in catalogue()}
