"""Shared test helpers: uploads and the official ONNX model corpora."""

from __future__ import annotations

import functools
import io
from pathlib import Path

import onnx

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"


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
