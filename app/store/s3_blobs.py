"""Blobs in an S3 bucket (issue 14): the same interface as the blob folder (blobs.Blobs).

Keys are `<prefix>/<digest[:2]>/<digest>`. A put hashes its bytes while spooling them to a local
temp file, then uploads it (multipart when big: boto3's upload_file) unless the key is there —
then the object is copied onto itself with fresh metadata, so its `stored` time (what the
collector's grace period counts from) starts again. Reads stream from S3; what needs a local file
(memory maps, the helper process) gets one from a bounded local cache (least recently used go
first). Endpoint, credentials and region come from the standard AWS_* variables (boto3 reads
them). Uploads cut short leave incomplete multipart uploads in the bucket: the collector aborts
those older than its grace period (remove_strays). Every request is bounded in time (the
*_SECONDS and ATTEMPTS below); S3 that can't be reached leaves the store as StoreUnavailable (503),
and the processes of the host (they share the cache's folder) refuse at once for a while (_Breaker)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import boto3
from boto3.exceptions import RetriesExceededError, S3UploadFailedError
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    HTTPClientError,
    IncompleteReadError,
    ReadTimeoutError,
)
from botocore.exceptions import ConnectionError as EndpointUnreachable

from ..errors import BlobMissing, StoreUnavailable
from .blobs import CHUNK, is_digest, remove_older, remove_stale_scratch, scratch_in

DEFAULT_CACHE_BYTES = 4 << 30
COPY_OBJECT_MAX = 5 << 30  # the most one CopyObject copies
_MISSING = {"404", "NoSuchKey", "NotFound"}

# How long a request may take, for a server (botocore's defaults, 60 s to connect and 60 s per
# read over up to 5 attempts, held a request and its thread for minutes on a hung endpoint).
CONNECT_TIMEOUT_SECONDS = 5.0
# the longest wait for the next bytes of an answer: a stalled socket, not a whole transfer (a big
# blob streams for as long as its bytes keep coming)
READ_TIMEOUT_SECONDS = 20.0
ATTEMPTS = 3  # per request, the first included (transient errors are tried again; timeouts: _no_retry_on_timeout)
# the readiness probe (ping): one attempt, answered within this or the blob store counts as down
PING_TIMEOUT_SECONDS = 2.0
# once S3 failed to answer, how long requests needing it answer 503 at once (_Breaker)
COOL_OFF_SECONDS = 10.0
# The breaker's state, in the folder every process of a server shares (the S3 cache's, in its
# data folder): S3 failed to answer ("<time.time()>\n<why>", written whole by a rename), and the
# marker the one request trying S3 again after the cool-off holds (made with O_EXCL).
DOWN_FILE = ".s3-down"
TRYING_FILE = ".s3-trying"
# Parts of a multipart upload are tried again after a timeout still: one stalled connection among
# the many of a transfer of gigabytes shouldn't fail it, and S3 answered the upload's start.
RETRY_TIMEOUTS_OF = frozenset({"UploadPart"})
BLOB_STORE = "blob store (S3)"  # as errors name it
# botocore's (and boto3's transfers') errors of an endpoint that can't be reached or stopped
# answering: connect failures and timeouts, read timeouts, connections cut mid-answer
UNREACHABLE = (EndpointUnreachable, HTTPClientError, IncompleteReadError, RetriesExceededError)


def client_config() -> Config:
    """The S3 client's bounds (standard retries: with backoff, on throttling and transient errors)."""
    return Config(
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
        retries={"mode": "standard", "total_max_attempts": ATTEMPTS},
    )


