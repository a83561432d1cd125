"""API routes: thin handlers over store, views and edits."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from flask import current_app, jsonify, request, send_file

from ..edits import apply_edits, describe
from ..edits.apply import EditResult
from ..edits.recipe import restore_op
from ..edits.sources import TensorFiles, load_npy, npy_from_tensor_file, npz_arrays
from ..errors import BlobMissing, NotFound, StoreUnavailable, StudioError, stale_base
from ..onnx_io import offload, traverse
from ..onnx_io.address import carry, resolve_graph, resolve_node, resolve_tensor
from ..onnx_io.archive_members import its_own_files, left_out_answer
from ..onnx_io.external import MAX_MODEL_BYTES, TENSOR_PREFIX, files_in_use, unpack_zip
from ..onnx_io.inference import inferred_value_info
from ..onnx_io.kinds import detect
from ..onnx_io.limits import PROTOBUF_LIMIT
from ..onnx_io.load import parse_model, parse_model_file, parse_model_stream
from ..onnx_io.save import data_file_name, embedded, external_zip, move_weights_out
from ..onnx_io.tar_reading import is_tar_name, unpack_tar
from ..onnx_io.test_data_sets import FileMember, split_test_data_sets
from ..onnx_io.text_fields import readable_strings
from ..onnx_io.zip_reading import ZipBudget
from ..onnx_io.zip_writing import member
from ..store.blobs import is_digest
from ..store.records import Edited, Revision
from ..store.store import COLLECT_GRACE_SECONDS
from ..views import model_summary, node_schema, tensor_preview
from ..views.data_files import data_json, resolve_data_tensor
from ..views.dequantized import dequantized_tensor
from ..views.graph import node_view
from ..views.linear_models import BadLinear, is_linear, linear_summary
from ..views.schema import operators_at
from ..views.search import parse_limit, parse_query
from ..views.tensors import tensor_array
from ..views.trees import BadTrees, ensemble_summary, is_ensemble
from ..views.values import value_info_json
from . import bp, runtime
from .documents import (
    LRU,
    cached_stats,
    edited_has_its_weights,
    external_reader,
    function_types,
    graph_json,
    inferred,
    known_missing_weights,
    known_verdict,
    load,
    load_data_file,
    missing_weights,
    page_ready,
    readable_retry,
    remember_verdict,
    revision_number,
    search_index,
    store,
    verdict,
    verdict_if_cheap,
    warm_up,
)
from .file_names import MAX_NAME, SAFE_UPLOAD, file_name, is_text_name, model_stem, uploaded_file_name
from .reference import (
    TEST_DATA_MAX_BYTES,
    OutputGate,
    keep_test_data_sets,
    known_status,
    output_gate,
    reference_verdict,
    test_data_set_files,
)
from .request_body import json_object
from .restorable import older_opset_revision
from .runtime import with_runtime
from .shipped_data import old_weights_lines, shipped_files, write_into
from .streaming import send_chunks


def summary_of(model_id: str, rev: int | None = None) -> dict:
    """GET /api/models/<id>: what the model page shows first (the page embeds it for small models);
    of the head, or of revision `rev` (the page viewing an earlier one)."""
    return readable_retry(lambda: _summary_of(model_id, rev))


def _summary_of(model_id: str, rev: int | None) -> dict:
    if store().model(model_id).kind != "model":
        return _data_summary(model_id)
    record, revision, model = load(model_id, rev)
    head = revision if rev is None or rev == record.head else store().revision(model_id)
    out = {
        "id": record.id,
        "name": record.name,
        "revision": revision.rev,
        "head": record.head,  # undo and redo, like edits, start from the head
        "can_undo": head.parent is not None,
        "can_redo": bool(record.redo),
        "size": store().model_size(revision),
        # one .onnx can hold it (Download's "Embedded"): under protobuf's 2 GiB
        "embeddable": store().model_size(revision) < PROTOBUF_LIMIT,
        "external_files": sorted(revision.external),
        "missing_data": missing_weights(revision, model),
        "kind": record.kind,
        "source": record.source,
    }
    validation = verdict_if_cheap(revision.blob, model, current_app.config["INFER_INLINE_NODES"])
    if validation.get("pending"):
        warm_up(current_app._get_current_object(), record.id)  # type: ignore[attr-defined]  # a LocalProxy typed as Flask
    validation = with_runtime(validation, revision, model)
    out.update(model_summary(model, {**validation, "reference": reference_verdict(record.id, revision, model)}))
    return out


def _data_summary(model_id: str) -> dict:
    record, revision, msg = load_data_file(model_id)
    return {
        "id": record.id,
        "name": record.name,
        "revision": revision.rev,
        "head": revision.rev,
        "can_undo": False,
        "can_redo": False,
        "size": store().blobs.size(revision.blob),
        "kind": record.kind,
        "source": record.source,
        "data": data_json(msg),
    }


def _upload_name(f, what: str) -> str:
    name = os.path.basename((f.filename or "").replace("\\", "/"))
    if not name or name in (".", "..") or not SAFE_UPLOAD.match(name):
        raise StudioError("bad_filename", f"{what} has an unusable file name {f.filename!r}")
    return file_name(name)  # stored as it downloads ("....win.onnx" arrives; "win.onnx" is its name)


@bp.post("/models")
def upload_model():
    files = request.files.getlist("file")
    if not files:
        raise StudioError("missing_file", 'send the model as a multipart form field named "file"')
    models = [f for f in files if (f.filename or "").lower().endswith(".onnx")]
    if len(files) > 1 and len(models) == 1 and files[0] is not models[0]:
        # the model among its data files in any order (a folder's listing puts "m.data" first)
        files = [models[0], *(f for f in files if f is not models[0])]
    name = _upload_name(files[0], "the model")
    # a name to list it by other than its file's ("v2 int8"): the form's "name", checked first
    listed = model_name(request.form["name"]) if "name" in request.form else None
    if name.lower().endswith(".zip") or is_tar_name(name):
        if len(files) > 1:
            raise StudioError("bad_request", "send an archive alone: it holds the model and its external data")
        return _upload_archive(files[0].stream, name, listed, _archive_member())
    if "member" in request.form:
        raise StudioError("bad_request", f'"member" names a model inside a .zip or tar archive; {name} is none')
    stream = files[0].stream
    size = stream.seek(0, 2)
    stream.seek(0)
    if size > current_app.config["UPLOAD_IN_MEMORY_BYTES"]:
        # big: only a binary model can be (text and data files are smaller); parsed from the
        # spooled upload's memory map, then streamed into the store, never read whole
        parse_model_stream(stream, name)
        stream.seek(0)
        detected = None
    else:
        detected = detect(stream.read(), name)  # refuse what isn't an ONNX file before storing anything
    external = {}
    for f in files[1:]:
        ext_name = uploaded_file_name(f)
        if ext_name in external or ext_name == name:
            raise StudioError("duplicate_file", f"{ext_name!r} was uploaded twice")
        if ext_name.lower().endswith(".onnx"):  # a second model would be kept as the first's data file
            raise StudioError(
                "several_models", f"upload one model at a time: {ext_name!r} is a model too, not {name}'s external data"
            )
        external[ext_name] = f.stream  # streamed into the store, never held whole in memory
    if detected is None:
        record = store().create_model(listed or name, stream, external)
    else:
        record = store().create_model(listed or name, detected.data, external, detected.kind, detected.source)
    created = _created(record)
    if record.kind == "model":
        page_ready(record.id)
    return jsonify(created), 201


MAX_MEMBER_PATH = 4096


def _archive_member() -> str | None:
    """The form's "member": which of an archive's models to open (its path inside the archive)."""
    member = request.form.get("member")
    if member is None:
        return None
    if not member.strip() or len(member) > MAX_MEMBER_PATH:
        raise StudioError(
            "bad_value", f'"member" is the path of a model inside the archive, at most {MAX_MEMBER_PATH:,} characters'
        )
    return member.strip()


def _upload_archive(stream, name: str, listed: str | None, member: str | None):
    """A .zip, .tar, .tar.gz or .tgz holding one .onnx (or several, `member` naming the one to
    open), its external data files and maybe test data sets (the model zoo's layout)."""
    config = current_app.config
    if not is_tar_name(name):
        budget = ZipBudget(name, config["ZIP_MAX_UNCOMPRESSED"], config["ZIP_MAX_RATIO"])
        name, data, external, skipped = unpack_zip(stream, name, budget, member)
        external, data_sets = split_test_data_sets(external)
        # test inputs compress far more than weights (an all-zero image: 1000x) and are read into
        # memory a tensor at a time: they are held to a total of their own instead of a ratio
        test_data = ZipBudget(name, TEST_DATA_MAX_BYTES, max_ratio=1e12)
        for sides in data_sets.values():
            for test_file in (*sides["inputs"], *sides["outputs"]):
                test_file.budget = test_data
        return _stored_archive(listed or name, data, external, data_sets, skipped)
    with tempfile.TemporaryDirectory(prefix="tar-", dir=store().blobs.scratch()) as tmp:
        inner_name, model_path, beside, skipped = unpack_tar(
            stream, name, Path(tmp), config["ZIP_MAX_UNCOMPRESSED"], config["ZIP_MAX_RATIO"], member
        )
        if model_path.stat().st_size > MAX_MODEL_BYTES:
            raise StudioError("bad_tar", f"{name}: {inner_name} is bigger than one protobuf message can be")
        data = model_path.read_bytes()
        model = parse_model(data, inner_name)
        if member is not None:
            beside = its_own_files(model, beside)
        rest, data_sets = split_test_data_sets({key: FileMember(path) for key, path in beside.items()})
        with contextlib.ExitStack() as opened:  # streamed into the store, then closed
            external = {key: opened.enter_context(file.path.open("rb")) for key, file in rest.items()}
            return _stored_archive(listed or inner_name, data, external, data_sets, skipped)


def _stored_archive(name: str, data: bytes, external: dict, data_sets: dict, skipped: list[dict]):
    record = store().create_model(name, data, external)
    imported = keep_test_data_sets(record.id, data_sets) if data_sets else None
    created = {**_created(record), **left_out_answer(skipped)}
    if imported:
        created["test_data_sets"] = imported
    return jsonify(created), 201


def _created(record) -> dict:
    """An upload's answer: the new model's summary, and the models that already held the same
    bytes (stored once: the new entry costs no space), for the page to offer instead."""
    out = summary_of(record.id)
    same = [m for m in store().find_content(record.content) if m.id != record.id] if record.content else []
    # the same .onnx with other data files (one uploaded without its weights) is no copy of this
    # upload: "Open it" opened the copy lacking them and dropped these (QA40 #4)
    files = _uploaded_files(record.id)
    same = [m for m in same if _uploaded_files(m.id) == files]
    if same:
        out["duplicates"] = [{"id": m.id, "name": m.name, "created": m.created, "revision": m.head} for m in same]
    return out


def _uploaded_files(model_id: str) -> dict:
    """The external data files a model was uploaded with (its first revision's), by location."""
    try:
        return dict(store().revision(model_id, 0).external)
    except NotFound:
        return {}


@bp.get("/models")
def list_models():
    """Every model, newest first: its size as a model, and what its revisions hold on disk
    (blobs shared with other models counted in each); the store's total counts each blob once."""
    s = store()
    models = s.models_with_revisions()  # one snapshot: a model deleted meanwhile is left out
    usage = s.disk_usage(models)
    out = []
    for m, revisions in models:
        rev = next((r for r in revisions if r.rev == m.head), None)
        if rev is None:  # its head moved after the snapshot (an edit): listed at the next refresh
            continue
        entry = {
            "id": m.id,
            "name": m.name,
            "revision": m.head,
            "created": m.created,
            # who uploaded it, and when its head was made and by whom (null: not said)
            "created_by": revisions[0].author if revisions and revisions[0].rev == 0 else None,
            "edited": rev.created,
            "edited_by": rev.author,
            # its head's last undo or redo, until an edit: who moved it there (the revision stays
            # its author's; null: an edit made the head)
            "moved": m.moved,
            "disk_bytes": usage["models"].get(m.id, 0),
            "kind": m.kind,
        }
        unknown: dict[str, Any] = {"reference": None, "valid": None, "missing_data": None, "size": None, "card": {}}
        try:
            entry.update(
                reference=known_status(m.checks, rev),  # its head against its reference cases, once checked
                valid=_known_valid(rev) if m.kind == "model" else None,
                # external data files it names and lacks, once known (a page opened it)
                missing_data=known_missing_weights(rev) if m.kind == "model" else None,
                # producer, opset, nodes of its head ({} when unknown, null for data files)
                size=s.model_size(rev),
                card=s.card(rev),
            )
        except NotFound:  # deleted meanwhile
            continue
        except BlobMissing as exc:  # the blob store lost its data: the others are listed still
            entry.update(unknown, damaged=exc.message)
        except StoreUnavailable:  # S3 down: the list is the index's, on every host alike (QA36 #2)
            entry.update(unknown)
        out.append(entry)
    return jsonify({"models": out, "disk_bytes": usage["total"], "other_bytes": usage["other"]})


def _known_valid(revision) -> bool | None:
    """Whether onnx's checker passes the revision, once some request has checked it (None
    before: listing the models runs nothing)."""
    known = known_verdict(revision.blob)
    return None if known is None or known.get("pending") else bool(known.get("ok"))


@bp.get("/models/<model_id>")
def get_model(model_id):
    return jsonify(summary_of(model_id, revision_number(request.args.get("revision"))))


@bp.get("/models/<model_id>/head")
def get_head(model_id):
    """{"id", "name", "head"}: read from the index alone, for an open page to learn cheaply that
    the model moved on elsewhere (a teammate's edit, a script's), was renamed or deleted (404)."""
    record = store().model(model_id)
    return jsonify({"id": record.id, "name": record.name, "head": record.head})


@bp.delete("/models/<model_id>")
def delete_model(model_id):
    s = store()
    s.delete_model(model_id)
    s.collect_soon()  # its blobs no other revision uses go, once the grace period is over
    return "", 204


@bp.patch("/models/<model_id>")
def rename_model(model_id):
    """{"name": NAME}: the model's name as the models page lists it and downloads are named
    (its revisions unchanged); the summary."""
    body = json_object('{"name": "a new name"}')
    store().rename_model(model_id, model_name(body.get("name")))
    return jsonify(summary_of(model_id))


def model_name(name) -> str:
    """A name a model is listed (and downloads) by, as given to a rename or an upload's "name"."""
    if not isinstance(name, str) or not name.strip():
        raise StudioError("bad_value", '"name" must be a non-empty string')
    name = name.strip()
    if len(name) > MAX_MODEL_NAME:
        raise StudioError("bad_value", f"a name is at most {MAX_MODEL_NAME} characters; this one has {len(name)}")
    if _CONTROL.search(name):
        raise StudioError("bad_value", "a name is one line of text: no tab, line break or other control character")
    return name


MAX_MODEL_NAME = MAX_NAME  # as long as a file name is kept
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")  # and lone surrogates, which no file system takes


@bp.get("/models/<model_id>/graph")
def get_graph(model_id):
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    # shape inference on a 40k-node model takes seconds: big graphs come back without it at once
    # and the page asks GET .../types for edge labels after drawing
    path = resolve_graph(model, request.args.get("path", "")).path  # a path by names shares the cache
    body = graph_json(revision, model, path, current_app.config["INFER_INLINE_NODES"])
    return current_app.response_class(body, mimetype="application/json")


@bp.get("/models/<model_id>/validation")
def get_validation(model_id):
    """The validation state (checker, full check, inference errors, onnxruntime's smoke run, the
    gates the revision was stored past); waits for it on big models."""
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    validation = with_runtime(verdict(revision.blob, model), revision, model, wait=True)
    return jsonify({**validation, "reference": reference_verdict(model_id, revision, model, wait=True)})


@bp.get("/models/<model_id>/types")
def get_types(model_id):
    """Types shape inference finds for values of one graph (`?path=`) that the model doesn't record;
    in a function's body, as at one call of the function (`typed_at`)."""
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    path = request.args.get("path", "")
    at = resolve_graph(model, path).path  # 404 for a bad path before any work; by position
    if at.startswith("fn["):
        typed_at, values = function_types(revision.blob, model).get(at, (None, []))
        return jsonify(
            {
                "path": path,
                "revision": revision.rev,
                "inferred_value_info": [value_info_json(v) for v in values],
                "typed_at": typed_at,
            }
        )
    values = inferred_value_info(model, inferred(revision.blob, model), path)
    return jsonify(
        {"path": path, "revision": revision.rev, "inferred_value_info": [value_info_json(v) for v in values]}
    )


@bp.get("/models/<model_id>/search")
def search(model_id):
    """Find nodes (op type, name, attribute values), tensors, graphs and functions anywhere in the
    model (`?q=`), best first: `?limit=` results at most, `?near=<graph path>` first at equal rank."""
    store().model(model_id)  # an unknown model is a 404 whatever the query
    query = request.args.get("q", "")
    parse_query(query)  # a bad query or limit is refused before the model is parsed
    limit = parse_limit(request.args.get("limit"))
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    near = request.args.get("near")
    if near:  # the index knows graphs by position; a graph that isn't there is a 404, as in .../graph
        near = resolve_graph(model, near).path
    found = search_index(revision, model).search(query, limit, near)
    return jsonify({"query": query, "revision": revision.rev, **found})


def _model_and_node(model_id: str, param: str):
    _, _, model = load(model_id, revision_number(request.args.get("revision")))
    nid = request.args.get(param)
    if not nid:
        raise StudioError("missing_node", f"give the node as ?{param}=<node id>")
    return model, nid


@bp.get("/models/<model_id>/node")
def get_node(model_id):
    """One node in full (`?id=<node id>`): metadata values and doc_string uncut."""
    return jsonify(node_view(*_model_and_node(model_id, "id")))


@bp.get("/models/<model_id>/trees")
def get_trees(model_id):
    """A tree ensemble node's trees (`?node=<node id>`, `&tree=K` adds tree K's rules): how
    many, how deep, the features they split on (views/trees.py)."""
    model, nid = _model_and_node(model_id, "node")
    _, _, node = resolve_node(model, nid)
    if not is_ensemble(node):
        raise StudioError("not_trees", f"node {nid!r} is a {node.op_type}, not one of ai.onnx.ml's tree ensembles")
    raw = request.args.get("tree")
    if raw is not None and not re.fullmatch(r"\d{1,9}", raw):
        raise StudioError("bad_request", "?tree= is a tree's index, 0 for the first")
    try:
        return jsonify({"node": nid, **ensemble_summary(node, None if raw is None else int(raw))})
    except BadTrees as exc:
        raise StudioError("bad_trees", f"the trees of node {nid!r} can't be read: {exc}", 422) from None
    except IndexError:
        raise StudioError("unknown_tree", f"node {nid!r} has no tree {raw}", 404) from None


@bp.get("/models/<model_id>/coefficients")
def get_coefficients(model_id):
    """A linear model node's weights (`?node=<node id>`): one row per class or target with its
    intercept, the features by weight (views/linear_models.py)."""
    model, nid = _model_and_node(model_id, "node")
    _, _, node = resolve_node(model, nid)
    if not is_linear(node):
        raise StudioError(
            "not_linear",
            f"node {nid!r} is a {node.op_type}, not a linear model (LinearClassifier, LinearRegressor, a linear SVM)",
        )
    try:
        return jsonify({"node": nid, **linear_summary(node)})
    except BadLinear as exc:
        raise StudioError("bad_coefficients", f"the coefficients of node {nid!r} can't be read: {exc}", 422) from None


@bp.get("/models/<model_id>/locate")
def locate(model_id):
    """Where what a link names (`?path=` graph path, `?node=` node id, either form) in revision
    `?from=` is now (or in `?revision=`): positional, null for what is gone."""
    old_rev = revision_number(request.args.get("from"))
    if old_rev is None:
        raise StudioError("missing_revision", "give the revision the link was made in as ?from=<revision>")
    _, _, old = load(model_id, old_rev)
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    out: dict = {"revision": revision.rev, "from": old_rev}
    for key in ("path", "node"):
        address = request.args.get(key)
        out[key] = None if address is None else carry(old, model, address)
    return jsonify(out)


@bp.get("/models/<model_id>/schema")
def get_schema(model_id):
    """The operator schema of one node (`?node=<node id>`) at the model's opset."""
    return jsonify(node_schema(*_model_and_node(model_id, "node")))


@bp.get("/models/<model_id>/operators")
def get_operators(model_id):
    """The operators the model's opset imports offer, with their attributes."""
    _, _, model = load(model_id, revision_number(request.args.get("revision")))
    return jsonify({"operators": operators_at(model)})


@bp.get("/models/<model_id>/text")
def get_text(model_id):
    """The model in ONNX text syntax (onnx.printer); ?download=1 as a .onnxtxt attachment."""
    record, revision, model = load(model_id, revision_number(request.args.get("revision")))
    # the model as the external layout's .onnx has it (Download › weights in a .data file):
    # weights over 1 KiB as references into the .data file that download holds (named after the
    # revision's download: <stem>.r<N>.data), never the store's own keys, nor megabytes of
    # printed floats
    shown = onnx.ModelProto()
    shown.CopyFrom(model)
    location = data_file_name(download_name(record, revision.rev, binary=True))
    move_weights_out(shown, location, external_reader(revision))
    data = shown.SerializeToString()
    try:  # onnx's printer is C++: in the helper process (offload.py)
        text = offload.run("print_text", offload.content_key(data), data)
    except ValueError as exc:
        raise StudioError("cannot_print", f"onnx.printer can't render this model: {exc}", 422) from None
    if request.args.get("download"):
        stem = model_stem(file_name(record.name))
        return send_file(
            io.BytesIO(text.encode("utf-8")),
            mimetype="text/plain",  # Flask adds the charset (given here too, it was said twice)
            as_attachment=True,
            download_name=f"{stem}.r{revision.rev}.onnxtxt",
        )
    return current_app.response_class(text, mimetype="text/plain")


def _int_arg(name: str, default: int) -> int:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise StudioError("bad_window", f"{name} must be an integer, got {raw!r}") from None


def _tensor_or_dequantized(model: onnx.ModelProto, ref: str, revision):
    """The tensor `ref` names: a stored one, else the values a DequantizeLinear of constants
    writes under that name (views/dequantized.py)."""
    try:
        return resolve_tensor(model, ref)
    except NotFound:
        # computed once per revision and ref: the tensor view asks for it page by page
        key = (store().where, revision.blob, ref)
        found = _dequantized.get(key, lambda: dequantized_tensor(model, ref, external_reader(revision)))
        if found is None:
            raise
        return found


_dequantized = LRU(4)  # a 4096×4096 weight is 64 MiB of float32


@bp.get("/models/<model_id>/tensors/<path:ref>")
def get_tensor(model_id, ref):
    if store().model(model_id).kind != "model":
        _, revision, msg = load_data_file(model_id)
        tensor = resolve_data_tensor(msg, ref)
    else:
        _, revision, model = load(model_id, revision_number(request.args.get("revision")))
        tensor = _tensor_or_dequantized(model, ref, revision)
    return jsonify(
        tensor_preview(
            tensor,
            ref,
            offset=_int_arg("offset", 0),
            count=_int_arg("count", 100),
            max_count=current_app.config["PREVIEW_MAX_COUNT"],
            external_reader=external_reader(revision),
            cached_stats=cached_stats(revision.blob, ref),
        )
    )


@bp.get("/models/<model_id>/npy/<path:ref>")
def get_npy(model_id, ref):
    """A tensor as a .npy file. Types numpy can't store natively (bfloat16, float8, int4, ...) are
    widened to float32 / int8, which the X-Converted-From header names."""
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    arr = tensor_array(_tensor_or_dequantized(model, ref, revision), external_reader(revision))
    resp_headers = {}
    if arr.dtype.kind == "V":
        name = arr.dtype.name
        arr = arr.astype(np.int8 if name.startswith(("int", "uint")) else np.float32)
        resp_headers["X-Converted-From"] = name
    elif arr.dtype.kind == "O":
        arr = _as_text(arr, ref)  # a STRING tensor: numpy's fixed-width text (an object array was a 500)
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)  # any layout; a scalar stays 0-d
    buf.seek(0)
    safe = re.sub(r"[^\w.\-]+", "_", ref.lstrip("@"))[:100] or "tensor"  # stricter than file_name: a tensor
    resp = send_file(buf, mimetype="application/octet-stream", as_attachment=True, download_name=f"{safe}.npy")
    resp.headers.update(resp_headers)
    return resp


