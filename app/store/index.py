"""The SQLite index: models, their revision tree, the head each model is at, derived data by
content, and the uploads and edits under way (which the blob collector must spare).

Revisions are numbered per model and never reused. Undo moves the head to its parent and
remembers the child for redo; a new edit from the head drops the redo trail. Every change of
head is a compare-and-swap on the row, so two writers can't silently overwrite each other.

An upload or edit under way is an intent row naming the process that began it: a file in the
owners folder next to the index, which that process holds an exclusive flock on for as long as
it lives. The kernel lets go of the lock when the process dies however it dies (SIGKILL, the
OOM killer), so the collector drops the intents of an owner whose lock it can take instead of
sparing what they stored until they expire.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..errors import NotFound, StudioError, stale_base
from .authorship import current_author
from .op_blobs import blob_refs
from .records import ModelRecord, Revision

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
CREATE TABLE IF NOT EXISTS derived (
    key TEXT PRIMARY KEY,  -- kind/format version/digest of what it is derived from
    digest TEXT NOT NULL,
    source TEXT NOT NULL,  -- the blob it is derived from (collected with it)
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS intents (
    id TEXT PRIMARY KEY,  -- an upload or edit storing blobs it has not referenced yet
    started REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    key TEXT PRIMARY KEY,  -- HMAC of the browser's session id under the access token (web/auth.py)
    expires REAL NOT NULL
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
        "tensors": "TEXT NOT NULL DEFAULT '{}'",  # digest -> size of the tensors the graph references
        "source": "TEXT",  # revision 0 of a split upload: how its bytes are rebuilt
        "card": "TEXT",  # producer, opset, node count (JSON: store/card.py), for the models list
        "author": "TEXT",  # who made it: the request's person (store/authorship.py), when said
        "recipe": "TEXT",  # a recipe's batch: {"run", "name", "batch", "batches", "origin"} (JSON)
    },
    "models": {
        "content": "TEXT",  # what identifies the uploaded bytes (duplicates are found by it)
        "checks": "TEXT",  # its reference cases (JSON: api/reference.py), once it has any
        "moved": "TEXT",  # its head's last undo or redo: {"how", "by", "at", "from", "to"} (JSON), until an edit
    },
    "sessions": {
        "name": "TEXT",  # the name given at sign-in: each revision the session makes is by it
    },
    "intents": {
        "owner": "TEXT",  # the process that began it: its file in the owners folder (see above)
    },
}


class SqlIndex:
    """The index's logic, in SQL both back ends run; each connects, sets its schema up and
    tells live uploads and edits from dead ones its own way (SqliteIndex, pg_index.PostgresIndex)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _connect(self):
        raise NotImplementedError

    def _owner_name(self) -> str:
        raise NotImplementedError

    def _drop_dead_owners(self) -> None:
        raise NotImplementedError

    def _open_db(self) -> Db:
        """A new connection, as the SQL sees it."""
        return Db(self._connect())

    def _conn(self) -> _Tx:
        """This thread's connection, in a `with` block (one transaction when it calls begin)."""
        db = getattr(self._local, "db", None)
        if db is None or db.lost():  # a database server restarted or failed over: connect again
            if db is not None:
                db.close()
            db = self._local.db = self._open_db()
        return _Tx(db)

    def ping(self) -> None:
        """Raise unless the index answers a query (on a connection found lost: a new one)."""
        with self._conn() as c:
            c.execute("SELECT 1 FROM models LIMIT 1").fetchall()

    # --- models -----------------------------------------------------------------
    def add_model(
        self, name: str, revision: dict, kind: str = "model", source: str = "binary", content: str | None = None
    ) -> str:
        """A new model at its revision 0 (`revision`: the columns of insert_revision)."""
        model_id = secrets.token_hex(6)
        now = time.time()
        with self._conn() as c:
            c.begin()
            c.execute(
                "INSERT INTO models (id, name, created, head, kind, source, content) VALUES (?, ?, ?, 0, ?, ?, ?)",
                (model_id, name, now, kind, source, content),
            )
            _insert_revision(c, model_id, 0, None, now, **revision)
        return model_id

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
            c.begin()
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

    # --- sign-in sessions (web/auth.py): shared by every worker and host -----------------
    def add_session(self, key: str, expires: float, name: str | None = None) -> None:
        """A browser signed in, as `name` when one was given (its sessions past their time go)."""
        with self._conn() as c:
            c.begin()
            c.execute("DELETE FROM sessions WHERE expires < ?", (time.time(),))
            c.execute("INSERT INTO sessions (key, expires, name) VALUES (?, ?, ?)", (key, expires, name))

    def session(self, key: str) -> tuple[float, str | None] | None:
        """(when it ends, the name given at sign-in) of a signed-in browser's session; None when
        it has none (signed out, or never)."""
        with self._conn() as c:
            row = c.execute("SELECT expires, name FROM sessions WHERE key = ?", (key,)).fetchone()
        return None if row is None else (float(row["expires"]), row["name"])

    def end_session(self, key: str) -> None:
        with self._conn() as c:
            c.begin()
            c.execute("DELETE FROM sessions WHERE key = ?", (key,))

    def all_revisions(self) -> dict[str, list[Revision]]:
        """Every model's revisions in one query (the models list: not one query a model)."""
        out: dict[str, list[Revision]] = {}
        with self._conn() as c:
            for row in c.execute("SELECT * FROM revisions ORDER BY model_id, rev"):
                out.setdefault(row["model_id"], []).append(_revision(row))
        return out

    def commit_revision(self, model_id: str, base: int, revision: dict) -> int:
        """Store a new revision whose parent is `base`, if `base` is still the head."""
        return self.commit_revisions(model_id, base, [revision])[-1]

    def commit_revisions(self, model_id: str, base: int, revisions: list[dict]) -> list[int]:
        """Store a chain of revisions, the first on `base` (still the head), each the next one's
        parent, the last the head: all of them in one transaction, or none."""
        stored: list[int] = []
        with self._conn() as c:
            c.begin()
            self._locked_record(c, model_id, base)
            parent, now = base, time.time()
            for revision in revisions:
                new_rev = _next_revision(c, model_id)
                _insert_revision(c, model_id, new_rev, parent, now, **revision)
                stored.append(new_rev)
                parent = new_rev
            c.execute("UPDATE models SET head = ?, redo = '[]', moved = NULL WHERE id = ?", (parent, model_id))
        return stored

    def restore(self, model_id: str, base: int, rev: int, ops: list, changes: list) -> int:
        """A new revision on `base` (still the head) holding what revision `rev` holds: its
        graph, tensors, files and verdicts, the same blobs (nothing is copied)."""
        with self._conn() as c:
            c.begin()
            self._locked_record(c, model_id, base)
            row = c.execute("SELECT * FROM revisions WHERE model_id = ? AND rev = ?", (model_id, rev)).fetchone()
            if row is None:
                raise NotFound("unknown_revision", f"model {model_id} has no revision {rev}")
            old = _revision(row)
            new_rev = _next_revision(c, model_id)
            _insert_revision(
                c,
                model_id,
                new_rev,
                base,
                time.time(),
                blob=old.blob,
                external=old.external,
                tensors=old.tensors,
                source=old.source,
                ops=ops,
                changes=changes,
                runtime=old.runtime,
                invalid=old.invalid,
                card=old.card,
            )
            c.execute("UPDATE models SET head = ?, redo = '[]', moved = NULL WHERE id = ?", (new_rev, model_id))
        return new_rev

    def set_card(self, model_id: str, rev: int, card: dict) -> None:
        """Record a revision's card (store/card.py), made later for one stored without it."""
        with self._conn() as c:
            c.begin()
            c.execute("UPDATE revisions SET card = ? WHERE model_id = ? AND rev = ?", (json.dumps(card), model_id, rev))

    def set_runtime(self, model_id: str, rev: int, verdict: dict, invalid: str | None = None) -> None:
        """Record onnxruntime's verdict on a revision, and why it is invalid when the verdict
        refuses an edit its parent ran (a check that finished after the edit was stored)."""
        with self._conn() as c:
            c.begin()
            row = c.execute(
                "SELECT invalid FROM revisions WHERE model_id = ? AND rev = ?" + c.for_update, (model_id, rev)
            ).fetchone()
            if row is None:
                return  # deleted meanwhile
            reasons = json.loads(row["invalid"])
            if invalid and invalid not in reasons:
                reasons.append(invalid)
            c.execute(
                "UPDATE revisions SET runtime = ?, invalid = ? WHERE model_id = ? AND rev = ?",
                (json.dumps(verdict), json.dumps(reasons), model_id, rev),
            )

    def update_checks(self, model_id: str, change: Callable[[dict], dict]) -> dict:
        """Replace a model's reference cases by change(the current ones), in one transaction
        with the row locked (two clients adding a case each keep both); answers the new ones."""
        with self._conn() as c:
            c.begin()
            record = self._locked_record(c, model_id, None)
            checks = change(json.loads(record["checks"]) if record["checks"] else {})
            c.execute("UPDATE models SET checks = ? WHERE id = ?", (json.dumps(checks), model_id))
        return checks

    def rename(self, model_id: str, name: str) -> None:
        """A model's name as listed and downloaded (its revisions stay as they are)."""
        with self._conn() as c:
            c.begin()
            self._locked_record(c, model_id, None)  # 404 for no such model
            c.execute("UPDATE models SET name = ? WHERE id = ?", (name, model_id))

    def undo(self, model_id: str, base: int | None = None, steps: int = 1) -> int:
        """Move the head `steps` revisions back along its parents, all or none (a recipe's
        batches undone at once); Redo brings them back one at a time, the nearest first."""
        with self._conn() as c:
            c.begin()
            record = self._locked_record(c, model_id, base)
            head, redo = record["head"], json.loads(record["redo"])
            for done in range(steps):
                parent = c.execute(
                    "SELECT parent FROM revisions WHERE model_id = ? AND rev = ?", (model_id, head)
                ).fetchone()["parent"]
                if parent is None:
                    said = "the model is at its original revision" if not done else f"only {done} step(s) lead back"
                    raise StudioError("nothing_to_undo", f"nothing to undo: {said}", 409)
                redo.append(head)
                head = parent
            moved = _move("undo", record["head"], head)
            c.execute(
                "UPDATE models SET head = ?, redo = ?, moved = ? WHERE id = ?",
                (head, json.dumps(redo), moved, model_id),
            )
        return head

    def redo(self, model_id: str, base: int | None = None) -> int:
        with self._conn() as c:
            c.begin()
            record = self._locked_record(c, model_id, base)
            redo = json.loads(record["redo"])
            if not redo:
                raise StudioError("nothing_to_redo", "nothing to redo", 409)
            target = redo.pop()
            moved = _move("redo", record["head"], target)
            c.execute(
                "UPDATE models SET head = ?, redo = ?, moved = ? WHERE id = ?",
                (target, json.dumps(redo), moved, model_id),
            )
        return target

    def find_content(self, content: str) -> list[ModelRecord]:
        """The models whose upload had this content key, oldest first."""
        with self._conn() as c:
            rows = c.execute("SELECT * FROM models WHERE content = ? ORDER BY created", (content,)).fetchall()
        return [_record(r) for r in rows]

    # --- derived data, by the content it comes from --------------------------------
    def derived(self, key: str) -> str | None:
        with self._conn() as c:
            row = c.execute("SELECT digest FROM derived WHERE key = ?", (key,)).fetchone()
        return None if row is None else row["digest"]

    def set_derived(self, key: str, digest: str, source: str) -> None:
        with self._conn() as c:
            c.execute(
                "INSERT INTO derived (key, digest, source, created) VALUES (?, ?, ?, ?) ON CONFLICT (key)"
                " DO UPDATE SET digest = excluded.digest, source = excluded.source, created = excluded.created",
                (key, digest, source, time.time()),
            )

    def derived_blobs(self) -> list[tuple[str, str]]:
        """(derived blob, the blob it comes from) of every derived entry."""
        with self._conn() as c:
            return [(r["digest"], r["source"]) for r in c.execute("SELECT digest, source FROM derived")]

    # --- what the collector must keep ----------------------------------------------
    def begin_intent(self) -> str:
        """An upload or edit is about to store blobs: until end_intent, the collector spares
        every blob stored since now."""
        intent = secrets.token_hex(8)
        owner = self._owner_name()
        with self._conn() as c:
            c.execute("INSERT INTO intents (id, started, owner) VALUES (?, ?, ?)", (intent, time.time(), owner))
        return intent

    def end_intent(self, intent: str) -> None:
        with self._conn() as c:
            c.execute("DELETE FROM intents WHERE id = ?", (intent,))

    def oldest_intent(self, expire_before: float) -> float | None:
        """When the oldest upload or edit still under way started. The intents of processes
        that died are dropped, and any begun before expire_before (an owner's file lost, an
        intent of a version that recorded no owner)."""
        self._drop_dead_owners()
        with self._conn() as c:
            c.execute("DELETE FROM intents WHERE started < ?", (expire_before,))
            row = c.execute("SELECT MIN(started) AS t FROM intents").fetchone()
        return row["t"]

    def referenced(self) -> tuple[set[str], set[str]]:
        """(every blob a revision needs — its own, and the uploaded files its ops name — every
        derived blob whose source is one of those)."""
        used: set[str] = set()
        with self._conn() as c:
            for row in c.execute("SELECT blob, external, tensors, source, ops FROM revisions"):
                used.add(row["blob"])
                used.update(blob_refs(json.loads(row["ops"])))  # a recipe through the edit carries them
                used.update(json.loads(row["tensors"]))
                used.update(e for e in json.loads(row["external"]).values() if isinstance(e, str))
                if row["source"]:
                    used.add(json.loads(row["source"])["skeleton"])
            for row in c.execute("SELECT checks FROM models WHERE checks IS NOT NULL"):
                used.update(_check_blobs(json.loads(row["checks"])))
            derived = c.execute("SELECT key, digest, source FROM derived").fetchall()
            stale = [r["key"] for r in derived if r["source"] not in used]
            for key in stale:
                c.execute("DELETE FROM derived WHERE key = ?", (key,))
        return used, {r["digest"] for r in derived if r["source"] in used}

    @staticmethod
    def _locked_record(c, model_id: str, base: int | None):
        record = c.execute("SELECT * FROM models WHERE id = ?" + c.for_update, (model_id,)).fetchone()
        if record is None:
            raise NotFound("unknown_model", f"no model with id {model_id!r}")
        if base is not None and record["head"] != base:
            raise stale_base(base, record["head"])
        return record


