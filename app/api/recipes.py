"""Recipes (edits/recipe.py): GET /api/models/<id>/recipe?from=REV&to=REV gives the edits from one
revision to another, which `onnx-studio apply` replays on the next export of the model, and
POST /api/models/<id>/recipe replays one here, on the head: each batch gated as an edit is
(routes.apply_on), then all stored in one transaction, a revision each."""

from __future__ import annotations

import dataclasses
import io
import secrets
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import orjson
from flask import current_app, jsonify, request, send_file

from ..edits.node_marks import batch_marks
from ..edits.recipe import (
    checked_batch,
    make_recipe,
    naming_batch,
    recipe_marks,
    recipe_origins,
    recipe_parents,
    recipe_parts,
    restored_from,
    revision_path,
)
from ..errors import StudioError
from ..store.records import Revision
from . import bp
from .documents import load, remember_verdict, revision_number, store, verdict
from .file_names import file_name, model_stem
from .reference import OutputGate
from .request_body import json_object
from .routes import (
    AppliedEdit,
    EditBase,
    apply_on,
    commit_edits,
    edit_answer,
    edit_options,
    head_base,
    read_uploaded_blob,
    unchanged_answer,
)


@bp.get("/models/<model_id>/recipe")
def get_recipe(model_id):
    """?from= (default 0) an ancestor of ?to= (default the head); ?download=1 as a .recipe.json file."""
    s = store()
    record = s.model(model_id)
    start = revision_number(request.args.get("from"))
    end = revision_number(request.args.get("to"))
    start = 0 if start is None else start
    end = record.head if end is None else end
    revisions = {r.rev: r for r in s.revisions(model_id)}
    path = revision_path(recipe_parents({rev: (r.parent, r.ops) for rev, r in revisions.items()}), start, end)
    # restores replay as the edits they restored; attaching data files has no ops to replay
    batches = [(rev, r.ops) for rev in path if (r := revisions[rev]).ops and restored_from(r.ops) is None]
    # each batch's nodes marked as its base held them: replay checks it edits the same ones
    before = {rev: prev for prev, rev in pairwise([start, *path])}  # none when from = to
    marks = [batch_marks(load(model_id, before[rev])[2], ops) for rev, ops in batches]
    recipe = make_recipe(record.name, start, end, batches, read_uploaded_blob, marks)
    body = orjson.dumps(recipe, option=orjson.OPT_INDENT_2)
    stem = model_stem(file_name(record.name))
    return send_file(
        io.BytesIO(body),
        mimetype="application/json",
        as_attachment=bool(request.args.get("download")),
        download_name=f"{stem}.r{start}-r{end}.recipe.json",
    )


@bp.post("/models/<model_id>/recipe")
def apply_recipe(model_id):
    """{"base": HEAD, "recipe": {...}, "allow_invalid"?} (or a form: `base`, the file `recipe`):
    every batch replayed on the head, all or nothing; each that changes the model a revision."""
    base, recipe, allow_invalid = _recipe_request()
    dry_run = _dry_run()
    batches, read_recipe_blob = recipe_parts(recipe)
    start = head_base(model_id, base)
    applied, skipped, steps = _replayed(
        start, batches, allow_invalid, _blob_keeper(read_recipe_blob), recipe_marks(recipe), recipe_origins(recipe)
    )
    counts = {"batches": len(applied), "skipped": skipped, "steps": steps}
    if dry_run:  # every batch applied and checked, none stored: what it would do, step by step
        moved = [line for step in applied for line in step.moved]
        validation = applied[-1].result.validation if applied else start.validation
        return jsonify({"dry_run": True, "revision": base, **counts, "moved": moved, "validation": validation})
    if not applied:
        return jsonify({**unchanged_answer(model_id, base, start.validation), "revisions": [], **counts})
    applied = _tagged(applied, recipe, steps)
    stored = _commit_all(model_id, applied, start.revision)
    answer = edit_answer(model_id, stored[-1], applied[-1])
    moved = [line for step in applied for line in step.moved]
    return jsonify({**answer, "revisions": [r.rev for r in stored], **counts, "moved": moved})


# --- the request ----------------------------------------------------------------------------
RECIPE_BODY_FIELDS = ("base", "recipe", "allow_invalid", "dry_run")  # as openapi's recipe body declares


