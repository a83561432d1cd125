"""Heavy onnx calls (checker, shape inference) in a separate process.

onnx's C++ checker and inference hold Python's GIL for their whole run: seconds on a 40k-node
model, during which a threaded server answers nothing. A one-process pool runs them instead;
it reads the model from the store's file itself, so no model bytes cross the process boundary.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

_pool: ProcessPoolExecutor | None = None
_lock = threading.Lock()


def _executor() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
        return _pool


def _exit_with_parent(parent: int) -> None:
    """In the helper: leave when the server goes. A server stopped by a signal never shuts its
    pool down, and the orphaned helper would hold hundreds of MB (and some CPU) forever."""

    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _validate_file(path: str) -> dict:
    from .load import parse_model_file
    from .validate import full_validation

    return full_validation(parse_model_file(path))


def _infer_file(path: str) -> bytes | None:
    from .inference import inferred_model
    from .light import light_copy
    from .load import parse_model_file

    inferred = inferred_model(parse_model_file(path))
    return None if inferred is None else light_copy(inferred).SerializeToString()


def _run(fn, path: str):
    """fn(path) in the helper process; in this one if the helper can't run (it crashed, or the
    interpreter's main module can't be re-imported there)."""
    global _pool
    try:
        return _executor().submit(fn, path).result()
    except (BrokenProcessPool, OSError):
        with _lock:
            _pool = None
        return fn(path)


def validate_file(path: str) -> dict:
    return _run(_validate_file, path)


def infer_file(path: str):
    """The model at `path` after shape inference (weights left out), or None."""
    import onnx

    data = _run(_infer_file, path)
    if data is None:
        return None
    model = onnx.ModelProto()
    model.ParseFromString(data)
    return model
