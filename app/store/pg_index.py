"""The index in PostgreSQL, for a team's server: several app hosts and workers over one
database (psycopg 3). The same SQL as SQLite's (index.SqlIndex), with row locks (SELECT ... FOR
UPDATE) for the compare-and-swaps, and uploads or edits under way told live from dead by a
session advisory lock each process holds while it runs (the server drops it when the process's
connection goes, however the process died).

A connection the server closed (a restart, a failover, an administrator) is replaced: before a
statement when the server said so on an idle one, else after the statement that found it gone,
which runs again on the new one when nothing of its transaction was written (PgDb). The
database's own connection errors leave the store as StoreUnavailable (503)."""

from __future__ import annotations

import contextlib
import hashlib
import re
import secrets
import select
import threading
from collections.abc import Callable
from typing import Any

from ..errors import StoreUnavailable
from .index import LATER_COLUMNS, Db, SqlIndex
from .index import SCHEMA as SQLITE_SCHEMA

# SQLite's schema with PostgreSQL's name for a double
SCHEMA = SQLITE_SCHEMA.replace(" REAL ", " DOUBLE PRECISION ")
TABLES = re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", SCHEMA)
INDEX = "model index (PostgreSQL)"  # as errors name it
# a database host that doesn't answer (down, unroutable) fails a connection after this long,
# not the operating system's minutes
CONNECT_TIMEOUT_SECONDS = 5
# TCP keepalives on every connection, unless the URL sets its own: a database host gone without a
# word (a failover, a cut link) is noticed in about a minute, not the operating system's two
# hours, both on a statement waiting for its answer and on the idle connection holding this
# process's advisory lock (libpq's parameters; tcp_user_timeout in ms: data sent and not
# acknowledged for that long ends the connection)
KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "tcp_user_timeout": 60_000,
}


def _lock_key(owner: str) -> int:
    """A session advisory lock's key (bigint) for an owner name."""
    return int.from_bytes(hashlib.sha256(owner.encode()).digest()[:8], "big", signed=True)


class PostgresIndex(SqlIndex):
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
        """A new connection (StoreUnavailable: the server can't be reached)."""
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
        from psycopg.rows import dict_row

        own = conninfo_to_dict(self._url)
        defaults: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_SECONDS, **KEEPALIVES}
        try:
            return psycopg.connect(
                self._url,
                autocommit=True,
                row_factory=dict_row,
                **{k: v for k, v in defaults.items() if k not in own},
            )
        except psycopg.OperationalError as exc:
            raise unavailable(exc) from exc

    def _open_db(self) -> Db:
        return PgDb(self._connect)

    def _owner_name(self) -> str:
        with self._owner_lock:
            if self._owner is None or _gone(self._owner_conn) or _said_goodbye(self._owner_conn):
                # taken again after a restart dropped the connection (and with it the lock): the
                # intents begun under this name stay this live process's
                owner = self._owner or "pg-" + secrets.token_hex(8)
                conn = self._connect()
                conn.execute("SELECT pg_advisory_lock(%s)", (_lock_key(owner),))
                if self._owner_conn is not None:
                    with contextlib.suppress(Exception):
                        self._owner_conn.close()
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


class PgDb(Db):
    """A PostgreSQL connection as the index's SQL sees it (`%s` placeholders, row locks), made
    again when the server closed it. A statement that finds it gone runs again on a new one only
    when nothing of its transaction was written: a read outside a transaction, or the BEGIN of
    one. Otherwise (a write may or may not have been committed, a transaction's earlier
    statements are lost) the caller gets StoreUnavailable."""

    for_update = " FOR UPDATE"

    def __init__(self, connect: Callable[[], Any]):
        self._connect = connect
        super().__init__(connect())

    def execute(self, sql: str, params: tuple | list = ()):
        again = not self.in_transaction() and _is_read(sql)
        return self._run(sql.replace("?", "%s"), params, again)

    def begin(self) -> None:
        self._run("BEGIN", (), again=not self.in_transaction())

    def _run(self, sql: str, params: tuple | list, again: bool):
        import psycopg

        try:
            return self.conn.execute(sql, params)
        except psycopg.OperationalError as exc:
            if not _gone(self.conn):
                raise  # the server refused the statement (a deadlock, a cancel): the connection is fine
            if not again:
                raise unavailable(exc) from exc
        self.close()
        self.conn = self._connect()
        try:
            return self.conn.execute(sql, params)
        except psycopg.OperationalError as exc:
            if _gone(self.conn):
                raise unavailable(exc) from exc
            raise

    def lost(self) -> bool:
        return _gone(self.conn) or (not self.in_transaction() and _said_goodbye(self.conn))

    def in_transaction(self) -> bool:
        from psycopg import pq

        status = self.conn.info.transaction_status
        return status in (pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR)

    def finish(self, failed: bool) -> None:
        import psycopg

        if not self.in_transaction():
            return  # none begun, or its connection is gone (the server dropped the transaction)
        try:
            self.conn.execute("ROLLBACK" if failed else "COMMIT")
        except psycopg.OperationalError as exc:
            if not _gone(self.conn):
                raise
            if not failed:  # a COMMIT that got no answer: committed or not, the caller can't tell
                raise unavailable(exc) from exc
            # a ROLLBACK: the server drops the transaction with the connection; the block's own error stands


def unavailable(exc: Exception) -> StoreUnavailable:
    return StoreUnavailable(INDEX, str(exc))


def _is_read(sql: str) -> bool:
    """A statement that writes nothing (run again on a new connection after one was lost)."""
    words = sql.lstrip().upper()
    return words.startswith("SELECT") and "FOR UPDATE" not in words


def _gone(conn) -> bool:
    """The connection is closed, or was broken by a statement that found the server gone."""
    return conn is None or conn.closed or conn.broken


def _said_goodbye(conn) -> bool:
    """Whether an idle connection has something to read: nothing comes unasked on one but the
    server's farewell (its error "terminating connection", then end of file)."""
    try:
        poller = select.poll()  # not select(): a busy process's descriptors pass its limit of 1024
        poller.register(conn.fileno(), select.POLLIN)
        return bool(poller.poll(0))  # readable, hung up or failed
    except Exception:  # no socket any more
        return True
