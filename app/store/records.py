"""What the index holds about models and revisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Revision:
    model_id: str
    rev: int
    parent: int | None
    blob: str  # the graph: the model with its big tensors as references (wire.py)
    external: dict  # external data file name -> blob digest (or {"path", "size"}: linked in place)
    ops: list
    changes: list
    created: float
    runtime: dict | None = None  # onnxruntime's verdict (runtime_check.check_model), once computed
    invalid: list = field(default_factory=list)  # messages of the gates it was stored past
    tensors: dict = field(default_factory=dict)  # blob digest -> size of each tensor the graph references
    source: dict | None = None  # revision 0 of a split upload: how its bytes are rebuilt (wire.skeleton)
    card: dict | None = None  # producer, opset, node count (card.py); None for one stored before cards
    author: str | None = None  # who made it (authorship.py); None when no name was said
    recipe: dict | None = None  # a recipe's batch: {"run", "name", "batch", "batches", "origin"}

    def blobs(self) -> set[str]:
        """Every blob this revision needs."""
        out = {self.blob, *self.tensors}
        out.update(e for e in self.external.values() if isinstance(e, str))
        if self.source:
            out.add(self.source["skeleton"])
        return out


@dataclass(frozen=True)
class Edited:
    """An edited graph to store as a revision (Store.commit_revisions)."""

    data: bytes  # the graph's bytes
    external: dict  # the external data files it still names
    ops: list  # the edit ops that made it, nodes by name
    changes: list
    runtime: dict | None = None
    invalid: list | None = None
    model: Any = None  # the parsed graph `data` serializes, when the caller has it
    added: set[str] = field(default_factory=set)  # blobs the edit itself stored
    recipe: dict | None = None  # the recipe batch it replays (Revision.recipe)


@dataclass(frozen=True)
class ModelRecord:
    id: str
    name: str
    created: float
    head: int
    redo: list
    kind: str = "model"  # model | tensor | sequence | map | optional | operator_set
    source: str = "binary"  # binary | text (a text-syntax model, stored as its binary form)
    content: str | None = None  # digest of the uploaded bytes (the same file uploaded again is found by it)
    checks: dict | None = None  # reference cases its revisions' outputs are checked against (api/reference.py)
    moved: dict | None = None  # its head's last undo or redo, until an edit: {"how", "by", "at", "from", "to"}
