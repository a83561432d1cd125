"""Reading an uploaded zip without trusting it: what a member decompresses to is counted while
it is read (never taken from its header), against a total and a ratio to its compressed size,
and an encrypted, corrupt or oddly compressed member is a 400 naming it, not a 500.

(A 3 MB zip with a 3 GiB member once took +6.1 GiB of server memory; a 1 MB zip of zeros
wrote 1 GiB to the data folder.)"""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass, field

from ..errors import StudioError

DEFAULT_MAX_UNCOMPRESSED = 16 << 30
DEFAULT_MAX_RATIO = 200  # real weights compress ~1.1x; a member expanding more is a bomb
_SMALL = 1 << 20  # members this small may expand freely (a text file of zeros)
# what zipfile raises on encrypted, corrupt or unsupported members
_READ_ERRORS = (zipfile.BadZipFile, RuntimeError, NotImplementedError, zlib.error, EOFError, ValueError, OSError)


@dataclass
class ZipBudget:
    """What all members of one archive may decompress to."""

    archive: str
    max_total: int = DEFAULT_MAX_UNCOMPRESSED
    max_ratio: float = DEFAULT_MAX_RATIO
    used: int = field(default=0)

    def take(self, info: zipfile.ZipInfo, got: int, so_far: int) -> None:
        self.used += got
        if self.used > self.max_total:
            raise StudioError(
                "zip_too_big",
                f"{self.archive} unpacks to more than {self.max_total:,} bytes (this server's limit)",
                413,
            )
        allowed = max(_SMALL, self.max_ratio * info.compress_size)
        if so_far > allowed:
            raise StudioError(
                "zip_bomb",
                f"{self.archive}: {info.filename!r} expands more than {self.max_ratio:g}x its compressed size;"
                " refused as a zip bomb",
                413,
            )


def _unreadable(budget: ZipBudget, info: zipfile.ZipInfo, exc: BaseException) -> StudioError:
    return StudioError("bad_zip", f"{budget.archive}: {info.filename!r} can't be read ({exc})")


class BoundedMember:
    """A member's stream that counts what it yields against the budget (a file-like .read)."""

    def __init__(self, z: zipfile.ZipFile, info: zipfile.ZipInfo, budget: ZipBudget):
        self.info = info
        self.budget = budget
        self.count = 0
        try:
            self.stream = z.open(info)
        except _READ_ERRORS as exc:
            raise _unreadable(budget, info, exc) from None

    def read(self, n: int = -1) -> bytes:
        n = 1 << 22 if n is None or n < 0 else n  # never the whole member at once
        try:
            block = self.stream.read(n)
        except _READ_ERRORS as exc:
            raise _unreadable(self.budget, self.info, exc) from None
        self.count += len(block)
        self.budget.take(self.info, len(block), self.count)
        return block

    def read_all(self, limit: int) -> bytes:
        """The whole member (at most `limit` bytes: a model is one protobuf, under 2 GiB)."""
        parts = []
        while block := self.read():
            parts.append(block)
            if self.count > limit:
                raise StudioError("zip_too_big", f"{self.budget.archive}: {self.info.filename!r} is too big", 413)
        return b"".join(parts)

    def close(self) -> None:
        self.stream.close()
