"""The page's data-type tables (app/static/js/lib/format.js) say what onnx says: the
TensorProto.DataType names by number, and which INT attributes hold one (Cast's `to`, …)."""

from __future__ import annotations

import re
from pathlib import Path

import onnx
import onnx.defs

FORMAT_JS = Path(__file__).resolve().parents[1] / "app" / "static" / "js" / "lib" / "format.js"

# INT attributes whose documentation speaks of a data type or a precision without holding one
NOT_DATA_TYPES = {("", "Attention", "qk_matmul_output_mode")}


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
    found = set()
    for schema in onnx.defs.get_all_schemas_with_history():
        for name, attr in schema.attributes.items():
            if attr.type == onnx.defs.OpSchema.AttrType.INT and re.search(
                r"data ?type|precision", attr.description, re.I
            ):
                found.add((schema.domain, schema.name, name))
    assert listed == found - NOT_DATA_TYPES
