"""onnxruntime's verdict on a model: does it load (graph optimisations on) and run once on a
smoke input? onnx.checker and strict inference pass models that onnxruntime then refuses
(a Conv's kernel_shape that its weights don't have, a group that doesn't divide the channels).

The run happens in ort_worker.py, a spawned interpreter with CPU-time and address-space limits
and a wall clock kept here: a crash, a runaway run or an allocation storm costs a verdict, never
the server. Not offload.py's pool: that one runs onnx's own checks and falls back to running
them in this process when its helper dies, which for native onnxruntime code is the thing to
avoid; its executor can't kill a worker on a timeout either, and limits set in a worker that
does the checker's work would bound that work too. The workers here stay warm between checks
(a fresh interpreter with onnxruntime costs ~0.3 s) and are replaced when they die or time out.
"""

from __future__ import annotations

import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import onnx

from .address import node_words
from .branch_flags import branch_cases, case_words
from .causes import _Nodes, _Place, _place_words
from .declared_shapes import declared_mismatches
from .dim_names import axis_dim, is_unnamed
from .input_elements import input_elements
from .loop_counts import loop_counts
from .smoke_model import write_stand_in
from .traverse import fed_inputs
from .vocabularies import input_vocabularies

WALL_SECONDS = 60.0
CPU_SECONDS = 60
RUN_CPU_SECONDS = 300  # a run asked for (POST .../run) may take longer than a smoke run
RUN_WALL_SECONDS = 300.0
SWEEP_SECONDS = 0.9 * RUN_WALL_SECONDS  # what a sensitivity sweep may be foreseen to take
MEMORY_ALLOWANCE = 2 * 2**30  # address space a check may map on top of the worker's own and its weights
MACHINE_SHARE = 0.5  # of the machine's memory, the most one job may map (another may run beside it)


def job_memory(weights: int) -> int:
    """The address space a job may map on top of the worker's own: the allowance and what its
    weights take, at most MACHINE_SHARE of the machine's memory — however many bytes a model
    claims, a check costs a verdict ("ran out of memory"), never the machine (QA34 #1)."""
    try:
        machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):  # no such names here: the allowance and weights alone
        return MEMORY_ALLOWANCE + weights
    return min(MEMORY_ALLOWANCE + weights, int(machine * MACHINE_SHARE))


WORKERS = 2  # one check can wait in the background while an edit's gate runs
JOBS_PER_WORKER = 200  # a fresh interpreter now and then: onnxruntime's arenas keep what they took
_WORKER_SCRIPT = Path(__file__).with_name("ort_worker.py")


def ort_version() -> str | None:
    try:
        return metadata.version("onnxruntime")
    except metadata.PackageNotFoundError:
        return None


class _Worker:
    """One worker interpreter, started on first use and after it dies."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.busy = False
        self.jobs = 0
        self.buf = b""

    def _start(self, deadline: float) -> None:
        # -P: the script's folder (app/onnx_io) must not shadow modules numpy or onnxruntime import
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-u", str(_WORKER_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            close_fds=True,
        )
        self.jobs, self.buf = 0, b""
        if self._line(deadline) is None:
            raise TimeoutError

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def _line(self, deadline: float) -> bytes | None:
        """The worker's next line; None when the deadline passes; EOFError when it died."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise EOFError
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def run(self, job: dict, wall: float, timing: dict | None = None) -> dict:
        """The worker's answer to `job`; `timing` gets "worker_start" (seconds, 0 when warm)."""
        begun = time.monotonic()
        deadline = begun + wall
        started = 0.0  # the interpreter's start, when this job needed one: not the model's cost
        if self.proc is None or self.proc.poll() is not None or self.jobs >= JOBS_PER_WORKER:
            self.stop()
            try:
                self._start(deadline)
            except (EOFError, TimeoutError, OSError) as exc:  # no verdict on the model: the worker's failure
                self.stop()
                return {"status": "error", "message": f"the onnxruntime worker did not start ({type(exc).__name__})"}
            started = time.monotonic() - begun
        try:
            assert self.proc is not None and self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.jobs += 1
            line = self._line(deadline)
        except (EOFError, BrokenPipeError):
            return self._died()
        if line is None:
            self.stop()
            return {"status": "limit", "message": f"onnxruntime ran out of time ({wall:.0f} s)"}
        if timing is not None:
            timing["worker_start"] = started
        return json.loads(line)

    def _died(self) -> dict:
        assert self.proc is not None
        code = self.proc.wait()
        self.proc = None
        if code == -signal.SIGXCPU:
            return {"status": "limit", "message": f"onnxruntime ran out of CPU time ({CPU_SECONDS} s)"}
        if code == -signal.SIGKILL:
            return {"status": "limit", "message": "onnxruntime was killed (out of memory?)"}
        what = signal.Signals(-code).name if code < 0 and -code in signal.valid_signals() else f"exit status {code}"
        return {"status": "crashed", "message": f"onnxruntime crashed ({what})"}


