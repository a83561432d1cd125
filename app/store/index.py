"""The SQLite index over blobs: models, their revision tree, and the head each model is at.

Revisions are numbered per model and never reused. Undo moves the head to its parent and
remembers the child for redo; a new edit from the head drops the redo trail. Every change of
head is a compare-and-swap on the row, so two writers can't silently overwrite each other.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Conflict, NotFound, StudioError
from .blobs import BlobStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS models (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created REAL NOT NULL,
    head INTEGER NOT NULL,
    redo TEXT NOT NULL DEFAULT '[]',
    kind TEXT NOT NULL DEFAULT 'model',
    source TEXT NOT NULL DEFAULT 'binary'
);
CREATE TABLE IF NOT EXISTS revisions (
    model_id TEXT NOT NULL REFERENCES models(id) ON DELETE CASCADE,
    rev INTEGER NOT NULL,
    parent INTEGER,
    blob TEXT NOT NULL,
    external TEXT NOT NULL DEFAULT '{}',
    ops TEXT NOT NULL DEFAULT '[]',
    changes TEXT NOT NULL DEFAULT '[]',
    created REAL NOT NULL,
    PRIMARY KEY (model_id, rev)
);
"""
# columns added after the first release: added to an older index when it is opened
LATER_COLUMNS = {
    "revisions": {
        "runtime": "TEXT",  # onnxruntime's verdict (JSON), once computed
        "invalid": "TEXT NOT NULL DEFAULT '[]'",  # why the revision fails a gate it was let through
    }
}


@dataclass(frozen=True)
class Revision:
    model_id: str
    rev: int
    parent: int | None
    blob: str
    external: dict  # external data file name -> blob digest
    ops: list
    changes: list
    created: float
    runtime: dict | None = None  # onnxruntime's verdict (runtime_check.check_model), once computed
    invalid: list = field(default_factory=list)  # messages of the gates it was stored past


@dataclass(frozen=True)
class ModelRecord:
    id: str
    name: str
    created: float
    head: int
    redo: list
    kind: str = "model"  # model | tensor | sequence | map | optional | operator_set
    source: str = "binary"  # binary | text (a text-syntax model, stored as its binary form)


