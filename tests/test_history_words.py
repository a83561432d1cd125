"""Every edit op has its words in the page's history (history-panel.js opWords): an op without
them showed as raw JSON with encoded addresses (QA37 #6: `write_out {"op":"write_out",
"nodes":["@%2Fffn%2Fact%2FGelu"]}`)."""

from __future__ import annotations

import re
from pathlib import Path

import app.edits  # noqa: F401  (registers every edit op)
from app.edits.registry import REGISTRY

HISTORY = Path(__file__).parent.parent / "app" / "static" / "js" / "panels" / "history-panel.js"


def test_every_edit_op_is_put_in_words():
    cases = set(re.findall(r'case "([a-z_0-9]+)"', HISTORY.read_text()))
    assert sorted(set(REGISTRY) - cases) == []
