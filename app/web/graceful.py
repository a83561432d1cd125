"""A graceful stop for the single-process server (`onnx-studio serve`, `onnx-studio MODEL`):
SIGTERM (docker stop, systemd, kill) or Ctrl+C stops taking requests, lets the ones under way
finish, for up to serving.GRACEFUL_SECONDS as gunicorn's workers do, and ends the helper
process. Without a handler, as a container's PID 1 the server ignored SIGTERM until docker
killed it 10 s later, mid-request."""

from __future__ import annotations

import signal
import threading
import time

from werkzeug.wsgi import ClosingIterator


class InFlight:
    """A WSGI wrapper counting the requests under way (until their response is closed)."""

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
        return ClosingIterator(body, [self._done])

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


def stop_on_sigterm(server) -> None:
    """SIGTERM ends server.serve_forever() (in the main thread) as Ctrl+C does. shutdown() waits
    for serve_forever's loop, so it is asked from another thread than the handler's."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers belong to the main thread

    def handle(signum, frame):
        threading.Thread(target=server.shutdown, name="studio-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, handle)
