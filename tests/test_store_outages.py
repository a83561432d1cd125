"""The store when its servers fail (QA9 #1-#3): S3 hung (accepts, never answers), stalled
mid-answer or stopped; PostgreSQL restarted, its connections cut, or stopped. Probes answer in
seconds, requests answer 503 store_unavailable naming the part that can't be reached, and a
healthy database is never reported down because of a connection it closed earlier."""

from __future__ import annotations

import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psycopg
import pytest
from pg_server import PostgresServer, _bin, available
from s3_server import point_boto3_at
from test_store import weighty_model
from testkit import upload

from app import create_app
from app.errors import StoreUnavailable
from app.store import pg_index, s3_blobs
from app.store.s3_blobs import S3BlobStore

pytestmark = pytest.mark.own_backends  # starts and stops servers of its own

BUCKET = "studio"
EDIT = {"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}


def small_model(seed: int = 0) -> bytes:
    return weighty_model(seed, width=32, layers=1).SerializeToString()


def s3_app(tmp_path, **config):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "BLOB_URL": f"s3://{BUCKET}/p", "TESTING": True, **config})


def assert_unavailable(response, what: str) -> None:
    assert response.status_code == 503, response.data[:300]
    error = response.get_json()["error"]
    assert error["code"] == "store_unavailable", error
    assert error["message"].startswith(f"the {what} can't be reached: "), error
    assert "\n" not in error["message"]
    assert response.headers["Retry-After"] == "10"  # a state of the server, asked again soon


# --- S3 that accepts and never answers -------------------------------------------------------
@pytest.fixture
def hung_s3(monkeypatch):
    """An S3 endpoint that accepts connections and never answers (a frozen server): a listening
    socket nobody reads from (the kernel completes the connections)."""
    with socket.create_server(("127.0.0.1", 0), backlog=128) as listener:
        point_boto3_at(monkeypatch, f"http://127.0.0.1:{listener.getsockname()[1]}")
        yield


def test_a_hung_s3_fails_the_ping_within_its_bound(hung_s3, tmp_path):
    blobs = S3BlobStore(BUCKET, "p", tmp_path / "cache")
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"s3://studio: Read timeout on endpoint URL"):
        blobs.ping()
    assert time.monotonic() - started < s3_blobs.PING_TIMEOUT_SECONDS + 2
    # the data client: bounded, and tried again a few times only (botocore's default: 60 s, 5 tries)
    config: Any = blobs.client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (
        s3_blobs.CONNECT_TIMEOUT_SECONDS,
        s3_blobs.READ_TIMEOUT_SECONDS,
    )
    assert config.retries["total_max_attempts"] == s3_blobs.ATTEMPTS


def test_readyz_answers_503_at_once_while_s3_hangs(hung_s3, tmp_path):
    app = s3_app(tmp_path)
    probes: list = []

    def probe() -> None:
        began = time.monotonic()
        r = app.test_client().get("/readyz")
        probes.append((r.status_code, r.get_json(), time.monotonic() - began))

    piled = [threading.Thread(target=probe) for _ in range(4)]  # a load balancer's probes pile up
    for t in piled:
        t.start()
    for t in piled:
        t.join(30)
    assert len(probes) == 4
    for status, body, seconds in probes:
        assert status == 503 and seconds < s3_blobs.PING_TIMEOUT_SECONDS + 3, (status, seconds)
        (problem,) = body["problems"]
        assert problem.startswith("blob store: s3://studio: Read timeout on endpoint URL"), problem
    assert app.test_client().get("/healthz").status_code == 200


def test_a_request_needing_a_hung_s3_answers_503_within_the_bounds(hung_s3, tmp_path, monkeypatch):
    monkeypatch.setattr(s3_blobs, "READ_TIMEOUT_SECONDS", 0.5)  # the bounds the client is made with
    monkeypatch.setattr(s3_blobs, "ATTEMPTS", 2)
    client = s3_app(tmp_path).test_client()
    started = time.monotonic()
    assert_unavailable(upload(client, small_model()), "blob store (S3)")
    assert time.monotonic() - started < 2 * 0.5 + 4  # two attempts and a backoff, not minutes