def _no_retry_on_timeout(caught_exception: Exception | None = None, operation: Any = None, **kwargs: Any) -> Any:
    """A connect or read timeout is not tried again (a needs-retry handler, asked before botocore's
    own: False, not None, is its verdict). A connect timeout already spans the kernel's SYN
    retransmissions (5 s); a read timeout is 20 s of silence from an endpoint that took the
    request: for the small requests a page makes (HEAD, GET of a graph, PUT) that is a hung S3,
    not a flaky one, and asking again made the first request on a hung bucket wait 3 × 20 s for
    the same 503, past most load balancers' idle timeout (60 s). The errors that come back quickly
    (a connection refused or reset, 5xx, throttling) are still tried again, up to ATTEMPTS. Long
    transfers are not cut shorter: a read timeout is per stalled read, body bytes are read after
    the request returned (no retry of botocore's applies to them), boto3's downloads resume a
    stalled stream themselves, and an upload's parts keep their retries (RETRY_TIMEOUTS_OF).
    (botocore's handler is still asked: it takes the retry it would have made from its quota, as
    it did for each of the two retries before.)"""
    timeout = isinstance(caught_exception, (ReadTimeoutError, ConnectTimeoutError))
    return False if timeout and getattr(operation, "name", None) not in RETRY_TIMEOUTS_OF else None


def ping_config() -> Config:
    """The readiness probe's client's bounds: one attempt, a few seconds."""
    return Config(
        connect_timeout=PING_TIMEOUT_SECONDS, read_timeout=PING_TIMEOUT_SECONDS, retries={"total_max_attempts": 1}
    )


def try_seconds() -> float:
    """The longest a request's attempts at S3 take before a verdict: a "trying" marker older than
    this was left by a request that never ended (its process killed)."""
    return ATTEMPTS * (CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS)


