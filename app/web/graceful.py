"""A graceful stop for the single-process server (`onnx-studio serve`, `onnx-studio MODEL`):
SIGTERM (docker stop, systemd, kill) or Ctrl+C stops taking requests, lets the ones under way
finish, for up to serving.GRACEFUL_SECONDS as gunicorn's workers do, and ends the helper
process. Without a handler, as a container's PID 1 the server ignored SIGTERM until docker
killed it 10 s later, mid-request."""

from __future__ import annotations

import signal
import threading
import time


class InFlight:
    """A WSGI wrapper counting the requests under way: each until its response is written to the
    end, closed, or let go of. werkzeug calls close() after draining what is left of the request
    body, and a client that resets the connection (a reader that stopped reading, a page closed
    mid-download) makes that drain raise first: close() never comes, and a stop waited the whole
    grace period for a request long gone."""

    def __init__(self, app):
        self.app = app
        self.count = 0
        self.changed = threading.Condition()

    def __call__(self, environ, start_response):
        with self.changed:
            self.count += 1
        try:
            body = self.app(environ, start_response)
        except BaseException:
            self._done()
            raise
        return _Tracked(body, self._done)

    def _done(self) -> None:
        with self.changed:
            self.count -= 1
            self.changed.notify_all()

    def wait_idle(self, seconds: float) -> bool:
        """Wait until no request is under way (True), or `seconds` pass (False)."""
        deadline = time.monotonic() + seconds
        with self.changed:
            while self.count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return True


class _Tracked:
    """A response body that reports, once, when it is done with: read to the end, closed, or
    dropped by the server (CPython frees it as the request's handler lets go of it)."""

    def __init__(self, body, done):
        self._body = body
        self._iter = iter(body)
        self._done = done
        self._finished = False

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._iter)
        except StopIteration:
            self._finish()
            raise

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._finish()

    def _finish(self) -> None:
        if not self._finished:
            self._finished = True
            self._done()

    def __del__(self) -> None:
        self._finish()


def stop_on_sigterm(server) -> None:
    """SIGTERM ends server.serve_forever() (in the main thread) as Ctrl+C does. shutdown() waits
    for serve_forever's loop, so it is asked from another thread than the handler's."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers belong to the main thread

    def handle(signum, frame):
        threading.Thread(target=server.shutdown, name="studio-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, handle)
