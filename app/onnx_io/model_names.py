"""The name a model is listed under, from where its file was found.

The model zoo and the onnx wheel's test data name every model file `model.onnx` and tell them
apart by their folder (`test_resnet50/model.onnx`) or archive (`resnet50.tar.gz`): listed as
"model.onnx", ten such models can't be told apart. A file with a name of its own keeps it.
"""

from __future__ import annotations

import posixpath

GENERIC_STEMS = frozenset({"model"})
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")


def model_name(member: str, container: str = "") -> str:
    """The listed name of the model file at `member` (a POSIX path: in an archive, or on disk),
    found in the archive or folder named `container` (empty when it has none)."""
    base = posixpath.basename(member)
    stem, dot, ext = base.rpartition(".")
    if not dot or stem.lower() not in GENERIC_STEMS:
        return base
    folder = posixpath.basename(posixpath.dirname(member))
    if not folder:
        folder = _archive_stem(posixpath.basename(container.replace("\\", "/")))
    return f"{folder}.{ext}" if folder and folder not in (".", "..") else base


def _archive_stem(name: str) -> str:
    lower = name.lower()
    for suffix in ARCHIVE_SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name
