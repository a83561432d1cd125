"""The onnxruntime worker (smoke runs for the edit gate, runs asked for with POST .../run, sensitivity sweeps): a separate interpreter the server starts (never imported
by it). It reads one JSON job a line on stdin and answers one JSON line on stdout.

It imports only the standard library, numpy and onnxruntime: no onnx, no app, so it starts in
a few hundred ms and stays warm between jobs. Native code that crashes, loops or allocates
without end takes only this process down; the limits set before each job bound it.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import sys
import threading
import time
import zlib

# ORT's tensor(...) element types that numpy can feed directly
_NUMPY = {
    "float": "float32",
    "double": "float64",
    "float16": "float16",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "bool": "bool",
    "string": "object",
}
_TENSOR = re.compile(r"^tensor\((\w+)\)$")


class Skip(Exception):
    """The model can't be smoke-run fairly (not that it is wrong)."""


class TooBig(Skip):
    """An input's declared sizes hold more values than any run can be given (a dim of 10^9 an
    edit fixed): said of the input, and, where the model ran before the edit, the edit's fault."""


def _bounded(name: str, shape: list[int]) -> None:
    """TooBig for an input of more values than a run makes up (numpy's "array is too big" said
    of the input, not of numpy)."""
    count = math.prod(shape)
    if count > MAX_MADE_UP_VALUES:
        dims = "×".join(str(d) for d in shape)
        raise TooBig(f'input "{name}" would hold {count:.3g} values ({dims}): too many to make up for a run')


def _size(dims_hint, key: str) -> int:
    """The size a dynamic dim (by name, "x[0]" or "len(s)") is run at: `dims_hint` is one size
    for all, or {dim: size} with "*" for the rest (one dim tried alone at another size)."""
    if isinstance(dims_hint, dict):
        return int(dims_hint[key] if key in dims_hint else dims_hint["*"])
    return int(dims_hint)


def _shape(arg, dims_hint, plain: set[str]) -> list[int]:
    """An input's shape with every dynamic dim at its size (_size), and one that is an expression
    of them (`plain`: the inputs' dims that are names alone) its value there: optimum's attention
    mask [batch, past_sequence + sequence] is 2 long where the key and value caches are 1."""
    if arg.shape is None:
        raise Skip(f'input "{arg.name}" has no shape')
    names = _sibling("dim_names")
    out = []
    for axis, d in enumerate(arg.shape):
        if isinstance(d, int) and d >= 0:
            out.append(d)
        else:
            made_of = names.expression_names(d, plain) if isinstance(d, str) else None
            size = names.expression_value(d, {n: _size(dims_hint, n) for n in made_of}) if made_of else None
            key = names.axis_dim(arg.name, axis) if names.is_unnamed(d) else str(d)
            out.append(size if size is not None and size >= 0 else _size(dims_hint, key))
    return out


# what integer inputs hold in the smoke run, tried in order until one runs: zero is a valid
# index, shape entry and mask for every input, but a divisor, Slice step or Resize size of 0 (or
# two axes of 0) fails a valid model; counting from 1 gives distinct non-zero values, ones the
# smallest such sizes; an input a Loop's trip count or condition comes from holds, in every fill,
# what makes the Loop run (loop_counts.py: with 0 trips its body never runs)
FILLS = ("zeros", "counting", "ones")
MAX_MADE_UP_VALUES = 1 << 31  # an input this big is no smoke run: the memory limit would stop it anyway
RETRY_SECONDS = 1.0  # a run slower than this is not tried again with other values


def _integers(np, shape, dtype, fill: str):
    if fill == "zeros":
        return np.zeros(shape, dtype)
    if fill == "ones" or dtype == np.bool_:
        return np.ones(shape, dtype)
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n) % 100 + 1).astype(dtype).reshape(shape)  # 1, 2, 3, ...: fits int8 and uint8


def _feed(ort, np, arg, dims_hint, rng, fill: str = "zeros", hints: dict | None = None):
    vocabulary = ((hints or {}).get("vocabularies") or {}).get(arg.name)
    element = ((hints or {}).get("elements") or {}).get(arg.name)
    words = (vocabulary or {}).get("values") or []
    if arg.type.startswith("map(") and words:  # every key the lookup knows, valued 0
        return dict.fromkeys(_map_keys(arg.type, words), _map_zero(np, arg.type))
    m = _TENSOR.match(arg.type)
    if not m and element is not None:
        return _made_up_items(ort, np, arg, element, dims_hint, rng, fill)
    if not m:
        raise Skip(f'input "{arg.name}" is a {arg.type}, not a tensor')
    elem, shape = m.group(1), _shape(arg, dims_hint, (hints or {}).get("plain") or set())
    _bounded(arg.name, shape)
    if elem in _NUMPY:
        dtype = np.dtype(_NUMPY[elem])
        counted = ((hints or {}).get("loops") or {}).get(arg.name)
        if counted is not None and dtype.kind in "iubf":  # a Loop's trip count or condition: it runs
            return np.full(shape, counted, dtype)
        if dtype.kind == "f":  # values in [0, 1): no NaN, no overflow, every op's domain
            return rng.random(shape).astype(dtype)
        # a categorical input: a value its lookup knows (an unknown one may be refused: a
        # OneHotEncoder with zeros=0)
        known = [w for w in words if isinstance(w, str) == (dtype.kind == "O")]
        if known:
            return np.full(shape, known[0], dtype=object if dtype.kind == "O" else dtype)
        if dtype.kind == "O":
            return np.full(shape, "", dtype=object)
        below = (vocabulary or {}).get("below")
        if below and dtype.kind in "iu":  # indices of a table: every fill's values kept below its rows
            return (_integers(np, shape, dtype, fill).astype(np.int64) % int(below)).astype(dtype)
        return _integers(np, shape, dtype, fill)
    narrow = _narrow_types().NARROW.get(elem)
    if narrow is not None:
        return _narrow_value(ort, np.zeros(shape, np.float32), narrow)
    raise Skip(f'input "{arg.name}" has element type {elem}, which onnxruntime can\'t be fed from Python')


class _Declared:
    """A sequence's tensors as an input to feed (what _feed reads of onnxruntime's NodeArg)."""

    def __init__(self, name: str, element: dict) -> None:
        self.name, self.type, self.shape = name, element["type"], element["shape"]


def _made_up_items(ort, np, arg, element: dict, dims_hint, rng, fill: str):
    """A sequence input as tensors of the shape the model declares for its tensors, as many as
    a dynamic dim's size (its length is one: _dynamic_dims), or none when it declares no shape;
    an optional tensor as that tensor; their values as a tensor input's would be."""
    sequence = not (arg.type.startswith("optional(") and not arg.type.startswith("optional(seq("))
    if element["shape"] is None and sequence:
        return []  # no shape to make its tensors by: a sequence of none (onnxruntime takes [])
    if element["shape"] is None:
        raise Skip(f"input \"{arg.name}\" is {_a(arg.type)} whose tensor's shape isn't declared")
    declared = _Declared(arg.name, element)
    count = _size(dims_hint, f"len({arg.name})") if sequence else 1
    items = [_feed(ort, np, declared, dims_hint, rng, fill) for _ in range(count)]
    if not isinstance(items[0], np.ndarray):
        raise Skip(
            f'input "{arg.name}" is a {arg.type}: onnxruntime takes no sequence of {element["type"]} from Python'
        )
    return items if sequence else items[0]


def _narrow_types():
    """narrow_types.py (element types numpy lacks), loaded once by its path."""
    return _sibling("narrow_types")


def _narrow_value(ort, values, narrow):
    """`values` as an OrtValue of a type numpy lacks (bfloat16, float8, 4-bit...)."""
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(_narrow_types().ort_input(values, narrow), narrow.number)


def _widened(np, value):
    """An OrtValue as a numpy array: as numpy gives it, or for a type numpy has none for, its
    bytes read from onnxruntime's buffer and widened (bfloat16 and float8 to float32, 4-bit
    integers to 8 bits)."""
    narrow = _narrow_types().of_ort_type(value.data_type())
    if narrow is None:
        return value.numpy()
    import ctypes

    return _narrow_types().from_ort_buffer(
        ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes()), value.shape(), narrow
    )


def _storable(np, value):
    """`value` as an .npy holds it without pickle: onnxruntime gives string tensors as object
    arrays of str, kept as fixed-width unicode (what an uploaded string .npy is too); an
    OrtValue (of a type numpy lacks) widened."""
    arr = _widened(np, value) if not isinstance(value, np.ndarray) else value
    return arr.astype(str) if arr.dtype.kind == "O" else arr


