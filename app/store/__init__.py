"""Models and their revisions: an index (SQLite) over content-addressed blobs (a folder, or an
S3 bucket when BLOB_URL names one)."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import StoreUnavailable
from .blobs import Blobs, BlobStore
from .index import SqlIndex, SqliteIndex
from .records import ModelRecord, Revision
from .store import Store
from .wire import SPLIT_MIN_BYTES

_BUCKET = re.compile(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:/*")
_QUERY_PASSWORD = re.compile(r"(?i)(\bpassword=)([^&#]*)")
DATABASE_URL_FORMS = "sqlite:///PATH or postgresql://USER:PASS@HOST:PORT/DB"


def _password_span(url: str) -> tuple[int, int] | None:
    """Where the password of `SCHEME://USER:PASS@HOST...` is in the URL. The user part ends at the
    last @ before the query: a generated password may hold a / or an @ of its own."""
    scheme = _SCHEME.match(url)
    if not scheme or url.lower().startswith("sqlite:"):
        return None
    start = scheme.end()
    end = min((i for i in (url.find("?", start), url.find("#", start)) if i >= 0), default=len(url))
    at = url.rfind("@", start, end)
    colon = url.find(":", start, at) if at >= 0 else -1
    return (colon + 1, at) if colon >= 0 else None


def masked_url(url: str) -> str:
    """A database or blob URL as messages and logs may show it: its password (`USER:PASS@`, a
    `password=` parameter) as ***."""
    span = _password_span(url)
    if span:
        url = url[: span[0]] + "***" + url[span[1] :]
    return _QUERY_PASSWORD.sub(r"\1***", url)


def url_passwords(url: str) -> list[str]:
    """The passwords a URL holds, as written and percent-decoded (to take out of messages)."""
    span = _password_span(url)
    found = ([url[span[0] : span[1]]] if span else []) + [m.group(2) for m in _QUERY_PASSWORD.finditer(url)]
    return [p for raw in found for p in {raw, unquote(raw)} if p]


def check_database_url(url: str) -> None:
    """ValueError (its message without the URL) unless `url` is one open_index takes; empty: the default."""
    if url and not url.startswith(("sqlite:///", "postgresql://", "postgres://")):
        raise ValueError(f"is not {DATABASE_URL_FORMS}")


def parse_blob_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of `s3://BUCKET/PREFIX` (the prefix may be empty); ValueError otherwise."""
    parts = urlsplit(url)
    prefix = parts.path.strip("/")
    if (
        parts.scheme != "s3"
        or not _BUCKET.fullmatch(parts.netloc)
        or parts.query
        or parts.fragment
        or "//" in prefix
        or any(p in (".", "..") for p in prefix.split("/"))
    ):
        raise ValueError(f"BLOB_URL {masked_url(url)!r} is not s3://BUCKET/PREFIX")
    return parts.netloc, prefix


def open_index(url: str | None, data_dir: Path) -> SqlIndex:
    """The index DATABASE_URL names: sqlite:///PATH (default: DATA_DIR/index.sqlite3) or
    postgresql://USER:PASS@HOST:PORT/DB."""
    if not url:
        return SqliteIndex(data_dir / "index.sqlite3")
    if url.startswith("sqlite:///"):
        return SqliteIndex(Path(url.removeprefix("sqlite:///")))
    if url.startswith(("postgresql://", "postgres://")):
        from .pg_index import PostgresIndex

        return PostgresIndex(url)
    raise ValueError(f"database URL {masked_url(url)!r}: use {DATABASE_URL_FORMS}")