def test_once_s3_failed_to_answer_requests_needing_it_answer_at_once(hung_s3, tmp_path, monkeypatch):
    """A few requests on a hung S3 would each hold a worker thread for the whole timeout: after
    the first, the others answer 503 at once, until the cool-off is over."""
    monkeypatch.setattr(s3_blobs, "READ_TIMEOUT_SECONDS", 0.5)
    monkeypatch.setattr(s3_blobs, "ATTEMPTS", 1)
    client = s3_app(tmp_path).test_client()
    assert_unavailable(upload(client, small_model()), "blob store (S3)")
    for seed in (1, 2, 3):
        started = time.monotonic()
        r = upload(client, small_model(seed))
        assert time.monotonic() - started < 0.5
        assert_unavailable(r, "blob store (S3)")
        assert "it failed to answer just now (Read timeout on endpoint URL" in r.get_json()["error"]["message"]
    # past the cool-off, one request tries S3 again (and waits for its answer)
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 0.0)
    started = time.monotonic()
    assert_unavailable(upload(client, small_model(4)), "blob store (S3)")
    assert time.monotonic() - started >= 0.5


# --- S3 that answers slowly, then stalls --------------------------------------------------------
TRICKLED = bytes(range(256)) * 64  # 16 KiB, sent in 8 pieces a pause apart
STALLS = "b" * 64  # the digest whose answer stops after its first piece


class _SlowS3(BaseHTTPRequestHandler):
    pause = 0.25
    released = threading.Event()

    def do_GET(self):  # GetObject: the body a piece at a time
        self.send_response(200)
        self.send_header("Content-Length", str(len(TRICKLED)))
        self.end_headers()
        for k, start in enumerate(range(0, len(TRICKLED), len(TRICKLED) // 8)):
            if k == 1 and self.path.split("?")[0].endswith(STALLS):
                self.released.wait(30)  # stalled: no more bytes
                return
            time.sleep(self.pause)
            self.wfile.write(TRICKLED[start : start + len(TRICKLED) // 8])
            self.wfile.flush()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def slow_s3(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowS3)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    point_boto3_at(monkeypatch, f"http://127.0.0.1:{server.server_address[1]}")
    yield
    _SlowS3.released.set()
    server.shutdown()
    server.server_close()
    _SlowS3.released.clear()


def test_the_read_timeout_bounds_a_stalled_answer_not_a_long_transfer(slow_s3, tmp_path, monkeypatch):
    monkeypatch.setattr(s3_blobs, "READ_TIMEOUT_SECONDS", 1.0)
    blobs = S3BlobStore(BUCKET, "p", tmp_path / "cache")
    started = time.monotonic()
    assert blobs.get("a" * 64) == TRICKLED  # 8 pauses of 0.25 s: twice the read timeout in all
    assert time.monotonic() - started > 1.5
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"^the blob store \(S3\) can't be reached: Read timeout"):
        blobs.get(STALLS)
    assert time.monotonic() - started < 1.0 + 0.25 + 2


# --- S3 stopped ---------------------------------------------------------------------------------
@pytest.fixture
def own_moto(monkeypatch):
    """moto_server of this test's own (tests/s3_server.py), stopped by calling the answer."""
    from s3_server import BUCKET as MOTO_BUCKET
    from s3_server import s3_endpoint

    serving = s3_endpoint()
    url = next(serving)
    port = int(url.rsplit(":", 1)[1])
    held: list[socket.socket] = []

    def stop() -> None:
        serving.close()
        # the AWS_* variables still name it (closing gave back the ones before: an app made after
        # reached the suite's other S3 and found the blobs missing — CI, session 58), and its port
        # is held, never listened on: S3 stays refused
        point_boto3_at(monkeypatch, url)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        held.append(s)

    yield MOTO_BUCKET, stop
    serving.close()
    for s in held:
        s.close()


def test_with_s3_stopped_data_routes_answer_503_and_the_list_answers(own_moto, tmp_path):
    bucket, stop_s3 = own_moto
    prefix = secrets.token_hex(4)
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "BLOB_URL": f"s3://{bucket}/{prefix}", "TESTING": True})
    client = app.test_client()
    mid = upload(client, small_model()).get_json()["id"]
    assert client.post(f"/api/models/{mid}/edits", json=EDIT).status_code == 200  # a head of blobs
    listed = client.get("/api/models").get_json()
    assert listed["models"][0]["disk_bytes"] > 0 and listed["disk_bytes"] > 0
    stop_s3()
    r = client.get("/api/models")  # the list is the index's: its disk use (S3's sizes) unknown
    assert r.status_code == 200, r.data[:300]
    assert [(m["id"], m["disk_bytes"]) for m in r.get_json()["models"]] == [(mid, None)]
    assert r.get_json()["disk_bytes"] is None and r.get_json()["other_bytes"] is None
    assert r.get_json()["models"][0]["size"] > 0  # the rest as before
    assert_unavailable(
        client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [{**EDIT["ops"][0], "value": "w"}]}),
        "blob store (S3)",
    )
    r = upload(client, small_model(seed=1))
    assert_unavailable(r, "blob store (S3)")
    assert "http" not in r.get_json()["error"]["message"]  # the endpoint and a blob's key: the log's (QA36 #6)
    # the breaker now open: the list answers still, from a process that never read the
    # model's sizes too (another host's worker: QA36 #2)
    import shutil

    shutil.rmtree(tmp_path / "data" / "blob-cache")  # what it never read, it hasn't
    other = create_app(app.config | {"TESTING": True}).test_client()
    for c in (client, other):
        r = c.get("/api/models")
        assert r.status_code == 200 and r.get_json()["models"][0]["disk_bytes"] is None, r.data[:300]
    r = client.get("/readyz")
    assert r.status_code == 503
    assert r.get_json()["problems"][0].startswith(f"blob store: s3://{bucket}: Could not connect to the endpoint URL")
    assert client.get("/healthz").status_code == 200

    # with an access token, an anonymous probe learns which part is down, not where it is (QA18 F12)
    app.config["AUTH_TOKEN"] = "a-token-of-the-team"
    r = client.get("/readyz")
    assert r.status_code == 503 and r.get_json()["problems"] == ["blob store: unavailable"]
    r = client.get("/readyz", headers={"Authorization": "Bearer a-token-of-the-team"})
    assert r.get_json()["problems"][0].startswith(f"blob store: s3://{bucket}: ")