class _Breaker:
    """Once S3 failed to answer, the requests needing it answer 503 at once for COOL_OFF_SECONDS
    rather than each holding a worker thread for the whole timeout (a few requests would take
    every thread of a host, its health check with them); then one request tries S3 again while
    the others still answer at once, and its answer (or a readiness ping's) closes the breaker or
    opens it anew. A failed readiness ping opens it too.

    Shared by the processes of a host through two small files in `folder` (the cache's, which all
    workers of a server share): once one worker saw S3 fail, the others refuse at once too, and
    one request among them all tries again after the cool-off (best effort: the first to make
    the "trying" marker; one left by a killed process counts for try_seconds() at most). Any
    answer from S3, to any process, closes it for all. A request reads the state with a stat (and
    a read of ~100 bytes when it changed); a folder that can't be written leaves the state to
    this process alone."""

    def __init__(self, folder: Path) -> None:
        self._down = folder / DOWN_FILE
        self._trying = folder / TRYING_FILE
        self._seen: tuple[tuple[int, int, int], float, str] | None = None  # the down file last read
        self._own: tuple[float, str] | None = None  # this process's state, when the folder can't be written

    def state(self) -> tuple[float, str] | None:
        """(when S3 failed to answer, time.time(); why), or None: it's not known to be down."""
        try:
            with open(self._down, "rb") as f:  # the common case, S3 up: no such file
                st = os.fstat(f.fileno())
                key = (st.st_ino, st.st_mtime_ns, st.st_size)  # a new file each time (a rename)
                seen = self._seen
                if seen is None or seen[0] != key:
                    when, _, why = f.read(1024).decode("utf-8", "replace").partition("\n")
                    self._seen = seen = (key, float(when), why or "no answer")
                return seen[1], seen[2]
        except (OSError, ValueError):  # none (or unreadable: this process's own state)
            return self._own

    def enter(self) -> str | None:
        """Go ahead (a token: as the one request trying S3 again), or raise StoreUnavailable."""
        state = self.state()
        if state is None:
            return None
        down_at, reason = state
        waited = time.time() - down_at
        if waited < 0:  # the clock was set back: the cool-off counts as over
            waited = COOL_OFF_SECONDS
        if waited >= COOL_OFF_SECONDS:
            token = self._take_turn()
            if token is not None:
                return token
            when = "one request is trying it again"
        else:
            when = f"it will be tried again in {max(1, round(COOL_OFF_SECONDS - waited))} s"
        ago = "just now" if waited < 1 else f"{waited:.0f} s ago"
        raise StoreUnavailable(BLOB_STORE, f"it failed to answer {ago} ({reason}); {when}")

    def _take_turn(self) -> str | None:
        """Make the "trying" marker (a token naming it ours), or None: another request holds it."""
        token = f"{os.getpid()}.{threading.get_ident()}.{time.monotonic_ns()}"
        for _ in range(2):
            try:
                fd = os.open(self._trying, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                try:
                    if time.time() - os.stat(self._trying).st_mtime < try_seconds():
                        return None
                    os.unlink(self._trying)  # left by a request that never ended
                except FileNotFoundError:
                    pass  # let go just now: take it
                continue
            except OSError:  # the folder can't be written: go ahead (no one-at-a-time then)
                return token
            with os.fdopen(fd, "w") as f:
                f.write(token)
            return token
        return None

    def _let_go(self, token: str | None) -> None:
        """Remove the "trying" marker if it is still `token`'s."""
        if token is None:
            return
        with contextlib.suppress(OSError):
            if self._trying.read_text() == token:
                self._trying.unlink()

    def answered(self) -> None:
        """S3 answered: closed, for every process (two unlinks, of files mostly not there)."""
        self._own = None
        for path in (self._down, self._trying):
            with contextlib.suppress(OSError):
                path.unlink()

    def failed(self, reason: str, token: str | None = None) -> None:
        """S3 failed to answer: open, for every process, from now."""
        reason = reason.strip()
        why = reason.splitlines()[0][:200] if reason else "no answer"
        now = time.time()
        try:
            fd, tmp = tempfile.mkstemp(dir=self._down.parent, prefix=".tmp-")  # (a killed writer's: collected)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(f"{now!r}\n{why}")
                os.replace(tmp, self._down)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            self._own = None
        except OSError:
            self._own = (now, why)
        self._let_go(token)

    def left(self, token: str | None) -> None:
        """A request that tried S3 ended with no verdict (an error of ours, a stream let go)."""
        self._let_go(token)

    @contextlib.contextmanager
    def reaching(self) -> Iterator[None]:
        """A block of S3 requests: refused at once while S3 is down; S3 that can't be reached,
        as StoreUnavailable, opening the breaker; any answer from S3 (a refusal too) closing it."""
        token = self.enter()
        try:
            yield
        except UNREACHABLE as exc:
            self.failed(str(exc), token)
            raise StoreUnavailable(BLOB_STORE, str(exc)) from exc
        except (ClientError, S3UploadFailedError) as exc:
            self.answered()
            refusal = _refusal(exc)
            if refusal:  # the bucket or the credentials: every request fails so, say what S3 says
                raise StoreUnavailable(BLOB_STORE, refusal, refused=True) from exc
            raise
        except BaseException:
            self.left(token)
            raise
        self.answered()


# S3's answers that turn down every request, not one blob: its configuration's fault
_REFUSALS = ("NoSuchBucket", "AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch")


def _refusal(exc: Exception) -> str | None:
    """S3's words for an answer refusing every request ("An error occurred (NoSuchBucket) when
    calling the PutObject operation: The specified bucket does not exist"), else None. boto3's
    transfers wrap the answer in S3UploadFailedError, whose text holds it."""
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code"))
        return str(exc) if code in _REFUSALS else None
    text = str(exc)
    return (
        text[text.index("An error occurred") :]
        if any(f"({c})" in text for c in _REFUSALS) and "An error occurred" in text
        else None
    )


def _missing(exc: ClientError) -> bool:
    return str(exc.response.get("Error", {}).get("Code")) in _MISSING


MAX_KNOWN_SIZES = 1_000_000  # blob sizes remembered (~150 bytes each)


class S3BlobStore:
    def __init__(
        self,
        bucket: str,
        prefix: str,
        cache_dir: Path,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        client: Any = None,
        pin_seconds: float = 10.0,
    ):
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.client = client if client is not None else boto3.client("s3", config=client_config())
        # the readiness probe's own client: its answer in seconds (a given client: that one)
        self._probe = client if client is not None else boto3.client("s3", config=ping_config())
        self.cache = BlobCache(Path(cache_dir), cache_bytes, pin_seconds)
        self._breaker = _Breaker(self.cache.root)  # its state shared with the host's other workers
        events = getattr(getattr(self.client, "meta", None), "events", None)
        if events is not None:
            events.register_first("needs-retry.s3", _no_retry_on_timeout)
            # any answer closes the breaker at once, for all: a long transfer the one request
            # trying S3 again makes (a download of gigabytes) doesn't keep the others refused
            events.register("after-call.s3", self._s3_answered)
        # digest -> size, from listings and heads: a blob's bytes never change, so a size learned
        # once holds (the models list sums every model's blobs: a HEAD each was seconds of it)
        self._sizes: dict[str, int] = {}

    def _reaching(self) -> contextlib.AbstractContextManager[None]:
        return self._breaker.reaching()

    def _s3_answered(self, **kwargs: Any) -> None:
        self._breaker.answered()

    def __repr__(self) -> str:
        return f"S3BlobStore(s3://{self.bucket}/{self.prefix})"

    def _key(self, digest: str) -> str:
        if not is_digest(digest):
            raise ValueError(f"not a blob digest: {digest!r}")
        return f"{self.prefix}/{digest[:2]}/{digest}" if self.prefix else f"{digest[:2]}/{digest}"

    def _head(self, digest: str) -> Any:
        try:
            with self._reaching():
                return self.client.head_object(Bucket=self.bucket, Key=self._key(digest))
        except ClientError as exc:
            if _missing(exc):
                raise BlobMissing(digest, f"s3://{self.bucket}/{self.prefix}") from None
            raise

    # --- storing --------------------------------------------------------------------
    def put(self, data) -> str:
        return self.put_parts([data])

    def put_stream(self, stream, chunk: int = CHUNK) -> str:
        return self.put_parts(iter(lambda: stream.read(chunk), b""))

    def put_parts(self, parts: Iterable) -> str:
        """Spool the concatenation of buffers to a local temp file (hashing it), then store it
        unless it is there (then refresh its stored time); the spooled file becomes its cache entry."""
        h = hashlib.sha256()
        fd, tmp = self.cache.temp_file()
        try:
            with os.fdopen(fd, "wb") as f:
                for part in parts:
                    h.update(part)
                    f.write(part)
            digest = h.hexdigest()
            key = self._key(digest)
            stored = {"stored": repr(time.time())}
            with self._reaching():
                if not self._refresh(key, stored):
                    self.client.upload_file(tmp, self.bucket, key, ExtraArgs={"Metadata": stored})
            self.cache.adopt(digest, Path(tmp))
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return digest

    def _refresh(self, key: str, stored: dict) -> bool:
        """Copy the object onto itself with a fresh `stored` time; False when it isn't there.
        A HEAD first: the common answer is "not there", and a failed managed copy leaves its
        exception (and the frames of this put, holding the caller's buffers) to the cycle collector."""
        try:
            size = self.client.head_object(Bucket=self.bucket, Key=key)["ContentLength"]
            source: Any = {"Bucket": self.bucket, "Key": key}
            if size < COPY_OBJECT_MAX:  # a whole-object checksum of its own: a multipart one doesn't carry over
                self.client.copy_object(
                    CopySource=source,
                    Bucket=self.bucket,
                    Key=key,
                    ChecksumAlgorithm="CRC32",
                    Metadata=stored,
                    MetadataDirective="REPLACE",
                )
            else:  # a managed copy (multipart) past what one CopyObject may copy
                extra = {"Metadata": stored, "MetadataDirective": "REPLACE"}
                self.client.copy(source, self.bucket, key, ExtraArgs=extra)
        except ClientError as exc:
            if _missing(exc):  # not there, or collected between the HEAD and the copy
                return False
            raise
        return True

    def remove_strays(self, before: float) -> int:
        """What puts cut short before `before` left: local spooled files, and multipart uploads
        under the prefix a killed process never completed (S3 keeps and bills their parts)."""
        removed = remove_older(self.stray_temp_files(), before) + remove_stale_scratch(self.cache.root, before)
        pages = self.client.get_paginator("list_multipart_uploads").paginate(
            Bucket=self.bucket, Prefix=f"{self.prefix}/" if self.prefix else ""
        )
        with self._reaching():
            for page in pages:
                for upload in page.get("Uploads", []):
                    if upload["Initiated"].timestamp() < before:
                        with contextlib.suppress(ClientError):  # completed or aborted meanwhile
                            self.client.abort_multipart_upload(
                                Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                            )
                            removed += 1
        return removed

    # --- reading --------------------------------------------------------------------
    # A blob's bytes never change (its name is their digest): a copy in this host's cache is
    # read instead of asking S3 (an edit reads its base graph and sizes: 3 requests fewer).
    def _cached(self, digest: str) -> BinaryIO | None:
        path = self.cache.hit(digest)
        if path is None:
            return None
        try:
            return path.open("rb")  # open: an eviction from now on can't take it away
        except FileNotFoundError:
            return None

    def readable(self, digests: Iterable[str]) -> None:
        """Raise now (StoreUnavailable, BlobMissing) what reading these would raise midway: a
        response that has sent its headers can only break off (QA36: a download answered 200 with
        its whole Content-Length during an outage, then stopped after 2,931 bytes). One HEAD, of
        the first blob not cached, tells whether S3 answers; the breaker answers at once."""
        for digest in digests:
            if self.cache.hit(digest) is None:
                self._head(digest)
                return

    def get(self, digest: str) -> bytes:
        if (f := self._cached(digest)) is not None:
            with f:
                return f.read()
        body = self._body(digest)
        with self._reaching():
            return body.read()

    def _body(self, digest: str, start: int = 0):
        kwargs: dict[str, Any] = {"Range": f"bytes={start}-"} if start else {}
        try:
            with self._reaching():
                return self.client.get_object(Bucket=self.bucket, Key=self._key(digest), **kwargs)["Body"]
        except ClientError as exc:
            if _missing(exc):
                raise BlobMissing(digest, f"s3://{self.bucket}/{self.prefix}") from None
            raise

    def open(self, digest: str) -> BinaryIO:
        """A seekable binary file over the object (the cached copy, else one whose every seek
        starts a new ranged GET)."""
        if (f := self._cached(digest)) is not None:
            return f
        raw = _ObjectReader(self, digest, self.size(digest))
        return io.BufferedReader(raw, CHUNK)

    def read_chunks(self, digest: str, chunk: int = CHUNK) -> Iterator[bytes]:
        if (f := self._cached(digest)) is not None:
            with f:
                while block := f.read(chunk):
                    yield block
            return
        body = self._body(digest)
        try:
            with self._reaching():
                yield from body.iter_chunks(chunk)
        finally:
            body.close()

    def scratch(self) -> Path:
        """A folder for a request's temporary files beside the cache's files (hard links work)."""
        return scratch_in(self.cache.root)

    def path(self, digest: str) -> Path:
        """A local file holding the blob's bytes (from the cache; downloaded on a miss)."""
        key = self._key(digest)

        def download(tmp: Path) -> None:
            try:
                with self._reaching():
                    self.client.download_file(self.bucket, key, str(tmp))
            except ClientError as exc:
                if _missing(exc):
                    raise BlobMissing(digest, f"s3://{self.bucket}/{self.prefix}") from None
                raise

        return self.cache.get(digest, download)

    def exists(self, digest: str) -> bool:
        try:
            self._head(digest)
        except FileNotFoundError:
            return False
        return True

    def size(self, digest: str) -> int:
        known = self._sizes.get(digest)
        if known is not None:
            return known
        with contextlib.suppress(FileNotFoundError):
            return self.cache.size(digest)
        size = int(self._head(digest)["ContentLength"])
        self._learn(digest, size)
        return size

    def _learn(self, digest: str, size: int) -> None:
        if len(self._sizes) >= MAX_KNOWN_SIZES:  # a bound, not an eviction policy: they come back from the next listing
            self._sizes.clear()
        self._sizes[digest] = size

    def ping(self) -> None:
        """Raise unless the bucket answers, within PING_TIMEOUT_SECONDS (StoreUnavailable: no
        answer; OSError: an answer refusing, or no credentials)."""
        try:
            self._probe.head_bucket(Bucket=self.bucket)
            self._breaker.answered()  # back: requests go to it again at once
        except ClientError as exc:
            self._breaker.answered()
            error = exc.response.get("Error", {})
            code = error.get("Code", "?")
            what = "no such bucket" if str(code) in ("404", "NoSuchBucket") else error.get("Message") or "refused"
            raise OSError(f"s3://{self.bucket}: {what} ({code})") from None
        except UNREACHABLE as exc:
            self._breaker.failed(str(exc))
            raise StoreUnavailable(BLOB_STORE, f"s3://{self.bucket}: {exc}") from None
        except Exception as exc:  # no credentials, ...
            raise OSError(f"s3://{self.bucket}: {exc}") from None

    # --- for the collector ----------------------------------------------------------
    def digests(self, page_size: int = 1000) -> Iterator[str]:
        paginator = self.client.get_paginator("list_objects_v2")
        prefix = f"{self.prefix}/" if self.prefix else ""
        pages = paginator.paginate(Bucket=self.bucket, Prefix=prefix, PaginationConfig={"PageSize": page_size})
        with self._reaching():
            for page in pages:
                for item in page.get("Contents", ()):
                    name = item["Key"].rsplit("/", 1)[-1]
                    if is_digest(name) and item["Key"] == self._key(name):
                        if "Size" in item:
                            self._learn(name, int(item["Size"]))
                        yield name

    def modified(self, digest: str) -> float:
        """When the blob was last stored (a put of it again counts)."""
        head = self._head(digest)
        with contextlib.suppress(KeyError, ValueError):
            return float(head["Metadata"]["stored"])
        return head["LastModified"].timestamp()

    def remove(self, digest: str) -> None:
        with self._reaching():
            self.client.delete_object(Bucket=self.bucket, Key=self._key(digest))
        self.cache.discard(digest)
        self._sizes.pop(digest, None)

    def stray_temp_files(self) -> Iterator[Path]:
        """Spooled puts and cache downloads a killed process left behind (local files)."""
        return self.cache.temp_files()


class _ObjectReader(io.RawIOBase):
    """An object's bytes as a seekable raw file: reads continue one streaming GET from where the
    last seek put them."""

    def __init__(self, blobs: S3BlobStore, digest: str, size: int):
        self._blobs, self._digest, self._size = blobs, digest, size
        self._pos = 0
        self._body: Any = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        pos = max(0, base + offset)
        if pos != self._pos:
            self._drop()
            self._pos = pos
        return pos

    def readinto(self, buffer) -> int:
        if self._pos >= self._size:
            return 0
        if self._body is None:
            self._body = self._blobs._body(self._digest, self._pos)
        with self._blobs._reaching():
            data = self._body.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self._pos += n
        return n

    def _drop(self) -> None:
        if self._body is not None:
            self._body.close()
            self._body = None

    def close(self) -> None:
        self._drop()
        super().close()


class BlobCache:
    """Local copies of blobs, `<dir>/<digest>`, written atomically (temp file + rename); at most
    `max_bytes` in all, least recently used evicted first. Shared by the processes of one server
    (one folder): the files' mtimes are the use times, so any of them evicts what all used least.
    Never evicted: the entry being returned, nor any used in the last `pin_seconds` (another
    thread or process may be about to open it) — those may take the total over `max_bytes` for a
    moment, as does one blob bigger than the whole cache.

    The folder is scanned only when this process's running total (the last scan's, plus what it
    installed since) passes the bound: a scan per install made storing N blobs cost N² stats.
    What other processes installed since is counted at the next scan, so the folder can go past
    the bound by what they installed in between."""

    def __init__(self, root: Path, max_bytes: int, pin_seconds: float = 10.0):
        self.root = root
        self.max_bytes = max_bytes
        self.pin_seconds = pin_seconds
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._total: int | None = None  # bytes in the folder as far as this process knows
        self._loading: dict[str, threading.Lock] = {}  # one download per digest at a time

    def _file(self, digest: str) -> Path:
        return self.root / digest

    def temp_file(self) -> tuple[int, str]:
        return tempfile.mkstemp(dir=self.root, prefix=".tmp-")

    def temp_files(self) -> Iterator[Path]:
        yield from self.root.glob(".tmp-*")

    def size(self, digest: str) -> int:
        """The cached copy's size (FileNotFoundError: none here)."""
        return self._file(digest).stat().st_size

    def hit(self, digest: str) -> Path | None:
        """The cached copy, its use time now; None on a miss."""
        path = self._file(digest)
        try:
            with self._lock:  # not between an eviction's look at the use times and its unlinks
                os.utime(path)  # its use time: now
        except FileNotFoundError:
            return None
        return path

    def get(self, digest: str, download) -> Path:
        """The cached file of `digest`, after `download(temp_path)` fetched it on a miss."""
        if (path := self.hit(digest)) is not None:
            return path
        with self._lock:
            loading = self._loading.setdefault(digest, threading.Lock())
        try:
            with loading:
                if (path := self.hit(digest)) is not None:
                    return path
                fd, tmp = self.temp_file()
                os.close(fd)
                try:
                    download(Path(tmp))
                    return self._install(digest, Path(tmp))
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)
        finally:
            with self._lock:
                self._loading.pop(digest, None)

    def adopt(self, digest: str, tmp: Path) -> None:
        """Keep a just-stored blob's spooled file as its entry (when it fits)."""
        if tmp.stat().st_size <= self.max_bytes:
            self._install(digest, tmp)

    def _install(self, digest: str, tmp: Path) -> Path:
        path = self._file(digest)
        size = tmp.stat().st_size
        with self._lock:
            os.replace(tmp, path)
            os.utime(path)
            if self._total is not None:
                self._total += size
            over = self._total is None or self._total > self.max_bytes
        if over:
            self._evict(keep=digest)
        return path

    def discard(self, digest: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._file(digest).unlink()

    def entries(self) -> list[tuple[float, int, Path]]:
        """(use time, size, path) of every entry, least recently used first."""
        found = []
        with os.scandir(self.root) as it:
            for e in it:
                if is_digest(e.name):
                    with contextlib.suppress(FileNotFoundError):
                        st = e.stat()
                        found.append((st.st_mtime, st.st_size, Path(e.path)))
        return sorted(found)

    def total(self) -> int:
        return sum(size for _, size, _ in self.entries())

    def _evict(self, keep: str) -> None:
        with self._lock:
            entries = self.entries()
            total = sum(size for _, size, _ in entries)
            pinned_since = time.time() - self.pin_seconds
            for used, size, path in entries:
                if total <= self.max_bytes:
                    break
                if path.name == keep or used >= pinned_since:
                    continue
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                total -= size
            self._total = total