def open_store(config) -> Store:
    """The store the app's configuration names: DATABASE_URL the index (default: SQLite in
    DATA_DIR); BLOB_URL the blobs (default: a folder in DATA_DIR; s3://BUCKET/PREFIX: an S3
    bucket, its local cache in DATA_DIR/blob-cache, at most BLOB_CACHE_BYTES);
    STORE_SPLIT_MIN_BYTES, the size from which a tensor is a blob of its own."""
    data_dir = Path(config["DATA_DIR"])
    data_dir.mkdir(parents=True, exist_ok=True)
    index = open_index(config.get("DATABASE_URL"), data_dir)
    url = config.get("BLOB_URL")
    blobs: Blobs
    if url:
        from .s3_blobs import DEFAULT_CACHE_BYTES, S3BlobStore

        bucket, prefix = parse_blob_url(url)
        blobs = S3BlobStore(
            bucket, prefix, data_dir / "blob-cache", config.get("BLOB_CACHE_BYTES") or DEFAULT_CACHE_BYTES
        )
    else:
        blobs = BlobStore(data_dir / "blobs")
    where = config.get("DATABASE_URL") or str(data_dir.resolve())
    split = config.get("STORE_SPLIT_MIN_BYTES", SPLIT_MIN_BYTES)
    return Store(index, blobs, where, split)


class StoreCheckFailed(Exception):
    """What a server's start-up check found wrong with its store: the setting at fault
    (database_url, blob_url or data_dir) and what, in one line with no password in it."""

    def __init__(self, setting: str, message: str):
        super().__init__(message)
        self.setting = setting
        self.message = message


def _sqlite_path(database_url: str, data_dir: Path) -> Path | None:
    """The SQLite file a database URL names (none: the one in data_dir); None for PostgreSQL."""
    if not database_url:
        return data_dir / "index.sqlite3"
    return Path(database_url.removeprefix("sqlite:///")) if database_url.startswith("sqlite:///") else None


def _one_line(text: str, hide: list[str]) -> str:
    """A driver's message on one line (psycopg's hint lines joined), the passwords taken out."""
    for secret in sorted(hide, key=len, reverse=True):
        if len(secret) >= 3:  # (a shorter one, replaced everywhere, would garble the message)
            text = text.replace(secret, "***")
    return "; ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def _reason(exc: BaseException) -> str:
    """What went wrong, in the driver's own words: the error a StoreUnavailable wraps (psycopg's
    hint lines, which the 503's first-line reason drops, say what to check)."""
    if isinstance(exc, StoreUnavailable):
        return str(exc.__cause__) if exc.__cause__ is not None else exc.reason
    return str(exc) or type(exc).__name__


def _close_index(index: SqlIndex | None) -> None:
    """Close the connection the check opened (a process forking workers next keeps none)."""
    local = getattr(index, "_local", None)
    db = getattr(local, "db", None)
    if db is not None:
        db.close()
        local.db = None  # type: ignore[union-attr]


def _check_bucket(url: str) -> str | None:
    """Why the bucket `url` names can't be used (None: it answers). A few seconds at most."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import ClientError, NoCredentialsError

    from .s3_blobs import CONNECT_TIMEOUT_SECONDS, UNREACHABLE

    bucket, _ = parse_blob_url(url)
    try:
        client = boto3.client(
            "s3",
            config=Config(
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                read_timeout=CONNECT_TIMEOUT_SECONDS,
                retries={"total_max_attempts": 2},
            ),
        )
    except Exception as exc:  # a malformed AWS_ENDPOINT_URL, ...
        return f"the blob store (S3) can't be used: {exc}"
    where = masked_url(client.meta.endpoint_url or "S3")
    try:
        client.head_bucket(Bucket=bucket)
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "?"))
        if code in ("404", "NoSuchBucket"):
            return f"the bucket {bucket} does not exist at {where} ({code})"
        if code in ("403", "AccessDenied", "Forbidden"):
            return (
                f"{where} refuses access to the bucket {bucket} ({code}): check the credentials"
                " (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and what they may do"
            )
        return f"{where} refuses the bucket {bucket}: {error.get('Message') or 'refused'} ({code})"
    except UNREACHABLE as exc:
        return f"the blob store (S3) can't be reached: {exc}"
    except NoCredentialsError:
        return (
            "the blob store (S3) can't be used: no credentials"
            " (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile)"
        )
    except Exception as exc:  # a profile that isn't there, ...
        return f"the blob store (S3) can't be used: {exc}"
    finally:
        with contextlib.suppress(Exception):
            client.close()
    return None


TEAM_EXTRA = "pip install 'onnx-studio[team]'"  # the team server's clients (pyproject.toml)


def _installed(module: str, setting: str, what: str) -> None:
    """StoreCheckFailed when `module`, the client a setting needs, isn't installed: a laptop's
    install goes without the team server's (QA34 #12)."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise StoreCheckFailed(setting, f"{what}'s client ({module}) isn't installed: {TEAM_EXTRA}") from None