# --- PostgreSQL restarted, its connections cut, stopped ------------------------------------------
@pytest.fixture(scope="module")
def own_pg():
    """A PostgreSQL server of this module's own: its tests restart and stop it."""
    if not available():
        pytest.fail("PostgreSQL's initdb/pg_ctl are missing: `make test` installs Debian's postgresql")
    server = PostgresServer()
    yield server
    server.stop()


def pg_ctl(server: PostgresServer, *args: str) -> None:
    """pg_ctl on the server; `restart` starts a stopped one with the options it last ran with."""
    server._run(_bin("pg_ctl"), "-D", str(server.data), "-l", str(server.folder / "log"), "-w", *args)


@pytest.fixture
def pg_url(own_pg):
    return own_pg.database("t_" + secrets.token_hex(6))


@pytest.fixture
def pg_app(tmp_path, pg_url):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "DATABASE_URL": pg_url})


def cut_connections(url: str) -> None:
    """Terminate every other connection to the database (as a failover or an administrator
    does), and wait until they are gone."""
    with psycopg.connect(url, autocommit=True) as admin:
        others = "FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()"
        admin.execute(f"SELECT pg_terminate_backend(pid) {others}")
        deadline = time.monotonic() + 10
        while admin.execute(f"SELECT count(*) {others}").fetchall() != [(0,)]:
            assert time.monotonic() < deadline, "the connections were not cut"
            time.sleep(0.02)


def test_after_a_restart_every_request_answers(own_pg, pg_app, pg_url):
    client = pg_app.test_client()
    mid = upload(client, small_model()).get_json()["id"]
    index = pg_app.extensions["store"].index
    with ThreadPoolExecutor(1) as worker:  # another worker thread, its own connection
        worker.submit(index.list_models).result()
        pg_ctl(own_pg, "restart", "-m", "fast")
        r = client.get(f"/api/models/{mid}/revisions")
        assert r.status_code == 200, r.data[:300]
        assert client.get("/readyz").get_json() == {"status": "ok"}
        assert worker.submit(lambda: [r.rev for r in index.revisions(mid)]).result() == [0]
        pg_ctl(own_pg, "restart", "-m", "fast")
        # writes too: an edit begins with one (its intent), outside a transaction
        assert client.post(f"/api/models/{mid}/edits", json=EDIT).status_code == 200
        assert worker.submit(index.ping).result() is None
    # the lock telling collectors this process lives (pg_index.py) is held again: the restart dropped it
    with psycopg.connect(pg_url, autocommit=True) as other:
        taken = other.execute("SELECT pg_try_advisory_lock(%s)", (pg_index._lock_key(index._owner),))
        assert taken.fetchall() == [(False,)]