def _as_text(arr: np.ndarray, ref: str) -> np.ndarray:
    """A STRING tensor's bytes as numpy's unicode array (`<U`), which .npy stores and set_initializer
    and Run take back; one that holds bytes of no UTF-8 text has no such form."""
    try:
        texts = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in arr.ravel()]
    except UnicodeDecodeError:
        raise StudioError(
            "not_text", f"{ref!r} holds bytes that are no UTF-8 text: a .npy keeps text only", 422
        ) from None
    return np.array(texts, dtype=str).reshape(arr.shape) if texts else np.zeros(arr.shape, dtype="<U1")


def _stored_revision(model_id: str, rev: int):
    """Revision `rev` of the model: 404 for a model or revision it never had (any integer)."""
    return store().revision(model_id, rev)


def head_revision(model_id: str, base: int):
    """Revision `base`, which a change starts from: 404 when the model never had it, 409 when it
    is no longer the head (the index checks again as it commits)."""
    revision = _stored_revision(model_id, base)
    head = store().model(model_id).head
    if head != base:
        raise stale_base(base, head)
    return revision


EDIT_BATCH_FIELDS = ("base", "ops", "allow_invalid")  # openapi's EditBatch declares the same


@bp.post("/models/<model_id>/edits")
def post_edits(model_id):
    body = json_object('{"base": REVISION, "ops": [...]}', EDIT_BATCH_FIELDS)
    base, allow_invalid = edit_options(body)
    on = head_base(model_id, base)
    try:
        applied = apply_on(on, body.get("ops"), allow_invalid)
    except StudioError as exc:
        if exc.code == "conversion_failed":  # a revision already at that opset says so
            exc.message += older_opset_revision(model_id, on.revision, body.get("ops"))
            exc.args = (exc.message,)
        raise
    if not applied.result.changed:
        return jsonify(unchanged_answer(model_id, base, applied.result.validation, applied.result.notes))
    edited = commit_edit(model_id, applied, applied.base.revision)
    return jsonify(edit_answer(model_id, edited, applied))