def _new_session(ort, path: str, so):
    """A CPU session. onnxruntime's Python falls back to the CPU provider when making a session
    fails (printing "EP Error" to stdout): with the CPU provider only, that made every model it
    refuses again, twice the time and memory for one answer."""
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"], enable_fallback=0)


def _session(ort, path: str, optimize: bool):
    so = ort.SessionOptions()
    so.log_severity_level = 4  # failures come back as exceptions; the server's log stays quiet
    so.intra_op_num_threads = 1  # a smoke run is small: one core, and the server keeps the other
    so.inter_op_num_threads = 1
    so.graph_optimization_level = (
        ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    )
    so.add_session_config_entry("session.disable_prepacking", "1")  # no packed copy of big weights
    return _new_session(ort, path, so)


def _attempt(ort, np, path: str, optimize: bool, dims_hint, hints: dict, sessions: dict) -> dict:
    """One smoke run at `dims_hint` (a size for every dynamic dim, or {dim: size, "*": the rest's});
    `sessions` keeps the job's sessions (by `optimize`): a run
    at another size reuses the loaded model."""
    try:
        if optimize not in sessions:
            sessions[optimize] = _session(ort, path, optimize)
        sess = sessions[optimize]
    except Exception as exc:
        return {"status": "fails", "stage": "load", "message": str(exc)}
    symbolic = _dynamic_dims(sess.get_inputs())
    hints = {**hints, "plain": _sibling("dim_names").plain_dims(arg.shape for arg in sess.get_inputs())}
    first: dict | None = None
    for fill in FILLS:
        rng = np.random.default_rng(0)
        given = _from_source(ort, np, optimize, dims_hint, fill, hints, sessions)
        feeds = {
            arg.name: given[arg.name] if arg.name in given else _feed(ort, np, arg, dims_hint, rng, fill, hints)
            for arg in sess.get_inputs()
        }
        start = time.perf_counter()
        try:
            shapes, nonfinite = _run_once(ort, np, sess, feeds)
            return {
                "status": "ok",
                "stage": "run",
                "message": "",
                "symbolic": symbolic,
                "shapes": shapes,
                "nonfinite": nonfinite,
            }
        except Exception as exc:
            first = first or {"status": "fails", "stage": "run", "message": str(exc), "symbolic": symbolic}
        integers = any(
            isinstance(a, np.ndarray) and a.dtype.kind in "iub"
            for v in feeds.values()
            for a in (v if isinstance(v, list) else [v])
        )
        # sizes or integers made up for the run (a sample rate of 0, a sequence of 1): what
        # failed may be them, not the model
        first["guessed"] = bool(symbolic) or integers
        if not integers or time.perf_counter() - start > RETRY_SECONDS:
            break  # other integer values can't help, or a big model's run would cost too long again
    assert first is not None
    return first


def _from_source(ort, np, optimize: bool, dims_hint, fill: str, hints: dict, sessions: dict) -> dict:
    """What the model is fed from the one it was made from (hints["source"]: {"path", "values"}),
    run on the same made-up inputs: those inputs, and the values it computes that the model takes
    as inputs (a layer extracted from a decoder takes its batch and sequence sizes as tensors,
    which no made-up integer matches). {} when there is none, or it fails on those inputs."""
    source = hints.get("source")
    if not source:
        return {}
    try:
        key = ("source", optimize)
        if key not in sessions:
            sessions[key] = _session(ort, source["path"], optimize)
        sess = sessions[key]
        inputs = sess.get_inputs()
        own = {**hints, "plain": _sibling("dim_names").plain_dims(arg.shape for arg in inputs)}
        rng = np.random.default_rng(0)
        feeds = {arg.name: _feed(ort, np, arg, dims_hint, rng, fill, own) for arg in inputs}
        values = sess.run(source["values"], feeds)
    except Exception:  # the source fails on them (or can't be fed): the model gets made-up values of its own
        return {}
    return {**feeds, **dict(zip(source["values"], values, strict=True))}


def _run_once(ort, np, sess, feeds: dict) -> tuple[dict, dict]:
    """One run: the tensor outputs' shapes by name (what the model declares is checked against
    them), and [NaN or ±Inf count, size] of each float output holding any."""
    names = [o.name for o in sess.get_outputs()]
    if _through_numpy(np, feeds):
        # strings and maps can't be OrtValues: numpy outputs then, which have no bfloat16 or
        # float8 (those outputs left out of the check: the run itself is the news)
        names = [o.name for o in sess.get_outputs() if _narrow_types().of_ort_type(o.type) is None] or names
        values = sess.run(names, feeds)
        arrays = {n: v for n, v in zip(names, values, strict=True) if isinstance(v, np.ndarray)}
    else:
        # outputs left as OrtValues: bfloat16 or float8 ones have no numpy type to become
        values = sess.run_with_ort_values(None, _ort_values(ort, feeds))
        arrays = {n: _widened(np, v) for n, v in zip(names, values, strict=True) if v.is_tensor()}
    shapes = {n: list(a.shape) for n, a in arrays.items()}
    nonfinite = {}
    for n, a in arrays.items():
        if a.dtype.kind in "fc" and a.size:
            bad = int(a.size - np.count_nonzero(np.isfinite(a)))
            if bad:
                nonfinite[n] = [bad, int(a.size)]
    return shapes, nonfinite


def _through_numpy(np, feeds: dict) -> bool:
    """Whether a run's feeds hold strings or maps, which onnxruntime takes only as numpy (no
    OrtValue): its outputs then come back as numpy too."""
    return any((isinstance(v, np.ndarray) and v.dtype == object) or isinstance(v, dict | list) for v in feeds.values())


_WIDE_ONNX = {"float32": 1, "uint8": 2, "int8": 3}  # TensorProto's numbers of the types narrow ones widen to


def _widening_model(path: str, narrow: dict) -> tuple[str, dict[str, str]]:
    """The model at `path` with each output of a narrow type ({name: narrow_types.Narrow}) also
    given widened by a Cast, saved beside it: (its path, {output: its widened copy}). A run fed
    strings goes through numpy, which has no bfloat16 or float8 to give them as (QA22: a model
    with a string input and a bfloat16 output could not be run)."""
    import onnx

    model = onnx.load(path, load_external_data=False)
    g = model.graph
    taken = {v.name for v in [*g.input, *g.output, *g.value_info]} | {o for n in g.node for o in n.output}
    widened: dict[str, str] = {}
    for name, t in narrow.items():
        wide, k = f"{name}__widened", 0
        while wide in taken:
            k += 1
            wide = f"{name}__widened{k}"
        taken.add(wide)
        g.node.append(onnx.helper.make_node("Cast", [name], [wide], to=_WIDE_ONNX[t.wide]))
        g.output.append(onnx.helper.make_tensor_value_info(wide, _WIDE_ONNX[t.wide], None))
        widened[name] = wide
    out = path + ".widened.onnx"
    onnx.save(model, out)
    return out, widened


def _ort_values(ort, feeds: dict) -> dict:
    """Feeds as OrtValues (those of a type numpy lacks are OrtValues already)."""
    return {k: v if isinstance(v, ort.OrtValue) else ort.OrtValue.ortvalue_from_numpy(v) for k, v in feeds.items()}


def check(job: dict) -> dict:
    import numpy as np
    import onnxruntime as ort

    ort.set_default_logger_severity(4)  # loading warns on stderr before session options apply
    path, hint = job["path"], int(job.get("dims", 1))
    # sizes the model it was made from fixed (or ran at) for dims now dynamic: tried first (a
    # ResNet made 224x224 -> height x width runs at 224, not at 1, where it fails or crashes)
    first = {"*": hint, **job["sizes"]} if job.get("sizes") else hint
    # what the model says of some inputs: a categorical one's values, a sequence's tensors
    hints = {
        "vocabularies": job.get("vocabularies") or {},
        "elements": job.get("elements") or {},
        "loops": job.get("loops") or {},  # inputs a Loop's trip count or condition comes from: their value
        "source": job.get("source"),  # the model it was made from, to feed values it computes
    }
    sessions: dict = {}  # loaded once, run at each size and for each case
    cases = job.get("cases") or [{}]
    # the wall clock or CPU time the job may take, whichever binds first (a job past it is killed)
    budget = min(float(job.get("wall") or math.inf), float(job.get("cpu") or math.inf))
    start = time.perf_counter()
    runs: list = []
    for case in cases:
        spent = time.perf_counter() - start
        if runs and spent * (len(runs) + 1) / len(runs) > CASES_SHARE * budget:
            break  # one more case, as long as those before it, could hit the limit: the answer so far stands
        # the branch flags held at the case's values through every fill (loop_counts' inputs are too)
        fed = {**(job.get("loops") or {}), **case.get("values", {})}
        out = _checked(ort, np, path, hint, first, {**hints, "loops": fed}, sessions)
        runs.append((case, out))
        if out["status"] != "ok":
            break
    out = _of_cases(runs) if job.get("cases") else runs[0][1]
    out["onnxruntime"] = ort.__version__
    return out


