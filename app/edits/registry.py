"""The registry of edit ops: JSON op name -> function and the fields it takes, declared once with
their types. The batch check, the API, the UI and the OpenAPI document all read it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import onnx

from .batch_end import LateLine
from .jsontypes import MISSING, Field, Object


@dataclass(frozen=True)
class EditOp:
    name: str
    fn: Callable[[onnx.ModelProto, dict], str | LateLine]  # applies in place, returns what it changed
    fields: tuple[Field, ...]
    doc: str
    # the op writes the model's tensors anew from a tool's result (where a tensor's external data
    # file is named): the batch's result is checked to name no file the model lacks
    rewrites_tensors: bool = False

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if not f.required)

    @property
    def contract(self) -> Object:
        """The op's fields as one JSON object type ("op" itself aside)."""
        return Object(self.fields)

    def with_defaults(self, op: dict) -> dict:
        """op with the declared default of each optional field it leaves out."""
        out = {f.name: copy.deepcopy(f.default) for f in self.fields if f.default is not MISSING}
        out.update(op)
        return out

    def schema(self) -> dict:
        """The JSON Schema of one such op, "op" included."""
        body = self.contract.schema()
        return {
            "type": "object",
            "title": self.name,
            "description": self.doc,
            "properties": {"op": {"const": self.name}, **body["properties"]},
            "required": ["op", *body["required"]],
            "additionalProperties": False,
        }


REGISTRY: dict[str, EditOp] = {}


def edit_op(name: str, *fields: Field, rewrites_tensors: bool = False):
    """Register fn(model, op) as the edit op `name` taking `fields`; its docstring documents it.
    fn sees an op already checked against the fields, with defaults filled in."""

    def wrap(fn):
        REGISTRY[name] = EditOp(name, fn, fields, " ".join((fn.__doc__ or "").split()), rewrites_tensors)
        return fn

    return wrap


def describe() -> list[dict]:
    return [
        {"op": e.name, "required": list(e.required), "optional": list(e.optional), "doc": e.doc, "schema": e.schema()}
        for e in REGISTRY.values()
    ]
