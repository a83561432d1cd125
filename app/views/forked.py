"""Run a function in a forked copy of this process and get the bytes it returns.

For CPU-bound work on a model already parsed here: the child shares the parsed model with the
server (copy-on-write), so it starts at once with nothing to load, and runs on the second core
while the server goes on (Python threads would take turns on the GIL). The child only computes
and writes to a pipe: it takes no lock another thread could have held at the fork, writes
through no buffered file, and leaves by os._exit without running any cleanup of the server's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


class Forked:
    """A child under way: result() gives its bytes, or None if it failed."""

    def __init__(self, pid: int, fd: int):
        self.pid, self.fd = pid, fd
        self.done = False

    def result(self) -> bytes | None:
        self.done = True
        chunks = []
        try:
            while True:
                chunk = os.read(self.fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self.fd)
            _, status = os.waitpid(self.pid, 0)
        return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None

    def close(self) -> None:
        """Stop and reap the child unless its result was taken (the caller gave up on it)."""
        if self.done:
            return
        self.done = True
        os.close(self.fd)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def start(fn) -> Forked | None:
    """fn() -> bytes in a forked child; None where this platform cannot fork or fork fails
    (the caller then does the work itself)."""
    if not hasattr(os, "fork") or sys.platform != "linux":
        return None
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: compute, write, leave without touching anything of the server's
        code = 1
        try:
            os.close(read_end)
            view = memoryview(fn())
            while view:
                view = view[os.write(write_end, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return Forked(pid, read_end)