_all_workers = [_Worker() for _ in range(WORKERS)]
_slots: queue.LifoQueue = queue.LifoQueue()  # LIFO: the warm worker is the one reused
for _worker in _all_workers:
    _slots.put(_worker)


def _run(job: dict, wall: float, timing: dict | None = None) -> dict:
    worker = _slots.get()
    worker.busy = True
    try:
        return worker.run(job, wall, timing)
    finally:
        worker.busy = False
        _slots.put(worker)


def check_model(
    model: onnx.ModelProto,
    read=None,
    wall: float = WALL_SECONDS,
    source: onnx.ModelProto | None = None,
    source_read=None,
    sizes: dict[str, int] | None = None,
) -> dict:
    """The verdict: {"status": ok | fails | skipped, "ok": True | False | None, "message" (one
    line), "node_name", "op_type", "node" (main-graph node id), "onnxruntime" (version),
    "seconds", "flags" ({input: [False, True]}: the values the branch flags ran at, a failure's
    message beginning "with input = true: ")}. `read(location, offset, length)` reads the model's
    external data files.
    `source`: the model this one was made from (`source_read` its files): inputs of this one that
    are values `source` computes are fed what it computes on the same made-up inputs ("fed":
    their names), not made-up values. `sizes`: dynamic dims' sizes to try first (known_sizes)."""
    version = ort_version()
    if version is None:
        return {"status": "skipped", "ok": None, "message": "onnxruntime is not installed", "onnxruntime": None}
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="onnx-studio-ort-") as tmp:
        try:
            path, zeros = write_stand_in(model, Path(tmp), read)
            fed_from = values_from(model, source) if source is not None else []
            if source is not None and fed_from:
                (Path(tmp) / "source").mkdir()
                source_path, source_zeros = write_stand_in(source, Path(tmp) / "source", source_read, fed_from)
        except Exception as exc:  # e.g. the stand-in is over protobuf's 2 GiB
            return {"status": "skipped", "ok": None, "message": f"no stand-in to run: {exc}", "onnxruntime": version}
        # the weights are mapped (zeros twice over: a folded or transposed copy of each may be made)
        fed = fed_inputs(model.graph)
        job: dict = {
            "path": str(path),
            "cpu": CPU_SECONDS,
            "memory": job_memory(2 * zeros),
            "vocabularies": input_vocabularies(model.graph, fed),
            "elements": input_elements(model.graph, fed),  # a sequence input's tensors: one of them
            "loops": loop_counts(model.graph, fed),  # a Loop's trip count fed 0 never runs its body
            # an If's flag fed False never runs then_branch: a run at each value (branch_flags.py)
            "cases": branch_cases(model.graph, fed),
            "wall": wall,  # a further case is started only when it can end in time
        }
        if fed_from:
            job["source"] = {"path": str(source_path), "values": fed_from}
            job["memory"] = job_memory(2 * (zeros + source_zeros))
        if sizes:
            job["sizes"] = sizes
        timing: dict = {}
        raw = _run(job, wall, timing)
    out = describe(raw, model)
    if fed_from:
        out["fed"] = fed_from
    out["onnxruntime"] = raw.get("onnxruntime") or version
    # what the model costs a check (the edit gate waits for quick ones), a worker's start left out
    out["seconds"] = round(time.monotonic() - start - timing.get("worker_start", 0.0), 3)
    return out


