"""ONNX Studio: open, explore, edit and download ONNX models in the browser."""

from __future__ import annotations

import os
from pathlib import Path

from flask import Flask

from .onnx_io.ort_env import telemetry_off

telemetry_off()  # before anything imports onnxruntime, in this process and those it starts


def default_data_dir() -> Path:
    """Per-user data folder (XDG), never inside the package."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "onnx-studio"


def check_protobuf_backend() -> None:
    """The server relies on protobuf's upb backend: its parser is the one tested on hostile
    files (and the pure-Python one is ~50x slower, a denial of service by itself)."""
    from google.protobuf.internal import api_implementation

    backend = api_implementation.Type()
    if backend != "upb":
        raise RuntimeError(
            f"ONNX Studio needs protobuf's upb backend, this environment has {backend!r}"
            " (unset PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION, use protobuf >= 4.21)"
        )


def create_app(config: dict | None = None) -> Flask:
    from .json_provider import OrjsonProvider
    from .store.wire import SPLIT_MIN_BYTES

    check_protobuf_backend()

    from .web.template_cache import SHARED

    class StudioFlask(Flask):
        json_provider_class = OrjsonProvider

    app = StudioFlask(__name__)
    app.jinja_options = {**app.jinja_options, "bytecode_cache": SHARED}  # before jinja_env is made
    app.config.update(
        DATA_DIR=str(default_data_dir()),
        MAX_CONTENT_LENGTH=8 * 1024**3,
        # a model saved with one external data file per tensor is one part each (werkzeug: 1,000)
        MAX_FORM_PARTS=100_000,
        MAX_JSON_BYTES=256 << 20,  # an edit batch's JSON (api/errors.py)
        UPLOAD_IN_MEMORY_BYTES=64 << 20,  # bigger uploads are parsed and stored from their spooled file
        PREVIEW_MAX_COUNT=10_000,
        INFER_INLINE_NODES=5_000,  # bigger graphs get inferred types from GET .../types
        ALLOWED_HOSTS=[],  # answered besides loopback names (web/guard.py)
        AUTH_TOKEN=None,  # set: every page and API call needs it (web/auth.py)
        ZIP_MAX_UNCOMPRESSED=16 << 30,  # what an uploaded zip may unpack to (onnx_io/zip_reading.py)
        ZIP_MAX_RATIO=200,  # times a member's compressed size
        STORE_SPLIT_MIN_BYTES=SPLIT_MIN_BYTES,  # tensors this big are stored as blobs of their own (store/wire.py)
    )
    if config:
        app.config.update(config)

    from .store import open_store

    app.extensions["store"] = open_store(app.config)  # the index and blob store the configuration names

    from .api import bp as api_bp
    from .web import bp as web_bp

    app.register_blueprint(api_bp)
    app.register_blueprint(web_bp)

    from .api.errors import install_api_not_found, install_readable_retry
    from .web import auth, health, request_log
    from .web.guard import install

    app.register_blueprint(health.bp)
    install(app)
    auth.install(app)
    request_log.install(app)  # its id comes first: before the guard's and the token's checks

    from .api.failures import StoreFailures
    from .onnx_io import offload

    offload.shared = StoreFailures()  # a crash on a content: remembered in whichever app's store asks
    offload.prewarm()  # onnx's C++ runs in the helper process: started before the first page asks
    install_api_not_found(app)
    install_readable_retry(app)
    # the pages' templates compiled now, not in the first visitor's request (~10-15 ms)
    for name in app.jinja_env.list_templates():
        app.jinja_env.get_template(name)
    return app
