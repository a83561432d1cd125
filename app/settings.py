"""The server's settings, from command-line flags, environment variables and an optional TOML
config file, in that order of precedence (then the defaults). One table: each setting's flag,
variable, file key and what it becomes in the Flask config. README.md's table lists them all
(tests/test_settings.py checks it does)."""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .words import closest

ENV_PREFIX = "ONNX_STUDIO_"
CONFIG_ENV = ENV_PREFIX + "CONFIG"


class SettingsError(ValueError):
    """A setting with a value it can't take: the message names where it came from."""


MIN_TOKEN = 12  # characters; a made-up one has 32


def _token(raw: object) -> str:
    """An access token: none ("" turns none on), or one long enough to guess at no rate."""
    token = str(raw)
    if token.strip() and len(token.strip()) < MIN_TOKEN:
        raise ValueError(f"is too short for an access token (at least {MIN_TOKEN} characters)")
    return token.strip()


def _whole(raw: Any) -> int:
    """A whole number: a TOML integer, or its digits (a flag, an environment variable)."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    text = str(raw).strip()
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ValueError("is not a whole number")
    return int(text)


def _positive_int(raw: Any) -> int:
    value = _whole(raw)
    if value < 1:
        raise ValueError("must be 1 or more")
    return value


def port_number(raw: Any) -> int:
    """A TCP port to listen on: 1 to 65535, or 0 for any free one (the address printed says which)."""
    value = _whole(raw)
    if not 0 <= value <= 65535:
        raise ValueError("is not a port: 1 to 65535 (0: any free one)")
    return value


def _database_url(raw: Any) -> str:
    """The index's URL: sqlite:///PATH or postgresql://... (empty: SQLite in data_dir)."""
    from .store import check_database_url

    url = str(raw).strip()
    check_database_url(url)
    return url


def _blob_url(raw: Any) -> str:
    """The blob store's URL: s3://BUCKET/PREFIX (empty: a folder in data_dir)."""
    from .store import parse_blob_url

    url = str(raw).strip()
    if url:
        try:
            parse_blob_url(url)
        except ValueError:
            raise ValueError("is not s3://BUCKET/PREFIX") from None
    return url


def _shown_url(raw: Any) -> str:
    from .store import masked_url

    return repr(masked_url(str(raw)))


def _names(value: Any) -> list[str]:
    """A list of names: a TOML list, or a comma-separated string (an environment variable)."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in str(value).split(",") if v.strip()]


def _choice(*choices: str) -> Callable[[Any], str]:
    def parse(text: Any) -> str:
        value = str(text).lower()
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return value

    return parse


@dataclass(frozen=True)
class Setting:
    key: str  # the config file's key; --key-with-dashes; ONNX_STUDIO_KEY
    parse: Callable[[Any], Any]
    help: str
    flask: str | None = None  # the Flask config key it sets (None: the CLI uses it)
    repeat: bool = False  # the flag can be given several times (a list)
    # how an error message shows a value refused: repr, a URL without its password, nothing for a secret
    show: Callable[[Any], str] = repr

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-") if not self.repeat else "--" + self.key.rstrip("s").replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.key.upper()


SETTINGS = (
    Setting("data_dir", Path, "folder of the store (SQLite index and blobs)", "DATA_DIR"),
    Setting(
        "database_url",
        _database_url,
        "the index: sqlite:///PATH or postgresql://USER:PASS@HOST:PORT/DB",
        "DATABASE_URL",
        show=_shown_url,
    ),
    Setting(
        "blob_url",
        _blob_url,
        "s3://BUCKET/PREFIX: the blobs in S3 (default: a folder in data_dir)",
        "BLOB_URL",
        show=_shown_url,
    ),
    Setting("host", str, "address to listen on"),
    Setting("port", port_number, "port to listen on (0: any free one)"),
    Setting("workers", _positive_int, "worker processes (more than 1: gunicorn)"),
    Setting("threads", _positive_int, "threads per worker process"),
    Setting("allowed_hosts", _names, "host names answered besides loopback ('*': any)", "ALLOWED_HOSTS", repeat=True),
    Setting(
        "auth_token",
        _token,
        f"access token every page and API call needs (at least {MIN_TOKEN} characters)",
        "AUTH_TOKEN",
        show=lambda _: "",
    ),
    Setting("log_level", _choice("debug", "info", "warning", "error"), "log level"),
    Setting("log_format", _choice("text", "json"), "log lines as text or one JSON object each"),
    Setting("max_upload_bytes", _positive_int, "largest upload accepted", "MAX_CONTENT_LENGTH"),
    Setting("zip_max_uncompressed", _positive_int, "bytes an uploaded zip may unpack to", "ZIP_MAX_UNCOMPRESSED"),
    Setting("zip_max_ratio", _positive_int, "times its compressed size a zip member may unpack to", "ZIP_MAX_RATIO"),
)
BY_KEY = {s.key: s for s in SETTINGS}
DEFAULTS = {"host": "127.0.0.1", "port": 8080, "workers": 1, "threads": 8, "log_level": "info", "log_format": "text"}


def add_flags(parser: argparse.ArgumentParser, keys: tuple[str, ...] | None = None) -> None:
    """The settings' flags, defaulting to "not given" (the environment and file come next)."""
    parser.add_argument("--config", type=Path, default=None, help=f"a TOML file of settings (env {CONFIG_ENV})")
    for s in SETTINGS:
        if keys is not None and s.key not in keys:
            continue
        if s.repeat:
            more = f"{s.help}; again for more (env {s.env}: comma-separated)"
            parser.add_argument(s.flag, dest=s.key, action="append", default=None, metavar="NAME", help=more)
        else:
            parser.add_argument(s.flag, dest=s.key, default=None, help=f"{s.help} (env {s.env})")


