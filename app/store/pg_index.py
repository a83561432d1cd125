"""The index in PostgreSQL, for a team's server: several app hosts and workers over one
database (psycopg 3). The same SQL as SQLite's (index.SqlIndex), with row locks (SELECT ... FOR
UPDATE) for the compare-and-swaps, and uploads or edits under way told live from dead by a
session advisory lock each process holds while it runs (the server drops it when the process's
connection goes, however the process died)."""

from __future__ import annotations

import hashlib
import secrets
import threading

from .index import LATER_COLUMNS, SqlIndex

SCHEMA = """
CREATE TABLE IF NOT EXISTS models (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
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
    created DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (model_id, rev)
);
CREATE TABLE IF NOT EXISTS derived (
    key TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    source TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS intents (
    id TEXT PRIMARY KEY,
    started DOUBLE PRECISION NOT NULL
);
"""


def _lock_key(owner: str) -> int:
    """A session advisory lock's key (bigint) for an owner name."""
    return int.from_bytes(hashlib.sha256(owner.encode()).digest()[:8], "big", signed=True)


class PostgresIndex(SqlIndex):
    dialect = "postgresql"

    def __init__(self, url: str):
        super().__init__()
        self._url = url
        self._owner: str | None = None
        self._owner_conn = None  # holds this process's advisory lock for as long as it lives
        self._owner_lock = threading.Lock()
        with self._conn() as c:
            c.begin()
            c.execute("SELECT pg_advisory_xact_lock(4242)")  # one app at a time sets the schema up
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    c.execute(statement)
            for table, columns in LATER_COLUMNS.items():
                for name, decl in columns.items():
                    c.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {decl}")

    def _connect(self):
        import psycopg
        from psycopg.rows import dict_row

        return psycopg.connect(self._url, autocommit=True, row_factory=dict_row)

    def _owner_name(self) -> str:
        with self._owner_lock:
            if self._owner is None:
                owner = "pg-" + secrets.token_hex(8)
                conn = self._connect()
                conn.execute("SELECT pg_advisory_lock(%s)", (_lock_key(owner),))
                self._owner_conn, self._owner = conn, owner
            return self._owner

    def _drop_dead_owners(self) -> None:
        with self._conn() as c:
            owners = [r["owner"] for r in c.execute("SELECT DISTINCT owner FROM intents WHERE owner IS NOT NULL")]
            for owner in owners:
                if owner == self._owner:
                    continue
                key = _lock_key(owner)
                if c.execute("SELECT pg_try_advisory_lock(?) AS free", (key,)).fetchone()["free"]:
                    # nobody holds it: the process that began these died
                    c.execute("DELETE FROM intents WHERE owner = ?", (owner,))
                    c.execute("SELECT pg_advisory_unlock(?)", (key,))
