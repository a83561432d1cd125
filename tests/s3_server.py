"""A real HTTP S3 for the tests: moto's standalone server (`moto_server`, from PyPI) on a free
loopback port, with a bucket, and the standard AWS_* variables pointing boto3 (and the servers
the tests start, which inherit them) at it. The fixture is `s3_endpoint` (conftest.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import boto3
import pytest

BUCKET = "studio-blobs"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def s3_endpoint():
    """moto_server on a free loopback port, a bucket in it, and the AWS_* variables (fake
    credentials) pointing boto3 at it."""
    exe = Path(sys.executable).parent / "moto_server"
    assert exe.exists(), f"{exe} missing: pip install 'moto[server]' (the test extra)"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    # its request log goes to a file: a pipe nobody reads fills up after ~500 requests and then
    # every request moto answers blocks on writing its log line
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below)
    proc = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"moto_server exited: {log.read().decode()[-2000:]}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError("moto_server did not answer in 20 s") from None
                time.sleep(0.1)
        with pytest.MonkeyPatch.context() as mp:
            point_boto3_at(mp, url)
            boto3.client("s3").create_bucket(Bucket=BUCKET)
            yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def point_boto3_at(monkeypatch, url: str) -> None:
    """The AWS_* variables boto3 reads, for an S3 endpoint at `url` (fake credentials; no profile,
    session or retry settings of the machine's)."""
    for name, value in {
        "AWS_ENDPOINT_URL": url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE"):
        monkeypatch.delenv(name, raising=False)