# --- applying an edit batch: POST .../edits, and each batch of a recipe (recipes.py) -------------
def edit_options(body: dict) -> tuple[int, bool]:
    """(base, allow_invalid) of a request that edits the model: 400 unless they are a revision
    number and true or false."""
    base = body.get("base")
    if not isinstance(base, int) or isinstance(base, bool):
        raise StudioError("missing_base", '"base" must be the revision number the edits start from')
    allow_invalid = body.get("allow_invalid", False)
    if not isinstance(allow_invalid, bool):
        raise StudioError("bad_request", '"allow_invalid" must be true or false')
    return base, allow_invalid


@dataclass
class EditBase:
    """What an edit batch is applied to: a revision (the head, or the result of a recipe's
    earlier batch, not stored yet), its graph's bytes, the model parsed, its validation (what the
    result may not fail) and the gate of the model's reference cases, if they gate edits."""

    revision: Revision
    data: bytes
    model: onnx.ModelProto
    validation: dict
    gate: OutputGate | None


def head_base(model_id: str, base: int) -> EditBase:
    """The head as an edit's base: 404 when the model never had revision `base`, 409 when it is
    no longer the head."""
    revision = head_revision(model_id, base)
    data = store().blobs.get(revision.blob)
    _, _, model = load(model_id, base)
    validation = with_runtime(verdict(revision.blob, model), revision, model)
    return EditBase(revision, data, model, validation, output_gate(model_id, revision, model))


