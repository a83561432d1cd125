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
