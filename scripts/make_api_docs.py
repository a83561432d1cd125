"""Write the edit-ops section of docs/api.md from the ops' declarations in app/edits (the same
ones the server validates against and the OpenAPI document shows). Run it again after changing
an op; tests/test_api_docs.py fails while the section is stale:

    .venv/bin/python scripts/make_api_docs.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"
BEGIN = "<!-- edit ops: written by scripts/make_api_docs.py from the declarations in app/edits -->"
END = "<!-- end of edit ops -->"


def render() -> str:
    """The section, markers included: per op its doc, then each field with its JSON type."""
    from app.edits import REGISTRY
    from app.edits.jsontypes import MISSING

    lines = [BEGIN]
    for e in REGISTRY.values():
        lines += ["", f"### `{e.name}`", e.doc, ""]
        for f in e.fields:
            need = "required" if f.required else "optional"
            if f.default is not MISSING:
                need += f", default `{json.dumps(f.default)}`"
            lines.append(f"- `{f.name}` — {f.description} ({need}; {f.type.words})")
        if not e.fields:
            lines.append("No fields.")
    return "\n".join([*lines, "", END])


def updated(text: str) -> str:
    """docs/api.md's text with the section rewritten."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + render() + text[end:]


def main() -> None:
    sys.path.insert(0, str(ROOT))  # run as a file: the app package is the checkout's
    DOC.write_text(updated(DOC.read_text()))


if __name__ == "__main__":
    main()
