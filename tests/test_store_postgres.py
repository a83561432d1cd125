"""The store's tests (tests/test_store.py) again, with the index in PostgreSQL (issue 14):
the same behaviour on both back ends — splits, edits, duplicates, collection under concurrent
uploads, edits and deletes, derived data across a restart."""

from __future__ import annotations

import pytest
from test_store import *  # noqa: F403  (every test of the module, run here with this module's `app`)
from test_store import test_derived_data_are_kept_by_content_across_a_restart as _restart


@pytest.fixture
def app(pg_app):
    return pg_app


@pytest.fixture
def client(app):
    return app.test_client()


def test_derived_data_are_kept_by_content_across_a_restart(tmp_path, monkeypatch, postgres):
    """The restart test with both apps on one PostgreSQL database."""
    import secrets

    from app import create_app as real_create_app

    url = postgres.database("t_" + secrets.token_hex(6))
    monkeypatch.setattr("app.create_app", lambda config: real_create_app({**config, "DATABASE_URL": url}))
    _restart(tmp_path, monkeypatch)


def test_the_index_here_is_postgresql(app):
    assert type(app.extensions["store"].index).__name__ == "PostgresIndex"


def test_a_worker_starting_waits_on_no_write_under_way(postgres):
    """gunicorn starts (and restarts) workers while others write: opening an index that has its
    schema must take no table lock, or it waits on every write under way and can deadlock with one
    (what made uploads answer 500 while a slow worker started)."""
    import secrets
    import threading

    import psycopg

    from app.store.pg_index import PostgresIndex

    url = postgres.database("t_" + secrets.token_hex(6))
    PostgresIndex(url)
    with psycopg.connect(url, autocommit=True) as writer:
        writer.execute("BEGIN")
        writer.execute("INSERT INTO models (id, name, created, head) VALUES ('m', 'm', 0, 0)")
        opened = threading.Event()
        threading.Thread(target=lambda: (PostgresIndex(url), opened.set()), daemon=True).start()
        assert opened.wait(10), "opening the index waited on a write under way"
        writer.execute("ROLLBACK")


def test_an_older_index_gets_its_later_columns(postgres):
    import secrets

    import psycopg

    from app.store.pg_index import PostgresIndex

    url = postgres.database("t_" + secrets.token_hex(6))
    PostgresIndex(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE revisions DROP COLUMN tensors")
        conn.execute("ALTER TABLE models DROP COLUMN content")
    index = PostgresIndex(url)
    with index._conn() as c:
        assert index._missing_schema(c) == []


def test_a_lost_connection_is_made_again(pg_app):
    """After the database server drops the app's connections (a restart, a failover), the
    next request works: it connects again (more in tests/test_store_outages.py)."""
    import psycopg

    store = pg_app.extensions["store"]
    client = pg_app.test_client()
    assert client.get("/api/models").status_code == 200
    with psycopg.connect(store.index._url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
            " AND datname = current_database()"
        )
    assert store.index.list_models() == []
    assert client.get("/api/models").status_code == 200


def test_connections_notice_a_vanished_database_host(postgres):
    """Every connection has TCP keepalives (a host gone without a word is noticed in about a
    minute, not two hours), unless the URL sets its own."""
    import secrets

    from app.store.pg_index import KEEPALIVES, PostgresIndex

    url = postgres.database("t_" + secrets.token_hex(6))
    conn = PostgresIndex(url)._connect()
    try:
        held = conn.pgconn.info  # libpq's options as the connection uses them
        options = {o.keyword.decode(): (o.val or b"").decode() for o in held}
        assert {k: options[k] for k in KEEPALIVES} == {k: str(v) for k, v in KEEPALIVES.items()}
        assert options["connect_timeout"] == "5"
    finally:
        conn.close()
    sep = "&" if "?" in url else "?"
    own = PostgresIndex(f"{url}{sep}keepalives_idle=7")._connect()
    try:
        assert {o.keyword.decode(): (o.val or b"").decode() for o in own.pgconn.info}["keepalives_idle"] == "7"
    finally:
        own.close()