def _recipe_request() -> tuple[int, Any, bool]:
    """(base, recipe, allow_invalid) from a JSON body, or from a form with the recipe's file."""
    if request.mimetype == "multipart/form-data":
        return _form_request()
    body = json_object('{"base": REVISION, "recipe": {...}}', RECIPE_BODY_FIELDS)
    base, allow_invalid = edit_options(body)
    if "recipe" not in body:
        raise StudioError("missing_recipe", 'send the recipe (GET .../recipe gives one) as "recipe"')
    return base, body["recipe"], allow_invalid


def _form_request() -> tuple[int, Any, bool]:
    """The page's upload: the .recipe.json as the file `recipe`, `base` and `allow_invalid` fields.
    The file is parsed whole, so it is held to a JSON body's bound (MAX_JSON_BYTES)."""
    limit = current_app.config["MAX_JSON_BYTES"]
    if (request.content_length or 0) > limit:  # before the form is read (spooled to disk)
        raise _too_big(limit)
    f = request.files.get("recipe")
    if f is None:
        raise StudioError("missing_file", 'send the .recipe.json as a multipart form field named "recipe"')
    data = f.read(limit + 1)
    if len(data) > limit:
        raise _too_big(limit)
    name = f.filename or "the recipe"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:  # Python's codec words ("'utf-16-be' codec can't decode…") say nothing to a person
        raise StudioError(
            "bad_recipe", f"{name} is not a recipe: it is no UTF-8 text (a .recipe.json from Download recipe is)"
        ) from None
    try:
        recipe = current_app.json.loads(text)
    except ValueError as exc:
        raise StudioError("bad_recipe", f"{name} is not a recipe: it is not JSON ({exc})") from None
    fields: dict[str, Any] = {"base": _form_revision(request.form.get("base"))}
    if "allow_invalid" in request.form:
        fields["allow_invalid"] = _form_flag(request.form["allow_invalid"])
    base, allow_invalid = edit_options(fields)
    return base, recipe, allow_invalid


def _dry_run() -> bool:
    """The request's "dry_run" (a JSON field, or a form's true/false): replay and check, store nothing."""
    if request.mimetype == "multipart/form-data":
        raw: Any = _form_flag(request.form["dry_run"]) if "dry_run" in request.form else False
    else:
        raw = (request.get_json(silent=True) or {}).get("dry_run", False)
    if not isinstance(raw, bool):
        raise StudioError("bad_request", '"dry_run" must be true or false')
    return raw


def _recipe_name(recipe: Any) -> str:
    """What History calls an applied recipe: its file's name (the page's upload), else the model
    and revisions it was made from ("week1.onnx r0→r6")."""
    f = request.files.get("recipe") if request.mimetype == "multipart/form-data" else None
    if f is not None and f.filename:
        return f.filename
    model = recipe.get("model") if isinstance(recipe, dict) else None
    ends = (recipe.get("from"), recipe.get("to")) if isinstance(recipe, dict) else (None, None)
    span = f" r{ends[0]}→r{ends[1]}" if all(isinstance(e, int) and not isinstance(e, bool) for e in ends) else ""
    return f"{model}{span}" if isinstance(model, str) and model else "a recipe"


def _tagged(applied: list[AppliedEdit], recipe: Any, steps: list[dict]) -> list[AppliedEdit]:
    """Each stored batch marked as one of this run of the recipe (its revision keeps it): History
    shows them together, and one Undo takes them all back."""
    run, name = secrets.token_hex(4), _recipe_name(recipe)
    origins = [step.get("origin") for step in steps if not step.get("unchanged")]
    return [
        dataclasses.replace(
            a,
            recipe={"run": run, "name": name, "batch": k + 1, "batches": len(applied), "origin": origin},
        )
        for k, (a, origin) in enumerate(zip(applied, origins, strict=True))
    ]


def _too_big(limit: int) -> StudioError:
    return StudioError("body_too_big", f"a recipe may hold at most {limit:,} bytes", 413)


def _form_revision(raw: str | None) -> int | None:
    return None if raw is None else revision_number(raw)