@pytest.fixture
def no_farewell(monkeypatch):
    """Connections the server closed are found only by the statement that fails on them (as when
    it is cut between the check and the statement): the retry alone makes them again."""
    monkeypatch.setattr(pg_index, "_said_goodbye", lambda conn: False)


def test_a_read_on_a_cut_connection_runs_again_on_a_new_one(no_farewell, pg_app, pg_url):
    client = pg_app.test_client()
    mid = upload(client, small_model()).get_json()["id"]
    index = pg_app.extensions["store"].index
    cut_connections(pg_url)
    assert client.get("/readyz").get_json() == {"status": "ok"}
    cut_connections(pg_url)
    assert [m.id for m in index.list_models()] == [mid]
    cut_connections(pg_url)
    # a transaction that fails at its BEGIN wrote nothing: begun again on a new connection
    assert index.update_checks(mid, lambda checks: {"cases": [], "note": 1}) == {"cases": [], "note": 1}
    assert index.model(mid).checks == {"cases": [], "note": 1}


def test_a_write_the_cut_may_have_committed_is_not_run_again(no_farewell, pg_app, pg_url):
    index = pg_app.extensions["store"].index
    index.set_derived("k", "a" * 64, "b" * 64)
    cut_connections(pg_url)
    # outside a transaction a write may have been committed before the answer was lost
    with pytest.raises(StoreUnavailable, match=r"^the model index \(PostgreSQL\) can't be reached: "):
        index.set_derived("k", "c" * 64, "b" * 64)
    index.set_derived("k", "c" * 64, "b" * 64)  # the next one on a new connection
    assert index.derived("k") == "c" * 64


def test_a_transaction_cut_midway_fails_whole_with_503(pg_app, pg_url):
    client = pg_app.test_client()
    mid = upload(client, small_model()).get_json()["id"]
    index = pg_app.extensions["store"].index

    def change(checks: dict) -> dict:  # runs between the locked read and the write
        cut_connections(pg_url)
        return {"cases": [], "note": 2}

    with pytest.raises(StoreUnavailable, match=r"^the model index \(PostgreSQL\) can't be reached: "):
        index.update_checks(mid, change)
    assert index.model(mid).checks is None  # nothing of it was written
    assert client.get("/readyz").get_json() == {"status": "ok"}


def test_with_postgresql_stopped_requests_answer_503(own_pg, pg_app):
    client = pg_app.test_client()
    mid = upload(client, small_model()).get_json()["id"]
    pg_ctl(own_pg, "stop", "-m", "fast")
    try:
        for response in (
            client.get(f"/api/models/{mid}"),
            client.get("/api/models"),
            client.post(f"/api/models/{mid}/edits", json=EDIT),
            upload(client, small_model(seed=1)),
        ):
            assert_unavailable(response, "model index (PostgreSQL)")
        r = client.get("/readyz")
        assert r.status_code == 503
        (problem,) = r.get_json()["problems"]
        assert problem.startswith("index: connection failed: "), problem
        assert client.get("/healthz").status_code == 200
    finally:
        pg_ctl(own_pg, "restart", "-m", "fast")
    assert client.get(f"/api/models/{mid}").status_code == 200


def test_a_download_s3_cant_serve_answers_503_before_its_headers(own_moto, tmp_path):
    """QA36 #1: a host without the model's blobs cached answered 200 with the whole
    Content-Length during an outage, then broke off after 2,931 bytes (and again at once while
    the breaker was open): a script checking the status kept a broken .onnx."""
    import shutil

    bucket, stop_s3 = own_moto
    app = create_app(
        {"DATA_DIR": str(tmp_path / "data"), "BLOB_URL": f"s3://{bucket}/{secrets.token_hex(4)}", "TESTING": True}
    )
    client = app.test_client()
    mid = upload(client, small_model()).get_json()["id"]
    assert client.get(f"/api/models/{mid}/download").status_code == 200
    shutil.rmtree(tmp_path / "data" / "blob-cache")  # as a host that never read them
    stop_s3()
    for _ in range(2):  # S3 refusing, then the breaker open
        assert_unavailable(client.get(f"/api/models/{mid}/download"), "blob store (S3)")