@dataclass
class AppliedEdit:
    """An edit batch applied to its base and past its gates, not stored yet."""

    base: EditBase
    result: EditResult
    added: set[str]  # tensor blobs the ops stored (a tool's result streamed in)
    external: dict  # the base's external data files the result still names
    changes: list[str]  # the ops' changes, and a line for each data file left out
    moved: list[str] = field(default_factory=list)  # a recipe's nodes found elsewhere (node_marks.py), first in changes
    recipe: dict | None = None  # the recipe batch it replays, kept with its revision (History groups them)

    @property
    def settled(self) -> dict | None:
        """onnxruntime's verdict on the result when the gate ran it to an end: kept with the
        revision (a worker's hiccup is not)."""
        verdict = self.result.runtime
        if not verdict or verdict["status"] == "pending" or verdict.get("transient"):
            return None
        return verdict


def apply_on(base: EditBase, ops, allow_invalid: bool, read_blob: Callable[[str], bytes] | None = None) -> AppliedEdit:
    """Apply `ops` to `base` all-or-nothing, gated as every edit is (apply_edits); `read_blob`
    reads the files ops name by digest (default: the uploaded blobs)."""
    s = store()
    tensors = TensorFiles(external_reader(base.revision), s.blobs.scratch(), s.blobs.put_parts, s.split_min_bytes)
    result = apply_edits(
        base.data,
        ops,
        base.validation,
        read_blob=read_blob or read_uploaded_blob,
        check_runtime=lambda model: runtime.gate_check(base.revision, base.validation["runtime"], model, base.model),
        allow_invalid=allow_invalid,
        tensors=tensors,
        check_outputs=base.gate,
    )
    if not result.changed:
        return AppliedEdit(base, result, tensors.added, base.revision.external, [])
    external, changes = _files_still_used(base.revision, base.model, result)
    return AppliedEdit(base, result, tensors.added, external, changes)


