"""Write the sections of docs/api.md the server's own tables hold: the edit ops, from their
declarations in app/edits (the same ones the server validates against and the OpenAPI document
shows), and the error codes, from app/api/error_codes.py. Run it again after changing an op or a
code; tests/test_api_docs.py fails while a section is stale:

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
CODES_BEGIN = "<!-- error codes: written by scripts/make_api_docs.py from app/api/error_codes.py -->"
CODES_END = "<!-- end of error codes -->"


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


def render_codes() -> str:
    """The error codes' table, markers included: those any route may answer first."""
    from app.api.error_codes import catalogue

    lines = [CODES_BEGIN, "| code | status | when |", "| --- | --- | --- |"]
    for e in catalogue():
        where = " (any route)" if e.everywhere else ""
        lines.append(f"| `{e.code}` | {', '.join(map(str, e.statuses))} | {e.when}{where} |")
    return "\n".join([*lines, CODES_END])


def _replaced(text: str, begin: str, end: str, section: str) -> str:
    start, stop = text.index(begin), text.index(end) + len(end)
    return text[:start] + section + text[stop:]


def updated(text: str) -> str:
    """docs/api.md's text with the sections rewritten."""
    return _replaced(_replaced(text, BEGIN, END, render()), CODES_BEGIN, CODES_END, render_codes())


def main() -> None:
    sys.path.insert(0, str(ROOT))  # run as a file: the app package is the checkout's
    DOC.write_text(updated(DOC.read_text()))


if __name__ == "__main__":
    main()
