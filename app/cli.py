"""The `onnx-studio` command.

  onnx-studio MODEL.onnx [--port P] [--no-browser]   open one model in the browser
  onnx-studio serve [--host H] [--port P]            serve the app for uploads
  onnx-studio apply MODEL.onnx RECIPE.json -o OUT    replay recorded edits on a model
Both take --data-dir (default: the per-user data folder).
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import logging
import secrets
import socket
import sys
import threading
import webbrowser
from pathlib import Path
from typing import NoReturn

import onnx

from . import create_app, default_data_dir, logs, settings
from .api.reference import keep_test_data_sets
from .errors import StudioError
from .onnx_io import parse_model
from .onnx_io.external import normalize_location
from .onnx_io.model_names import model_name
from .onnx_io.test_data_sets import test_data_sets_beside


def external_files(model_path: Path, model: onnx.ModelProto, warn: bool = True) -> dict[str, Path]:
    """The external data files a model names, linked in place (not copied), and only from inside
    the model's own folder; `warn`: say each one that isn't (the page opens without its values)."""
    from onnx.external_data_helper import _get_all_tensors

    folder = model_path.parent.resolve()
    out: dict[str, Path] = {}
    for t in _get_all_tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        loc = next((e.value for e in t.external_data if e.key == "location"), "")
        key = normalize_location(loc)
        path = (folder / key).resolve() if key else None
        if not key or path is None or not path.is_relative_to(folder) or not path.is_file():
            if warn:
                print(
                    f"warning: external data {loc!r} is not a file inside {folder}; its tensors won't preview",
                    file=sys.stderr,
                )
            continue
        out[key] = path
    return out


def _free_port(host: str, preferred: int) -> int:
    with socket.socket() as s:
        try:
            s.bind((host, preferred))
            return preferred
        except OSError:
            s.bind((host, 0))
            return s.getsockname()[1]


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def _serve(app, host: str, port: int, page: str = "/", open_browser: bool = False) -> None:
    from werkzeug.serving import make_server

    from .onnx_io import offload
    from .serving import GRACEFUL_SECONDS
    from .web import warm_pages
    from .web.graceful import InFlight, stop_on_sigterm

    in_flight = InFlight(app)
    server = make_server(host, port, in_flight, threaded=True)
    warm_pages(app)
    # what a process killed earlier left behind (blobs of models deleted meanwhile, temp files
    # of puts cut short) goes in the background, past the grace period
    app.extensions["store"].collect_soon()
    url = f"http://{host}:{server.port}{page}"
    logs.tell(f"ONNX Studio on {url}  (Ctrl+C stops)")
    if open_browser:
        threading.Timer(0.5, lambda: webbrowser.open(url)).start()
    stop_on_sigterm(server)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    # no new requests from here; those under way finish (an edit being stored), then the helper goes
    in_flight.wait_idle(GRACEFUL_SECONDS)
    offload.stop()


def _open(args):
    """Store the model file (its external data linked in place); the bytes are dropped after, so a
    1 GiB model isn't held twice while the server runs."""
    data = args.model.read_bytes()
    model = parse_model(data, args.model.name)
    external = external_files(args.model, model)
    del model
    app = create_app({"DATA_DIR": str(args.data_dir)})
    store = app.extensions["store"]
    listed = model_name(args.model.resolve().as_posix())
    record = _stored_once(store, store.create_model(listed, data, external))
    sets = test_data_sets_beside(args.model)
    if sets and not (store.model(record.id).checks or {}).get("cases"):
        with app.app_context():
            _say_test_data_sets(keep_test_data_sets(record.id, sets))
    return record, app


def _say_test_data_sets(imported: dict) -> None:
    """The test data sets beside the model, kept as reference cases (or why not), on the console."""
    if imported["kept"]:
        print(
            f"kept {', '.join(imported['kept'])} as reference cases: every revision is held to their outputs",
            flush=True,
        )
    for s in imported["skipped"]:
        print(f"{s['name']} not kept: {s['reason']}", flush=True)


def _stored_once(store, record):
    """The model to open for a file opened again: its earlier entry when that is still the file
    as it was (same name, bytes and external data files, never edited), the new one dropped —
    `onnx-studio model.onnx` run every day made a list of identical entries. An earlier entry
    with edits is left alone and named, since the file and it now differ."""
    new = store.revision(record.id, 0)
    for earlier in store.find_content(record.content) if record.content else []:
        if earlier.id == record.id or earlier.name != record.name:
            continue
        if earlier.head == 0 and store.revision(earlier.id, 0).external == new.external:
            store.delete_model(record.id)
            print(f"{record.name} is stored already, unedited: opening that entry", flush=True)
            return earlier
        print(f"{record.name} is also stored with edits: /models/{earlier.id} (revision {earlier.head})", flush=True)
    return record


def serve_parser() -> argparse.ArgumentParser:
    """`onnx-studio serve`'s arguments (tests/test_deploy_files.py checks the container commands)."""
    p = argparse.ArgumentParser(
        prog="onnx-studio serve",
        description="Serve ONNX Studio for uploads. Settings come from these flags, then ONNX_STUDIO_* "
        "environment variables, then a TOML --config file (README: Configuration).",
    )
    settings.add_flags(p)
    return p


