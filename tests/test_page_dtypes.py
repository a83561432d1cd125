"""The page's element-type choices (editing/edit-forms.js DTYPES) are every TensorProto type the
installed onnx defines (QA22 p4: FLOAT8E8M0, INT2/UINT2 and FLOAT6 were missing from the input
type picker of an opset-25 model): a type onnx adds shows up here as a failing test."""

from __future__ import annotations

import json
import re
from pathlib import Path

import onnx

EDIT_FORMS = Path(__file__).resolve().parent.parent / "app" / "static" / "js" / "editing" / "edit-forms.js"


def test_the_page_offers_every_element_type_onnx_defines():
    text = EDIT_FORMS.read_text()
    listed = re.search(r"export const DTYPES = (\[.*?\]);", text, re.S)
    assert listed, "DTYPES not found in edit-forms.js"
    offered = json.loads(re.sub(r",\s*\]", "]", listed.group(1)))
    defined = [onnx.TensorProto.DataType.Name(v) for v in onnx.TensorProto.DataType.values() if v]
    assert sorted(offered) == sorted(defined)
    assert len(offered) == len(set(offered))
