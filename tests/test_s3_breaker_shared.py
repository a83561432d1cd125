"""The S3 breaker shared by the worker processes of a host (QA18 F9): once one worker saw S3
fail to answer (a request, or a readiness ping), the others answer 503 at once for the cool-off
rather than each waiting out the timeouts; after it one request, among all workers, tries S3
again; any answer closes it for all. Two S3BlobStore objects on one cache folder stand for two
workers (and a forked process for a gunicorn worker); the S3 is a stub client raising what
botocore raises (the unit under test is the breaker's sharing), or moto_server frozen by SIGSTOP.
Also: a timeout is not tried again (the first request on a hung S3 waits one read timeout, not
three)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import boto3
import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError
from s3_server import _free_port, point_boto3_at

from app.errors import StoreUnavailable
from app.store import s3_blobs
from app.store.s3_blobs import DOWN_FILE, TRYING_FILE, S3BlobStore, _no_retry_on_timeout

BUCKET = "studio-blobs"
ENDPOINT = "http://s3.test:9000/studio-blobs"


class StubS3:
    """The few calls of an S3 client a put, an exists and a ping make. While `answering` is
    False each raises what botocore raises for an S3 that doesn't answer; `gate`, when set, holds
    every call until it opens (a request under way)."""

    def __init__(self, error: Exception | None = None):
        self.error = error or ReadTimeoutError(endpoint_url=ENDPOINT)
        self.answering = False
        self.gate: threading.Event | None = None
        self.calls: list[str] = []

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if self.gate is not None:
            assert self.gate.wait(10)
        if not self.answering:
            raise self.error

    def head_object(self, **kwargs):
        self._call("HeadObject")
        raise ClientError({"Error": {"Code": "404", "Message": "Not Found"}}, "HeadObject")

    def upload_file(self, *args, **kwargs) -> None:
        self._call("PutObject")

    def head_bucket(self, **kwargs) -> None:
        self._call("HeadBucket")


def worker(folder: Path, s3: StubS3) -> S3BlobStore:
    """A worker's blob store: its own client, the host's cache folder."""
    return S3BlobStore(BUCKET, "p", folder, client=s3)


def refused_at_once(blobs: S3BlobStore, s3: StubS3) -> str:
    """The message of a put refused without asking S3."""
    asked = len(s3.calls)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as refused:
        blobs.put(b"refused")
    assert time.monotonic() - started < 0.2
    assert len(s3.calls) == asked, "S3 was asked"
    assert refused.value.reason == str(refused.value).removeprefix("the blob store (S3) can't be reached: ")
    return str(refused.value)


def test_once_one_worker_saw_s3_fail_the_others_refuse_at_once(tmp_path):
    a_s3, b_s3 = StubS3(), StubS3()
    a, b = worker(tmp_path / "cache", a_s3), worker(tmp_path / "cache", b_s3)
    with pytest.raises(StoreUnavailable, match=r"can't be reached: Read timeout on endpoint URL"):
        a.put(b"first")
    assert a_s3.calls == ["HeadObject"]
    message = refused_at_once(b, b_s3)
    assert message == (
        "the blob store (S3) can't be reached: it failed to answer just now"
        f' (Read timeout on endpoint URL: "{ENDPOINT}"); it will be tried again in 10 s'
    )
    refused_at_once(a, a_s3)  # and the worker that saw it, likewise
    assert b_s3.calls == []
    # a third worker, started meanwhile (a restarted one), knows it too
    refused_at_once(worker(tmp_path / "cache", StubS3()), StubS3())


def test_a_gunicorn_worker_forked_from_the_same_process_shares_it(tmp_path):
    a_s3 = StubS3(EndpointConnectionError(endpoint_url=ENDPOINT))
    a = worker(tmp_path / "cache", a_s3)

    def other_worker() -> None:
        b_s3 = StubS3(EndpointConnectionError(endpoint_url=ENDPOINT))
        try:
            worker(tmp_path / "cache", b_s3).put(b"in the other process")
        except StoreUnavailable:
            os._exit(0 if b_s3.calls == ["HeadObject"] else 3)
        os._exit(4)

    child = multiprocessing.get_context("fork").Process(target=other_worker)
    child.start()
    child.join(30)
    assert child.exitcode == 0
    message = refused_at_once(a, a_s3)
    assert "it failed to answer just now (Could not connect to the endpoint URL" in message
    assert a_s3.calls == []


def test_after_the_cool_off_one_request_of_all_tries_again_and_its_answer_closes_it(tmp_path, monkeypatch):
    a_s3, b_s3 = StubS3(), StubS3()
    a, b = worker(tmp_path / "cache", a_s3), worker(tmp_path / "cache", b_s3)
    with pytest.raises(StoreUnavailable):
        a.put(b"first")
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 0.0)  # over
    # one request (worker b's) tries S3 again; while it waits, the others answer at once
    b_s3.gate, b_s3.answering = threading.Event(), True
    outcome: list = []
    trying = threading.Thread(target=lambda: outcome.append(b.put(b"the one trying")))
    trying.start()
    deadline = time.monotonic() + 5
    while not b_s3.calls:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert (tmp_path / "cache" / TRYING_FILE).exists()
    for blobs, s3 in ((a, a_s3), (b, b_s3)):
        message = refused_at_once(blobs, s3)
        assert message.endswith("; one request is trying it again"), message
    b_s3.gate.set()
    trying.join(10)
    assert len(outcome) == 1  # stored
    assert not (tmp_path / "cache" / DOWN_FILE).exists() and not (tmp_path / "cache" / TRYING_FILE).exists()
    a_s3.answering = True
    a.put(b"now for every worker")  # closed for the other worker too
    assert a_s3.calls[-2:] == ["HeadObject", "PutObject"]


def test_a_request_trying_again_that_fails_opens_it_anew_for_all(tmp_path, monkeypatch):
    a_s3, b_s3 = StubS3(), StubS3()
    a, b = worker(tmp_path / "cache", a_s3), worker(tmp_path / "cache", b_s3)
    with pytest.raises(StoreUnavailable):
        a.put(b"first")
    first = (tmp_path / "cache" / DOWN_FILE).read_text()
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 0.0)
    with pytest.raises(StoreUnavailable, match=r"can't be reached: Read timeout"):
        b.put(b"tries again")  # asked S3: the breaker let it through
    assert b_s3.calls == ["HeadObject"]
    assert (tmp_path / "cache" / DOWN_FILE).read_text() != first  # failed anew, from now
    assert not (tmp_path / "cache" / TRYING_FILE).exists()  # the next after the cool-off may try
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 10.0)
    assert "it failed to answer just now" in refused_at_once(a, a_s3)


def test_a_trying_marker_left_by_a_killed_process_does_not_block_for_ever(tmp_path, monkeypatch):
    a_s3, b_s3 = StubS3(), StubS3()
    a, b = worker(tmp_path / "cache", a_s3), worker(tmp_path / "cache", b_s3)
    with pytest.raises(StoreUnavailable):
        a.put(b"first")
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 0.0)
    marker = tmp_path / "cache" / TRYING_FILE
    marker.write_text("a request of a process killed since")
    assert refused_at_once(b, b_s3).endswith("one request is trying it again")
    old = time.time() - s3_blobs.try_seconds() - 1
    os.utime(marker, (old, old))  # older than any request's attempts take
    b_s3.answering = True
    b.put(b"tries again")
    assert b_s3.calls == ["HeadObject", "PutObject"]
    assert not marker.exists()


def test_a_failed_readiness_ping_opens_it_for_every_worker_and_an_answered_one_closes_it(tmp_path):
    a_s3, b_s3 = StubS3(ConnectTimeoutError(endpoint_url=ENDPOINT)), StubS3()
    a, b = worker(tmp_path / "cache", a_s3), worker(tmp_path / "cache", b_s3)
    with pytest.raises(StoreUnavailable, match=r"s3://studio-blobs: Connect timeout on endpoint URL"):
        a.ping()
    message = refused_at_once(b, b_s3)
    assert "it failed to answer just now (Connect timeout on endpoint URL" in message
    with pytest.raises(StoreUnavailable):
        b.exists("a" * 64)
    assert b_s3.calls == []
    a_s3.answering = b_s3.answering = True
    a.ping()  # S3 answers the probe: requests go to it again at once, in every worker
    assert not b.exists("a" * 64) and b_s3.calls == ["HeadObject"]


def test_a_folder_that_cant_be_written_leaves_the_breaker_to_its_process(tmp_path, monkeypatch):
    def no_room(**kwargs):
        raise OSError(28, "No space left on device")

    a_s3, b_s3 = StubS3(), StubS3()
    a, b = worker(tmp_path / "cache", a_s3), worker(tmp_path / "cache", b_s3)
    monkeypatch.setattr(s3_blobs.tempfile, "mkstemp", no_room)  # (the breaker's file, written whole)
    with pytest.raises(StoreUnavailable, match=r"can't be reached: Read timeout"):  # not the OSError
        a.exists("a" * 64)
    with pytest.raises(StoreUnavailable, match=r"it failed to answer just now"):
        a.exists("a" * 64)
    assert a_s3.calls == ["HeadObject"]
    b_s3.answering = True
    assert not b.exists("a" * 64)  # the other worker doesn't know: it asks


# --- timeouts: not tried again ------------------------------------------------------------------
@pytest.fixture
def hung_endpoint(monkeypatch):
    """An S3 endpoint that accepts connections and never answers."""
    with socket.create_server(("127.0.0.1", 0), backlog=128) as listener:
        point_boto3_at(monkeypatch, f"http://127.0.0.1:{listener.getsockname()[1]}")
        yield


def attempts_of(blobs: S3BlobStore) -> list:
    sent: list = []
    blobs.client.meta.events.register("before-send.s3", lambda **kw: sent.append(kw["request"].method))
    return sent


def test_a_read_timeout_is_not_tried_again(hung_endpoint, tmp_path, monkeypatch):
    monkeypatch.setattr(s3_blobs, "READ_TIMEOUT_SECONDS", 0.5)
    blobs = S3BlobStore(BUCKET, "p", tmp_path / "cache")
    sent = attempts_of(blobs)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"can't be reached: Read timeout on endpoint URL"):
        blobs.put(b"on a hung S3")
    assert sent == ["HEAD"]  # one attempt: ATTEMPTS of them made the first request wait 3 × 20 s
    assert time.monotonic() - started < 0.5 + 1


def test_a_refused_connection_is_tried_again(tmp_path, monkeypatch):
    point_boto3_at(monkeypatch, f"http://127.0.0.1:{_free_port()}")  # nobody listens there
    blobs = S3BlobStore(BUCKET, "p", tmp_path / "cache")
    sent = attempts_of(blobs)
    with pytest.raises(StoreUnavailable, match=r"can't be reached: Could not connect to the endpoint URL"):
        blobs.put(b"refused")
    assert sent == ["HEAD"] * s3_blobs.ATTEMPTS  # comes back at once: a restarting endpoint gets its chances


def test_an_upload_part_keeps_its_retries_after_a_timeout():
    timeout = ReadTimeoutError(endpoint_url=ENDPOINT)
    for operation, verdict in (("HeadObject", False), ("PutObject", False), ("GetObject", False), ("UploadPart", None)):
        assert _no_retry_on_timeout(caught_exception=timeout, operation=SimpleNamespace(name=operation)) is verdict
    connect = ConnectTimeoutError(endpoint_url=ENDPOINT)
    assert _no_retry_on_timeout(caught_exception=connect, operation=SimpleNamespace(name="HeadObject")) is False
    refused = EndpointConnectionError(endpoint_url=ENDPOINT)
    assert _no_retry_on_timeout(caught_exception=refused, operation=SimpleNamespace(name="HeadObject")) is None
    assert _no_retry_on_timeout(caught_exception=None, operation=SimpleNamespace(name="HeadObject")) is None


# --- moto_server frozen (SIGSTOP), two workers on one folder --------------------------------------
@pytest.fixture
def frozen_moto(monkeypatch):
    """moto_server of this test's own, with a bucket; the answer: its process (SIGSTOP freezes it)."""
    exe = Path(sys.executable).parent / "moto_server"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [str(exe), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "moto_server did not start"
                time.sleep(0.1)
        point_boto3_at(monkeypatch, url)
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield proc
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_with_moto_frozen_the_second_worker_answers_at_once(frozen_moto, tmp_path, monkeypatch):
    monkeypatch.setattr(s3_blobs, "CONNECT_TIMEOUT_SECONDS", 1.0)  # the bounds the clients are made with
    monkeypatch.setattr(s3_blobs, "READ_TIMEOUT_SECONDS", 1.0)
    monkeypatch.setattr(s3_blobs, "PING_TIMEOUT_SECONDS", 0.5)
    a = S3BlobStore(BUCKET, "p", tmp_path / "cache")
    b = S3BlobStore(BUCKET, "p", tmp_path / "cache")
    kept = a.put(b"stored while S3 answers")
    assert b.exists(kept)

    frozen_moto.send_signal(signal.SIGSTOP)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"can't be reached: Read timeout on endpoint URL"):
        a.put(b"the first on a frozen S3")
    assert time.monotonic() - started < 1.0 + 1  # one read timeout (not ATTEMPTS of them)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"it failed to answer just now .*; it will be tried again in 10 s"):
        b.put(b"the other worker's")
    assert time.monotonic() - started < 0.2

    # back, past the cool-off: one request tries, S3 answers, and both workers use it again
    frozen_moto.send_signal(signal.SIGCONT)
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 0.0)
    digest = b.put(b"S3 answers again")
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 10.0)
    a.cache.discard(digest)
    assert a.get(digest) == b"S3 answers again"

    # frozen again: a failed readiness ping in one worker spares the other its timeouts
    frozen_moto.send_signal(signal.SIGSTOP)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"s3://studio-blobs: Read timeout"):
        a.ping()
    assert time.monotonic() - started < 0.5 + 1
    b.cache.discard(kept)  # (not read from this host's copy)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"it failed to answer just now"):
        b.get(kept)
    assert time.monotonic() - started < 0.2
    frozen_moto.send_signal(signal.SIGCONT)
    b.ping()  # answered: closed for both
    assert a.exists(kept) and b.get(kept) == b"stored while S3 answers"

    # any answer to a call of the client closes it at once, before the block of requests it is
    # part of ends (the one request trying again may be a download of gigabytes), a 404 too
    down = tmp_path / "cache" / DOWN_FILE
    for call in (
        lambda: a.client.list_objects_v2(Bucket=BUCKET, Prefix="p/"),
        lambda: a.client.head_object(Bucket=BUCKET, Key="p/not/there"),
    ):
        b._breaker.failed("Read timeout")
        assert down.exists()
        with contextlib.suppress(ClientError):
            call()
        assert not down.exists()
