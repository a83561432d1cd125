"""onnxruntime's verdict on each revision: computed once, kept on the revision's row, and part
of its validation next to the checker's.

A revision's own verdict is computed while the request waits when the model is at most
SYNC_BYTES and SYNC_NODES (a few ms with a warm worker), else in the background ("pending" until
then). An
edit's gate waits for the edited model's run when its base's run took at most GATE_WAITS_SECONDS,
whatever the size (big weights cost the stand-in little: 1 GiB of MatMuls checks in ~0.1 s);
otherwise the edit is stored first and marked invalid afterwards if onnxruntime ran its parent
and can't run it.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx

from ..edits.apply import runtime_refusal
from ..errors import StudioError
from ..onnx_io.runtime_check import (
    WALL_SECONDS,
    against_base,
    check_model,
    failed_somewhere,
    known_sizes,
    ort_version,
)
from .background import once_in_background
from .documents import LRU, external_reader, load, store

SYNC_BYTES = 100 * 2**20
# onnxruntime makes a session in ~0.25 ms a node: a 31k-node LLaMA's smoke run took 8 s of its
# upload's answer; past this many nodes the verdict comes in the background
SYNC_NODES = 4000
SLOW_SECONDS = 1.5
# an edit answers in < 0.5 s on a 420 MB model and < 1 s on 1.3 GiB (issue 13's targets): the gate
# waits for runs that fit that (a 415 MiB BERT's: ~0.05 s; a 1.3 GiB GPT-2's, ~1 s, goes behind)
GATE_WAITS_SECONDS = 0.35
GATE_WALL_SECONDS = 15.0  # an edit's check while the request waits (its base ran in under SLOW_SECONDS)
PENDING = {"status": "pending", "ok": None, "message": "onnxruntime is checking it in the background"}

_verdicts = LRU(512)  # (data dir, model id, rev) -> verdict; the row keeps it across restarts
_slow: set = set()  # (data dir, model id) whose smoke runs take long: their checks go to the background


def _key(revision) -> tuple:
    return (store().where, revision.model_id, revision.rev)


def model_bytes(revision) -> int:
    """The revision's size with its tensors and external data files."""
    return store().model_size(revision)


def is_quick(revision, model: onnx.ModelProto) -> bool:
    return (
        (store().where, revision.model_id) not in _slow
        and model_bytes(revision) <= SYNC_BYTES
        and len(model.graph.node) <= SYNC_NODES
    )


def gate_check(revision, base_verdict: dict, model: onnx.ModelProto, base_model: onnx.ModelProto) -> dict:
    """The edited model's verdict for the gate: now when its base ran quickly, else PENDING."""
    if (base_verdict.get("seconds") or 0) > GATE_WAITS_SECONDS:
        return PENDING
    source = _source(revision, base_verdict, base_model)
    sizes = known_sizes(model, base_model, base_verdict)
    return check(revision, model, GATE_WALL_SECONDS, source, sizes)  # the edit keeps the base's external data


def _source(parent, parent_verdict: dict | None, parent_model: onnx.ModelProto | None = None) -> tuple | None:
    """(revision, model) whose values feed a model made from `parent` (runtime_check.values_from):
    the one that fed the parent's own verdict, so that the two verdicts are of the same inputs
    (a layer extracted, then edited again), else the parent."""
    fed_from = (parent_verdict or {}).get("fed_from")
    if fed_from is not None:
        try:
            _, revision, model = load(parent.model_id, fed_from)
        except StudioError:  # deleted meanwhile: made-up values then
            return None
        return revision, model
    if parent_model is None:
        _, parent, parent_model = load(parent.model_id, parent.rev)
    return parent, parent_model


def check(
    revision, model: onnx.ModelProto, wall: float = WALL_SECONDS, source: tuple | None = None, sizes: dict | None = None
) -> dict:
    """Smoke-run a model with the revision's external data files (no caching); `source`
    (revision, model): the one it was made from, which computes inputs it takes; `sizes`: its
    dynamic dims' sizes to try first (runtime_check.known_sizes)."""
    if source is None:
        verdict = check_model(model, external_reader(revision), wall, sizes=sizes)
    else:
        verdict = check_model(
            model, external_reader(revision), wall, source[1], external_reader(source[0]), sizes=sizes
        )
        if verdict.get("fed"):
            verdict["fed_from"] = source[0].rev
    if (verdict.get("seconds") or 0) > SLOW_SECONDS:
        _slow.add((store().where, revision.model_id))
    return verdict