def commit_edit(model_id: str, applied: AppliedEdit, parent: Revision) -> Revision:
    """Store an applied edit as the revision after `parent` (still the head: 409 otherwise), and
    keep what its gates found for it."""
    return commit_edits(model_id, [applied], parent)[-1]


def commit_edits(model_id: str, chain: list[AppliedEdit], parent: Revision) -> list[Revision]:
    """Store applied edits, each made on the one before's result, as a chain of revisions after
    `parent` (still the head: 409 otherwise) in one transaction, and keep what their gates found."""
    s = store()
    revs = s.commit_revisions(model_id, parent.rev, [_edited(applied) for applied in chain])
    stored = []
    for applied, rev in zip(chain, revs, strict=True):
        edited = s.revision(model_id, rev)
        _after_commit(model_id, applied, parent, edited)
        stored.append(edited)
        parent = edited
    return stored


def _edited(applied: AppliedEdit) -> Edited:
    result = applied.result
    return Edited(
        result.data,
        applied.external,
        result.ops,  # nodes by name: a recipe replays them on the next export
        applied.changes,
        applied.settled,
        result.invalid,
        model=result.model,
        added=applied.added,
        recipe=applied.recipe,
    )


def _after_commit(model_id: str, applied: AppliedEdit, parent: Revision, edited: Revision) -> None:
    """What the gates found for a stored edit, kept for its revision."""
    result = applied.result
    remember_verdict(edited.blob, result.validation, result.full)
    edited_has_its_weights(parent, edited)
    if applied.base.gate is not None:
        applied.base.gate.remember(edited)  # its cases ran on the result already
    if applied.settled is None and applied.base.validation["runtime"]["status"] in ("ok", "pending"):
        runtime.in_background(model_id, edited.rev)  # the gate could not wait: it marks the revision later


