"""The registry of edit ops: JSON op name -> function. The API, the UI and the OpenAPI document read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import onnx


@dataclass(frozen=True)
class EditOp:
    name: str
    fn: Callable[[onnx.ModelProto, dict], str]  # applies in place, returns what it changed
    required: tuple[str, ...]
    optional: tuple[str, ...]
    doc: str


REGISTRY: dict[str, EditOp] = {}


def edit_op(name: str, required: tuple[str, ...] = (), optional: tuple[str, ...] = ()):
    """Register fn(model, op) as the edit op `name`; its docstring documents it."""

    def wrap(fn):
        REGISTRY[name] = EditOp(name, fn, tuple(required), tuple(optional), " ".join((fn.__doc__ or "").split()))
        return fn

    return wrap


def describe() -> list[dict]:
    return [
        {"op": e.name, "required": list(e.required), "optional": list(e.optional), "doc": e.doc}
        for e in REGISTRY.values()
    ]