def known_sizes(model: onnx.ModelProto, base: onnx.ModelProto, base_verdict: dict | None) -> dict[str, int]:
    """Sizes for `model`'s dynamic dims from the model it was made from: those its smoke run ran
    at ("sizes" of its verdict), and those it fixed where `model` has a dim now dynamic (an
    image's 224 x 224 made height x width: at 1 a ResNet's pool fails, a SqueezeNet crashes)."""
    out = {k: int(v) for k, v in ((base_verdict or {}).get("sizes") or {}).items() if int(v) > 1}
    before = {i.name: i.type.tensor_type.shape.dim for i in base.graph.input if i.type.HasField("tensor_type")}
    for i in model.graph.input:
        if not i.type.HasField("tensor_type") or i.name not in before:
            continue
        dims, old = i.type.tensor_type.shape.dim, before[i.name]
        if len(dims) != len(old):
            continue
        for axis, (d, o) in enumerate(zip(dims, old, strict=True)):
            if d.HasField("dim_value") or not o.HasField("dim_value") or o.dim_value <= 1:
                continue
            key = d.dim_param if d.dim_param and not is_unnamed(d.dim_param) else axis_dim(i.name, axis)
            out.setdefault(key, o.dim_value)
    return out


def values_from(model: onnx.ModelProto, source: onnx.ModelProto) -> list[str]:
    """The inputs of `model` that `source` does not take but computes in its main graph: a part
    of it cut out (extract), whose inputs were values inside it."""
    taken = set(fed_inputs(source.graph))
    computed = {name for node in source.graph.node for name in node.output if name}
    return [name for name in fed_inputs(model.graph) if name not in taken and name in computed]


def run_model(
    path: Path,
    out: Path,
    inputs: dict,
    dims: dict,
    outputs: list | None,
    size: int,
    wall: float,
    files: dict,
    profile: int = 0,
) -> dict:
    """Run the model file at `path` in a worker (ort_worker.run): `inputs` {name: {"npy": path} |
    {"seed": S}}; `files` {location the model names: local file} its external data files. The
    answer names the .npy files of what was fed and what came out, in `out`; with `profile`
    runs, each node's time too (ort_worker._profile)."""
    job = {
        "profile": profile,
        "files": files,
        "kind": "run",
        "path": str(path),
        "out": str(out),
        "inputs": inputs,
        "dims": dims,
        "outputs": outputs,
        "cpu": RUN_CPU_SECONDS,
        "memory": job_memory(3 * size),  # the weights, a copy ORT may make, activations
    }
    return _run(job, wall)


def sweep_model(
    path: Path,
    inputs: dict,
    dims: dict,
    flags: list[str],
    each: list[int],
    mode: str,
    size: int,
    files: dict,
    samples: dict | None = None,
    progress: str | None = None,
    target: float | None = None,
    owners: list[list[int]] | None = None,
) -> dict:
    """A quantization sensitivity sweep in a worker (ort_worker.sweep): the model at `path`
    (quant_switches.switchable) run once with every switch in `flags` off, once with all on, and
    once per switch of `each` (indices into `flags`) with it alone on (`mode` "alone") or alone
    off ("without"); `samples` {input: .npy of its samples stacked} in place of `inputs`: each
    configuration runs on every sample; `progress`: a file the worker keeps "RUNS_DONE TOTAL" in;
    `target` (a relative error) with `owners` (each switch's nodes that can be left out): also the
    fewest to leave out for the error to stay within it (quant_plan.py). Each run's outputs are
    measured against the first."""
    job = {
        "kind": "sweep",
        "files": files,
        "path": str(path),
        "inputs": inputs,
        "dims": dims,
        "flags": flags,
        "each": each,
        "mode": mode,
        "samples": samples or {},
        "progress": progress,
        "target": target,
        "owners": owners,
        "budget": SWEEP_SECONDS,  # the worker refuses a sweep it foresees taking longer
        "cpu": RUN_CPU_SECONDS,
        "memory": job_memory(3 * size),
    }
    return _run(job, RUN_WALL_SECONDS)


# "[ONNXRuntimeError] : 1 : FAIL : " and "Load model from /tmp/.../model.onnx failed:"
_PREFIX = re.compile(r"^\[ONNXRuntimeError\] : \d+ : \w+ : |Load model from \S+ failed:\s*")
# run: "Non-zero status code returned while running Conv node. Name:'conv1' Status Message: ..."
_RUNNING = re.compile(r"Non-zero status code returned while running (\S+) node\. Name:'([^']*)' Status Message: ")
# load: "Node (softmax) Op (Softmax) ..." or "In Node, ("conv1", Conv, "", -1) : ..."
_LOADING = re.compile(r'Node \(([^)]*)\) Op \(([^)]*)\) |In Node, \("([^"]*)", (\w+), "[^"]*", -?\d+\) : ')
# named in passing: "... of operator (Conv) in node (conv1) is invalid."
_NAMED = re.compile(r"operator \((\w+)\) in node \(([^)]*)\)")
# an ORT_ENFORCE's "/onnxruntime_src/.../common.h:31 int64_t onnxruntime::F(int64_t) "
_SOURCE = re.compile(r"(?:/\S+|\b\w+)\.(?:h|cc|cpp):\d+ (?:[\w:<>*&, ]+?\([^()]*\) )?")
_NO_MEMORY = re.compile(r"bad_alloc|Failed to allocate|out of memory", re.I)
_MAX_MESSAGE = 500


