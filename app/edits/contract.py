"""The edit-op contract, enforced once: every op of a batch is checked against its declared
fields (names, types, required) before any op runs, so ops deal only in well-typed values."""

from __future__ import annotations

from ..errors import StudioError
from .registry import REGISTRY, EditOp

MAX_OPS = 1000
# ops that run onnx over the whole model (inference, the version converter, extraction): a
# batch of 1,000 convert_opset held a server 45 s
WHOLE_MODEL_OPS = frozenset(
    {
        "convert_opset",
        "convert_float16",
        "quantize_dynamic",
        "quantize_static",
        "simplify",
        "infer_shapes",
        "extract_subgraph",
        "cleanup",
        "compose",
    }
)
MAX_WHOLE_MODEL_OPS = 8


def whole_model_words() -> str:
    """The ops counted toward MAX_WHOLE_MODEL_OPS, in words: the refusal's, and docs/api.md's
    (api/error_codes.py): the named ones, and each op with `update_types` when it is true."""
    typed = [name for name, e in REGISTRY.items() if any(f.name == "update_types" for f in e.fields)]
    return f"{', '.join(sorted(WHOLE_MODEL_OPS))}, {' and '.join(typed)} with update_types"


def check_batch(ops) -> list[tuple[EditOp, dict]]:
    """Each op's registry entry and its fields with defaults filled in; a 400 naming the op's
    index, the op and the field for the first op that breaks its contract."""
    if not isinstance(ops, list) or not ops:
        raise StudioError("bad_request", "ops must be a non-empty list of edit ops")
    if len(ops) > MAX_OPS:
        raise StudioError("bad_request", f"a batch holds at most {MAX_OPS} ops")
    checked = [_check_op(k, op) for k, op in enumerate(ops, start=1)]
    heavy = sum(1 for entry, fields in checked if entry.name in WHOLE_MODEL_OPS or fields.get("update_types"))
    if heavy > MAX_WHOLE_MODEL_OPS:
        raise StudioError(
            "batch_too_heavy",
            f"a batch runs at most {MAX_WHOLE_MODEL_OPS} whole-model ops ({whole_model_words()}); this one has {heavy}",
            422,
        )
    return checked


def _check_op(k: int, op) -> tuple[EditOp, dict]:
    if not isinstance(op, dict) or not isinstance(op.get("op"), str):
        raise StudioError("bad_op", f'op #{k}: each op must be an object with an "op" name')
    entry = REGISTRY.get(op["op"])
    if entry is None:
        known = ", ".join(sorted(REGISTRY))
        raise StudioError("unknown_op", f"op #{k}: unknown op {op['op']!r} (known: {known})")
    fields = {key: v for key, v in op.items() if key != "op"}
    problem = entry.contract.check(fields, "")
    if problem:
        code = "missing_field" if problem.endswith("is required") else "bad_field"
        raise StudioError(code, f"op #{k} ({entry.name}): {problem}")
    return entry, entry.with_defaults(op)
