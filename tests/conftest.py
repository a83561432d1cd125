"""Fixtures: a fresh app per test (Flask tutorial style)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import route_builders

from app import create_app

route_builders.install()

# STUDIO_TEST_BACKEND=postgresql+s3 runs the tests again with every app's store on PostgreSQL and
# S3 (a database and a bucket prefix per data folder), as a team's server keeps it (`make test`
# runs the API tests this way too); tests marked local_store check the folder store's own files.
TEAM_BACKEND = os.environ.get("STUDIO_TEST_BACKEND") == "postgresql+s3"
# What runs once, on the default store, and not again on PostgreSQL + S3: the browser, corpus,
# wheel and hostile-input (fuzz) tests don't depend on the store's back end, local_store ones
# check the folder store's own files, own_backends ones start servers on every back end themselves.
RUN_ONCE = ("browser", "corpus", "wheel", "fuzz", "local_store", "own_backends")


# The fixtures that open a store (client and the others build on them): a test with none of
# them, in a module that makes no app of its own, checks no store and runs once too (onnx walks,
# type tables, page scripts: a third of the team pass ran them again for nothing).
STORE_FIXTURES = {"app", "pg_app"}

# A test over a collection of real models (marked `models`) asks the same of the store for each
# model: the team pass takes the first few of each (a fifth of its time went to the other ~570).
TEAM_MODELS = 3


def _makes_apps(path: Path, cache: dict[Path, bool]) -> bool:
    if path not in cache:
        cache[path] = "create_app(" in path.read_text(encoding="utf-8")
    return cache[path]


def _checks_no_store(item, cache: dict[Path, bool]) -> bool:
    return not STORE_FIXTURES & set(getattr(item, "fixturenames", ())) and not _makes_apps(Path(item.path), cache)


def _beyond_the_sample(item, taken: dict[str, int]) -> bool:
    if not item.get_closest_marker("models"):
        return False
    key = f"{item.path}::{item.originalname}"
    taken[key] = taken.get(key, 0) + 1
    return taken[key] > TEAM_MODELS


def pytest_collection_modifyitems(config, items):
    if not TEAM_BACKEND:
        return
    cache: dict[Path, bool] = {}
    taken: dict[str, int] = {}
    once = [
        item
        for item in items
        if any(item.get_closest_marker(m) for m in RUN_ONCE)
        or _checks_no_store(item, cache)
        or _beyond_the_sample(item, taken)
    ]
    if once:
        config.hook.pytest_deselected(items=once)
        skipped = set(once)
        items[:] = [item for item in items if item not in skipped]


REPO = Path(__file__).resolve().parent.parent
_STRAY = pytest.StashKey[set[str] | None]()


def _stray_files() -> set[str] | None:
    """Files in the checkout git neither tracks nor ignores (None outside a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return set(out.stdout.splitlines()) if out.returncode == 0 else None


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # the xdist controller, or a run without it
        session.config.stash[_STRAY] = _stray_files()


def pytest_sessionfinish(session, exitstatus):
    """Nothing a test or the server under test does may leave files in the checkout: the
    server's working directory is the person's (onnxruntime's shape inference once wrote its
    sym_shape_infer_temp.onnx there)."""
    before = session.config.stash.get(_STRAY, None)
    after = _stray_files() if before is not None else None
    if before is None or after is None or not (after - before):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter:
        reporter.ensure_newline()
        reporter.write_sep("=", f"files left in the checkout by the tests: {sorted(after - before)}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def app(tmp_path):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def gates_wait(monkeypatch):
    """The gates' own semantics, whatever the machine's load: a case or smoke run past their
    quick limits makes a model "slow", whose verdicts come in the background instead of gating
    edits (by design) — CI's loaded team pass turned gated edits into "pending" that way."""
    from app.api import reference, runtime

    monkeypatch.setattr(reference, "SYNC_SECONDS", 60.0)
    monkeypatch.setattr(runtime, "SLOW_SECONDS", 60.0)


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


@pytest.fixture(autouse=True)
def _drop_test_databases():
    """After each test (and its apps: this autouse fixture is set up first, so torn down
    last), the databases it made go (pg_server.py drop_created)."""
    yield
    pg_server = sys.modules.get("pg_server")
    for server in list(pg_server.LIVE) if pg_server else ():
        server.drop_created()


@pytest.fixture(autouse=True)
def _team_backend(request, monkeypatch):
    if not TEAM_BACKEND:
        yield
        return
    from s3_server import BUCKET

    import app.store as store_module

    postgres = request.getfixturevalue("postgres")
    request.getfixturevalue("s3_endpoint")
    real_open_store = store_module.open_store
    urls: dict[str, tuple[str, str]] = {}

    def open_team_store(config):
        if config.get("DATABASE_URL") or config.get("BLOB_URL"):
            return real_open_store(config)
        folder = str(Path(config["DATA_DIR"]).resolve())  # an app opened again on it: the same store
        if folder not in urls:
            urls[folder] = (postgres.database("t_" + secrets.token_hex(6)), f"s3://{BUCKET}/{secrets.token_hex(6)}")
        database_url, blob_url = urls[folder]
        return real_open_store({**config, "DATABASE_URL": database_url, "BLOB_URL": blob_url})

    monkeypatch.setattr(store_module, "open_store", open_team_store)
    yield
