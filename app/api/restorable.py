"""Where a refused downward opset conversion can go instead: a revision of the model's own
history, from before an upward conversion, that is already at (or below) the opset asked for."""

from __future__ import annotations

from ..store.records import Revision
from .documents import store


def older_opset_revision(model_id: str, head: Revision, ops: object) -> str:
    """The words a refused convert_opset's message ends with when the head's history holds a
    revision, from before a conversion, at or below the opset `ops` asked for ("" otherwise):
    restoring it gives that opset with no converter at all."""
    asked = (
        [op.get("version") for op in ops if isinstance(op, dict) and op.get("op") == "convert_opset"]
        if isinstance(ops, list)
        else []
    )
    target = min((v for v in asked if isinstance(v, int) and not isinstance(v, bool)), default=None)
    opset = (head.card or {}).get("opset")
    if target is None or opset is None or target >= opset:
        return ""
    s = store()
    r = head
    while r.parent is not None:
        parent = s.revision(head.model_id, r.parent)
        converted = any(isinstance(op, dict) and op.get("op") == "convert_opset" for op in r.ops)
        held = (parent.card or {}).get("opset")
        if converted and held is not None and held <= target:
            to = (r.card or {}).get("opset", opset)
            return (
                f" (revision {parent.rev}, from before the conversion to opset {to}, is at opset {held}:"
                " History → Restore it instead)"
            )
        r = parent
    return ""