# the share of a job's limit its cases may be foreseen to take: the rest is margin (a case's run
# time varies; a second one foreseen past the limit is not started)
CASES_SHARE = 0.6


def _checked(ort, np, path: str, hint: int, first, hints: dict, sessions: dict) -> dict:
    """One case's smoke run: at the first sizes, then the others tried (one dim more, bigger
    dims, the dynamic dims at OTHER_SIZE), a failure again unoptimised."""
    try:
        start = time.perf_counter()
        out = _attempt(ort, np, path, True, first, hints, sessions)
        if out["status"] == "ok" and isinstance(first, dict):
            out["dims"] = first
        quick = time.perf_counter() - start <= RETRY_SECONDS
        if out.get("symbolic") and out["status"] == "fails" and quick:
            out = _one_dim_more(ort, np, path, hint, out, hints, sessions)
        if out.get("symbolic") and out["status"] == "fails":
            out = _bigger_dims(ort, np, path, hint, out, hints, sessions)
        elif out.get("symbolic") and hint == 1 and quick and isinstance(out.get("dims"), dict):
            doubled = {dim: OTHER_SIZE * size for dim, size in out["dims"].items()}
            out["other_size"] = _other_size(ort, np, path, hints, out["symbolic"], sessions, doubled)
        elif out.get("symbolic") and hint == 1 and quick:
            out["other_size"] = _other_size(ort, np, path, hints, out["symbolic"], sessions)
        if out["status"] == "fails":
            out = _plain(ort, np, path, first, hints, out, sessions)
    except Skip as exc:
        out = {"status": "skipped", "message": str(exc), **({"too_big": True} if isinstance(exc, TooBig) else {})}
    except MemoryError:
        out = {"status": "limit", "message": "onnxruntime ran out of memory"}
    lacking = _missing_locale(out.get("message", "")) if out["status"] == "fails" else None
    if lacking:  # the server's fault, not the model's
        out = {"status": "skipped", "message": lacking}
    return out


def _of_cases(runs: list) -> dict:
    """One answer for the runs of a job's cases (branch_flags.branch_cases; [(case, answer)] in
    the order they ran): the first failure's, else the first case's with the first failure at
    OTHER_SIZE; "flags" {input: [the values that ran to a verdict]}, and "case" (in
    "other_size" too) the case a failure is from. A case that could not be judged after one
    that ran (a limit hit) is left out of "flags": the page says which values ran."""
    judged = [(case, out) for case, out in runs if out["status"] in ("ok", "fails")]
    if not judged:  # the first case could not be judged (a limit, inputs it can't make): nor the model
        return runs[0][1]
    flags: dict = {}
    for case, _ in judged:
        for name, value in case["values"].items():
            flags.setdefault(name, []).append(value)
    failed = next(((case, out) for case, out in judged if out["status"] == "fails"), None)
    if failed is not None:
        return {**failed[1], "case": failed[0], "flags": flags}
    case, out = judged[0]
    out = {**out, "flags": flags}
    other = next(
        ((c, o["other_size"]) for c, o in judged if (o.get("other_size") or {}).get("status") == "fails"), None
    )
    if other is not None:
        out["other_size"] = {**other[1], "case": other[0]}
    return out


def _plain(ort, np, path: str, size: int | dict, hints: dict, failed: dict, sessions: dict) -> dict:
    """The failure again with graph optimisations off, if it is still there: optimisation
    renames and fuses nodes ("r_nchwc", FusedConv), unoptimised the message names the model's
    own node."""
    plain = _attempt(ort, np, path, False, size, hints, sessions)
    return plain if plain["status"] == "fails" else failed


# the size the dynamic dims are tried at again once a model runs with them at 1: a model that
# declares a dim dynamic yet runs only at 1 (a Reshape or an Expand that hard-codes the batch of
# its export, or an edit that does) works where it was exported and fails where it ships
OTHER_SIZE = 2


def _dynamic_dims(args) -> list[str]:
    """The inputs' dynamic dims, by name ("batch") or, unnamed, by input and axis ("x[0]"), a dim
    that is an expression of the others as them; and a sequence input's length ("len(s)"), which
    the model leaves open as it does a dim."""
    names = _sibling("dim_names")
    tensors = [arg for arg in args if arg.type.startswith("tensor(")]
    plain = names.plain_dims(arg.shape for arg in tensors)
    dims: set[str] = set()
    for arg in tensors:
        for axis, d in enumerate(arg.shape or []):
            if names.is_unnamed(d):
                dims.add(names.axis_dim(arg.name, axis))
            elif isinstance(d, str):
                dims.update(names.expression_names(d, plain) or [d])
    return sorted(dims | {f"len({arg.name})" for arg in args if "seq(" in arg.type})


def _other_size(ort, np, path: str, hints: dict, dims: list[str], sessions: dict, sizes: dict | None = None) -> dict:
    """{"size", "dims", "status", and for a failure "message" and "stage"} of a run with every
    dynamic dim (`dims`) at OTHER_SIZE; `sizes` ({dim: size, "*": the rest's}): the sizes that
    ran at first (_one_dim_more) doubled, given back as "sizes"."""
    hint = sizes or OTHER_SIZE
    out = _attempt(ort, np, path, True, hint, hints, sessions)
    if out["status"] == "fails":
        out = _plain(ort, np, path, hint, hints, out, sessions)
    answer = {"size": OTHER_SIZE, "dims": dims, "status": out["status"], "shapes": out.get("shapes", {})}
    if sizes:
        answer["sizes"] = sizes
    if out["status"] == "fails":
        answer.update(message=out["message"], stage=out.get("stage"))
        if len(dims) > 1 and not sizes:  # one dim alone at 2 would break the sizes' relation
            answer["alone"] = _each_alone(ort, np, path, hints, dims, sessions)
    return answer


def _one_dim_more(ort, np, path: str, hint: int, failed: dict, hints: dict, sessions: dict) -> dict:
    """The first run with one dynamic dim one bigger than the others that the model takes, with
    "dims" {that dim: size, "*": the rest's}; else the failure. A decoder with a cache needs its
    attention mask as long as the past and the new tokens together (torch names the three dims
    apart: s53 = s15 + s70), which no size shared by every dim gives. Stops once a try takes
    longer than RETRY_SECONDS."""
    for dim in failed["symbolic"][:MOST_DIMS_ALONE]:
        start = time.perf_counter()
        sizes = {"*": hint, dim: hint + 1}
        out = _attempt(ort, np, path, True, sizes, hints, sessions)
        if out["status"] == "ok":
            return {**out, "dims": sizes}
        if time.perf_counter() - start > RETRY_SECONDS:
            break
    return failed


# dims tried one at a time once all at OTHER_SIZE fail: which of them the model holds fixed
# (a position table sized for the export's sequence fails at any other sequence, not batch)
MOST_DIMS_ALONE = 8


def _each_alone(ort, np, path: str, hints: dict, dims: list[str], sessions: dict) -> dict[str, str]:
    """{dim: "ok" | "fails"} of a run with that dim alone at OTHER_SIZE, the others at 1; the
    dims past MOST_DIMS_ALONE, or once a run takes longer than RETRY_SECONDS, left out."""
    alone: dict[str, str] = {}
    for dim in dims[:MOST_DIMS_ALONE]:
        start = time.perf_counter()
        alone[dim] = _attempt(ort, np, path, True, {"*": 1, dim: OTHER_SIZE}, hints, sessions)["status"]
        if time.perf_counter() - start > RETRY_SECONDS:
            break
    return alone


_LOCALE = re.compile(r"Failed to construct locale with name:([^:]*):")


def _missing_locale(message: str) -> str | None:
    """What to say when onnxruntime failed for want of a locale on this machine: its
    StringNormalizer builds the one the model names (en_US.UTF-8 unless it says another)."""
    m = _LOCALE.search(message)
    if not m:
        return None
    name = m.group(1) or "the default"
    language, _, charset = name.partition(".")
    return (
        f"this server has no locale {name}, which onnxruntime's StringNormalizer needs for this model"
        f" (on Debian: localedef -i {language} -f {charset or 'UTF-8'} {name})"
    )