def edit_answer(model_id: str, edited: Revision, applied: AppliedEdit) -> dict:
    """What an edit answers: the revision it made, its changes, its validation, the summary."""
    summary = summary_of(model_id)
    checks = summary.get("validation", {})
    return {
        "revision": edited.rev,
        "changes": applied.changes,
        "validation": {
            **applied.result.validation,
            # the full check's verdict and what inference found wrong, as GET .../validation gives them
            **{k: checks[k] for k in ("full", "inference_errors") if k in checks},
            "runtime": checks.get("runtime"),
            "invalid": applied.result.invalid,
            "reference": checks.get("reference"),
        },
        "summary": summary,
    }


def unchanged_answer(model_id: str, base: int, validation: dict, notes: list[str] | None = None) -> dict:
    """What an edit that changed nothing answers: no new revision; `notes`, what its ops said
    of it (simplify: "find nothing to simplify here; kept GroupNormalization ×13 as they are…")."""
    return {
        "revision": base,
        "changes": [],
        "unchanged": True,
        "message": "nothing changed",
        **({"notes": notes} if notes else {}),
        "validation": validation,
        "summary": summary_of(model_id),
    }


def _files_still_used(revision, base_model, result) -> tuple[dict, list[str]]:
    """The base's external data files that the edited model's tensors still name, and the edit's
    changes with a line for each file left out (a weight inlined or deleted no longer ships a
    file nothing reads) and for each kept file holding old weights no tensor reads any more."""
    if not revision.external:
        return revision.external, result.changes
    reader = external_reader(revision)
    used = files_in_use(result.model, reader)
    dropped = sorted(set(revision.external) - used)
    kept = {k: v for k, v in revision.external.items() if k in used}
    lines = [
        f"external data file {k!r} holds no tensor any more: left out (the weights are stored with the model;"
        " Download → External data writes them to a file again)"
        for k in dropped
    ]
    lines += old_weights_lines(base_model, result.model, reader, kept)
    return kept, [*result.changes, *lines]


def read_uploaded_blob(digest: str) -> bytes:
    try:
        return store().blobs.get(digest)
    except (ValueError, FileNotFoundError):
        raise StudioError(
            "unknown_blob",
            f"no uploaded blob {digest!r}; upload the file (.npy, .onnx) with POST /api/blobs first",
            404,
        ) from None


@bp.post("/blobs")
def upload_blob():
    """Store an uploaded .npy (for set_initializer / tensor attributes, run inputs, calibration
    samples); answers its digest. An .npz (numpy.savez: one array per input, say) is stored as
    one blob per array: {"arrays": {name: {"blob", "dtype", "shape"}}}; a TensorProto `.pb` (an
    ONNX test data set's input_0.pb) as the .npy of its values, with its name; an `.onnx` as
    itself, for the compose op."""
    f = request.files.get("file")
    if f is None:
        raise StudioError("missing_file", 'send the .npy as a multipart form field named "file"')
    if len(request.files.getlist("file")) > 1:  # the second was dropped without a word
        raise StudioError("several_files", "send one file a request (several arrays: one .npz)")
    data = f.read()
    what = f.filename or "the upload"
    blobs = store().blobs
    if data[:4] == b"PK\x03\x04":  # a zip: an .npz
        budget = ZipBudget(what, current_app.config["ZIP_MAX_UNCOMPRESSED"], current_app.config["ZIP_MAX_RATIO"])
        arrays = {
            name: {"blob": blobs.put(raw), "dtype": str(arr.dtype), "shape": list(arr.shape)}
            for name, raw, arr in npz_arrays(data, what, budget)
        }
        return jsonify({"arrays": arrays}), 201
    if data[:6] != b"\x93NUMPY" and what.lower().endswith(".onnx"):  # a model to compose with this one
        return jsonify(_model_blob(blobs, data, what)), 201
    if data[:6] != b"\x93NUMPY" and what.lower().endswith(".pb"):  # a TensorProto, as in test data sets
        read = npy_from_tensor_file(data, what)
        if read.array is None:  # a sequence or map: the runs feed it to an input of that type
            return jsonify(
                {"blob": blobs.put(read.npy), "kind": read.kind, "count": read.entries, "name": read.name}
            ), 201
        answer = {"blob": blobs.put(read.npy), "dtype": str(read.array.dtype), "shape": list(read.array.shape)}
        if read.converted_from:
            answer["converted_from"] = read.converted_from
        return jsonify({**answer, "name": read.name}), 201
    arr = load_npy(data, what)
    digest = blobs.put(data)
    return jsonify({"blob": digest, "dtype": str(arr.dtype), "shape": list(arr.shape)}), 201


