"""Members of the .zip files the server writes: readable by all and dated when written. A member
opened for writing by name gets no mode (unzip made it 0600) and 1980 as its date, and one
copied from the store keeps its blob's 0600: a model unzipped into a shared folder was readable
by its owner alone (QA45 #10)."""

from __future__ import annotations

import time
import zipfile

MEMBER_MODE = 0o100644  # a regular file, rw-r--r--


def member(z: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    """A new member `name` of `z`, compressed as `z` compresses, to pass to z.open(…, "w") or z.writestr."""
    info = zipfile.ZipInfo(name, time.localtime()[:6])
    info.external_attr = MEMBER_MODE << 16
    info.compress_type = z.compression
    return info
