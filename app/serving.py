"""`onnx-studio serve --workers N`: gunicorn with N worker processes of `threads` threads each
(gthread), every one running its own app over the shared store — any worker answers any
request. SIGTERM stops it gracefully: requests under way (an edit being stored) finish first,
for up to GRACEFUL_SECONDS."""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication

GRACEFUL_SECONDS = 60
# a worker silent this long is restarted; gthread workers keep beating while a request runs,
# so this bounds a hung worker, not a long upload
WORKER_TIMEOUT_SECONDS = 120


class StudioServer(BaseApplication):
    def __init__(self, config: dict[str, Any], options: dict[str, Any]):
        self.config = config
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        from . import create_app
        from .web import warm_pages

        app = create_app(self.config)
        app.extensions["store"].collect_soon()  # what a killed process left behind, past the grace period
        warm_pages(app)
        return app


def _worker_exit(server, worker) -> None:
    from .onnx_io import offload

    offload.stop()


def gunicorn_options(host: str, port: int, workers: int, threads: int, log_level: str, log_format: str) -> dict:
    """gunicorn's settings for the server: its own log lines (starting, signals, refused requests)
    in the app's format and level, and no control socket (gunicorn 27 opens one under the home
    folder, shared by every instance there; nothing here uses it)."""
    options: dict[str, Any] = {
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "workers": workers,
        "threads": threads,
        "worker_class": "gthread",
        "graceful_timeout": GRACEFUL_SECONDS,
        "timeout": WORKER_TIMEOUT_SECONDS,
        "accesslog": None,  # web/request_log.py writes one line per request
        "errorlog": "-",
        "loglevel": log_level,
        "proc_name": "onnx-studio",
        "worker_exit": _worker_exit,
        "control_socket_disable": True,
        # the longest request line gunicorn takes (its default, 4094, is passed by an address of a
        # node a few bodies deep in long names; past it gunicorn answers a bare 414 page itself)
        "limit_request_line": 8190,
    }
    if log_format == "json":
        # gunicorn merges this over its defaults by top-level key: formatters and handlers whole
        options["logconfig_dict"] = {
            "version": 1,
            "disable_existing_loggers": False,
            "formatters": {"json": {"()": "app.logs.JsonFormatter"}},
            "handlers": {
                "stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
            },
            "loggers": {
                "gunicorn.error": {"handlers": ["stderr"], "level": log_level.upper(), "propagate": False},
                # a log config turns gunicorn's access lines on: web/request_log.py writes ours
                "gunicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
            },
            "root": {"level": log_level.upper(), "handlers": ["stderr"]},  # the app's lines, as logs.configure
        }
    return options


def run(config: dict[str, Any], options: dict[str, Any]) -> None:
    StudioServer(config, options).run()
