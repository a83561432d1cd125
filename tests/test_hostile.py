"""Hostile files against a real server process (issue 12): every file of tests/hostile_corpus.py
uploaded, and every view of what is stored opened. Every answer is 2xx or 4xx, the server is
alive after each, nothing appears outside its data folder, and while the heaviest file is being
processed another client is still answered within a second."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

import pytest
from hostile_corpus import CLASSES, corpus

pytestmark = [pytest.mark.xdist_group("hostile"), pytest.mark.fuzz]  # one server process for the module

ROOT = Path(__file__).resolve().parent.parent
FILES = corpus()
VIEWS = [
    "",
    "/graph",
    "/validation",
    "/text",
    "/types",
    "/search?q=a",
    "/revisions",
    "/download",
    "/operators",
    "/stats",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`onnx-studio serve` in its own process, its working directory an empty folder."""

    def __init__(self, tmp: Path):
        self.cwd = tmp / "cwd"
        self.cwd.mkdir()
        self.data = tmp / "data"
        self.port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(self.port), "--data-dir", str(self.data)],
            cwd=self.cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/api/models")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start")

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None, timeout=120):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def upload(self, name: str, data: bytes):
        boundary = uuid.uuid4().hex
        safe = name.replace('"', "_")
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n"
            ).encode()
            + data
            + f"\r\n--{boundary}--\r\n".encode()
        )
        return self.request("POST", "/api/models", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("hostile"))
    yield s
    s.stop()


def test_the_corpus_is_big_enough():
    assert len(CLASSES) >= 25 and len(FILES) >= 60


@pytest.mark.parametrize(("cls", "name", "data"), FILES, ids=[f"{c}/{n}" for c, n, _ in FILES])
def test_a_hostile_file_costs_at_most_its_own_request(server, cls, name, data):
    status, body = server.upload(name, data)
    assert status < 500, (status, body[:300])
    assert server.alive(), "the upload killed the server"
    if status != 201:
        assert json.loads(body)["error"]["message"]
        return
    mid = json.loads(body)["id"]
    for view in VIEWS:
        status, body = server.request("GET", f"/api/models/{mid}{view}")
        assert status < 500, (view, status, body[:300])
        assert server.alive(), f"GET {view} killed the server"
    status, body = server.request("GET", f"/api/models/{mid}/stats")
    if status == 200 and json.loads(body)["input_dims"]:  # shapes inferred again at given sizes
        sizes = ",".join(f"{d}=999999999999" for d in json.loads(body)["input_dims"])  # the most allowed
        status, body = server.request("GET", f"/api/models/{mid}/stats?dims={urllib.parse.quote(sizes)}")
        assert status < 500 and server.alive(), (status, body[:300])
    status, _ = server.request("GET", f"/models/{mid}")
    assert status == 200 and server.alive()


def test_nothing_was_written_outside_the_data_folder(server):
    assert list(server.cwd.iterdir()) == []


def test_another_client_is_answered_while_the_heaviest_file_is_processed(server):
    heavy = {n: d for _, n, d in FILES}
    worst = []

    def hammer():
        for name in ("x_plus_x_2e40.onnx", "slice_step_max.onnx", "sum_20k_inputs.onnx", "constant_2m_ints.onnx"):
            status, body = server.upload(f"again_{name}", heavy[name])
            if status == 201:
                mid = json.loads(body)["id"]
                for view in ("/graph", "/validation", "/text"):
                    server.request("GET", f"/api/models/{mid}{view}")

    worker = threading.Thread(target=hammer)
    worker.start()
    while worker.is_alive():
        t = time.perf_counter()
        status, _ = server.request("GET", "/api/models", timeout=30)
        worst.append(time.perf_counter() - t)
        assert status == 200
        time.sleep(0.05)
    worker.join()
    assert server.alive()
    print(f"hostile latency probe: {len(worst)} requests, worst {max(worst) * 1000:.0f} ms")
    assert max(worst) < 1.0, f"another client waited {max(worst):.2f} s"
