"""Recipes: the edit batches that lead from one revision to another, as one JSON document that
replays them on another copy of the model (the next export of it) — `GET .../recipe` makes one,
`onnx-studio apply` replays one with the same gates as the server's edits.

A recipe is {"format": FORMAT, "model", "from", "to", "batches": [{"revision", "ops"}],
"ops": [every op, in order], "blobs": {digest: base64 bytes}}: each batch is replayed as the
server applied it (all-or-nothing, checked against its own base), and the files (.npy, .onnx) that ops
name by digest travel with it, so a recipe needs nothing of the server it came from.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol
from urllib.parse import unquote

import onnx

from ..errors import StudioError
from ..store.op_blobs import blob_refs
from .apply import EditResult, apply_edits
from .sources import TensorFiles

FORMAT = "onnx-studio-recipe/1"

# A revision made by restoring an earlier one (POST .../restore) records this op alone: not an
# edit to replay, and a recipe to it follows the edits to the revision it restored.
RESTORE = "restore_revision"


def restore_op(rev: int) -> dict:
    return {"op": RESTORE, "revision": rev}


def restored_from(ops: list) -> int | None:
    """The revision a revision's ops restored, or None for edits."""
    if len(ops) == 1 and isinstance(ops[0], dict) and ops[0].get("op") == RESTORE:
        return ops[0]["revision"]
    return None


def recipe_parents(history: dict[int, tuple[int | None, list]]) -> dict[int, int | None]:
    """Each revision's parent as a recipe follows the history ({rev: (parent, ops)}): a restored
    revision's is the revision it restored (it holds that content, whatever came between)."""
    out = {}
    for rev, (parent, ops) in history.items():
        restored = restored_from(ops)
        out[rev] = parent if restored is None else restored
    return out


def revision_path(parents: dict[int, int | None], start: int, end: int) -> list[int]:
    """The revisions after `start` up to `end`, in order, along the revision tree (`parents`:
    each revision's parent). StudioError when `start` is not `end` or one of its ancestors."""
    for asked in (start, end):
        if asked not in parents:
            raise StudioError("unknown_revision", f"the model has no revision {asked}", 404)
    path = []
    rev: int | None = end
    while rev is not None and rev != start:
        path.append(rev)
        rev = parents[rev]
    if rev is None:
        raise StudioError(
            "not_an_ancestor",
            f"revision {start} is not an ancestor of revision {end}: a recipe follows the history from one to the other",
            422,
        )
    return path[::-1]


def make_recipe(
    model_name: str,
    start: int,
    end: int,
    batches: list[tuple[int, list]],
    read_blob: Callable[[str], bytes],
    marks: list[dict] | None = None,
) -> dict:
    """The recipe of `batches` ((revision, its ops), in order); `marks`: each batch's node marks
    (node_marks.batch_marks of its base), which replay checks its nodes by."""
    blobs = {d: base64.b64encode(read_blob(d)).decode() for _, ops in batches for d in blob_refs(ops)}
    marks = marks or [{} for _ in batches]
    return {
        "format": FORMAT,
        "model": model_name,
        "from": start,
        "to": end,
        "batches": [
            {"revision": rev, "ops": ops, **({"nodes": m} if m else {})}
            for (rev, ops), m in zip(batches, marks, strict=True)
        ],
        "ops": [op for _, ops in batches for op in ops],
        "blobs": blobs,
    }


def _batches(recipe: Any) -> list[list]:
    """The recipe's batches; a bare {"ops": [...]} (hand-written) is one batch."""
    if not isinstance(recipe, dict):
        raise StudioError("bad_recipe", 'a recipe is a JSON object with its edit ops in "batches" or "ops"')
    if "format" in recipe and recipe["format"] != FORMAT:
        raise StudioError(
            "bad_recipe", f"the recipe's format is {recipe['format']!r}; this onnx-studio reads {FORMAT!r}"
        )
    if "batches" in recipe:
        batches = recipe["batches"]
        if not isinstance(batches, list) or not all(
            isinstance(b, dict) and isinstance(b.get("ops"), list) for b in batches
        ):
            raise StudioError("bad_recipe", 'the recipe\'s "batches" must be a list of {"ops": [...]}')
        if "ops" in recipe and recipe["ops"] != [op for b in batches for op in b["ops"]]:
            # make_recipe writes both; a hand edit of one would be silently lost
            raise StudioError(
                "bad_recipe", 'the recipe\'s "ops" differ from its "batches" (which are replayed): keep one of them'
            )
        return [b["ops"] for b in batches]
    if isinstance(recipe.get("ops"), list):
        return [recipe["ops"]]
    raise StudioError("bad_recipe", 'the recipe has neither "batches" nor "ops"')


def _blob_reader(recipe: dict) -> Callable[[str], bytes]:
    blobs = recipe.get("blobs") or {}
    if not isinstance(blobs, dict):
        raise StudioError("bad_recipe", 'the recipe\'s "blobs" must map digests to base64 file bytes')

    def read(digest: str) -> bytes:
        if digest not in blobs:
            raise StudioError("unknown_blob", f"the recipe names file {digest!r} but does not carry it", 422)
        try:
            data = base64.b64decode(blobs[digest], validate=True)
        except (ValueError, TypeError):
            raise StudioError("bad_recipe", f"the recipe's file {digest!r} is not base64") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise StudioError("bad_recipe", f"the recipe's file {digest!r} does not have that digest")
        return data

    return read


