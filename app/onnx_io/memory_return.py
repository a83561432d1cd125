"""Give a helper's freed memory back to the system after a job (QA40 #5: three idle helpers held
7.5 GB after work on a 1.5 GiB model, and a later job on the machine was killed for memory).
Python frees a job's objects, but glibc keeps the heap pages for reuse; malloc_trim returns them
(a 1.2 GB helper back to 0.44 GB in a measurement, at no cost to the next job).

Standard library only: the onnxruntime worker loads it beside itself, never importing the app."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os

_libc = None
KEEP_BYTES = 256 << 20  # a helper this small after a job has nothing worth a collection


def _resident() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def give_back() -> None:
    """After a big job: collect garbage, then hand free heap pages back (glibc; elsewhere only
    the collection). A small one costs one read of /proc."""
    global _libc
    resident = _resident()
    if resident is not None and resident < KEEP_BYTES:
        return
    gc.collect()
    if _libc is None:
        name = ctypes.util.find_library("c")
        try:
            _libc = ctypes.CDLL(name) if name else False
        except OSError:
            _libc = False
    trim = getattr(_libc, "malloc_trim", None) if _libc else None
    if trim is not None:
        trim(0)
