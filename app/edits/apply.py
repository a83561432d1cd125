"""Applying a batch of edit ops all-or-nothing, with the validation gate."""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from ..errors import StudioError
from ..onnx_io import checker_verdict, parse_model
from ..onnx_io.causes import causes_of
from ..onnx_io.light import basic_check, light_copy
from .contract import check_batch
from .sources import blob_reader


@dataclass
class EditResult:
    model: onnx.ModelProto
    data: bytes
    changes: list[str]
    validation: dict
    changed: bool = True  # False: the edited model serializes to the base's bytes (a no-op)


def apply_edits(base_data: bytes, ops, base_validation: dict, read_blob=None) -> EditResult:
    """Apply `ops` in order to a fresh copy of the base model. Any failing op fails the batch.
    The result may not fail onnx.checker when the base passed it. read_blob(digest) -> bytes
    supplies uploaded .npy files that ops name."""
    with blob_reader(read_blob):
        return _apply(base_data, ops, base_validation)


def _apply(base_data: bytes, ops, base_validation: dict) -> EditResult:
    checked = check_batch(ops)  # the whole batch, before the model is even parsed
    model = parse_model(base_data)
    changes = []
    for k, (entry, op) in enumerate(checked):
        try:
            changes.append(entry.fn(model, op))
        except StudioError as exc:
            detail = exc.message.removeprefix(f"{entry.name}: ")
            exc.message = f"op #{k + 1} ({entry.name}): {detail}"
            exc.args = (exc.message,)
            raise
    try:
        data = model.SerializeToString()
    except Exception as exc:  # e.g. the 2 GiB protobuf limit
        raise StudioError("cannot_serialize", f"the edit made a model that can't be serialized: {exc}", 422) from None
    if data == base_data:
        # saving a value unchanged, renaming to the same name...: no new revision to check or store
        return EditResult(model, data, [], dict(base_validation), changed=False)
    validation = basic_check(model)
    if base_validation.get("ok") and not validation["ok"]:
        causes = causes_of(validation["message"], model)
        raise StudioError("invalid_result", f"the edit would make the model invalid: {causes.line()}", 422, causes.more)
    if base_validation.get("full", {}).get("ok") and len(data) < 2**31 - 1:
        # the base also passed the full check (strict shape inference): the result must too
        full = checker_verdict(light_copy(model), full=True)
        if not full["ok"]:
            causes = causes_of(full["message"], model)
            raise StudioError(
                "invalid_result", f"the edit would break shape/type inference: {causes.line()}", 422, causes.more
            )
    return EditResult(model, data, changes, validation)
