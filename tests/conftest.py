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