class Store:
    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.blobs = BlobStore(self.data_dir / "blobs")
        self._db_path = self.data_dir / "index.sqlite3"
        self._local = threading.local()
        with self._conn() as c:
            c.executescript(SCHEMA)
            for table, columns in LATER_COLUMNS.items():
                have = {row["name"] for row in c.execute(f"PRAGMA table_info({table})")}
                for name, decl in columns.items():
                    if name not in have:
                        c.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")

    def _conn(self) -> _Tx:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self._db_path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        return _Tx(conn)

    # --- models -----------------------------------------------------------------
    def create_model(
        self, name: str, data, external: dict | None = None, kind: str = "model", source: str = "binary"
    ) -> ModelRecord:
        """Store a model: `data` its bytes or a readable stream (stored without holding it in
        memory). `external` maps each external data location to its bytes, a readable stream or
        a Path (linked in place, not copied)."""
        digest = self.blobs.put(bytes(data)) if isinstance(data, (bytes, bytearray)) else self.blobs.put_stream(data)
        ext = {loc: self._external_entry(content) for loc, content in (external or {}).items()}
        model_id = secrets.token_hex(6)
        now = time.time()
        with self._conn() as c:
            c.execute(
                "INSERT INTO models (id, name, created, head, kind, source) VALUES (?, ?, ?, 0, ?, ?)",
                (model_id, name, now, kind, source),
            )
            c.execute(
                "INSERT INTO revisions (model_id, rev, parent, blob, external, created) VALUES (?, 0, NULL, ?, ?, ?)",
                (model_id, digest, json.dumps(ext), now),
            )
        return self.model(model_id)

    def _external_entry(self, content):
        if isinstance(content, Path):
            return {"path": str(content.resolve()), "size": content.stat().st_size}
        if isinstance(content, (bytes, bytearray)):
            return self.blobs.put(bytes(content))
        return self.blobs.put_stream(content)

    def external_path(self, entry) -> Path:
        """Where an external data entry's bytes are: a blob, or a file linked in place."""
        if isinstance(entry, dict):
            return Path(entry["path"])
        return self.blobs.path(entry)

    def model(self, model_id: str) -> ModelRecord:
        with self._conn() as c:
            row = c.execute("SELECT * FROM models WHERE id = ?", (model_id,)).fetchone()
        if row is None:
            raise NotFound("unknown_model", f"no model with id {model_id!r}")
        return _record(row)

    def list_models(self) -> list[ModelRecord]:
        with self._conn() as c:
            rows = c.execute("SELECT * FROM models ORDER BY created DESC").fetchall()
        return [_record(r) for r in rows]

    def delete_model(self, model_id: str) -> None:
        self.model(model_id)
        with self._conn() as c:
            c.execute("DELETE FROM revisions WHERE model_id = ?", (model_id,))
            c.execute("DELETE FROM models WHERE id = ?", (model_id,))

    # --- revisions --------------------------------------------------------------
    def revision(self, model_id: str, rev: int | None = None) -> Revision:
        record = self.model(model_id)
        rev = record.head if rev is None else rev
        with self._conn() as c:
            row = c.execute("SELECT * FROM revisions WHERE model_id = ? AND rev = ?", (model_id, rev)).fetchone()
        if row is None:
            raise NotFound("unknown_revision", f"model {model_id} has no revision {rev}")
        return _revision(row)

    def revisions(self, model_id: str) -> list[Revision]:
        self.model(model_id)
        with self._conn() as c:
            rows = c.execute("SELECT * FROM revisions WHERE model_id = ? ORDER BY rev", (model_id,)).fetchall()
        return [_revision(r) for r in rows]

    def commit_revision(
        self,
        model_id: str,
        base: int,
        data: bytes,
        external: dict,
        ops: list,
        changes: list,
        runtime: dict | None = None,
        invalid: list | None = None,
    ) -> int:
        """Store a new revision whose parent is `base`, if `base` is still the head."""
        digest = self.blobs.put(data)
        with self._conn() as c:
            c.execute("BEGIN IMMEDIATE")
            row = c.execute("SELECT head FROM models WHERE id = ?", (model_id,)).fetchone()
            if row is None:
                raise NotFound("unknown_model", f"no model with id {model_id!r}")
            if row["head"] != base:
                raise Conflict(
                    "stale_base",
                    f"revision {base} is no longer current (the model is at revision {row['head']}); reload and retry",
                )
            new_rev = c.execute(
                "SELECT COALESCE(MAX(rev), -1) + 1 FROM revisions WHERE model_id = ?", (model_id,)
            ).fetchone()[0]
            c.execute(
                "INSERT INTO revisions (model_id, rev, parent, blob, external, ops, changes, created, runtime, invalid)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    model_id,
                    new_rev,
                    base,
                    digest,
                    json.dumps(external),
                    json.dumps(ops),
                    json.dumps(changes),
                    time.time(),
                    None if runtime is None else json.dumps(runtime),
                    json.dumps(invalid or []),
                ),
            )
            c.execute("UPDATE models SET head = ?, redo = '[]' WHERE id = ?", (new_rev, model_id))
        return new_rev

    def set_runtime(self, model_id: str, rev: int, verdict: dict, invalid: str | None = None) -> None:
        """Record onnxruntime's verdict on a revision, and why it is invalid when the verdict
        refuses an edit its parent ran (a check that finished after the edit was stored)."""
        with self._conn() as c:
            c.execute("BEGIN IMMEDIATE")
            row = c.execute("SELECT invalid FROM revisions WHERE model_id = ? AND rev = ?", (model_id, rev)).fetchone()
            if row is None:
                return  # deleted meanwhile
            reasons = json.loads(row["invalid"])
            if invalid and invalid not in reasons:
                reasons.append(invalid)
            c.execute(
                "UPDATE revisions SET runtime = ?, invalid = ? WHERE model_id = ? AND rev = ?",
                (json.dumps(verdict), json.dumps(reasons), model_id, rev),
            )

    def undo(self, model_id: str, base: int | None = None) -> int:
        with self._conn() as c:
            c.execute("BEGIN IMMEDIATE")
            record = self._locked_record(c, model_id, base)
            parent = c.execute(
                "SELECT parent FROM revisions WHERE model_id = ? AND rev = ?", (model_id, record["head"])
            ).fetchone()[0]
            if parent is None:
                raise StudioError("nothing_to_undo", "nothing to undo: the model is at its original revision", 409)
            redo = [*json.loads(record["redo"]), record["head"]]
            c.execute("UPDATE models SET head = ?, redo = ? WHERE id = ?", (parent, json.dumps(redo), model_id))
        return parent

    def redo(self, model_id: str, base: int | None = None) -> int:
        with self._conn() as c:
            c.execute("BEGIN IMMEDIATE")
            record = self._locked_record(c, model_id, base)
            redo = json.loads(record["redo"])
            if not redo:
                raise StudioError("nothing_to_redo", "nothing to redo", 409)
            target = redo.pop()
            c.execute("UPDATE models SET head = ?, redo = ? WHERE id = ?", (target, json.dumps(redo), model_id))
        return target

    @staticmethod
    def _locked_record(c, model_id: str, base: int | None):
        record = c.execute("SELECT * FROM models WHERE id = ?", (model_id,)).fetchone()
        if record is None:
            raise NotFound("unknown_model", f"no model with id {model_id!r}")
        if base is not None and record["head"] != base:
            raise Conflict(
                "stale_base",
                f"revision {base} is no longer current (the model is at revision {record['head']}); reload and retry",
            )
        return record


def _record(row) -> ModelRecord:
    return ModelRecord(
        row["id"], row["name"], row["created"], row["head"], json.loads(row["redo"]), row["kind"], row["source"]
    )


def _revision(row) -> Revision:
    return Revision(
        row["model_id"],
        row["rev"],
        row["parent"],
        row["blob"],
        json.loads(row["external"]),
        json.loads(row["ops"]),
        json.loads(row["changes"]),
        row["created"],
        None if row["runtime"] is None else json.loads(row["runtime"]),
        json.loads(row["invalid"]),
    )


class _Tx:
    """`with` block over a connection in autocommit mode: commits an explicit BEGIN, rolls back on error."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
        return False