# sizes the inputs' dynamic dims are tried at when the smoke run fails at the first: a dim of 1
# can change what runs (a Squeeze without axes), and a model may need more (silero VAD pads its
# audio by 64 samples, reflected: a sequence of 1 fails it; fixed to 16 kHz it takes chunks of
# 512) — no refusal for too small a size alone. At each size, the batch (the inputs' first dims)
# is also tried at 1 while the rest grow: an export that fixed its batch at 1 inside (torch's
# dynamo on a speech encoder) fails at any other batch, and its samples need 400 and more;
# tried first, as cheaper and how a model runs where it ships
BIGGER_DIMS = (2, 16, 128, 512, 1024)


def _bigger_dims(ort, np, path: str, hint: int, failed: dict, hints: dict, sessions: dict) -> dict:
    """The first of BIGGER_DIMS the model runs at ("dims": that size, or {batch dims: 1, "*":
    that size}), or the failure at `hint` (also once a try takes longer than RETRY_SECONDS: a
    big model's runs cost too much to go on)."""
    leading = _leading_dims(sessions.get(True))
    rest = [d for d in failed.get("symbolic") or [] if d not in leading]
    for size in BIGGER_DIMS:
        if size <= hint:
            continue
        # the batch at 1 first: cheaper, and how a model is run where it ships
        tries: list = [{"*": size, **dict.fromkeys(leading, 1)}, size] if leading and rest else [size]
        for at in tries:
            start = time.perf_counter()
            try:
                if _attempt(ort, np, path, True, at, hints, sessions)["status"] == "ok":
                    return {
                        "status": "ok",
                        "stage": "run",
                        "message": "",
                        "dims": at,
                        "symbolic": failed.get("symbolic"),
                    }
            except MemoryError:  # too big to make up: the failure at the first size is the news
                return failed
            if time.perf_counter() - start > RETRY_SECONDS:
                return failed
    return failed


def _leading_dims(sess) -> list[str]:
    """The dynamic dims that are an input's first axis (its batch), by name ("x[0]" unnamed)."""
    if sess is None:
        return []
    names = _sibling("dim_names")
    found: dict[str, None] = {}
    for arg in sess.get_inputs():
        shape = arg.shape or []
        if arg.type.startswith("tensor(") and len(shape) > 1:
            d = shape[0]
            if names.is_unnamed(d):
                found[names.axis_dim(arg.name, 0)] = None
            elif isinstance(d, str):
                found[d] = None
    return list(found)


def _a(text: str) -> str:
    return f"{'an' if text[:1] in 'aeiou' else 'a'} {text}"


def _element_name(np, array) -> str:
    """onnxruntime's name of a saved array's element type (strings are saved as unicode)."""
    if array.dtype.kind in "USO":
        return "string"
    return next((k for k, v in _NUMPY.items() if v != "object" and np.dtype(v) == array.dtype), str(array.dtype))


def _held_type(np, value) -> str | None:
    """onnxruntime's name of the type of a saved sequence or map ("seq(tensor(float))",
    "map(int64,tensor(float))"); None for an empty one, which any sequence or optional takes."""
    sv = _sibling("saved_values")
    if isinstance(value, sv.Map):
        return f"map({_element_name(np, value.keys)},tensor({_element_name(np, value.values)}))"
    if isinstance(value, np.ndarray):
        return f"tensor({_element_name(np, value)})"
    if isinstance(value, sv.Empty) or not value.items:
        return None
    items = {_held_type(np, v) for v in value.items}
    return f"seq({items.pop()})" if len(items) == 1 else "sequence of mixed types"


def _holds_fit(held: str | None, wanted: str, value) -> bool:
    """Whether a saved value of type `held` feeds an input of type `wanted`: a one-item sequence
    is also how a test data set writes an optional of that item."""
    if wanted.startswith("tensor("):
        return False
    if held is None or held == wanted:
        return True
    inner = wanted[len("optional(") : -1] if wanted.startswith("optional(") else None
    return inner is not None and (held == inner or (held == f"seq({inner})" and len(value.items) == 1))


def _run_feed(ort, np, arg, spec: dict, dims: dict):
    """An input's value: its .npy file, or random values (seeded) of its type and shape; for a
    type numpy lacks (bfloat16, float8, 4-bit...), an OrtValue of the values narrowed to it."""
    narrow = _narrow_types().of_ort_type(arg.type)
    if "npy" in spec:
        given = _sibling("saved_values").load(spec["npy"])
        if not isinstance(given, np.ndarray):  # a sequence, optional or map (a test data set's .pb)
            held = _held_type(np, given)
            if not _holds_fit(held, arg.type, given):
                what = held or "an empty optional"
                raise Skip(f'input "{arg.name}" is {_a(arg.type)}: its file holds {_a(what)}')
            return _sibling("saved_values").as_fed(given, arg.type)
        if not arg.type.startswith("tensor("):
            raise Skip(f'input "{arg.name}" is {_a(arg.type)}: give it a test data set\'s .pb of that type')
        if narrow is None:
            return _as_declared(np, arg, given)
        if given.dtype.kind not in "fiub":
            raise Skip(f'input "{arg.name}" is a {arg.type}: its .npy holds {given.dtype}, not numbers')
        return _narrow_value(ort, given, narrow)
    if "values" in spec:
        return _typed_input(ort, np, arg, spec["values"], dims)
    # a stream of its own for each input: the same seed on two inputs (the page's default 0)
    # gave a decoder's past keys and values the same numbers, every layer alike
    rng = np.random.default_rng([int(spec.get("seed", 0)), zlib.crc32(arg.name.encode())])
    words = (spec.get("vocabulary") or {}).get("values") or []
    if _TENSOR.match(arg.type):
        values = _random_tensor(ort, np, arg.name, arg.type, arg.shape, dims, rng, spec.get("vocabulary"))
        if "loop" in spec and isinstance(values, np.ndarray) and values.dtype.kind in "iubf":
            return np.full(values.shape, spec["loop"], values.dtype)  # a Loop's trip count or condition
        return _in_role(np, values, spec.get("role"))
    if arg.type.startswith("map(") and words:  # some of the keys its lookup knows, normal values
        keys = _map_keys(arg.type, words)
        picked = [k for k in keys if rng.random() < 0.5] or keys[:1]
        return {k: _map_value(np, arg.type, rng) for k in picked}
    element = spec.get("element")  # a sequence's or optional's tensors (run.py: their declared type)
    if element is None:
        raise Skip(
            f'input "{arg.name}" is {_a(arg.type)}: random values are made for tensors and sequences of them;'
            " give it a test data set's .pb"
        )
    what = f'input "{arg.name}" ({arg.type})'
    if element["shape"] is None:
        raise Skip(f"{what}: its tensors' shape isn't declared; give it a test data set's .pb")
    if _narrow_types().of_ort_type(element["type"]) is not None:
        raise Skip(f"{what}: onnxruntime takes no sequence of {element['type']} from Python; give it a .pb")

    def item():
        return _random_tensor(ort, np, arg.name, element["type"], element["shape"], dims, rng)

    if arg.type.startswith("optional(") and not arg.type.startswith("optional(seq("):
        return item()
    return [item() for _ in range(element["count"])]


def _as_declared(np, arg, given):
    """A .npy's values in the element type the input declares, where only the width differs: a
    float64 array (numpy's default) for a float32 input, one revision's float32 inputs for
    another's float16 (a float16 conversion compared with its original), int32 token ids for an
    int64 input. Integers that don't fit, or floats for integers, are fed as they are: refused."""
    m = _TENSOR.match(arg.type)
    wanted = np.dtype(_NUMPY[m.group(1)]) if m and m.group(1) in _NUMPY else None
    if wanted is None or given.dtype == wanted:
        return given
    floats = given.dtype.kind == wanted.kind == "f"
    integers = given.dtype.kind in "iu" and wanted.kind in "iu"
    if not (floats or integers):
        return given
    if integers and given.size:
        info = np.iinfo(wanted)
        if given.min() < info.min or given.max() > info.max:
            return given
    return given.astype(wanted)


def _in_role(np, values, role: str | None):
    """Random values of an input its name says the role of (input_roles.py): a mask's ones,
    position ids 0, 1, 2… along the last axis (_place_positions moves them past a cache)."""
    if not isinstance(values, np.ndarray) or values.dtype.kind not in "iub" or role not in ("mask", "positions"):
        return values
    if role == "mask":
        return np.ones_like(values)
    if values.ndim == 0:
        return values
    return np.broadcast_to(np.arange(values.shape[-1], dtype=values.dtype), values.shape).copy()