def recipe_parts(recipe: Any) -> tuple[list[list], Callable[[str], bytes]]:
    """(the recipe's batches, a reader of the files its ops name by digest): StudioError 400
    `bad_recipe` saying what is wrong with one that is none."""
    batches = _batches(recipe)  # first: it says what a recipe is, to one that is none
    return batches, _blob_reader(recipe)


def recipe_marks(recipe: dict) -> list[object]:
    """Each batch's node marks (its "nodes"; none for a bare {"ops"} or an older recipe), in
    the order of recipe_parts' batches: node_marks.retarget checks them."""
    if "batches" not in recipe:
        return [None]
    return [b.get("nodes") for b in recipe["batches"]]


def checked_batch(data: bytes, model: onnx.ModelProto | None, ops: list, marks: object) -> tuple[list, list[str]]:
    """A batch's ops as they apply to its base (`data`, parsed as `model` when at hand): its
    nodes found by their marks (node_marks.retarget), with a line for each moved."""
    if not marks:
        return ops, []
    from .node_marks import retarget

    return retarget(model if model is not None else onnx.load_from_string(data), ops, marks)


def recipe_origins(recipe: dict) -> list[str | None]:
    """Each batch as the recipe's source names it ("revision 6 of week1.onnx": what its History
    showed), in the order of recipe_parts' batches; None where the recipe doesn't say."""
    if "batches" not in recipe:
        return [None]
    model = recipe.get("model")
    of = f" of {model}" if isinstance(model, str) and model else ""
    return [
        f"revision {b['revision']}{of}"
        if isinstance(b.get("revision"), int) and not isinstance(b.get("revision"), bool)
        else None
        for b in recipe["batches"]
    ]


@contextmanager
def naming_batch(k: int, ops: list, origin: str | None = None) -> Iterator[None]:
    """A refusal of batch `k` (0-based) said as of that batch: "batch 2 (revision 6 of
    week1.onnx; rename_tensor 'x'): ..." (`origin`: recipe_origins')."""
    try:
        yield
    except StudioError as exc:
        # a gate's refusal is of the whole batch: its ops said, as an op's own error says its op
        said = [w for w in (origin, None if exc.message.startswith("op #") else _ops_words(ops)) if w]
        which = f" ({'; '.join(said)})" if said else ""
        exc.message = f"batch {k + 1}{which}: {exc.message}"
        exc.args = (exc.message,)
        raise


def replay(
    data: bytes,
    recipe: Any,
    validation: Callable[[bytes], dict],
    check_runtime: Callable[[onnx.ModelProto], dict] | None = None,
    allow_invalid: bool = False,
    progress: Callable[[int, int, list], None] | None = None,
    weights: ReplayWeights | None = None,
) -> list[EditResult]:
    """Apply the recipe's batches in order to the model `data`, each gated as the server gates an
    edit: the result of a batch may not fail a check its base passed (validation(bytes) -> the
    base's verdict: "ok", "full", "runtime"). The results, one per batch that changed the model;
    only the last holds the model's bytes (`data`), none its parsed `model`: each held both, and
    five batches on a 1.55 GiB model took 19.7 GB (QA40 #1). `progress(k, count, ops)` hears of
    each batch as it starts; `weights`: where the weights are when `data` is a graph without them."""
    batches, read = recipe_parts(recipe)
    marks, origins = recipe_marks(recipe), recipe_origins(recipe)
    results: list[EditResult] = []
    for k, ops in enumerate(batches):
        if not ops:
            continue  # a revision that attached data files: nothing to replay
        if progress is not None:
            progress(k, len(batches), ops)
        with naming_batch(k, ops, origins[k]):
            ops, moved = checked_batch(data, None, ops, marks[k])
            tensors = weights.tensors() if weights is not None else None
            result = apply_edits(data, ops, validation(data), read, check_runtime, allow_invalid, tensors)
        if result.changed and weights is not None:
            result.data = weights.keep(result)
        result.model = onnx.ModelProto()  # its bytes say it all, once
        if result.changed:
            result.changes[:0] = moved
            if results:
                results[-1].data = b""
            results.append(result)
            data = result.data
    return results


class ReplayWeights(Protocol):
    """A replay's model kept as the server keeps one: its graph, its weights apart."""

    def tensors(self) -> TensorFiles:
        """Where the next batch's ops find the weights of its base (and put those they make)."""
        ...

    def keep(self, result: EditResult) -> bytes:
        """The batch's result stored: the graph the next batch edits, its big tensors out of it."""
        ...


def _ops_words(ops: list, most: int = 3) -> str:
    """ "set_io_shape 'hidden_in'", "rename_tensor 'x', set_attribute '@conv' (+2 more)": each op by
    its name and what it names first."""

    def one(op) -> str:
        if not isinstance(op, dict):
            return "?"
        what = next((op[k] for k in ("node", "tensor", "name", "from", "key") if isinstance(op.get(k), str)), None)
        if what and what.startswith(("@", ">")):  # an address: its names as they read
            what = unquote(what)
        return f"{op.get('op')} {what!r}" if what else str(op.get("op"))

    words = ", ".join(one(op) for op in ops[:most])
    return words + (f" (+{len(ops) - most} more)" if len(ops) > most else "")
