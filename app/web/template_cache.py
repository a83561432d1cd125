"""Compiled page templates shared by every app the process makes (Jinja's bytecode cache, in
memory): the templates are compiled as an app starts, and a second app in the same process (the
tests make thousands) reuses the code instead of parsing and compiling them again (~40 ms).
Jinja checks each template's source against the checksum kept with its code, so an edited
template is compiled anew."""

from __future__ import annotations

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket


class ProcessBytecodeCache(BytecodeCache):
    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


SHARED = ProcessBytecodeCache()