def check_store(config: Mapping[str, Any]) -> None:
    """What a server checks once before it starts its workers (each then opens its own store): the
    data folder can be made, the index opens and answers (PostgreSQL: a connection, and the schema
    set up as a worker would), the blob store answers (S3: its bucket is there). Raise
    StoreCheckFailed naming the setting at fault, in one line, its password taken out; nothing
    is left open."""
    data_dir = Path(config["DATA_DIR"])
    database_url = str(config.get("DATABASE_URL") or "")
    blob_url = str(config.get("BLOB_URL") or "")
    hide = url_passwords(database_url) + url_passwords(blob_url)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreCheckFailed("data_dir", _one_line(f"the data folder can't be made: {exc}", hide)) from None

    index_setting = "database_url" if database_url else "data_dir"
    try:
        check_database_url(database_url)
    except ValueError as exc:
        raise StoreCheckFailed("database_url", f"{masked_url(database_url)!r} {exc}") from None
    sqlite = _sqlite_path(database_url, data_dir)
    if sqlite is None:
        _installed("psycopg", "database_url", "PostgreSQL")
    kind = f"SQLite, {sqlite}" if sqlite else "PostgreSQL"
    index: SqlIndex | None = None
    try:
        index = open_index(database_url or None, data_dir)
        index.ping()
    except Exception as exc:
        what = f"the model index ({kind}) can't be " + ("reached" if isinstance(exc, StoreUnavailable) else "opened")
        raise StoreCheckFailed(index_setting, _one_line(f"{what}: {_reason(exc)}", hide)) from None
    finally:
        _close_index(index)

    if not blob_url:
        try:
            BlobStore(data_dir / "blobs").ping()
        except OSError as exc:
            raise StoreCheckFailed("data_dir", _one_line(f"the blob folder can't be used: {exc}", hide)) from None
        return
    try:
        parse_blob_url(blob_url)
    except ValueError:
        raise StoreCheckFailed("blob_url", f"{masked_url(blob_url)!r} is not s3://BUCKET/PREFIX") from None
    _installed("boto3", "blob_url", "S3")
    problem = _check_bucket(blob_url)
    if problem:
        raise StoreCheckFailed("blob_url", _one_line(problem, hide))


def describe_store(config: Mapping[str, Any]) -> str:
    """The store a configuration names, for the server's start-up log line (no password)."""
    data_dir = Path(config["DATA_DIR"]).resolve()
    database_url = str(config.get("DATABASE_URL") or "")
    blob_url = config.get("BLOB_URL")
    sqlite = _sqlite_path(database_url, data_dir)
    index = f"SQLite {sqlite}" if sqlite else f"PostgreSQL {masked_url(database_url)}"
    blobs = f"S3 {masked_url(blob_url)} at {s3_endpoint()}" if blob_url else f"folder {data_dir / 'blobs'}"
    return f"data folder {data_dir}; index: {index}; blobs: {blobs}"


def s3_endpoint() -> str:
    """The S3 endpoint boto3 reaches (QA36: the line was the same after the endpoint moved)."""
    url = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    return masked_url(url) if url else "AWS's endpoint of its region"


__all__ = [
    "BlobStore",
    "Blobs",
    "ModelRecord",
    "Revision",
    "SqlIndex",
    "SqliteIndex",
    "Store",
    "StoreCheckFailed",
    "check_database_url",
    "check_store",
    "describe_store",
    "masked_url",
    "open_index",
    "open_store",
    "parse_blob_url",
]
