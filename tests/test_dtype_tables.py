"""The page's data-type tables (app/static/js/lib/format.js) say what onnx says: the
TensorProto.DataType names by number, and which INT attributes hold one (Cast's `to`, …)."""

from __future__ import annotations

import re
from pathlib import Path

import onnx
import onnx.helper

from app.onnx_io.dtype_attributes import dtype_attribute_name, dtype_attributes

FORMAT_JS = Path(__file__).resolve().parents[1] / "app" / "static" / "js" / "lib" / "format.js"


def _block(source: str, start: str, end: str) -> str:
    i = source.index(start) + len(start)
    return source[i : source.index(end, i)]


def test_dtype_names_are_onnx_tensorproto_datatype():
    source = FORMAT_JS.read_text()
    names = re.findall(r'"(\w+)"', _block(source, "export const DATA_TYPES = [", "];"))
    expected = {v.number: k for k, v in onnx.TensorProto.DataType.DESCRIPTOR.values_by_name.items()}
    assert names == [expected[i] for i in range(len(expected))]


def test_dtype_attributes_are_those_onnx_defs_documents():
    source = FORMAT_JS.read_text()
    table = _block(source, "const DTYPE_ATTRIBUTES = new Map(Object.entries({", "}));")
    listed = set()
    for key, attrs in re.findall(r'"?([\w.]+)"?: \[([^\]]*)\]', table):
        domain, _, op = key.rpartition(".")
        for name in re.findall(r'"(\w+)"', attrs):
            listed.add((domain, op, name))
    # the server's set, found from onnx.defs (app/onnx_io/dtype_attributes.py)
    assert listed == dtype_attributes()
    assert ("", "Cast", "to") in listed and ("", "RandomNormal", "dtype") in listed


def test_the_server_names_a_cast_target_and_not_an_axis():
    cast_to = onnx.helper.make_attribute("to", onnx.TensorProto.INT64)
    axis = onnx.helper.make_attribute("axis", 7)
    assert dtype_attribute_name(cast_to, "", "Cast") == "INT64"
    assert dtype_attribute_name(cast_to, "ai.onnx", "Cast") == "INT64"
    assert dtype_attribute_name(axis, "", "Concat") is None
    assert dtype_attribute_name(cast_to, "custom.domain", "Cast") is None
