"""The index in PostgreSQL, for a team's server: several app hosts and workers over one
database (psycopg 3). The same SQL as SQLite's (index.SqlIndex), with row locks (SELECT ... FOR
UPDATE) for the compare-and-swaps, and uploads or edits under way told live from dead by a
session advisory lock each process holds while it runs (the server drops it when the process's
connection goes, however the process died)."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading

from .index import LATER_COLUMNS, SqlIndex
from .index import SCHEMA as SQLITE_SCHEMA

# SQLite's schema with PostgreSQL's name for a double
SCHEMA = SQLITE_SCHEMA.replace(" REAL ", " DOUBLE PRECISION ")
TABLES = re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", SCHEMA)


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
            if not self._missing_schema(c):
                return  # no DDL: ALTER TABLE locks the table even when the column exists, and a
                # worker starting while others write would wait on them (or deadlock with them)
            c.begin()
            c.execute("SELECT pg_advisory_xact_lock(4242)")  # one app at a time sets the schema up
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    c.execute(statement)
            for table, name in self._missing_schema(c):
                c.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {LATER_COLUMNS[table][name]}")

    @staticmethod
    def _missing_schema(c) -> list[tuple[str, str]]:
        """The (table, column) pairs the index lacks ("" for a missing table)."""
        rows = c.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        ).fetchall()
        have = {(r["table_name"], r["column_name"]) for r in rows}
        tables = {t for t, _ in have}
        missing = [(t, "") for t in TABLES if t not in tables]
        missing += [(t, n) for t, cols in LATER_COLUMNS.items() for n in cols if (t, n) not in have]
        return missing

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
