"""The page's operator catalog (scripts/make_op_catalog.py -> app/static/js/lib/op-catalog.js):
what element type a constant typed into an "insert node" form takes at each input."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from onnx import defs

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("make_op_catalog", ROOT / "scripts" / "make_op_catalog.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("op", "version", "want"),
    [
        ("TopK", 11, [0, "INT64"]),  # X: any numeric T; K: int64 only
        ("Mul", 14, [0, ""]),  # B: the same T as A
        ("Slice", 13, [0, "INT64", "INT64", "INT64", "INT64"]),  # starts, ends, axes, steps: Tind
        ("Reshape", 21, [0, "INT64"]),
        ("Where", 16, ["BOOL", 0, 0]),  # condition bool; X, Y the same T, which is not the first's
    ],
)
def test_a_constants_type_follows_the_inputs_schema(op, version, want):
    schema = defs.get_schema(op, version)
    assert [_generator().input_type(schema, p) for p in schema.inputs] == want


def test_the_committed_catalog_carries_the_input_types():
    text = (ROOT / "app" / "static" / "js" / "lib" / "op-catalog.js").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith('  ["","TopK",'))
    versions = json.loads(re.sub(r",\s*$", "", row.strip()))[2]
    assert next(v[3] for v in versions if v[0] >= 10) == [0, "INT64"]
