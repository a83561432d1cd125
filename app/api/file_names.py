"""Names for downloaded files, from names users gave (upload file names, tensor names): no
control characters (a CR/LF would split the Content-Disposition header), no folders; werkzeug's
send_file then writes the header (RFC 6266, filename* for non-ASCII)."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\\"]+")
MAX_NAME = 200


def file_name(text: str, default: str = "model") -> str:
    """A safe file name for `text` (its stem kept readable), or `default` when nothing is left."""
    name = _UNSAFE.sub("_", str(text)).strip(" ._")
    return name[:MAX_NAME] or default