def _form_flag(raw: str) -> bool | str:
    """A form's "true"/"false" (or 1/0) as a bool; anything else as sent, which edit_options refuses."""
    return {"true": True, "1": True, "false": False, "0": False}.get(raw.strip().lower(), raw)


def _blob_keeper(read_recipe_blob: Callable[[str], bytes]) -> Callable[[str], bytes]:
    """Reads a file an op names: the recipe's copy, kept in the store (a recipe of the revisions
    it makes carries it again), else one uploaded here (POST /api/blobs) for a hand-written recipe."""

    def read(digest: str) -> bytes:
        try:
            data = read_recipe_blob(digest)
        except StudioError as exc:
            if exc.code != "unknown_blob":
                raise
            try:
                return read_uploaded_blob(digest)
            except StudioError:
                raise exc from None
        store().blobs.put(data)
        return data

    return read


# --- replaying and storing -------------------------------------------------------------------
def _replayed(
    start: EditBase,
    batches: list[list],
    allow_invalid: bool,
    read_blob: Callable[[str], bytes],
    marks: list[object] | None = None,
    origins: list[str | None] | None = None,
) -> tuple[list[AppliedEdit], int, list[dict]]:
    """Every batch applied in turn to the one before's result, nothing stored: (the batches that
    changed the model, how many changed nothing, each batch's step: {"batch", "origin"?,
    "changes", "unchanged"?}). A refusal names its batch."""
    base, applied, skipped = start, [], 0
    steps: list[dict] = []
    last: AppliedEdit | None = None  # the batch whose result the next one starts from
    for k, ops in enumerate(batches):
        if not ops:  # a revision that attached data files: nothing to replay
            skipped += 1
            steps.append({"batch": k + 1, "changes": [], "unchanged": True})
            continue
        if last is not None:  # made only when a batch follows: its checks cost a helper run
            base, last = _next_base(last), None
        try:
            with naming_batch(k, ops, origins[k] if origins else None):
                ops, moved = checked_batch(base.data, base.model, ops, marks[k] if marks else None)
                step = apply_on(base, ops, allow_invalid, read_blob)
                step.changes[:0] = moved
                step.moved = moved
        except StudioError as exc:
            if base is not start:
                exc.node = None  # its id in an earlier batch's result, which no page shows
            raise
        origin = {"origin": origins[k]} if origins and origins[k] else {}
        if not step.result.changed:
            skipped += 1
            steps.append({"batch": k + 1, **origin, "changes": step.result.notes, "unchanged": True})
            continue
        steps.append({"batch": k + 1, **origin, "changes": step.changes})
        applied.append(step)
        last = step
    return applied, skipped, steps


def _next_base(step: AppliedEdit) -> EditBase:
    """A batch's result, not stored yet, as the next batch's base: the revision it will be (its
    graph, the files it still names, the tensor blobs its ops stored), validated as a stored
    one is, with onnxruntime's verdict the gate gave it (else the base's: the gate skipped it)."""
    s = store()
    result, before = step.result, step.base
    digest = s.blobs.put(result.data)  # the checks run on the file, in the helper process
    remember_verdict(digest, result.validation, result.full)  # both passed: nothing to run again
    added = {d: s.blobs.size(d) for d in step.added}
    revision = dataclasses.replace(
        before.revision,
        blob=digest,
        external=step.external,
        tensors={**before.revision.tensors, **added},
        source=None,  # the upload's bytes rebuild revision 0 only
        runtime=step.settled,
        invalid=result.invalid,
    )
    runtime = result.runtime or before.validation["runtime"]
    validation = {**verdict(digest, result.model), "runtime": runtime, "invalid": result.invalid}
    return EditBase(revision, result.data, result.model, validation, _next_gate(before.gate, revision))


def _next_gate(gate: OutputGate | None, revision: Revision) -> OutputGate | None:
    """The reference cases' gate for the next batch: the cases the result passed hold it too."""
    return None if gate is None else OutputGate(gate.checks, revision, store().model_size(revision))


def _commit_all(model_id: str, applied: list[AppliedEdit], head: Revision) -> list[Revision]:
    """Store the applied batches as a chain of revisions from the head, in one transaction: if
    another change reached the model meanwhile, none is stored (409)."""
    return commit_edits(model_id, applied, head)
