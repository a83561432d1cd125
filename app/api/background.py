"""Work on a revision that a request starts and does not wait for (onnxruntime's verdict, the
reference checks): one thread per key at a time, inside the app's context."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from flask import current_app

_running: set = set()
_lock = threading.Lock()


def once_in_background(key: Hashable, name: str, work: Callable[[], None]) -> None:
    """Run work() in a daemon thread unless one for `key` is under way; its errors are dropped
    (a model deleted meanwhile, an app stopped: nothing to record)."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]  # a LocalProxy typed as Flask
    with _lock:
        if key in _running:
            return
        _running.add(key)

    def run() -> None:
        with app.app_context():
            try:
                work()
            except Exception:
                pass
            finally:
                with _lock:
                    _running.discard(key)

    threading.Thread(target=run, name=name, daemon=True).start()
