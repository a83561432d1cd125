"""Reference checks: input values kept with a model and the outputs it must give for them,
checked on every revision, so an edit that changes what the model computes shows at once.

A case is recorded from a run of a revision (its outputs become the expected ones) or given
whole (a test data set's inputs and outputs). Cases live on the model's row; their arrays are
.npy blobs of the store. A revision's verdict is derived data, keyed by its graph, its external
files and the cases: computed once, by whichever worker asks first.

  GET    /api/models/<id>/checks                  -> {"tolerance", "cases": [case]}
  POST   /api/models/<id>/checks                  {"name"?, "inputs"?, "dims"?, "expected"?, "revision"?}
  PATCH  /api/models/<id>/checks                  {"tolerance": T}
  DELETE /api/models/<id>/checks/<name>
  GET    /api/models/<id>/checks/verdict?revision= -> verdict (waits for it)

A verdict: {"status": "none" | "pending" | "passed" | "failed", "tolerance", "cases": [{"name",
"status": "passed" | "failed" | "error" | "not_applicable" (an input it feeds held fixed at another
value now), "message"?, "frozen"? (inputs held fixed at the value it feeds: left out of its feed), "outputs": {NAME: as run's compare, with
"passed"}}], "worst"?: {"case", "output", "max_rel_to_range"}}. An output passes when each value
is within `tolerance` of the expected value plus `tolerance` of the expected output's largest
magnitude (output_compare.compare_outputs' "close"); integers and strings must be equal.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from flask import jsonify, request
from onnx import numpy_helper

from ..edits.jsontypes import valid_text
from ..edits.sources import npy_from_tensor_file
from ..errors import StudioError
from ..onnx_io import narrow_types, saved_values
from ..onnx_io.output_compare import CLOSE_TOLERANCE, compare_outputs, rows_words
from ..onnx_io.runtime_check import RUN_WALL_SECONDS, run_model
from ..onnx_io.test_data_sets import MAX_TENSOR_BYTES, by_graph_names
from ..onnx_io.traverse import fed_inputs
from ..views.io_pairs import graph_values, paired_names
from . import bp, derived
from .background import once_in_background
from .documents import load, revision_number, store
from .request_body import json_object
from .run import check_dims, check_inputs, integer, run_failed, run_raw, uploaded_npy, write_runnable
from .runtime import GATE_WALL_SECONDS, is_quick

MAX_CASES = 20  # each case is one run per revision checked
MAX_NAME = 100
TEST_DATA_MAX_BYTES = 512 << 20  # all the test data sets of one upload
NONE = {"status": "none", "cases": []}
PENDING = {"status": "pending", "cases": [], "message": "running the reference cases in the background"}
TRANSIENT = ("error", "limit")  # the worker's trouble or its limits: no verdict on the model
# an edit's answer waits for its verdict while the model's last one took at most this long (the
# runtime gate's budget): a ResNet-50's case runs in ~0.3 s, a BERT's goes to the background
SYNC_SECONDS = 0.35
_slow: set = set()  # (data dir, model id) whose cases run long: their verdicts come in the background


def _checks(model_id: str) -> dict:
    return store().model(model_id).checks or {}


def _tolerance(checks: dict) -> float:
    return float(checks.get("tolerance", CLOSE_TOLERANCE))


# --- a revision's verdict ---------------------------------------------------------------------
def _source_key(revision, checks: dict) -> str:
    """What a verdict's runs depend on besides the graph blob: the external files and the cases
    (not the tolerance: a kept verdict is judged again at the one set now, `_judged`)."""
    spec = {"external": revision.external, "cases": checks.get("cases", [])}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:32]


def _judged(verdict: dict, tolerance: float) -> dict:
    """A kept verdict at `tolerance`: each output passes when equal or close at it (its
    `tolerance_needed`), so changing the tolerance judges every revision run before at once."""
    if verdict.get("tolerance") == tolerance:
        return verdict
    cases = []
    for case in verdict["cases"]:
        if case["status"] in ("error", "not_applicable"):
            cases.append(case)
            continue
        outputs = {}
        for name, o in case["outputs"].items():
            if o.get("missing"):
                outputs[name] = o
                continue
            needed = o.get("tolerance_needed")
            close = bool(o["equal"]) or (needed is not None and needed <= tolerance)
            outputs[name] = {**o, "close": close, "passed": close}
        passed = all(o["passed"] for o in outputs.values())
        cases.append({**case, "outputs": outputs, "status": "passed" if passed else "failed"})
    return {**verdict, "status": _status(cases), "tolerance": tolerance, "cases": cases}


def _status(cases: list[dict]) -> str:
    """A verdict's status from its cases': a case the model can no longer take (an input frozen
    at another value) judges nothing; none left, nothing is judged."""
    applies = [c for c in cases if c["status"] != "not_applicable"]
    if not applies:
        return "none"
    return "passed" if all(c["status"] == "passed" for c in applies) else "failed"


def reference_verdict(model_id: str, revision, model: onnx.ModelProto, wait: bool = False) -> dict:
    """The revision's verdict: known, computed now (wait, or a quick model), else PENDING while a
    background thread computes it; "gate" says whether the cases gate edits."""
    checks = _checks(model_id)
    if not checks.get("cases"):
        return NONE
    return {**_verdict(model_id, revision, model, checks, wait), "gate": bool(checks.get("gate"))}


def _verdict(model_id: str, revision, model: onnx.ModelProto, checks: dict, wait: bool) -> dict:
    s, extra = store(), _source_key(revision, checks)
    kept = s.derived(derived.key("reference", revision.blob, extra))
    if kept is not None:
        return _judged(json.loads(kept), _tolerance(checks))
    if wait or (is_quick(revision, model) and (s.where, model_id) not in _slow):
        # a request waiting for a quick model gives each case the runtime gate's wall; a longer
        # run makes the model slow, and its verdict comes from the background with the full wall
        t = time.perf_counter()
        verdict, transient = _computed(revision, model, checks, extra, RUN_WALL_SECONDS if wait else GATE_WALL_SECONDS)
        if time.perf_counter() - t > SYNC_SECONDS:
            _slow.add((s.where, model_id))
        if wait or not transient:
            return verdict

    def work() -> None:
        _, again, loaded = load(model_id, revision.rev)
        reference_verdict(model_id, again, loaded, wait=True)

    once_in_background(("reference", s.where, model_id, revision.rev), f"reference-{model_id}-{revision.rev}", work)
    return PENDING


def known_status(checks: dict | None, revision) -> str | None:
    """The revision's verdict ("passed", "failed") when some worker has computed it, else None
    (nothing is run: the history lists every revision)."""
    if not checks or not checks.get("cases"):
        return None
    kept = store().derived(derived.key("reference", revision.blob, _source_key(revision, checks)))
    return None if kept is None else _judged(json.loads(kept), _tolerance(checks))["status"]


def _computed(revision, model: onnx.ModelProto, checks: dict, extra: str, wall: float) -> tuple[dict, bool]:
    """The verdict, each case run with `wall` seconds, and whether a run was cut short (then it
    is no verdict on the model: not kept)."""
    verdict, transient = _cases_run(
        checks, model, lambda feed, dims, folder: run_raw(revision, model, feed, dims, None, folder, wall=wall)
    )
    if not transient:
        store().set_derived(derived.key("reference", revision.blob, extra), json.dumps(verdict).encode(), revision.blob)
    return verdict, transient


def _cases_run(checks: dict, model: onnx.ModelProto, run) -> tuple[dict, bool]:
    """The verdict of `model` on every case (`run(feed, dims, folder)`: the worker's answer), and
    whether a case failed for a reason that says nothing of the model."""
    tolerance = _tolerance(checks)
    cases, transient = [], False
    with tempfile.TemporaryDirectory(prefix="reference-", dir=store().blobs.scratch()) as tmp:
        for i, case in enumerate(checks["cases"]):
            result, lost = _checked_case(model, case, tolerance, run, Path(tmp) / str(i))
            cases.append(result)
            transient = transient or lost
    verdict: dict = {
        "status": _status(cases),
        "tolerance": tolerance,
        "cases": cases,
    }
    worst = _worst(cases)
    if worst:
        verdict["worst"] = worst
    return verdict, transient


def _checked_case(model: onnx.ModelProto, case: dict, tolerance: float, run, folder: Path) -> tuple[dict, bool]:
    """One case's result, and whether it failed for a reason that says nothing of the model."""
    out: dict = {"name": case["name"], "status": "error", "outputs": {}, "recorded_from": case.get("recorded_from")}
    inputs, outputs = fed_inputs(model.graph), [o.name for o in model.graph.output]
    now = _names_now(case, inputs, outputs, graph_values(model.graph))
    given = {now.get(n, n): digest for n, digest in case["inputs"].items()}
    expected = {now.get(n, n): digest for n, digest in case["expected"].items()}
    was = {new: old for old, new in now.items() if new != old}
    if was:  # the page feeds and reads the case by the names the model has now
        out["renamed"] = {old: new for new, old in was.items()}
    frozen, differs = _frozen_inputs(model, given, inputs)
    if differs:  # the model holds another value there now: the case asks what it can't take
        return {**out, "status": "not_applicable", "message": differs}, False
    given = {n: digest for n, digest in given.items() if n not in frozen}
    if frozen:
        out["frozen"] = sorted(frozen)
    missing = [n for n in inputs if n not in given]
    gone = [n for n in given if n not in inputs] + [n for n in expected if n not in outputs]
    if missing or gone:
        inside = graph_values(model.graph)  # a composition made it internal: not a changed value
        parts = [
            f"the model has no {'input' if n in given else 'output'} {n!r} any more"
            + (
                " (it is computed inside now: keep a new case for the model's new inputs and outputs)"
                if n in inside
                else ""
            )
            for n in gone
        ]
        parts += [f"the case gives no value for input {n!r}" for n in missing]
        return {**out, "message": "; ".join(parts)}, False
    blobs = store().blobs
    feed = {name: {"npy": str(blobs.path(digest))} for name, digest in given.items()}
    answer = run(feed, case.get("dims", {}), folder)
    status = answer.get("status")
    if status != "ok":
        stage = "load" if answer.get("stage") == "load" else "run"
        message = " ".join(str(answer.get("message", status)).split())
        return {**out, "message": f"onnxruntime can't {stage} it: {message}"}, status in TRANSIENT
    for name, digest in expected.items():
        got = answer["outputs"].get(name)
        renamed = {"was": was[name]} if name in was else {}
        if got is None:
            out["outputs"][name] = {"passed": False, "missing": True, **renamed}
            continue
        c = compare_outputs(got, str(blobs.path(digest)), tolerance=tolerance)
        out["outputs"][name] = {**c, "passed": bool(c["close"]), **renamed}
    out["status"] = "passed" if all(o["passed"] for o in out["outputs"].values()) else "failed"
    return out, False


def _frozen_inputs(model: onnx.ModelProto, given: dict[str, str], inputs: list[str]) -> tuple[set[str], str]:
    """The inputs a case feeds that the model holds fixed now (freeze_input: an initializer of
    that name) at the value the case feeds — left out of its feed, the case still holds — and,
    for one held at another value, why the case no longer applies (QA32: freezing a merged
    decoder's use_cache_branch made both its cases "outputs differ", one of them identical)."""
    held = {t.name: t for t in model.graph.initializer if t.name in given and t.name not in inputs}
    same: set[str] = set()
    for name, t in held.items():
        fed = np.load(store().blobs.path(given[name]), allow_pickle=False)
        fixed = numpy_helper.to_array(t)
        if fed.size == fixed.size and np.array_equal(fed.reshape(-1), fixed.reshape(-1).astype(fed.dtype)):
            same.add(name)
            continue
        return same, (
            f"it feeds {name!r} {_few(fed)}, which the model holds fixed at {_few(fixed)} now (freeze_input):"
            " this case no longer applies"
        )
    return same, ""


def _few(a: np.ndarray) -> str:
    """A value as a case's message quotes it: its first few entries."""
    flat = a.reshape(-1)
    text = ", ".join(str(v.item()).lower() if a.dtype == np.bool_ else str(v.item()) for v in flat[:4])
    return f"[{text}{', …' if flat.size > 4 else ''}]"


def _names_now(case: dict, inputs: list[str], outputs: list[str], held: set[str]) -> dict[str, str]:
    """{the case's input or output name: the model's name for it now}: the same, or renamed in
    place since the case was kept (io_pairs.paired_names, by the inputs and outputs the model had
    then: "names", or for a case kept before it was recorded, the case's own in order)."""
    then = case.get("names") or {"inputs": list(case["inputs"]), "outputs": list(case["expected"])}
    theirs = {*then["inputs"], *then["outputs"], *case["inputs"], *case["expected"]}
    pairs = paired_names(then["inputs"], inputs, theirs, held) + paired_names(then["outputs"], outputs, theirs, held)
    return dict(pairs)


def _io_names(model: onnx.ModelProto) -> dict[str, list[str]]:
    """The inputs a caller feeds and the outputs, in order: what a case's names are paired by."""
    return {"inputs": fed_inputs(model.graph), "outputs": [o.name for o in model.graph.output]}


# --- the gate: edits that change the outputs refused ----------------------------------------
class OutputGate:
    """check(edited model) -> why the edit is refused, or None; the verdict it computed is kept
    for the revision the edit then makes (remember), so it isn't run twice."""

    def __init__(self, checks: dict, base, size: int):
        self.checks, self.base, self.size = checks, base, size
        self.verdict: dict | None = None

    def __call__(self, model: onnx.ModelProto) -> str | None:
        def run(feed: dict, dims: dict, folder: Path) -> dict:
            folder.mkdir()
            graph = onnx.ModelProto()
            graph.CopyFrom(model)  # pointed at the run folder's files in place
            path, files = write_runnable(graph, [self.base], folder)
            return run_model(path, folder, feed, dims, None, self.size, GATE_WALL_SECONDS, files)

        verdict, transient = _cases_run(self.checks, model, run)
        self.verdict = None if transient else verdict
        if verdict["status"] in ("passed", "none") or transient:  # none: no case applies any more
            return None
        return f"the edit changes what the model computes: {refusal_cause(verdict)} (its reference cases gate edits)"

    def remember(self, revision) -> None:
        """Keep the verdict for the stored revision (same graph, the base's external files)."""
        if self.verdict is not None:
            key = derived.key("reference", revision.blob, _source_key(revision, self.checks))
            store().set_derived(key, json.dumps(self.verdict).encode(), revision.blob)


def output_gate(model_id: str, base, base_model: onnx.ModelProto) -> OutputGate | None:
    """The gate for an edit of `base` when the model's cases gate its edits, the base gives their
    outputs and its cases run quickly (a big model's verdict comes after the edit is stored, and
    the page says when it fails); else None."""
    checks = _checks(model_id)
    if not checks.get("gate") or not checks.get("cases"):
        return None
    s = store()
    if (s.where, model_id) in _slow or not is_quick(base, base_model):
        return None
    if reference_verdict(model_id, base, base_model).get("status") != "passed":
        return None
    return OutputGate(checks, base, s.model_size(base))


def refusal_cause(verdict: dict) -> str:
    """The failed verdict's first failing case in words (the page's lib/reference-words.js)."""
    bad = [c for c in verdict["cases"] if c["status"] != "passed"]
    worst = verdict.get("worst") or {}
    case = next((c for c in bad if c["name"] == worst.get("case")), bad[0])
    if case["status"] == "error":
        return f"case {case['name']!r}: {case['message']}"
    misses = [(n, o) for n, o in case["outputs"].items() if not o["passed"]]
    name, o = next(((n, o) for n, o in misses if n == worst.get("output")), misses[0])
    far = o.get("max_rel_to_range")
    how = "changed shape or type" if far is None else f"is {100 * far:.2g} % of its range off"
    if o.get("rows"):
        how = f"has {rows_words(o['rows'])}"
    return f"case {case['name']!r}: {name} {how} (tolerance {100 * verdict['tolerance']:.2g} %)"


def _worst(cases: list[dict]) -> dict | None:
    """The output furthest from its expected values, relative to the expected output's range."""
    found = None
    for case in cases:
        for name, o in case["outputs"].items():
            far = o.get("max_rel_to_range")
            if far is None and not o.get("passed"):
                far = float("inf")  # a shape or dtype change, a missing output
            if far is not None and (found is None or far > found["max_rel_to_range"]):
                found = {"case": case["name"], "output": name, "max_rel_to_range": far}
    if found and found["max_rel_to_range"] == float("inf"):
        found["max_rel_to_range"] = None
    return found


# --- the cases ----------------------------------------------------------------------------
def _case_view(case: dict) -> dict:
    """A case as the API shows it: each array's blob, dtype and shape."""
    blobs = store().blobs

    def described(digest: str) -> dict:
        try:
            with blobs.open(digest) as f:  # the header only
                major, _ = np.lib.format.read_magic(f)
                read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                shape, _, dtype = read(f)
            return {"npy": digest, "dtype": str(dtype), "shape": list(shape)}
        except (OSError, ValueError):
            return {"npy": digest}

    return {
        **{k: v for k, v in case.items() if k not in ("inputs", "expected")},
        "inputs": {n: described(d) for n, d in case["inputs"].items()},
        "expected": {n: described(d) for n, d in case["expected"].items()},
    }


def _name(raw, taken: set[str]) -> str:
    if raw is None:
        n = len(taken) + 1
        while f"case {n}" in taken:
            n += 1
        return f"case {n}"
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_NAME or not valid_text(raw):
        raise StudioError("bad_request", f'"name" is a non-empty text of at most {MAX_NAME} characters')
    if raw in taken:
        raise StudioError("duplicate_name", f"the model already has a reference case named {raw!r}", 409)
    return raw


def _expected(raw, model: onnx.ModelProto) -> dict[str, str] | None:
    """{output: uploaded .npy blob} when the case gives its expected outputs."""
    if raw is None:
        return None
    outputs = [o.name for o in model.graph.output]
    if (
        not isinstance(raw, dict)
        or not raw
        or not all(isinstance(v, dict) and isinstance(v.get("npy"), str) for v in raw.values())
    ):
        raise StudioError("bad_request", '"expected" maps output names to {"npy": BLOB}')
    for name in raw:
        if name not in outputs:
            raise StudioError("unknown_output", f"the model has no output {name!r} (its outputs: {', '.join(outputs)})")
    for spec in raw.values():
        uploaded_npy(spec["npy"])  # 404 unknown_blob for one never uploaded
    return {name: spec["npy"] for name, spec in raw.items()}


def _recorded(revision, model: onnx.ModelProto, body: dict, expected: dict | None) -> tuple[dict, dict]:
    """Run the revision on the case's inputs: {input: .npy bytes} fed, {output: .npy bytes} it
    gave (or the expected ones given)."""
    inputs = check_inputs(body.get("inputs"), model)
    dims = check_dims(body.get("dims"), model)
    with tempfile.TemporaryDirectory(prefix="reference-", dir=store().blobs.scratch()) as tmp:
        answer = run_raw(revision, model, inputs, dims, None, Path(tmp) / "run")
        if answer.get("status") == "refused":
            raise StudioError("bad_inputs", answer["message"])
        if answer.get("status") != "ok":
            raise run_failed(answer, model)
        fed = {name: Path(p).read_bytes() for name, p in answer["inputs"].items()}
        if expected is not None:
            return fed, {name: store().blobs.get(d) for name, d in expected.items()}
        return fed, {name: Path(p).read_bytes() for name, p in answer["outputs"].items()}


def keep_test_data_sets(model_id: str, sets: dict[str, dict]) -> dict:
    """Each test data set uploaded with a model (test_data_sets.split_test_data_sets) kept as a
    reference case named after its folder: input_K.pb feeds the K-th graph input (or the input
    its tensor names), output_K.pb is what the K-th output must give. {"kept": [names],
    "skipped": [{"name", "reason"}]}: a set that can't be a case says why, the upload stands."""
    _, _, model = load(model_id)
    inputs, outputs = fed_inputs(model.graph), [o.name for o in model.graph.output]
    kept: list[str] = []
    skipped: list[dict] = []
    cases: list[dict] = []
    for name, files in sets.items():
        try:
            if files["problem"]:
                raise StudioError("bad_test_data", files["problem"])
            if len(cases) >= MAX_CASES:
                raise StudioError("too_many_cases", f"a model keeps at most {MAX_CASES} reference cases")
            fed = _matched(name, files["inputs"], inputs, "input")
            expected = _matched(name, files["outputs"], outputs, "output")
        except StudioError as exc:
            skipped.append({"name": name, "reason": exc.message})
            continue
        cases.append(
            {
                "name": name,
                "inputs": fed,
                "expected": expected,
                "dims": {},
                "recorded_from": None,
                "created": time.time(),
                "names": _io_names(model),
            }
        )
        kept.append(name)
    if cases:
        store().update_checks(model_id, lambda checks: {**checks, "cases": [*checks.get("cases", []), *cases]})
    return {"kept": kept, "skipped": skipped}


def _matched(set_name: str, readers: list, names: list[str], side: str) -> dict[str, str]:
    """{graph input/output name: .npy blob} of a test data set's files for one side
    (test_data_sets.by_graph_names); each tensor stored as it is read (one in memory at a time)."""
    if len(readers) != len(names):
        raise StudioError(
            "bad_test_data", f"it has {len(readers)} {side} file(s); the model has {len(names)} {side}(s)"
        )
    stored = []
    for k, reader in enumerate(readers):
        read = npy_from_tensor_file(reader.read_all(MAX_TENSOR_BYTES), f"{set_name}/{side}_{k}.pb")
        stored.append((read.name, store().blobs.put(read.npy)))
    return by_graph_names(stored, names)


def test_data_set_files(checks: dict, model: onnx.ModelProto) -> list[tuple[str, bytes]]:
    """[(test_data_set_N/input_K.pb or output_K.pb, a serialized TensorProto)] of each case that
    gives every input the model is fed and expects every output it has (in the case's order;
    the others can't be a test data set of this model), each tensor read one at a time."""
    inputs, outputs = fed_inputs(model.graph), [o.name for o in model.graph.output]
    blobs = store().blobs
    files: list[tuple[str, bytes]] = []
    fitting = [
        c for c in checks.get("cases", []) if set(c["inputs"]) == set(inputs) and set(c["expected"]) == set(outputs)
    ]
    # values of a type numpy lacks are kept widened: written back as the model declares them
    declared = {
        v.name: narrow_types.of_number(v.type.tensor_type.elem_type) for v in (*model.graph.input, *model.graph.output)
    }
    for n, case in enumerate(fitting):
        for side, names, arrays in (("input", inputs, case["inputs"]), ("output", outputs, case["expected"])):
            for k, name in enumerate(names):
                with blobs.open(arrays[name]) as f:
                    value = saved_values.load(f)
                files.append((f"test_data_set_{n}/{side}_{k}.pb", _value_proto(value, name, declared.get(name))))
    return files


def _value_proto(value, name: str, narrow) -> bytes:
    """A case's saved value as the proto a test data set holds: a TensorProto (of the narrow
    type the model declares, for values kept widened), or a SequenceProto, OptionalProto or
    MapProto."""
    if isinstance(value, saved_values.Sequence):
        items = [_as_dict(v) if isinstance(v, saved_values.Map) else v for v in value.items]
        return numpy_helper.from_list(items, name).SerializeToString()
    if isinstance(value, saved_values.Empty):
        return numpy_helper.from_optional(None, name, onnx.OptionalProto.TENSOR).SerializeToString()
    if isinstance(value, saved_values.Map):
        return numpy_helper.from_dict(_as_dict(value), name).SerializeToString()
    if narrow is not None and value.dtype.kind in "fiu":
        value = value.astype(narrow_types.ml_type(narrow))
    return numpy_helper.from_array(value, name).SerializeToString()


def _as_dict(m: saved_values.Map) -> dict:
    """A map as numpy_helper.from_dict takes one: keys as Python values, values as numpy's (so
    their tensor keeps its type)."""
    return dict(zip(m.keys.tolist(), list(m.values), strict=True))


@bp.get("/models/<model_id>/checks")
def get_checks(model_id):
    return jsonify(_cases_answer(_checks(model_id)))


@bp.post("/models/<model_id>/checks")
def add_check(model_id):
    body = json_object(
        '{"name"?, "inputs"?: {NAME: {"npy": BLOB} | {"random": {"seed": S}}}, "dims"?, "expected"?, "revision"?}'
    )
    s = store()
    if s.model(model_id).kind != "model":
        raise StudioError("not_a_model", "only a model has reference cases", 400)
    rev = body.get("revision")
    _, revision, model = load(model_id, None if rev is None else integer(rev, '"revision"'))
    name = _name(body.get("name"), {c["name"] for c in _checks(model_id).get("cases", [])})
    expected = _expected(body.get("expected"), model)
    fed, gave = _recorded(revision, model, body, expected)
    # stored (again: a blob's time renewed) just before the row names them, so the collector spares them
    case = {
        "name": name,
        "inputs": {n: s.blobs.put(data) for n, data in fed.items()},
        "expected": {n: s.blobs.put(data) for n, data in gave.items()},
        "dims": check_dims(body.get("dims")),
        "recorded_from": None if expected is not None else revision.rev,
        "created": time.time(),
        "names": _io_names(model),
    }

    def added(checks: dict) -> dict:
        cases = checks.get("cases", [])
        if any(c["name"] == name for c in cases):
            raise StudioError("duplicate_name", f"the model already has a reference case named {name!r}", 409)
        if len(cases) >= MAX_CASES:
            raise StudioError("too_many_cases", f"a model keeps at most {MAX_CASES} reference cases", 422)
        return {**checks, "cases": [*cases, case]}

    s.update_checks(model_id, added)
    return jsonify({"case": _case_view(case), "verdict": reference_verdict(model_id, revision, model)}), 201


@bp.patch("/models/<model_id>/checks")
def set_checks(model_id):
    body = json_object('{"tolerance"?: T, "gate"?: true | false}')
    change: dict = {}
    if "tolerance" in body:
        t = body["tolerance"]
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not 0 <= t <= 1:
            raise StudioError("bad_request", '"tolerance" is a number from 0 to 1 (0.001: within 0.1 %)')
        change["tolerance"] = float(t)
    if "gate" in body:
        if not isinstance(body["gate"], bool):
            raise StudioError("bad_request", '"gate" is true or false')
        change["gate"] = body["gate"]
    if not change:
        raise StudioError("bad_request", 'send {"tolerance": T} or {"gate": true | false}')
    checks = store().update_checks(model_id, lambda c: {**c, **change})
    return jsonify(_cases_answer(checks))


def _cases_answer(checks: dict) -> dict:
    return {
        "tolerance": _tolerance(checks),
        "gate": bool(checks.get("gate")),
        "cases": [_case_view(c) for c in checks.get("cases", [])],
    }


@bp.post("/models/<model_id>/checks/copy")
def copy_checks(model_id):
    """Take another model's reference cases (its previous export's, say): each whose inputs and
    outputs this model's head has by name, renamed where a name is taken; {"kept", "skipped":
    [{"name", "reason"}]} as an upload's test data sets. With no cases of its own, this model
    also takes the other's tolerance."""
    body = json_object('{"from": MODEL_ID}')
    other = body.get("from")
    if not isinstance(other, str) or not other or other == model_id:
        raise StudioError("bad_request", '"from" is the id of another model')
    source = store().model(other)
    if source.kind != "model":
        raise StudioError(
            "not_a_model", f"{source.name} is a {source.kind.replace('_', ' ')} file: it has no reference cases"
        )
    theirs = source.checks or {}
    _, _, model = load(model_id)
    inputs, outputs = set(fed_inputs(model.graph)), {o.name for o in model.graph.output}
    kept: list[str] = []
    skipped: list[dict] = []

    def copied(checks: dict) -> dict:
        cases = list(checks.get("cases", []))
        taken = {c["name"] for c in cases}
        settings = {} if cases or "tolerance" not in theirs else {"tolerance": theirs["tolerance"]}
        for case in theirs.get("cases", []):
            lacks = sorted(set(case["inputs"]) ^ inputs) + sorted(set(case["expected"]) - outputs)
            if lacks:
                skipped.append(
                    {
                        "name": case["name"],
                        "reason": f"this model's inputs and outputs differ from the case's ({', '.join(lacks)})",
                    }
                )
                continue
            if len(cases) >= MAX_CASES:
                skipped.append({"name": case["name"], "reason": f"a model keeps at most {MAX_CASES} reference cases"})
                continue
            name, n = case["name"], 1
            while name in taken:
                n += 1
                name = f"{case['name']} ({n})"
            taken.add(name)
            copy = {**case, "name": name, "recorded_from": None, "created": time.time()}
            copy["copied_from"] = case.get("copied_from") or {"model": other, "name": source.name, "case": case["name"]}
            cases.append(copy)
            kept.append(name)
        return {**checks, **settings, "cases": cases}

    s = store()
    for case in theirs.get("cases", []):  # stored again (their time renewed): the collector spares them
        for digest in [*case["inputs"].values(), *case["expected"].values()]:
            s.blobs.put(s.blobs.get(digest))
    s.update_checks(model_id, copied)
    return jsonify({"kept": kept, "skipped": skipped})


@bp.delete("/models/<model_id>/checks/<path:name>")
def delete_check(model_id, name):
    def removed(checks: dict) -> dict:
        cases = checks.get("cases", [])
        if not any(c["name"] == name for c in cases):
            raise StudioError("unknown_case", f"the model has no reference case named {name!r}", 404)
        return {**checks, "cases": [c for c in cases if c["name"] != name]}

    store().update_checks(model_id, removed)
    store().collect_soon()  # its arrays, unless another case uses them
    return "", 204


@bp.get("/models/<model_id>/checks/verdict")
def get_verdict(model_id):
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    return jsonify({"revision": revision.rev, **reference_verdict(model_id, revision, model, wait=True)})