def _place_positions(np, feeds: dict, roles: dict, given: set, cached: int) -> None:
    """Position ids made in order start after the cached past: where a mask (made or `given`)
    covers more positions (past and new) than the ids do (the new ones), the ids are the last
    of them; without a mask, they follow the `cached` positions the past keys and values hold
    (_cached_length: an opset-23 Attention with is_causal takes no mask)."""
    covered = [
        m.shape[-1] for n, r in roles.items() if r == "mask" and isinstance(m := feeds.get(n), np.ndarray) and m.ndim
    ]
    for name, role in roles.items():
        ids = feeds.get(name)
        if role != "positions" or name in given or not isinstance(ids, np.ndarray) or ids.ndim == 0:
            continue
        past = max(covered) - ids.shape[-1] if covered else cached
        if past > 0:
            feeds[name] = ids + ids.dtype.type(past)


# a decoder's key/value cache by its name (past_key_values.0.key, past_key, past_0); an encoder's
# (a cross-attention's past_key_values.0.encoder.key) holds the encoder's sequence, not the past
_PAST = re.compile(r"(?<![a-z])past(?![a-z])", re.IGNORECASE)
_NOT_THE_PAST = re.compile(r"encoder|cross", re.IGNORECASE)


def _cached_length(np, args: list, feeds: dict, roles: dict) -> int:
    """How many earlier positions the past key/value inputs hold: each one's size fed along its
    past's dim — the one named dim the position ids don't declare (past_seq of [batch, 4,
    past_seq, 16] beside ids [batch, seq]), where more are left the one named "past…" — the most
    of them; 0 without such an input."""
    theirs = {d for a in args if roles.get(a.name) == "positions" for d in a.shape or () if isinstance(d, str)}
    lengths = [0]
    for arg in args:
        shape = _value_shape(np, feeds.get(arg.name))
        if not _PAST.search(arg.name) or _NOT_THE_PAST.search(arg.name) or shape is None or arg.shape is None:
            continue
        if len(arg.shape) != len(shape) or len(shape) < 3:
            continue
        axes = [i for i, d in enumerate(arg.shape) if isinstance(d, str) and d not in theirs]
        if len(axes) > 1:
            axes = [i for i in axes if "past" in arg.shape[i].lower()]
        if len(axes) == 1:
            lengths.append(int(shape[axes[0]]))
    return max(lengths)


def _random_tensor(ort, np, name: str, type_name: str, declared, dims: dict, rng, vocabulary: dict | None = None):
    """Random values of a tensor type ("tensor(float)") and declared shape (symbolic dims from
    `dims`): normal floats, uniform uint8 (pixels), zero other integers, random booleans; a type numpy lacks, narrowed; a
    categorical input's drawn from its vocabulary (vocabularies.py: text as words of it), token
    ids uniformly below the rows of the table they index."""
    m = _TENSOR.match(type_name)
    if not m:
        raise Skip(
            f'input "{name}" is {_a(type_name)}: random values are made for tensors; give it a test data set\'s .pb'
        )
    narrow = _narrow_types().of_ort_type(type_name)
    words = [w for w in (vocabulary or {}).get("values") or [] if isinstance(w, str) == (m.group(1) == "string")]
    if m.group(1) == "string" and not words:
        raise Skip(f'input "{name}" holds {type_name}: type its values in, or give them as an .npy of strings')
    if m.group(1) not in _NUMPY and narrow is None:
        raise Skip(f'input "{name}" has element type {m.group(1)}, which onnxruntime can\'t be fed from Python')
    shape = []
    names = _sibling("dim_names")
    for axis, d in enumerate(declared or []):
        size = names.dim_size(name, axis, d, dims)
        if size is not None:
            shape.append(size)
        elif names.is_unnamed(d):
            key = names.axis_dim(name, axis)
            raise Skip(
                f'input "{name}" has an unnamed dim of unknown size at axis {axis}: give its size in "dims" as "{key}"'
            )
        elif names.missing_names(d, dims):  # past_sequence + sequence: the names to give
            give = " and ".join(names.missing_names(d, dims))
            raise Skip(f'input "{name}" has dim "{d}": give {give} in "dims"')
        else:
            raise Skip(f'input "{name}" has dim "{d}" of unknown size: give its size in "dims"')
    _bounded(name, shape)
    if narrow is not None:  # floats as float32 narrowed (values it holds), integers 0 as below
        values = rng.standard_normal(shape, dtype=np.float32) if narrow.wide == "float32" else np.zeros(shape, np.int8)
        return _narrow_value(ort, values, narrow)
    dtype = np.dtype(_NUMPY[m.group(1)])
    if words and (dtype.kind in "iuO"):
        drawn = rng.choice(np.array(words, dtype=object), size=shape)
        if dtype.kind == "O" and (vocabulary or {}).get("text"):  # a few words a value, as text
            drawn = np.array([" ".join(rng.choice(words, size=int(rng.integers(1, 9)))) for _ in drawn.flat], object)
            drawn = drawn.reshape(shape)
        return drawn if dtype.kind == "O" else drawn.astype(dtype)
    if dtype.kind == "f":  # drawn as float32 (float64 for a double): a float64 draw cast held twice the input
        return rng.standard_normal(shape, dtype=np.float64 if dtype == np.float64 else np.float32).astype(
            dtype, copy=False
        )
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)  # a 0-d comparison gives a scalar, which onnxruntime refuses
    below = (vocabulary or {}).get("below")
    if below and dtype.kind in "iu":  # token ids: rows of the embedding table they index
        return rng.integers(0, min(int(below), int(np.iinfo(dtype).max)), size=shape).astype(dtype)
    if dtype == np.uint8:  # an image's pixels: all zeros (a black image) hid any edit of its scaling
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    return np.zeros(shape, dtype)  # integers: 0 is a valid index, shape entry and token id


_MAP_TYPE = re.compile(r"^map\((\w+),\s*tensor\((\w+)\)\)$")


def _map_keys(type_name: str, words: list) -> list:
    """The vocabulary's words a map's keys can be ("map(string,tensor(float))": its strings)."""
    m = _MAP_TYPE.match(type_name)
    strings = m is not None and m.group(1) == "string"
    return [w for w in words if isinstance(w, str) == strings]


def _map_zero(np, type_name: str):
    m = _MAP_TYPE.match(type_name)
    return "" if m and m.group(2) == "string" else 0.0 if m and m.group(2) in ("float", "double") else 0


def _map_value(np, type_name: str, rng):
    zero = _map_zero(np, type_name)
    return float(rng.standard_normal()) if isinstance(zero, float) else zero


def _typed_input(ort, np, arg, values, dims: dict):
    """An input's values as a request typed them (JSON) in the input's type: a tensor's nested
    lists as an array of its element type and declared rank, a map's object, a sequence's list.
    No values ([]) for a tensor whose declared shape is empty at the sizes in `dims` (an empty
    KV cache: past_sequence 0) is that empty tensor: nested lists can't say [1, 4, 0, 16]."""
    where = f'input "{arg.name}" ({arg.type})'
    if values is None and arg.type.startswith("optional("):
        return None  # null: the optional empty (run.py lets null through for an optional input only)
    value = _typed(ort, np, arg.type, values, where)
    empty_at = None  # the declared shape at the sizes given, when [] can't be it
    if isinstance(value, np.ndarray) and value.size == 0 and arg.shape is not None and value.ndim != len(arg.shape):
        names = _sibling("dim_names")
        sized = [names.dim_size(arg.name, axis, d, dims) for axis, d in enumerate(arg.shape)]
        if sized.count(None) == 1 and 0 not in sized:  # the one size not given is the empty one
            sized[sized.index(None)] = 0
        if None not in sized and 0 in sized:
            value = value.reshape(sized)
        elif None not in sized:
            empty_at = _shape_words(sized)
    if isinstance(value, np.ndarray) and arg.shape is not None:
        declared = list(arg.shape)
        fits = len(declared) == value.ndim and all(
            not isinstance(d, int) or d < 0 or d == n for d, n in zip(declared, value.shape, strict=True)
        )
        if not fits:
            want = "×".join(str(d) if isinstance(d, int) and d >= 0 else str(d or "?") for d in declared) or "a scalar"
            if empty_at:  # [] with a cache's past above 0
                raise Skip(
                    f"{where}: its shape is {want}, {empty_at} at the sizes given: [] is no tensor of that shape"
                )
            got = f"of shape {'×'.join(map(str, value.shape))}" if value.ndim else "a scalar"
            raise Skip(
                f"{where}: its shape is {want}, the values typed in are {got} (nest lists as numpy.array reads them)"
            )
    return value