def run_sizes(dims: list[str], at) -> dict[str, int]:
    """{dim: size} of a run's dynamic dims: `at` one size for all, or {dim: size, "*": the rest's}."""
    if isinstance(at, dict):
        return {d: int(at[d] if d in at else at["*"]) for d in dims}
    return dict.fromkeys(dims, int(at))


def at_words(sizes: dict[str, int]) -> str:
    """ "batch, seq at 2 and total_seq at 4": the dims by the size they ran at."""
    by_size: dict[int, list[str]] = {}
    for dim, size in sizes.items():
        by_size.setdefault(size, []).append(dim)
    return " and ".join(f"{', '.join(dims)} at {size}" for size, dims in by_size.items())


def describe(raw: dict, model: onnx.ModelProto) -> dict:
    """The worker's answer as a verdict with a one-line message that names the node."""
    status, message = raw.get("status"), " ".join(str(raw.get("message", "")).split())
    if status == "ok":
        # the float outputs holding NaN or ±Inf on the made-up inputs ({} says none did)
        verdict: dict = {"status": "ok", "ok": True, "message": "", "nonfinite": raw.get("nonfinite") or {}}
        if raw.get("flags"):  # the values an If's flags ran at (branch_flags.py)
            verdict["flags"] = raw["flags"]
        # the named dims the run gave a size (every dynamic dim at the same one, or one dim
        # one bigger: ort_worker._one_dim_more)
        sizes = run_sizes(raw.get("symbolic") or [], raw.get("dims") or 1)
        if sizes:  # what the page holds a named dim coming back otherwise to
            verdict["sizes"] = sizes
        mismatches = declared_mismatches(model, raw.get("shapes") or {}, sizes)
        if mismatches:  # outputs in another shape than declared: a warning, not a failure
            verdict["declared_mismatches"] = mismatches
        other = raw.get("other_size")
        if other:  # the run again with the dynamic dims at 2
            again = {k: other.get(k) for k in ("status", "message", "stage", "shapes")}
            at = other.get("sizes") or other["size"]
            described = describe({**again, "symbolic": other["dims"], "dims": at, "case": other.get("case")}, model)
            verdict["other_size"] = {**described, "size": other["size"], "dims": other["dims"]}
            verdict["other_size"]["at"] = at_words(run_sizes(other["dims"], at))  # as the page says it
            if other.get("sizes"):
                verdict["other_size"]["sizes"] = run_sizes(other["dims"], other["sizes"])
            if other.get("alone"):  # each dim alone at 2: which the model holds fixed
                verdict["other_size"]["alone"] = other["alone"]
        return verdict
    if status == "fails" and _NO_MEMORY.search(message):
        status, message = "limit", "onnxruntime ran out of memory (the check's limit)"
    if status == "crashed":
        return {"status": "fails", "ok": False, "message": message, "node_name": None, "op_type": None, "node": None}
    if status == "error":  # the worker's own trouble: worth asking again later
        return {"status": "skipped", "ok": None, "message": message, "transient": True}
    if status != "fails":  # skipped, limit: no verdict on the model itself
        return {
            "status": "skipped",
            "ok": None,
            "message": message,
            **({"too_big": True} if raw.get("too_big") else {}),
        }
    message = _PREFIX.sub("", message)
    name = op_type = None
    # a node in a Loop's or If's body fails inside its holder's run: "… running Loop node. Name:'loop'
    # Status Message: Non-zero status code returned while running Gather node. Name:'body_gather' …":
    # the innermost is the node that failed, the holders' wrappers go
    runs = list(_RUNNING.finditer(message))
    m = runs[-1] if runs else _LOADING.search(message)
    if m:
        groups = [g for g in m.groups() if g is not None]
        if m.re is _RUNNING:
            op_type, name = groups
        else:
            name, op_type = groups
        message = message[: (runs[0] if runs else m).start()] + message[m.end() :]
    elif m := _NAMED.search(message):
        op_type, name = m.groups()
    message = _SOURCE.sub("", message).strip()
    case = raw.get("case") or {}
    place = _failed_node(model, op_type, name, case.get("branch")) if name is not None and op_type else None
    if op_type:  # worded as the checker gates word theirs: 'node "conv1" (Conv) in the main graph'
        words = _place_words(model, place) if place is not None and name else node_words(name or "", op_type)
        message = f"{words}: {message}"
    if case:  # one value of an If's flag fails: which one
        message = f"with {case_words(case['values'])}: {message}"
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 1] + "…"
    return {
        "status": "fails",
        "ok": False,
        "message": message,
        "node_name": name,
        "op_type": op_type,
        "node": place.nid if place is not None else None,
        "stage": raw.get("stage") or "load",  # "load": onnxruntime refuses the model itself
        # the run fed sizes or integers it made up (dynamic dims of 1 to 1,024, the batch also at 1 alone; zeros, counting),
        # which a model may not take: what failed may be them
        "guessed": bool(raw.get("guessed")),
        **({"flags": raw["flags"]} if raw.get("flags") else {}),
    }