class SqliteIndex(SqlIndex):
    """The index in one SQLite file (WAL: readers never wait for the writer)."""

    def __init__(self, db_path: Path):
        super().__init__()
        self._db_path = Path(db_path)
        self._owners = self._db_path.with_name(self._db_path.name + ".owners")
        self._owner: str | None = None  # this process's file in the owners folder, once it begins an intent
        # kept open: the lock on it lasts as long as the process (or this index)
        self._owner_file: BinaryIO | None = None
        self._owner_lock = threading.Lock()
        with self._conn() as c:
            c.conn.executescript(SCHEMA)
            c.begin()  # one process at a time adds the later columns (gunicorn's workers start together)
            for table, columns in LATER_COLUMNS.items():
                have = {row["name"] for row in c.execute(f"PRAGMA table_info({table})")}
                for name, decl in columns.items():
                    if name not in have:
                        c.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")

    def _connect(self):
        conn = sqlite3.connect(self._db_path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.row_factory = sqlite3.Row
        return conn

    def _owner_name(self) -> str:
        """This process's file in the owners folder, made (and locked) the first time it's asked for."""
        with self._owner_lock:
            if self._owner is None:
                self._owners.mkdir(exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=self._owners, prefix=".new-")
                self._owner_file = open(fd, "rb")  # noqa: SIM115 (held open on purpose)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a fresh file: nobody else holds it
                name = secrets.token_hex(8)
                # named only once locked, so a collector never finds it unlocked while we run
                os.replace(tmp, self._owners / name)
                self._owner = name
            return self._owner

    def _drop_dead_owners(self) -> None:
        """Drop the intents of processes that died under way: an owner file whose lock can be
        taken (flock: also a second open of our own file in this process would fail to take it)."""
        if not self._owners.is_dir():
            return
        for path in self._owners.iterdir():
            if path.name.startswith(".new-") or path.name == self._owner:
                continue  # .new-: being named (or left by a kill in that instant, with no intent)
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue  # dropped by another collector just now
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its process is running
                with self._conn() as c:
                    c.execute("DELETE FROM intents WHERE owner = ?", (path.name,))
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()  # after the rows: a collector killed in between sees the file again
            finally:
                os.close(fd)


def _next_revision(c, model_id: str) -> int:
    """The number a new revision of the model gets: never one it had (an undone branch keeps its)."""
    return c.execute(
        "SELECT COALESCE(MAX(rev), -1) + 1 AS next FROM revisions WHERE model_id = ?", (model_id,)
    ).fetchone()["next"]


def _insert_revision(
    c,
    model_id: str,
    rev: int,
    parent: int | None,
    created: float,
    *,
    blob: str,
    external: dict,
    tensors: dict,
    source: dict | None = None,
    ops: list | None = None,
    changes: list | None = None,
    runtime: dict | None = None,
    invalid: list | None = None,
    card: dict | None = None,
    recipe: dict | None = None,
) -> None:
    c.execute(
        "INSERT INTO revisions (model_id, rev, parent, blob, external, ops, changes, created, runtime, invalid,"
        " tensors, source, card, author, recipe) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            model_id,
            rev,
            parent,
            blob,
            json.dumps(external),
            json.dumps(ops or []),
            json.dumps(changes or []),
            created,
            None if runtime is None else json.dumps(runtime),
            json.dumps(invalid or []),
            json.dumps(tensors),
            None if source is None else json.dumps(source),
            None if card is None else json.dumps(card),
            current_author(),  # whoever the request storing it acts as
            None if recipe is None else json.dumps(recipe),
        ),
    )