NPY_MAGIC = b"\x93NUMPY"


@bp.get("/blobs/<digest>")
def get_blob(digest):
    """A stored .npy (an uploaded array, a run's output: its preview's "npy"), whole, as
    `?name=` (the output's name: logits.npy) or `<digest>.npy`. Blobs that aren't .npy files
    (models, their weights) are not given here: a model's own download gives those."""
    blobs = store().blobs
    if not is_digest(digest):
        raise StudioError(
            "unknown_blob", f"{digest!r} is no blob digest (64 hex digits, as a run's output names it)", 404
        )
    try:
        with blobs.open(digest) as f:
            head = f.read(len(NPY_MAGIC))
        size = blobs.size(digest)
    except FileNotFoundError:  # none stored (a run's output collected since)
        raise StudioError(
            "unknown_blob",
            f"no stored .npy {digest!r}: a run's outputs are kept {COLLECT_GRACE_SECONDS / 60:.0f} minutes or more"
            " after it, run it again",
            404,
        ) from None
    if head != NPY_MAGIC:
        raise StudioError("unknown_blob", f"blob {digest!r} is no .npy: only arrays are given here", 404)
    stem = re.sub(r"[^\w.\-]+", "_", request.args.get("name", "")).removesuffix(".npy")[:100].strip("._")
    return send_chunks(blobs.read_chunks(digest), size, f"{stem or digest}.npy", etag=digest)


def _model_blob(blobs, data: bytes, what: str) -> dict:
    """An uploaded .onnx kept as a blob for the compose op: its digest, and its graph's inputs and
    outputs (names, types) for choosing what to connect."""
    return _model_blob_answer(blobs.put(data), parse_model(data, what))


@bp.post("/models/<model_id>/as-blob")
def model_as_blob(model_id):
    """A revision (?revision=, default the head) of a stored model as one .onnx blob, its weights
    inside, for the compose op: answers as POST /api/blobs does for an uploaded .onnx. Built from
    the store's blobs (streamed; a model with external data files, in memory)."""
    s = store()
    if s.model(model_id).kind != "model":
        raise StudioError("not_a_model", "only a model can be added to another", 400)
    revision = s.revision(model_id, revision_number(request.args.get("revision")))
    if _names_files(model_id, revision):
        digest = s.blobs.put(embedded(s.blobs.get(revision.blob), external_reader(revision)))
    else:
        digest = s.blobs.put_parts(s.whole(revision)[1])
    return jsonify(_model_blob_answer(digest, parse_model_file(s.blobs.path(digest), "the stored model"))), 201


def _model_blob_answer(digest: str, model: onnx.ModelProto) -> dict:
    readable_strings(model)  # names shown: text (compose refuses a model whose names aren't)
    g = model.graph
    initialized = {t.name for t in g.initializer}
    return {
        "blob": digest,
        "kind": "model",
        "name": g.name,
        "nodes": len(g.node),
        "opset_import": [{"domain": o.domain, "version": o.version} for o in model.opset_import],
        "inputs": [value_info_json(v) for v in g.input if v.name not in initialized],
        "outputs": [value_info_json(v) for v in g.output],
    }


def _optional_base():
    body = request.get_json(silent=True) or {}
    base = body.get("base") if isinstance(body, dict) else None
    if base is not None and (not isinstance(base, int) or isinstance(base, bool)):
        raise StudioError("bad_request", '"base" must be a revision number')
    return base


MAX_UNDO_STEPS = 10_000  # a bound on one request's walk, far past any recipe's batches


@bp.post("/models/<model_id>/undo")
def undo(model_id):
    """`{"base"?: HEAD, "steps"?: N}`: the head N revisions back (1 unless said), all or none."""
    body = request.get_json(silent=True) or {}
    steps = body.get("steps", 1) if isinstance(body, dict) else 1
    if not isinstance(steps, int) or isinstance(steps, bool) or not 1 <= steps <= MAX_UNDO_STEPS:
        raise StudioError(
            "bad_request", f'"steps" is how many revisions to undo: a whole number from 1 to {MAX_UNDO_STEPS}'
        )
    store().undo(model_id, _optional_base(), steps)
    return jsonify(summary_of(model_id))


@bp.post("/models/<model_id>/redo")
def redo(model_id):
    store().redo(model_id, _optional_base())
    return jsonify(summary_of(model_id))


@bp.post("/models/<model_id>/restore")
def restore(model_id):
    """`{"base": HEAD, "revision": N}`: what revision N holds becomes the head again, as a new
    revision after the head (the history keeps everything between; nothing is copied)."""
    body = json_object('{"base": REVISION, "revision": REVISION}')
    for key in ("base", "revision"):
        if not isinstance(body.get(key), int) or isinstance(body.get(key), bool):
            raise StudioError("bad_request", f'"{key}" must be a revision number')
    base, rev = body["base"], body["revision"]
    s = store()
    old = _stored_revision(model_id, rev)
    head = head_revision(model_id, base)
    if (old.blob, old.external) == (head.blob, head.external):
        return jsonify(
            {
                "revision": base,
                "changes": [],
                "unchanged": True,
                "message": "nothing changed",
                "summary": summary_of(model_id),
            }
        )
    changes = [f"the model as revision {rev} held it"]
    new_rev = s.restore(model_id, base, rev, [restore_op(rev)], changes)
    return jsonify({"revision": new_rev, "changes": changes, "summary": summary_of(model_id)})


