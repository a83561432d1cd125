"""onnx's C++ on untrusted models, in a helper process with limits.

onnx's checker, shape inference, printer and text parser are native code: on a hostile file
they segfault (Shape -> Slice with step 2^63-1), allocate without end (data propagation of
x: float[2^40]) or hold Python's GIL for seconds. Each runs here in a helper process under a
memory limit (RLIMIT_AS), a CPU-time limit and a wall-clock limit. A crash or a limit costs that
job only: it answers 422 naming what failed, the verdict is remembered for that content (never
retried in-process, never again at each request), and the server keeps serving. The helper
reads models from the store's files itself, so big models' bytes don't cross the boundary.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Protocol

from ..errors import StudioError


@dataclass(frozen=True)
class Limits:
    memory: int = 8 << 30  # bytes of address space (the light copies are small; a 2 GiB model fits)
    cpu_seconds: int = 300  # per job
    wall_seconds: float = 600.0  # per job, waiting included


LIMITS = Limits()
# what each job is called in answers: "onnx's shape inference crashed on this model"
WHAT = {
    "validate": "onnx's checker and shape inference",
    "infer": "onnx's shape inference",
    "infer_at_dims": "onnx's shape inference",
    "infer_from_inputs": "onnx's shape inference",
    "inline_functions": "onnx's function inliner",
    "function_types": "onnx's shape inference",
    "function_bodies": "onnx's function definitions",
    "print_text": "onnx's printer",
    "parse_text": "onnx's text parser",
    "check": "onnx's checker",
    "infer_model": "onnx's shape inference",
    "convert": "onnx's version converter",
    "quantize": "onnxruntime's quantizer",
    "quantize_static": "onnxruntime's calibration and quantizer",
    "quantize_weights": "onnxruntime's MatMulNBits quantizer",
    "float16": "onnxruntime's float16 converter",
    "simplify": "onnxruntime's graph optimizer",
}

# one helper per lane: the model tools (float16, int8, calibration, simplify: seconds to a minute on a big
# model) have their own, so checks and shape inference of other models aren't queued behind them
TOOL_JOBS = frozenset({"float16", "quantize", "quantize_static", "quantize_weights", "simplify"})
_pools: dict[str, ProcessPoolExecutor] = {}
_lock = threading.Lock()
_failures: OrderedDict[tuple[str, str], str] = OrderedDict()  # (job, content key) -> message
_FAILURES_KEPT = 4096


class SharedFailures(Protocol):
    """Where failures are remembered beyond this process (the store: every worker of a team's
    server, and after a restart); set by the app (api/failures.py)."""

    def get(self, job: str, key: str) -> str | None: ...
    def put(self, job: str, key: str, message: str) -> None: ...


shared: SharedFailures | None = None


def _lane(job: str) -> str:
    return "tools" if job in TOOL_JOBS else "checks"


# A process killed while its helper pool was up (a gunicorn worker SIGKILLed) leaves its queues'
# semaphores to multiprocessing's resource tracker, which cleans them up and warns in two plain
# lines on stderr (a JSON log's shipper chokes on them, QA18 F11). The tracker is its own Python,
# started with this interpreter's -W options: the warning is turned off there before it starts.
_QUIET_TRACKER = "ignore:resource_tracker:UserWarning"
if _QUIET_TRACKER not in sys.warnoptions:
    sys.warnoptions.append(_QUIET_TRACKER)


def _executor(lane: str = "checks") -> ProcessPoolExecutor:
    with _lock:
        pool = _pools.get(lane)
        if pool is None:
            pool = _pools[lane] = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_helper_start,
                initargs=(os.getpid(), LIMITS.memory),
            )
        return pool


def _reset(pool: ProcessPoolExecutor, wait: bool = False) -> None:
    """Stop a pool whose helper crashed or ran out of time (killing it if it still runs); `wait`:
    until its queues are closed too."""
    with _lock:
        for lane, known in list(_pools.items()):
            if known is pool:
                del _pools[lane]
    # None once another thread's reset of the same broken pool shut it down (two requests whose
    # jobs shared the helper that crashed)
    for p in list((getattr(pool, "_processes", None) or {}).values()):
        if p.is_alive():
            p.kill()
    pool.shutdown(wait=wait, cancel_futures=True)


def stop() -> None:
    """End the helpers with this process (a server's worker leaving): their pools' queues and
    locks go with them, not left to multiprocessing's resource tracker to report as leaked."""
    with _lock:
        pools = list(_pools.values())
    for pool in pools:
        _reset(pool, wait=True)


def prewarm() -> None:
    """Start the helper now (importing onnx there takes ~1 s, onnxruntime's symbolic shape
    inference with sympy ~1 s more): the first view needs them."""
    with contextlib.suppress(Exception):  # never in the way of serving; the first job starts it again
        _executor().submit(_warm)


def _warm() -> None:
    import onnx  # noqa: F401

    with contextlib.suppress(Exception):  # without it, inference keeps onnx's names (inference.py)
        import onnxruntime.tools.symbolic_shape_infer  # noqa: F401


def _noop() -> None:
    return None


def _helper_works(lane: str = "checks") -> bool:
    """Whether a fresh helper runs a job that does nothing (after a crash: was it the job's?)."""
    pool = _executor(lane)
    try:
        pool.submit(_noop).result(timeout=LIMITS.wall_seconds)
        return True
    except Exception:
        _reset(pool)
        return False


def _helper_start(parent: int, memory: int) -> None:
    """In the helper: its memory limit, and leave when the server goes (a server stopped by a
    signal never shuts its pool down; an orphaned helper would hold memory forever)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _in_helper(job: str, cpu_seconds: int, *args):
    """Run a job in the helper with its CPU-time limit on top of what the helper used so far
    (past it the kernel kills the helper: a job that spins in C++ can't be interrupted)."""
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    budget = int(used.ru_utime + used.ru_stime) + cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (budget, resource.RLIM_INFINITY))
    from . import offload_jobs

    try:
        return getattr(offload_jobs, job)(*args)
    except MemoryError:
        raise RuntimeError("MemoryError: it needed more memory than the helper may use") from None
    finally:
        from .memory_return import give_back

        give_back()  # an idle helper holds no big model's pages (QA40 #5)


def content_key(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _remember(job: str, key: str, message: str, share: bool = True) -> None:
    with _lock:
        _failures[(job, key)] = message
        while len(_failures) > _FAILURES_KEPT:
            _failures.popitem(last=False)
    if share and shared is not None:
        shared.put(job, key, message)


def known_failure(job: str, key: str) -> str | None:
    with _lock:
        message = _failures.get((job, key))
    if message is None and shared is not None:
        message = shared.get(job, key)
        if message is not None:
            _remember(job, key, message, share=False)
    return message


def run(job: str, key: str, *args, limits: Limits | None = None):
    """offload_jobs.<job>(*args) in the helper; `key` names the content (a blob digest, a hash)
    its failure is remembered under. A crash, a limit or a time-out: StudioError 422."""
    limits = limits or LIMITS
    failed = known_failure(job, key)
    if failed:
        raise StudioError("onnx_failed", failed, 422)
    for attempt in (1, 2):
        pool = _executor(_lane(job))
        future: Future = pool.submit(_in_helper, job, limits.cpu_seconds, *args)
        try:
            return future.result(timeout=limits.wall_seconds)
        except FutureTimeout:
            _reset(pool)
            message = f"{WHAT[job]} ran out of time on this model ({limits.wall_seconds:g} s)"
        except BrokenProcessPool:
            _reset(pool)
            if attempt == 1:
                # another job in the same helper may have been the one that crashed it: once more, alone
                continue
            if not _helper_works(_lane(job)):  # it can't even start: no verdict on the model, nothing remembered
                raise StudioError("helper_unavailable", "the helper process for onnx could not start", 503) from None
            message = f"{WHAT[job]} crashed on this model (or ran out of its memory or CPU time)"
        except RuntimeError as exc:
            if "MemoryError" not in str(exc):
                raise
            message = f"{WHAT[job]} needed more memory than this server allows for it"
        except OSError as exc:  # the helper could not start at all: no verdict, nothing remembered
            _reset(pool)
            raise StudioError("helper_unavailable", f"the helper process for onnx could not run: {exc}", 503) from None
        _remember(job, key, message)
        raise StudioError("onnx_failed", message, 422)
    raise AssertionError("unreachable")


# ---------------------------------------------------------------- the server's calls


def validate_file(path: str, key: str) -> dict:
    """The validation state (offload_jobs.validate) of the model file at `path`."""
    return run("validate", key, path)


def infer_file(path: str, key: str):
    """The model at `path` after shape inference (weights left out), or None."""
    import onnx

    data = run("infer", key, path)
    if data is None:
        return None
    model = onnx.ModelProto()
    model.ParseFromString(data)
    return model


def inline_functions_file(path: str, key: str):
    """The model at `path` with its local functions inlined, after shape inference (weights left
    out), or None (offload_jobs.inline_functions)."""
    import onnx

    data = run("inline_functions", key, path)
    return None if data is None else onnx.ModelProto.FromString(data)


def function_bodies(model, where: list[tuple[str, int]]) -> list:
    """The FunctionProto onnx's definition gives each node at `where` ((graph path, index)) of
    `model` (weightless), or None, in the helper (offload_jobs.function_bodies)."""
    import onnx

    data = model.SerializeToString()
    found = run("function_bodies", content_key(data) + repr(where), data, where)
    return [None if b is None else onnx.FunctionProto.FromString(b) for b in found]


def function_types(model) -> dict[str, dict]:
    """The types in model-local functions' bodies, each as at one call of it, of `model` (weightless,
    after shape inference), in the helper (offload_jobs.function_types)."""
    data = model.SerializeToString()
    return run("function_types", content_key(data), data)


def infer_file_from_inputs(path: str, key: str):
    """The model at `path` inferred with its outputs' own dim names left out (weights left out),
    or None (offload_jobs.infer_from_inputs)."""
    import onnx

    data = run("infer_from_inputs", key, path)
    return None if data is None else onnx.ModelProto.FromString(data)


def infer_file_at_dims(path: str, key: str, dims: dict[str, int]):
    """The model at `path` after shape inference with its input dims fixed (weights left out)."""
    import onnx

    return onnx.ModelProto.FromString(run("infer_at_dims", f"{key}:{sorted(dims.items())}", path, dims))


def checker_verdict(model, full: bool = False) -> dict:
    """onnx.checker's verdict (load.checker_verdict) on `model`, in the helper; a crash there is
    the verdict "invalid", with what happened said."""
    data = model.SerializeToString()
    try:
        return run("check", content_key(data) + (":full" if full else ""), data, full)
    except StudioError as exc:
        if exc.code != "onnx_failed":
            raise
        return {"ok": False, "message": exc.message}


def infer(model, **options):
    """onnx.shape_inference.infer_shapes(model, **options) in the helper; ValueError with onnx's
    words when inference refuses the model, StudioError 422 when it crashes there."""
    import onnx

    data = model.SerializeToString()
    key = content_key(data) + repr(sorted(options.items()))
    return onnx.ModelProto.FromString(run("infer_model", key, data, options))


def convert(model, version: int):
    """onnx.version_converter.convert_version in the helper (ValueError: its words)."""
    import onnx

    data = model.SerializeToString()
    return onnx.ModelProto.FromString(run("convert", f"{content_key(data)}:{version}", data, version))