class Values(dict[str, Any]):
    """The settings' values, by key, and where each given one came from (`sources`: its flag, its
    environment variable, or "FILE: key"), for the messages about them made later (a database the
    server can't reach)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sources: dict[str, str] = {}

    def source(self, key: str) -> str:
        """Where a setting came from, as messages name it (one not given: its key, the default's)."""
        return self.sources.get(key) or f"{key} (default)"


def _known_environment(environ: Mapping[str, str]) -> None:
    """An ONNX_STUDIO_* variable that names no setting is refused, as an unknown config file key
    is: `ONNX_STUDIO_BLOB_URI=s3://...` left a host quietly keeping its blobs in its own folder."""
    known = {s.env for s in SETTINGS} | {CONFIG_ENV}
    unknown = sorted(name for name in environ if name.startswith("ONNX_STUDIO_") and name not in known)
    if unknown:
        hint = closest(unknown[0], known, quote=False)
        raise SettingsError(f"{unknown[0]} is not a setting{hint}: the README's Configuration table lists them")


def resolve(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Values:
    """Every setting's value: the flag's, else the environment's, else the config file's, else
    its default (absent: create_app's own default applies)."""
    environ = os.environ if environ is None else environ
    config_path = getattr(args, "config", None) or environ.get(CONFIG_ENV)
    from_file: dict[str, Any] = {}
    if config_path:
        try:
            from_file = tomllib.loads(Path(config_path).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"config file {config_path}: {exc}") from None
        unknown = sorted(set(from_file) - set(BY_KEY))
        if unknown:
            raise SettingsError(f"config file {config_path}: unknown setting {', '.join(unknown)}")
    _known_environment(environ)
    values = Values(DEFAULTS)
    for s in SETTINGS:
        given = getattr(args, s.key, None)
        if given is not None:
            source, raw = s.flag, given
        elif s.env in environ:
            source, raw = s.env, environ[s.env]
        elif s.key in from_file:
            source, raw = f"config file {config_path}: {s.key}", from_file[s.key]
        else:
            continue
        try:
            if s.repeat and isinstance(raw, list) and source == s.flag:
                values[s.key] = [n for item in raw for n in s.parse(item)]
            else:
                values[s.key] = s.parse(raw)
        except (TypeError, ValueError) as exc:
            shown = s.show(raw)
            raise SettingsError(f"{source}: {shown} {exc}" if shown else f"{source}: {exc}") from None
        values.sources[s.key] = source
    return values


def flask_config(values: Mapping[str, Any]) -> dict[str, Any]:
    """The Flask config the settings make (those that have a value)."""
    return {
        s.flask: (str(values[s.key]) if s.key == "data_dir" else values[s.key])
        for s in SETTINGS
        if s.flask and s.key in values
    }