def _failed_node(model: onnx.ModelProto, op_type: str, name: str, branch: str | None) -> _Place | None:
    """The node onnxruntime names (in any graph), where one fits; where several do (an Optimum
    merged decoder repeats its node names in both branches), the one in the branch the failing
    run took (branch_flags.py), if just one is."""
    nodes = _Nodes(model)
    place = nodes.find(op_type, name, None)
    if place is not None or branch is None:
        return place
    other = "else_branch" if branch == "then_branch" else "then_branch"
    taken = [p for p in nodes.matches(op_type, name, None) if other not in p.path.split("/")]
    return taken[0] if len(taken) == 1 else None


def nonfinite_words(new: dict) -> str:
    """A change line for outputs an edit made hold NaN or ±Inf where its base's held none."""
    parts = [f"{name!r} ({bad:,} of {size:,} values)" for name, (bad, size) in sorted(new.items())[:3]]
    more = f" and {len(new) - 3} more" if len(new) > 3 else ""
    return (
        f"warning: onnxruntime's smoke run now gives NaN or ±Inf in {', '.join(parts)}{more}, "
        "where the base gave none on the same inputs"
    )


def failed_somewhere(verdict: dict) -> bool:
    """onnxruntime failed the model, at the first size or with its dynamic dims at 2, or no run
    can be given inputs of the sizes it declares: held to its base's (against_base), the edit's."""
    return (
        verdict.get("status") == "fails"
        or (verdict.get("other_size") or {}).get("status") == "fails"
        or bool(verdict.get("too_big"))
    )


def against_base(verdict: dict, base: dict | None) -> dict:
    """An edited model's verdict held to its base's, run on the same made-up inputs: a failure
    where the base ran is the edit's, not the inputs' — and so is a failure with the dynamic dims
    at 2 where the base ran at 2 too (the edit hard-coded a size the model declares dynamic)."""
    base = base or {}
    if verdict.get("status") == "ok" and base.get("status") == "ok" and "nonfinite" in base:
        new = {n: c for n, c in (verdict.get("nonfinite") or {}).items() if n not in base["nonfinite"]}
        if new:  # a warning, not a refusal: a mask of -inf may be what the edit is for
            verdict = {**verdict, "new_nonfinite": new}
    if verdict.get("status") == "fails" and base.get("status") == "ok":
        return {**verdict, "guessed": False}
    if verdict.get("too_big") and base.get("status") == "ok":
        # a size no run can be given (an input fixed at 10^9): the base ran, the edit can't run
        # at all, and every later edit would go unchecked (QA33 #1)
        return {
            "status": "fails",
            "ok": False,
            "message": f"{verdict['message']}, where it ran before this edit",
            "node_name": None,
            "op_type": None,
            "node": None,
            "stage": "inputs",
            "guessed": False,
        }
    other, base_other = verdict.get("other_size") or {}, base.get("other_size") or {}
    if verdict.get("status") == "ok" and other.get("status") == "fails" and base_other.get("status") == "ok":
        if other.get("sizes"):
            first = at_words(verdict.get("sizes") or {})
            message = f"it runs with {first} but no longer with {at_words(other['sizes'])}, as its base does: {other['message']}"
        else:
            dims = ", ".join(other["dims"])
            message = f"it runs with {dims} at 1 but no longer at {other['size']}, as its base does: {other['message']}"
        return {**verdict, **other, "message": message, "guessed": False}
    return verdict