def _stored(revision) -> dict | None:
    known = _verdicts.peek(_key(revision)) or revision.runtime
    return known if known and known.get("onnxruntime") == ort_version() else None


def runtime_verdict(revision, model: onnx.ModelProto, wait: bool = False) -> dict:
    """The revision's verdict: remembered, computed now (wait, or a quick model), else PENDING
    while a background thread computes it."""
    known = _stored(revision)
    if known is not None:
        return known
    if wait or is_quick(revision, model):
        return _verdicts.get(_key(revision), lambda: _compute(revision, model))
    in_background(revision.model_id, revision.rev)
    return PENDING


def with_runtime(validation: dict, revision, model: onnx.ModelProto, wait: bool = False) -> dict:
    """A revision's whole validation: the content checks, onnxruntime's verdict, and the gates
    it was stored past ("invalid")."""
    return {**validation, "runtime": runtime_verdict(revision, model, wait), "invalid": revision.invalid}


def _compute(revision, model: onnx.ModelProto) -> dict:
    source = sizes = None
    parent = store().revision(revision.model_id, revision.parent) if revision.parent is not None else None
    if parent is not None:
        _, parent, parent_model = load(revision.model_id, parent.rev)
        source = _source(parent, _stored(parent), parent_model)
        sizes = known_sizes(model, parent_model, _stored(parent))
    verdict = check(revision, model, source=source, sizes=sizes)
    if failed_somewhere(verdict) and parent is not None:
        verdict = against_base(verdict, _stored(parent))
    if not verdict.get("transient"):  # kept with the revision; a worker's hiccup is not
        store().set_runtime(revision.model_id, revision.rev, verdict)
    return verdict


def in_background(model_id: str, rev: int) -> None:
    """Compute a revision's verdict in a thread; for an edit whose parent onnxruntime ran and
    which it can't, mark the revision invalid (the gate, late)."""

    def work() -> None:
        _, revision, model = load(model_id, rev)
        verdict = runtime_verdict(revision, model, wait=True)
        if revision.parent is None or not failed_somewhere(verdict):
            return
        _, parent, parent_model = load(model_id, revision.parent)
        parent_verdict = runtime_verdict(parent, parent_model, wait=True)
        verdict = against_base(verdict, parent_verdict)
        if verdict.get("status") == "fails" and parent_verdict.get("status") == "ok":  # the gate, late
            _verdicts.put(_key(revision), verdict)
            store().set_runtime(model_id, rev, verdict, invalid=runtime_refusal(verdict))

    once_in_background(("runtime", store().where, model_id, rev), f"ort-{model_id}-{rev}", work)


def ran_at(revision, model: onnx.ModelProto, sizes: Callable[[], dict[str, int]]) -> None:
    """A run at `sizes` worked where the smoke run's made-up sizes failed (a speech encoder
    whose export fixed its batch at 1 and whose window needs 400 samples): its verdict is checked
    again at those sizes, in the background, and kept when the model runs — its badge, and the
    gate of every edit made from it (known_sizes), then go by sizes the model takes."""
    known = _stored(revision)
    if known is None or known.get("status") != "fails" or not known.get("guessed"):
        return
    at = sizes()
    if not at:
        return

    def work() -> None:
        verdict = check(revision, model, sizes=at)
        if verdict.get("status") == "ok":
            verdict["sizes_from"] = "run"  # the page says which sizes it ran at, and why those
            _verdicts.put(_key(revision), verdict)
            store().set_runtime(revision.model_id, revision.rev, verdict)

    once_in_background(
        ("ran-at", store().where, revision.model_id, revision.rev), f"ort-ran-{revision.model_id}-{revision.rev}", work
    )