def _typed(ort, np, type_name: str, values, where: str):
    if type_name.startswith("optional(") and type_name.endswith(")"):
        return _typed(ort, np, type_name[len("optional(") : -1], values, where)
    if type_name.startswith("seq(") and type_name.endswith(")"):
        if not isinstance(values, list):
            raise Skip(f"{where}: a sequence is typed as a list")
        return [_typed(ort, np, type_name[len("seq(") : -1], v, where) for v in values]
    m = _MAP_TYPE.match(type_name)
    if m:
        if not isinstance(values, dict):
            raise Skip(f'{where}: a map is typed as an object, {{"key": value, ...}}')
        key = str if m.group(1) == "string" else int
        try:
            return {key(k): _typed_scalar(np, m.group(2), v) for k, v in values.items()}
        except (TypeError, ValueError):
            raise Skip(f"{where}: its keys are {m.group(1)}, its values {m.group(2)}") from None
    m = _TENSOR.match(type_name)
    if not m:
        raise Skip(f"{where}: values can't be typed in for this type; give a test data set's .pb")
    return _typed_array(ort, np, m.group(1), values, where)


def _typed_scalar(np, elem: str, v):
    if elem == "string":
        if not isinstance(v, str):
            raise TypeError(v)
        return v
    if isinstance(v, bool) or not isinstance(v, int | float) or (elem not in ("float", "double") and v != int(v)):
        raise TypeError(v)
    return float(v) if elem in ("float", "double") else int(v)


def _typed_array(ort, np, elem: str, values, where: str):
    if elem != "string":
        values = _sibling("typed_values").with_special_floats(values)
    try:
        arr = np.array(values)
    except ValueError:
        raise Skip(f"{where}: the values typed in are not a rectangular array (rows of different lengths)") from None
    narrow = _narrow_types().of_ort_type(f"tensor({elem})")
    if elem == "string":
        target = np.dtype(object)
    elif elem == "bool":
        target = np.dtype(bool)
    elif narrow is not None:
        target = _narrow_types().ml_type(narrow)
    elif elem in _NUMPY:
        target = np.dtype(_NUMPY[elem])
    else:
        raise Skip(f"{where}: element type {elem} can't be fed from Python")
    problem = _sibling("typed_values").misfit(arr, target, elem)
    if problem:
        raise Skip(f"{where}: {problem}")
    if elem == "string":
        return arr.astype(object)
    dtype = np.dtype(narrow.wide) if narrow is not None else target
    typed = arr.astype(dtype)
    return typed if narrow is None else _narrow_value(ort, typed, narrow)


def _job_feeds(ort, np, sess, job: dict, skip: frozenset = frozenset()) -> dict:
    """The job's value of each session input (not in `skip`): its .npy, or random of seed 0;
    Skip or ValueError when one can't be made. The values given come first: their sizes are
    checked against the dims' and give the made ones theirs (_given_dims)."""
    specs = {arg.name: job["inputs"].get(arg.name, {"seed": 0}) for arg in sess.get_inputs() if arg.name not in skip}
    args = [arg for arg in sess.get_inputs() if arg.name in specs]
    given = [arg for arg in args if "npy" in specs[arg.name] or "values" in specs[arg.name]]
    dims = dict(job.get("dims", {}))
    made = {arg.name: _run_feed(ort, np, arg, specs[arg.name], dims) for arg in given}
    dims = _given_dims(np, given, made, dims)
    for arg in args:
        if arg.name not in made:
            made[arg.name] = _run_feed(ort, np, arg, specs[arg.name], dims)
    feeds = {arg.name: made[arg.name] for arg in args}  # in the session's order
    roles = {name: spec["role"] for name, spec in specs.items() if spec.get("role")}
    _place_positions(np, feeds, roles, {arg.name for arg in given}, _cached_length(np, args, feeds, roles))
    return feeds


def _value_shape(np, value) -> tuple | None:
    """A tensor value's shape (an array's, or an OrtValue's of a type numpy lacks); None else."""
    if isinstance(value, np.ndarray):
        return value.shape
    shape = getattr(value, "shape", None)
    return tuple(shape()) if callable(shape) else None


def _shape_words(shape) -> str:
    return "×".join(map(str, shape)) if len(shape) else "a scalar"


def _given_dims(np, args: list, values: dict, dims: dict) -> dict:
    """`dims` with the sizes the values given say (input_ids 1×2: sequence 2; a mask of 5 at
    sequence 3: past_sequence 2): the inputs made then fit them. A size that disagrees with
    "dims" or with another input's is refused in one line, not left to a kernel's broadcast
    error deep in the graph (the KV-cache QA: "Attempting to broadcast an axis by a dimension
    other than 1. 2 by 3" at a rotary Mul)."""
    names = _sibling("dim_names")
    sized = dict(dims)
    said_by: dict[str, str] = {}
    shaped = []
    for arg in args:
        shape = _value_shape(np, values[arg.name])
        if shape is not None and arg.shape is not None and len(arg.shape) == len(shape):
            shaped.append((arg, shape))
    for arg, shape in shaped:  # names first, then the expressions of them
        for axis, (d, n) in enumerate(zip(arg.shape, shape, strict=True)):
            if isinstance(d, int) and not isinstance(d, bool) and d >= 0 and d != n:  # an .npy of another size
                raise Skip(
                    f'input "{arg.name}" is {_shape_words(shape)}: its dim {axis} is {n}, but the model fixes it at {d}'
                )
            key = names.axis_dim(arg.name, axis) if names.is_unnamed(d) else d
            if not isinstance(key, str) or (key == d and names.missing_names(d, {})):
                continue
            if key in sized and sized[key] != n:
                was = (
                    f'input "{said_by[key]}" makes it {sized[key]}' if key in said_by else f'"dims" gives {sized[key]}'
                )
                raise Skip(f'input "{arg.name}" is {_shape_words(shape)}: its dim {key} is {n}, but {was}')
            if not names.is_unnamed(d):
                sized[key], said_by[key] = n, arg.name
    for arg, shape in shaped:
        for d, n in zip(arg.shape, shape, strict=True):
            if not isinstance(d, str) or not names.missing_names(d, {}):
                continue
            found = names.solved(d, sized, n)
            if found:
                sized[found[0]], said_by[found[0]] = found[1], arg.name
            size = names.expression_value(d, sized)
            if size is not None and size != n:
                at = ", ".join(f"{k} = {sized[k]}" for k in names.missing_names(d, {}))
                raise Skip(f'input "{arg.name}" is {_shape_words(shape)}: its dim "{d}" is {n}, not {size} ({at})')
    return sized


def _external_files(np, so, files: dict) -> list:
    """Hand onnxruntime the model's external data files by the location the model names them
    with, mapped read-only from where they are (the store's blobs): nothing copied to disk, and
    no link for onnxruntime to refuse. The maps, to keep alive until the session is made."""
    names, maps = [], []
    for location, path in files.items():
        names.append(location)
        maps.append(np.memmap(path, np.uint8, "r") if os.path.getsize(path) else np.zeros(0, np.uint8))
    if names:
        so.add_external_initializers_from_files_in_memory(names, maps, [m.size for m in maps])
    return maps


def _job_session(
    ort,
    np,
    job: dict,
    profile: str | None = None,
    optimize: bool = True,
    save: str | None = None,
    config: dict | None = None,
):
    """A session for a run job: its threads, its external data mapped from the store's blobs.
    With `profile` (a file prefix): onnxruntime's profiler on; `optimize` False: graph
    optimisations off (every node runs as the model has it); `save`: the graph it optimised
    written there (its weights beside it, in one file: a model past 2 GiB fits); `config`: session
    config entries."""
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.intra_op_num_threads = int(job.get("threads", 1))
    for key, value in (config or {}).items():
        so.add_session_config_entry(key, value)
    if profile:
        so.enable_profiling = True
        so.profile_file_prefix = profile
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if save:
        so.optimized_model_filepath = save
        so.add_session_config_entry("session.optimized_model_external_initializers_file_name", "optimized.bin")
        so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    mapped = _external_files(np, so, job.get("files") or {})
    sess = _new_session(ort, job["path"], so)
    del mapped  # session creation copied what it needs
    return sess


