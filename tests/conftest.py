"""Fixtures: a fresh app per test (Flask tutorial style) and the official ONNX model corpora."""
from __future__ import annotations

import functools
import io
import os
from pathlib import Path

import onnx
import pytest

from app import create_app

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"


@pytest.fixture
def app(tmp_path):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True})


@pytest.fixture
def client(app):
    return app.test_client()


def upload(client, data: bytes, name: str = "model.onnx", extra: list[tuple[bytes, str]] = ()):
    files = [(io.BytesIO(data), name)] + [(io.BytesIO(d), n) for d, n in extra]
    return client.post("/api/models", data={"file": files}, content_type="multipart/form-data")


def wheel_models() -> list[Path]:
    """Every model the onnx wheel ships under backend/test/data (light, pytorch-*, simple, real)."""
    return sorted(ONNX_DATA.rglob("*.onnx"))


@functools.lru_cache(maxsize=1)
def node_testcases() -> dict:
    """name -> TestCase for the ~1,900 official node-test models."""
    from onnx.backend.test.case.node import collect_testcases

    return {c.name: c for c in collect_testcases(None)}


def node_testcase_names() -> list[str]:
    return sorted(node_testcases())