def _check_blobs(checks: dict) -> set[str]:
    """The .npy blobs a model's reference cases name (their inputs and expected outputs)."""
    return {
        digest
        for case in checks.get("cases", [])
        for side in ("inputs", "expected")
        for digest in case.get(side, {}).values()
        if isinstance(digest, str)
    }


def _move(how: str, start: int, end: int) -> str:
    """A head's undo or redo as the models row keeps it: who moved it (QA36 #4: a teammate's
    Redo read as the revision's author changing the model anew), when, from where to where."""
    return json.dumps({"how": how, "by": current_author(), "at": time.time(), "from": start, "to": end})


def _record(row) -> ModelRecord:
    return ModelRecord(
        row["id"],
        row["name"],
        row["created"],
        row["head"],
        json.loads(row["redo"]),
        row["kind"],
        row["source"],
        row["content"],
        json.loads(row["checks"]) if row["checks"] else None,
        json.loads(row["moved"]) if row["moved"] else None,
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
        json.loads(row["tensors"]),
        None if row["source"] is None else json.loads(row["source"]),
        None if row["card"] is None else json.loads(row["card"]),
        row["author"],
        None if row["recipe"] is None else json.loads(row["recipe"]),
    )


class Db:
    """One connection, as the index's SQL sees it: `?` placeholders, rows by column name,
    explicit transactions (`begin`, committed or rolled back by the `with` block), and
    `for_update` to lock the rows a compare-and-swap reads (PostgreSQL's, pg_index.PgDb; SQLite's
    BEGIN IMMEDIATE locks the whole database already)."""

    for_update = ""

    def __init__(self, conn):
        self.conn = conn

    def execute(self, sql: str, params: tuple | list = ()):
        return self.conn.execute(sql, params)

    def lost(self) -> bool:
        """The connection is gone (a database server closed it); a SQLite file's never is."""
        return False

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def finish(self, failed: bool) -> None:
        """End the block's transaction, if it began one: rolled back when the block failed."""
        if self.in_transaction():
            self.conn.execute("ROLLBACK" if failed else "COMMIT")

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a connection already gone
            self.conn.close()


class _Tx:
    """`with` block over a connection in autocommit mode: commits an explicit BEGIN, rolls back on error."""

    def __init__(self, db: Db):
        self.db = db

    def __enter__(self) -> Db:
        return self.db

    def __exit__(self, exc_type, exc, tb):
        self.db.finish(exc_type is not None)
        return False