def run(job: dict) -> dict:
    """Run the model on the job's inputs; save what was fed and the outputs asked for as .npy
    files in job["out"] (the server reads them): {"status", "inputs", "outputs": {name: path}, "ms"}."""
    import numpy as np
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    out_dir = job["out"]
    try:
        sess = _job_session(ort, np, job)
    except Exception as exc:
        return {"status": "fails", "stage": "load", "message": _missing_locale(str(exc)) or str(exc)}
    try:
        feeds = _job_feeds(ort, np, sess, job)
    except (TooBig, MemoryError):  # random inputs of the sizes asked (a batch of 10^9): the request's, not the model's
        return {"status": "refused", "stage": "inputs", "message": _too_big_inputs(job)}
    except Skip as exc:
        return {"status": "refused", "stage": "inputs", "message": str(exc)}
    except ValueError as exc:
        return {"status": "refused", "stage": "inputs", "message": f"an input's .npy can't be read: {exc}"}
    names = job.get("outputs") or [o.name for o in sess.get_outputs()]
    types = _narrow_types()
    narrow = {o.name: types.of_ort_type(o.type) for o in sess.get_outputs() if o.name in names}
    narrow = {name: t.onnx_name for name, t in narrow.items() if t is not None}
    start = time.perf_counter()
    try:
        if narrow and _through_numpy(np, feeds):  # strings in, bfloat16 out: widened in the graph
            kinds = {o.name: types.of_ort_type(o.type) for o in sess.get_outputs() if o.name in narrow}
            wide_path, widened = _widening_model(job["path"], kinds)
            wide_sess = _job_session(ort, np, {**job, "path": wide_path})
            values = wide_sess.run([widened.get(n, n) for n in names], feeds)
        elif narrow:  # no numpy type for these (float8e4m3fn would come back as uint8): raw, then widened
            ort_feeds = _ort_values(ort, feeds)
            values = [_widened(np, v) for v in sess.run_with_ort_values(names, ort_feeds)]
        else:
            values = sess.run(names, feeds)
    except Exception as exc:
        return {"status": "fails", "stage": "run", "message": str(exc)}
    ms = (time.perf_counter() - start) * 1000
    saved = _sibling("saved_values")

    def storable(value):
        return _storable(np, value)

    input_types = {i.name: i.type for i in sess.get_inputs()}
    saved_inputs = {
        name: saved.save(os.path.join(out_dir, f"in{k}"), v, storable, _map_values(input_types.get(name, "")))
        for k, (name, v) in enumerate(feeds.items())
    }
    output_types = {o.name: o.type for o in sess.get_outputs()}
    saved_outputs = {
        name: saved.save(os.path.join(out_dir, f"out{k}"), v, storable, _map_values(output_types.get(name, "")))
        for k, (name, v) in enumerate(zip(names, values, strict=True))
    }
    answer = {
        "status": "ok",
        "inputs": saved_inputs,
        "outputs": saved_outputs,
        "ms": round(ms, 2),
        "onnxruntime": ort.__version__,
        # saved widened: their own type's name
        "converted": narrow,
        "converted_inputs": {
            name: types.of_ort_type(v.data_type()).onnx_name for name, v in feeds.items() if isinstance(v, ort.OrtValue)
        },
    }
    if job.get("profile"):
        del values, sess
        try:
            answer["profile"] = _profile(ort, np, job, feeds, int(job["profile"]))
        except Exception as exc:  # the outputs stand; the timing says why it is missing
            answer["profile"] = {"error": str(exc)}
    return answer


_MAP = re.compile(r"map\(\w+,\s*tensor\((\w+)\)\)")


def _map_values(type_name: str) -> str | None:
    """The numpy type of the values of a map output ("seq(map(int64,tensor(float)))": float32)."""
    m = _MAP.search(type_name)
    return _NUMPY.get(m.group(1)) if m else None


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def _profiled(
    ort, np, job: dict, feeds: dict, runs: int, optimize: bool, save: str | None = None
) -> tuple[dict[str, list[float]], dict, list]:
    """A first run to warm up, then `runs` timed ones under onnxruntime's profiler: each kernel's
    times {path: [µs each run]} (a path: "3", node 3 of the main graph; "3/0", node 0 of the
    subgraph node 3 ran), each path's last kernel event, and the timed runs' (start, end) in µs.
    onnxruntime numbers the nodes of the graph it runs: the model's own with optimisations off,
    its fused and reordered ones with them on."""
    prefix = os.path.join(job["out"], "profile" if optimize else "profile-plain")
    sess = _job_session(ort, np, job, prefix, optimize, save)
    for _ in range(runs + 1):
        sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    windows = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name") == "model_run")[1:]
    kernels = sorted(
        (
            e
            for e in events
            if e.get("cat") == "Node"
            and e.get("name", "").endswith("_kernel_time")
            and "node_index" in (e.get("args") or {})
        ),
        key=lambda e: (e["ts"], -e["dur"]),  # on a tie, the enclosing kernel first
    )
    # a subgraph runs inside its If/Loop/Scan's own kernel time (the sequential executor runs one
    # kernel at a time) and numbers its nodes from 0 again: a kernel's path is its enclosing
    # kernels' indices and its own, "3" in the main graph, "3/0" in node 3's subgraph
    enclosing: list[tuple[float, str]] = []  # (end, path)
    last: dict[str, dict] = {}
    per_run: dict[str, dict[int, float]] = {}
    for e in kernels:
        while enclosing and enclosing[-1][0] <= e["ts"]:
            enclosing.pop()
        index = str(e["args"]["node_index"])
        path = f"{enclosing[-1][1]}/{index}" if enclosing else index
        enclosing.append((e["ts"] + e["dur"], path))
        last[path] = e
        run = next((k for k, (start, stop) in enumerate(windows) if start <= e["ts"] <= stop), None)
        if run is not None:  # the warm-up run left out; a Loop's body summed over its iterations
            by_run = per_run.setdefault(path, {})
            by_run[run] = by_run.get(run, 0.0) + float(e["dur"])
    return {path: list(r.values()) for path, r in per_run.items()}, last, windows


def _run_ms(windows: list) -> float | None:
    return round(_median([(end - start) / 1000 for start, end in windows]), 3) if windows else None


def _profile(ort, np, job: dict, feeds: dict, runs: int) -> dict:
    """Each node's kernel time by onnxruntime's profiler, graph optimisations off, so every node
    of the model runs (and is timed) as written: {"nodes": {node index: median µs}, "ops",
    "names", "ms": median run ms, "runs"} (a control-flow node's time includes its subgraphs').
    And "optimized": the same model as onnxruntime runs it by default (nodes fused, reordered
    for the CPU's vector width), by the operators of that graph: {"ms", "ops": {op: µs}, "nodes"}."""
    times, outer, windows = _profiled(ort, np, job, feeds, runs, optimize=False)
    answer = {
        "nodes": {path: _median(ts) for path, ts in times.items()},
        # each path's op and name: the server matches them with the model's nodes
        "ops": {path: e["args"].get("op_name", "") for path, e in outer.items()},
        "names": {path: e["name"][: -len("_kernel_time")] for path, e in outer.items()},
        "ms": _run_ms(windows),
        "runs": len(windows),
    }
    saved = os.path.join(job["out"], "optimized.onnx")
    try:
        try:
            fused, fused_outer, fused_windows = _profiled(ort, np, job, feeds, runs, optimize=True, save=saved)
        except Exception:  # saving its graph failed (a disk, a limit)? then its times without it
            saved = ""
            fused, fused_outer, fused_windows = _profiled(ort, np, job, feeds, runs, optimize=True)
    except Exception as exc:  # the nodes' times stand; this part says why it is missing
        answer["optimized"] = {"error": str(exc)}
        return answer
    by_op: dict[str, float] = {}
    kernels = []
    for i, ts in fused.items():
        if "/" in i:  # inside a subgraph: in its control-flow node's time already
            continue
        op = fused_outer[i]["args"].get("op_name", "")
        by_op[op] = by_op.get(op, 0.0) + _median(ts)
        kernels.append({"name": fused_outer[i]["name"][: -len("_kernel_time")], "op_type": op, "time_us": _median(ts)})
    answer["optimized"] = {
        "ms": _run_ms(fused_windows),
        "ops": by_op,
        "nodes": len(kernels),
        "kernels": kernels,
        "graph": _graph_io(saved) if saved else [],
    }
    return answer


