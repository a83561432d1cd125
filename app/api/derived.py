"""Derived data kept in the store by the content it comes from: graph JSON, validation
verdicts, inferred types, tensor statistics. A restart, or another worker, finds what any
process computed instead of computing it again (a 44k-node graph's JSON: seconds).

Keys name the kind, the format (a digest of the code that derives them and of the onnx it
runs: any change of either derives them again) and the source blob's digest, so a revision's
derived data go when its graph is collected."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import onnx

from ..store import Store

T = TypeVar("T")


def _format() -> str:
    h = hashlib.sha256(f"onnx {onnx.__version__}".encode())
    app_dir = Path(__file__).resolve().parent.parent
    for path in sorted(app_dir.rglob("*.py")):
        h.update(str(path.relative_to(app_dir)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


FORMAT = _format()


def key(kind: str, source: str, extra: str = "") -> str:
    return f"{kind}/{FORMAT}/{source}/{extra}"


def known(store: Store, kind: str, source: str, extra: str = "") -> bool:
    return store.has_derived(key(kind, source, extra))


def kept(
    store: Store,
    kind: str,
    source: str,
    compute: Callable[[], T],
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T],
    extra: str = "",
) -> T:
    """The value derived from blob `source`, from the store when it is there, else computed
    and kept."""
    k = key(kind, source, extra)
    data = store.derived(k)
    if data is not None:
        try:
            return decode(data)
        except Exception:  # a damaged entry: derived again
            pass
    value = compute()
    store.set_derived(k, encode(value), source)
    return value
