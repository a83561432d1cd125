"""Names for downloaded files, from names users gave (upload file names, tensor names): no
control characters (a CR/LF would split the Content-Disposition header), no folders; werkzeug's
send_file then writes the header (RFC 6266, filename* for non-ASCII)."""

from __future__ import annotations

import re

from ..errors import StudioError
from ..onnx_io.external import normalize_location

SAFE_UPLOAD = re.compile(r"^[\w.\- ()+,@=]{1,255}$")  # what an uploaded file's name (each folder's) may be
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\\"]+")
MAX_NAME = 200


def file_name(text: str, default: str = "model") -> str:
    """A safe file name for `text` (its stem kept readable), or `default` when nothing is left;
    a name that is only an extension (".onnx") keeps it after `default` ("model.onnx")."""
    cleaned = _UNSAFE.sub("_", str(text)).strip()
    stem, dot, ext = cleaned.rpartition(".")
    if dot and ext.strip(" ._") and not stem.strip(" ._"):
        cleaned = f"{default}.{ext}"
    name = cleaned.strip(" ._")
    return name[:MAX_NAME] or default


def uploaded_file_name(upload) -> str:
    """The location an uploaded external data file answers to: its name as sent, folders kept
    ("weights/w.bin"), never leaving the model's folder."""
    name = normalize_location((upload.filename or "").replace("\\", "/"))
    if name is None or not all(SAFE_UPLOAD.match(part) for part in name.split("/")):
        raise StudioError("bad_filename", f"an external data file has an unusable name {upload.filename!r}")
    return name


# what an uploaded model's name ends with, ONNX text's first: a text upload is stored (and
# downloads) as the binary model it parses to, so "countdown.onnxtxt" downloads as
# "countdown.onnx" (as .onnxtxt, onnx.load read its bytes as text and failed, QA20 F3)
TEXT_SUFFIXES = (".onnx.txt", ".onnxtxt", ".onnxtext", ".txt")


def is_text_name(base: str) -> bool:
    return base.lower().endswith(TEXT_SUFFIXES)


def model_stem(base: str) -> str:
    """A model file's name without its extension (.onnx or an ONNX text one): what the names
    of its revisions, text form and recipes start with."""
    lower = base.lower()
    for suffix in (*TEXT_SUFFIXES, ".onnx"):
        if lower.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base
