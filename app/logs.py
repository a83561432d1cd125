"""Log lines: text for the one-person command, or one JSON object per line for a server whose
logs a collector reads (--log-format json). Request lines come from web/request_log.py."""

from __future__ import annotations

import logging
import sys
import time

import orjson

# what a request's log line carries besides its message (web/request_log.py sets them)
REQUEST_FIELDS = ("request_id", "method", "path", "route", "status", "duration_ms", "error_code")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for field in REQUEST_FIELDS:
            if hasattr(record, field):
                out[field] = getattr(record, field)
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return orjson.dumps(out).decode()


def configure(level: str = "info", fmt: str = "text") -> None:
    """Send the app's logs to stderr, as text or JSON lines. Werkzeug's own request lines are
    dropped: ours say the same with the request id and the duration."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if fmt == "json" else logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("werkzeug").setLevel(logging.WARNING)


def is_json() -> bool:
    """Whether the logs go out as JSON lines (configure(fmt="json")): then every line must be one."""
    return any(isinstance(h.formatter, JsonFormatter) for h in logging.getLogger().handlers)


def tell(message: str) -> None:
    """A line for the person running the server (its address, a made-up token): printed, or one
    more JSON line when the logs are JSON (a log shipper reads every line as JSON)."""
    if is_json():
        logging.getLogger("app").warning(message)
    else:
        print(message, flush=True)