@bp.get("/models/<model_id>/revisions")
def revisions(model_id):
    s = store()
    record = s.model(model_id)
    head = record.head
    return jsonify(
        {
            "head": head,
            "redo": list(reversed(record.redo)),
            # who last stepped the head back or forward (a redo reads as its revision's author
            # changing the model anew otherwise), until the next edit
            "moved": record.moved,
            "revisions": [
                {
                    "revision": r.rev,
                    "parent": r.parent,
                    "ops": r.ops,
                    "changes": r.changes,
                    "created": r.created,
                    "author": r.author,  # who made it (the name signed in as, or a script's header), or null
                    # a recipe's batch: {"run", "name", "batch", "batches", "origin"} (History groups a run)
                    "recipe": r.recipe,
                    "current": r.rev == head,
                    "validation": {
                        "runtime": r.runtime,
                        "invalid": r.invalid,
                        "reference": known_status(record.checks, r),
                    },
                }
                for r in s.revisions(model_id)
            ],
        }
    )


def download_name(record, rev: int, binary: bool = False) -> str:
    """The name a revision downloads as — one home for it: the download, and the text form that
    names the download's .data file. The uploaded name at revision 0, <stem>.r<N>.onnx after;
    binary: a model's file in a layout we write (embedded, external), so a text upload's name
    gets ".onnx"."""
    base = file_name(record.name)
    stem = model_stem(base)
    name = base if rev == 0 else f"{stem}.r{rev}.onnx"
    if record.kind == "model" and rev == 0 and is_text_name(base):
        name = f"{stem}.onnx"  # stored as binary, whatever the layout
    # (a model renamed without an extension downloads with one: a file a person can open)
    if record.kind == "model" and not name.endswith(".onnx") and (binary or "." not in name):
        name += ".onnx"
    return name


@bp.get("/models/<model_id>/download")
def download(model_id):
    s = store()
    record = s.model(model_id)
    revision = s.revision(model_id, revision_number(request.args.get("revision")))
    layout = request.args.get("layout", "as_stored")
    if layout not in ("as_stored", "embedded", "external"):
        raise StudioError(
            "bad_layout",
            "layout must be as_stored, embedded (weights inside the .onnx) or external (weights in a .data file)",
        )
    name = download_name(record, revision.rev, binary=layout != "as_stored")
    if request.args.get("tests") and record.kind == "model":
        return _with_test_data_sets(record, revision, name)
    if layout == "external" and record.kind == "model":
        # every tensor over 1 KiB in one .data file next to the .onnx, copied from the blobs
        # and files it is in (spooled to disk, never held in memory)
        model = onnx.ModelProto()
        model.CopyFrom(load(model_id, revision.rev)[2])
        spool = tempfile.TemporaryFile()  # noqa: SIM115  # send_file closes it
        external_zip(model, external_reader(revision), name, spool)
        spool.seek(0)
        # named apart from the zoo layout's .zip (with its test data)
        zip_name = f"{name[:-5]}.external-data.zip"
        return send_file(spool, mimetype="application/zip", as_attachment=True, download_name=zip_name)
    if layout == "embedded" and record.kind == "model" and _names_files(model_id, revision):
        # its external data files inlined: built in memory (under protobuf's 2 GiB anyway)
        data, reader = s.blobs.get(revision.blob), external_reader(revision)
        return send_file(
            io.BytesIO(embedded(data, reader)),
            mimetype="application/octet-stream",
            as_attachment=True,
            download_name=name,
        )
    if layout == "embedded" and not name.endswith(".onnx"):
        name += ".onnx"
    size, chunks = s.whole(revision)
    if not revision.external:
        # the model as one file, streamed from its blobs: its graph and its tensors
        return send_chunks(chunks, size, name, etag=revision.blob)
    spool = tempfile.TemporaryFile()  # noqa: SIM115  # the zip goes to disk, not memory; send_file closes it
    with zipfile.ZipFile(spool, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        with z.open(member(z, name), "w", force_zip64=size >= 1 << 31) as w:
            for block in chunks:
                w.write(block)
        for f in shipped_files(model_id, revision):
            write_into(z, f, f.name)
    spool.seek(0)
    return send_file(spool, mimetype="application/zip", as_attachment=True, download_name=f"{name[:-5]}.zip")


def _with_test_data_sets(record, revision, name: str):
    """The revision as the model zoo packs a model: a .zip of one folder holding the .onnx (as
    stored), its external data files and a test_data_set_N/ per reference case (input_K.pb,
    output_K.pb: TensorProtos named after the graph's inputs and outputs) — what `onnx-studio
    apply --same-outputs`, onnx's backend test runner and an upload here all read."""
    s = store()
    if not name.endswith(".onnx"):
        name += ".onnx"  # a text-syntax upload's name: the zip holds its binary form
    stem = name[:-5]
    _, _, model = load(record.id, revision.rev)
    sets = test_data_set_files(record.checks or {}, model)
    size, chunks = s.whole(revision)
    spool = tempfile.TemporaryFile()  # noqa: SIM115  # the zip goes to disk, not memory; send_file closes it
    with zipfile.ZipFile(spool, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as z:
        with z.open(member(z, f"{stem}/{name}"), "w", force_zip64=size >= 1 << 31) as w:
            for block in chunks:
                w.write(block)
        for f in shipped_files(record.id, revision):
            write_into(z, f, f"{stem}/{f.name}")
        for path, data in sets:
            z.writestr(member(z, f"{stem}/{path}"), data)
    spool.seek(0)
    return send_file(spool, mimetype="application/zip", as_attachment=True, download_name=f"{stem}.zip")


def _names_files(model_id: str, revision) -> bool:
    """Whether the revision's tensors name external data files (any but the store's blobs)."""
    if revision.external:
        return True
    _, _, model = load(model_id, revision.rev)
    ours = {TENSOR_PREFIX + d for d in revision.tensors}
    return any(
        t.data_location == onnx.TensorProto.EXTERNAL
        and next((e.value for e in t.external_data if e.key == "location"), None) not in ours
        for t in traverse.tensors(model)
    )


@bp.get("/ops")
def list_ops():
    return jsonify({"ops": describe()})