def _too_big_inputs(job: dict) -> str:
    dims = ", ".join(f"{k}={v}" for k, v in (job.get("dims") or {}).items())
    return f"the inputs at these sizes ({dims or 'as declared'}) take more memory than a run may use; give smaller dims"


def _sibling(name: str):
    """An app module that needs no other (tensor_error, quant_plan), loaded by its path: this
    worker imports no app module."""
    import importlib.util

    if f"studio_{name}" in sys.modules:
        return sys.modules[f"studio_{name}"]
    path = os.path.join(os.path.dirname(__file__), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"studio_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _ranked(errors: list[dict], mode: str) -> list[int]:
    """Positions of a sweep's points, the most worth turning float first: "alone", the one
    costing the most by itself; "without", the one leaving the least error once float. A point
    whose error is not finite comes last."""

    def key(k: int) -> tuple:
        error = errors[k]["rel_error"]
        return (error is None, -(error or 0.0) if mode == "alone" else (error or 0.0))

    return sorted(range(len(errors)), key=key)


def sweep(job: dict) -> dict:
    """Run a model with quantization switches (job["flags"], bool graph inputs) with all off (the
    reference), all on, then one configuration per switch (of job["each"], their indices, if
    given): it alone on ("alone") or alone off ("without"); {"status", "all", "nodes": [per
    switch], "order" (positions in "nodes", the most worth turning float first), "outputs"
    measured, "ms" (median run), "runs"}, each entry the float output furthest from the
    reference: {"output", "rel_error", "sqnr_db"}. With job["target"] (a relative error) and
    job["owners"] (each switch's nodes; [] for one that can't be left out): "plan", the fewest
    switches' owners to leave out for the error to stay within it (quant_plan.py)."""
    import numpy as np
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    signal_error = _sibling("tensor_error").signal_error
    planning = _sibling("quant_plan")
    flags = job["flags"]
    target = job.get("target")
    owners = job.get("owners") or [[] for _ in flags]
    try:
        # the quantization simulated as the pairs say, not fused into integer kernels: onnxruntime's
        # QDQ transformers expect a pair's weights in its own graph, not an If branch's outer one
        sess = _job_session(ort, np, job, config={"session.disable_quant_qdq": "1"})
    except Exception as exc:
        return {"status": "fails", "stage": "load", "message": str(exc)}
    try:
        if job.get("samples"):  # several samples, stacked along the first axis
            stacked = {name: np.load(path, mmap_mode="r", allow_pickle=False) for name, path in job["samples"].items()}
            count = min(len(a) for a in stacked.values())
            samples = [{name: np.require(a[k], requirements="C") for name, a in stacked.items()} for k in range(count)]
        else:
            samples = [_job_feeds(ort, np, sess, job, frozenset(flags))]
    except Skip as exc:
        return {"status": "refused", "stage": "inputs", "message": str(exc)}
    except ValueError as exc:
        return {"status": "refused", "stage": "inputs", "message": f"an input's .npy can't be read: {exc}"}
    names = [o.name for o in sess.get_outputs()]
    times: list[float] = []
    each = job.get("each", range(len(flags)))
    candidates = [k for k in each if owners[k]]
    planned = planning.runs_needed(len(candidates)) if target is not None else 0
    total = (2 + len(each) + planned) * len(samples)
    progress = job.get("progress")
    said = [0.0]

    def tell(done: int) -> None:
        """Runs done so far, in the job's progress file (the page polls it): twice a second."""
        now = time.monotonic()
        if progress and (now - said[0] >= 0.5 or done == total):
            said[0] = now
            with open(progress + ".tmp", "w") as f:
                f.write(f"{done} {total}")
            os.replace(progress + ".tmp", progress)

    def outputs(on) -> list:
        """Each output over every sample (stacked along a new first axis)."""
        switched = {flag: np.array(k in on) for k, flag in enumerate(flags)}
        runs = []
        for feeds in samples:
            start = time.perf_counter()
            runs.append(sess.run(names, {**feeds, **switched}))
            times.append((time.perf_counter() - start) * 1000)
            tell(len(times))
        return [np.stack([np.asarray(r[k]) for r in runs]) for k in range(len(names))]

    try:
        reference = outputs(set())
        measured = [k for k, v in enumerate(reference) if np.asarray(v).dtype.kind == "f"]
        if not measured:
            return {"status": "refused", "stage": "outputs", "message": "the model has no float output to measure"}

        def worst(values: list) -> dict:
            errors = [{"output": names[k], **signal_error(values[k], reference[k])} for k in measured]
            return max(errors, key=lambda e: float("inf") if e["rel_error"] is None else e["rel_error"])

        every = set(range(len(flags)))
        answer_all = worst(outputs(every))
        # the two configurations so far tell what the rest will take: said now, not after the limit
        per_configuration = sum(times[len(samples) :]) / 1000
        expected = per_configuration * (len(each) + planned)
        if job.get("budget") and expected > job["budget"]:
            searched = f" and up to {planned} to meet the target" if planned else ""
            return {
                "status": "refused",
                "stage": "time",
                "message": f"{len(each)} points{searched} × {len(samples)} sample(s) would take about {expected:.0f} s "
                f"({per_configuration * 1000:.0f} ms each), more than {job['budget']:.0f} s",
            }
        nodes = [worst(outputs({k} if job["mode"] == "alone" else every - {k})) for k in each]
        order = _ranked(nodes, job["mode"])
        plan = None
        if target is not None:
            rel = answer_all["rel_error"]
            if rel is not None and rel <= target:
                plan = {"points": [], "nodes": [], "error": answer_all, "reached": True, "runs": 0}
            else:
                ranking = [each[k] for k in order if owners[each[k]]]
                plan = planning.fewest_left_out(ranking, owners, lambda off: worst(outputs(every - off)), target)
    except Exception as exc:
        return {"status": "fails", "stage": "run", "message": str(exc)}
    return {
        "status": "ok",
        "all": answer_all,
        "nodes": nodes,
        "order": order,
        **({} if plan is None else {"plan": plan}),
        "outputs": [names[k] for k in measured],
        "ms": round(_median(times[1:] or times), 2),  # the first run warms up
        "runs": len(times),
        "samples": len(samples),
        "onnxruntime": ort.__version__,
    }


def _graph_io(path: str) -> list[dict]:
    """The nodes of the graph onnxruntime saved (its optimised one): name, op, inputs, outputs —
    what the server needs to put each kernel's time on the model's nodes; [] if it can't be read."""
    import onnx

    try:
        graph = onnx.load(path, load_external_data=False).graph
    except Exception:
        return []
    finally:
        for name in (path, os.path.join(os.path.dirname(path), "optimized.bin")):
            if os.path.exists(name):
                os.remove(name)  # the weights again: gone before the answer
    return [
        {"name": n.name, "op_type": n.op_type, "inputs": list(n.input), "outputs": list(n.output)} for n in graph.node
    ]


def _address_space() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _limit(job: dict) -> None:
    """This job's CPU time on top of what the worker used so far, and its address space."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime) + 1
    memory = _address_space() + int(job["memory"])  # the allowance comes on top of what is mapped
    for kind, value in ((resource.RLIMIT_CPU, spent + int(job["cpu"])), (resource.RLIMIT_AS, memory)):
        hard = resource.getrlimit(kind)[1]
        resource.setrlimit(kind, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))


def _exit_with_parent(parent: int) -> None:
    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def main() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash costs a verdict, not a core file
    _exit_with_parent(os.getppid())
    out = sys.stdout
    sys.stdout = sys.stderr  # stray prints must not break the protocol
    # onnxruntime imported before "ready" (~0.3 s): a job's time is then the model's alone,
    # which is what the edit gate judges a model by
    _sibling("ort_env").telemetry_off()  # before onnxruntime is imported (a worker started on its own)
    import numpy  # noqa: F401
    import onnxruntime  # noqa: F401

    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    unlimited = resource.getrlimit(resource.RLIMIT_AS)
    for line in sys.stdin:
        job = json.loads(line)
        _limit(job)
        try:
            kind = job.get("kind")
            answer = run(job) if kind == "run" else sweep(job) if kind == "sweep" else check(job)
        except Exception as exc:  # the worker's own failure: no verdict on the model
            answer = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
        finally:
            resource.setrlimit(resource.RLIMIT_AS, unlimited)  # the next job sets its own
        try:
            out.write(json.dumps(answer) + "\n")
            out.flush()
        except BrokenPipeError:  # the server is gone: so is the job's reader
            return
        del job, answer
        _sibling("memory_return").give_back()  # answered: the pages a big model took go back, idle


if __name__ == "__main__":
    main()