def serve_token(values: dict) -> str | None:
    """The access token a server needs: the one given, else (listening beyond loopback) one made up
    and said. An empty one counts as none (`ONNX_STUDIO_AUTH_TOKEN=` does not turn it off)."""
    token = values.get("auth_token") or None
    host = values["host"]
    if token is None and not _is_loopback(host):
        token = secrets.token_urlsafe(24)
        logs.tell(
            f"Access token (anyone reaching {host} needs it): {token} — made up at each start: "
            "set ONNX_STUDIO_AUTH_TOKEN to keep people signed in over restarts and hosts",
        )
    return token


def _refuse(p: argparse.ArgumentParser, message: str) -> NoReturn:
    """A setting the server can't start with: argparse's error line and exit status (2), without
    its usage block (the command line was well formed; a value in it, the environment or the
    config file was not). One line: a log collector shows it whole."""
    p.exit(2, f"{p.prog}: error: {' '.join(message.split())}\n")


def _check_store(p: argparse.ArgumentParser, values: settings.Values, config: dict) -> None:
    """The index and blob store the settings name, opened and asked once before the server starts:
    a database or bucket it can't reach (a wrong password, a server down, a missing bucket) stops
    it here with one line naming the setting's source, not with a traceback from each worker."""
    from .store import StoreCheckFailed, check_store

    try:
        check_store(config)
    except StoreCheckFailed as exc:
        _refuse(p, f"{values.source(exc.setting)}: {exc.message}")


def _say_what_it_serves(values: settings.Values, config: dict) -> None:
    """One log line naming the store, processes and access the server starts with (the operator's
    check that the settings meant were the ones applied)."""
    from .store import describe_store

    workers = values["workers"]
    processes = f"{workers} workers x {values['threads']} threads" if workers > 1 else "1 process"
    token = "an access token" if config.get("AUTH_TOKEN") else "no access token"
    where = f"{values['host']}:{values['port']}" if values["port"] else f"{values['host']}, a free port"
    logging.getLogger("app").info("serving on %s, %s; %s; needs %s", where, processes, describe_store(config), token)


def _serve_command(argv: list[str]) -> int:
    p = serve_parser()
    try:
        values = settings.resolve(p.parse_args(argv))
    except settings.SettingsError as exc:
        _refuse(p, str(exc))
    config = {"DATA_DIR": str(default_data_dir()), **settings.flask_config(values)}
    _check_store(p, values, config)
    host = values["host"]
    hosts = list(values.get("allowed_hosts", []))
    if host not in ("0.0.0.0", "::", ""):
        hosts.append(host)  # the address it listens on is a name it answers
    logs.configure(values["log_level"], values["log_format"])
    token = serve_token(values)
    if host in ("0.0.0.0", "::", "") and not hosts:
        # reached from elsewhere by a name this server can't know: the Host check refuses it (421)
        logs.tell(
            f"Listening on {host or 'every address'}, answering localhost only: add the name people reach it by"
            " with --allowed-host NAME (or ONNX_STUDIO_ALLOWED_HOSTS)",
        )
    config = {**config, "ALLOWED_HOSTS": hosts, "AUTH_TOKEN": token}
    for library in ("botocore", "boto3", "s3transfer"):  # "Found credentials in ...", in every worker
        logging.getLogger(library).setLevel(logging.WARNING)
    _say_what_it_serves(values, config)
    if values["workers"] > 1:
        from . import serving

        options = serving.gunicorn_options(
            host, values["port"], values["workers"], values["threads"], values["log_level"], values["log_format"]
        )
        serving.run(config, options)
    else:
        _serve(create_app(config), host, values["port"])
    return 0


def _port(text: str) -> int:
    try:
        return settings.port_number(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} {exc}") from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "serve":
        return _serve_command(argv[1:])
    if argv and argv[0] == "apply":
        from .replay_cli import apply_command

        return apply_command(argv[1:])
    p = argparse.ArgumentParser(
        prog="onnx-studio",
        description="Open an ONNX model in ONNX Studio (or: onnx-studio serve --help, onnx-studio apply --help).",
    )
    p.add_argument("model", type=Path, help="the .onnx file to open")
    p.add_argument("--port", type=_port, default=8080, help="port to listen on (taken: a free one)")
    p.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="folder of the store (default: %(default)s)"
    )
    p.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    args = p.parse_args(argv)
    if not args.model.is_file():
        p.error(f"{args.model} is not a file")
    try:
        record, app = _open(args)
    except StudioError as exc:
        print(f"onnx-studio: {exc.message}", file=sys.stderr)
        return 2
    from .api.documents import warm_up

    warm_up(app, record.id)  # parse, draw data and checks start before the browser asks
    port = _free_port("127.0.0.1", args.port)
    if port != args.port:  # said: a bookmark or a script of the port asked would reach nothing (QA34 #12)
        logs.tell(f"Port {args.port} is taken: serving on {port} instead")
    _serve(app, "127.0.0.1", port, f"/models/{record.id}", open_browser=not args.no_browser)
    return 0


if __name__ == "__main__":
    sys.exit(main())
