"""A run's values as files: a tensor as an .npy, and what onnxruntime gives for the other ONNX
types — a sequence (a list of tensors, or of maps: a ZipMap's probabilities), an empty optional
(None), a map (a dict) — as an .npz whose `__kind__` says which ("sequence": `item0`, `item1`,
... or `item0.keys`, `item0.values`, ...; "none"; "map": `keys`, `values`).
The worker writes them, the server reads them (previews, comparisons, reference cases).

Numpy only: the onnxruntime worker (ort_worker.py, which imports no app module) loads this file
by its path.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Map:
    keys: np.ndarray
    values: np.ndarray


@dataclass
class Sequence:
    items: list[np.ndarray | Map]


@dataclass
class Empty:
    """An optional without a value."""


Value = np.ndarray | Sequence | Empty | Map


def save(stem: str, value, tensor, map_values: str | None = None) -> str:
    """Write `value` (an array, a list of arrays or dicts, None or a dict, as onnxruntime gives
    them) at `stem` + .npy or .npz; `tensor` makes each array storable (strings, types numpy
    lacks); `map_values`: the numpy type of a map's values (onnxruntime gives python floats for
    a map of floats). The path written."""
    if not isinstance(value, list | dict) and value is not None:
        path = stem + ".npy"
        np.save(path, tensor(value), allow_pickle=False)
        return path
    path = stem + ".npz"
    with open(path, "wb") as f:
        f.write(dump(value, tensor, map_values))
    return path


def dump(value, tensor, map_values: str | None = None) -> bytes:
    """The .npz bytes of a list, None or a dict (as `save` writes them)."""
    import io

    arrays: dict[str, np.ndarray] = {}

    def put(prefix: str, item) -> None:
        if isinstance(item, dict):
            arrays[f"{prefix}keys"] = np.array(list(item))
            arrays[f"{prefix}values"] = tensor(np.array(list(item.values()), dtype=map_values))
        else:
            arrays[prefix.rstrip(".")] = tensor(item)

    if isinstance(value, list):
        kind = "sequence"
        for k, item in enumerate(value):
            put(f"item{k}.", item)
    elif isinstance(value, dict):
        kind = "map"
        put("", value)
    else:
        kind = "none"
    buf = io.BytesIO()
    members: dict[str, Any] = {"__kind__": np.array(kind), **arrays}
    np.savez(buf, **members)
    return buf.getvalue()


def as_fed(value: Value, type_name: str):
    """A saved value as onnxruntime takes it for an input of this type ("seq(tensor(float))",
    "optional(tensor(float))", "map(int64,tensor(float))"): a list (of arrays or dicts), the
    value or None, a dict. A one-tensor sequence and an optional tensor are the same bytes in a
    test data set's .pb: the input's type says which is meant."""
    if isinstance(value, Map):
        return dict(zip(value.keys.tolist(), value.values.tolist(), strict=True))
    if isinstance(value, Empty):
        return None if type_name.startswith("optional(") else []
    items = [] if isinstance(value, Empty) else value.items if isinstance(value, Sequence) else [value]
    items = [as_fed(v, "") if isinstance(v, Map) else v for v in items]
    if type_name.startswith("optional(") and not type_name.startswith("optional(seq("):
        return items[0] if items else None
    return items


# numpy reads an .npy header with ast.literal_eval, and CPython 3.11's compile() isn't safe
# from several threads at once ("SystemError: AST constructor recursion depth mismatch", seen
# in CI with four reference cases added at once): the server's threads read .npy one at a time
NPY_LOCK = threading.Lock()


def load(source) -> Value:
    """What `save` wrote (a path or a binary file)."""
    with NPY_LOCK:
        return _load(source)


def _load(source) -> Value:
    raw = np.load(source, allow_pickle=False)
    if isinstance(raw, np.ndarray):
        return raw
    with raw as z:
        kind = str(z["__kind__"])
        if kind == "map":
            return Map(z["keys"], z["values"])
        if kind == "none":
            return Empty()
        items: list[np.ndarray | Map] = []
        while f"item{len(items)}" in z.files or f"item{len(items)}.keys" in z.files:
            k = len(items)
            items.append(z[f"item{k}"] if f"item{k}" in z.files else Map(z[f"item{k}.keys"], z[f"item{k}.values"]))
        return Sequence(items)


def kind_of(value: Value) -> str:
    return {Sequence: "sequence", Empty: "optional", Map: "map"}.get(type(value), "tensor")
