"""Fixtures: a fresh app per test (Flask tutorial style)."""

from __future__ import annotations

import pytest

from app import create_app


@pytest.fixture
def app(tmp_path):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server for the session (tests/pg_server.py)."""
    from pg_server import PostgresServer, available

    if not available():
        pytest.fail("PostgreSQL's initdb/pg_ctl are missing: `make test` installs Debian's postgresql")
    server = PostgresServer()
    yield server
    server.stop()


@pytest.fixture
def pg_app(tmp_path, postgres):
    """An app whose index is a fresh PostgreSQL database."""
    import secrets

    url = postgres.database("t_" + secrets.token_hex(6))
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "DATABASE_URL": url})


@pytest.fixture(scope="session")
def s3_endpoint():
    """moto_server with a bucket, and the AWS_* variables pointing at it (tests/s3_server.py)."""
    from s3_server import s3_endpoint as serve

    yield from serve()
