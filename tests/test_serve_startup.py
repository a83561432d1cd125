"""`onnx-studio serve` checks its settings and its store once, before any worker starts (QA18 F1-F4):
a bad database or blob URL, a database or bucket it can't reach, a port out of range each stop it
with one line naming where the value came from (flag, ONNX_STUDIO_* variable, config file) and exit
status 2 — no worker tracebacks, and never a password. A good start says what it serves."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from app.store import masked_url

STUDIO = Path(sys.executable).parent / "onnx-studio"
PASSWORD = "S3cretPgPass42"
PROG = "onnx-studio serve: error: "


def closed_port() -> int:
    """A loopback port nobody listens on (bound and let go: connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONNX_STUDIO_")}
    return {**env, **extra}


def refused(tmp_path: Path, args: list[str], env: dict[str, str] | None = None) -> str:
    """Start the server, which must stop at once: exit 2, one line on stderr, nothing on stdout
    (no token made up, no worker booted); that line."""
    r = subprocess.run(
        [str(STUDIO), "serve", "--workers", "4", "--data-dir", str(tmp_path / "data"), *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=env if env is not None else clean_env(),
    )
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(PROG), r.stderr[-3000:]
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert PASSWORD not in r.stderr
    return lines[0]


def test_a_database_url_of_a_wrong_scheme_names_its_flag_without_the_password(tmp_path):
    line = refused(tmp_path, ["--database-url", f"mysql://studio:{PASSWORD}@127.0.0.1:5432/studio"])
    assert line == (
        PROG + "--database-url: 'mysql://studio:***@127.0.0.1:5432/studio'"
        " is not sqlite:///PATH or postgresql://USER:PASS@HOST:PORT/DB"
    )


def test_a_database_nobody_answers_on_stops_the_server_in_one_line(tmp_path):
    port = closed_port()
    url = f"postgresql://studio:{PASSWORD}@127.0.0.1:{port}/studio"
    line = refused(tmp_path, ["--database-url", url])
    assert line.startswith(PROG + "--database-url: the model index (PostgreSQL) can't be reached: ")
    assert f"port {port} failed: Connection refused" in line


def test_the_environment_variable_is_named_when_the_url_came_from_it(tmp_path):
    url = f"postgres://studio:{PASSWORD}@127.0.0.1:{closed_port()}/studio"
    line = refused(tmp_path, [], clean_env(ONNX_STUDIO_DATABASE_URL=url))
    assert line.startswith(PROG + "ONNX_STUDIO_DATABASE_URL: the model index (PostgreSQL) can't be reached: ")
    line = refused(tmp_path, [], clean_env(ONNX_STUDIO_DATABASE_URL=f"pg://studio:{PASSWORD}@db/studio"))
    assert line.startswith(PROG + "ONNX_STUDIO_DATABASE_URL: 'pg://studio:***@db/studio' is not ")


def test_the_config_file_is_named_when_the_url_came_from_it(tmp_path):
    config = tmp_path / "studio.toml"
    config.write_text(f'database_url = "postgresql://studio:{PASSWORD}@127.0.0.1:{closed_port()}/studio"\n')
    line = refused(tmp_path, ["--config", str(config)])
    assert line.startswith(PROG + f"config file {config}: database_url: the model index (PostgreSQL) can't be reached")


def test_a_flag_overrides_a_bad_variable(tmp_path):
    """The value refused is the one that applies: a good flag over a bad variable starts (here, up
    to the next bad setting: the port)."""
    env = clean_env(ONNX_STUDIO_DATABASE_URL=f"mysql://studio:{PASSWORD}@db/studio")
    line = refused(tmp_path, ["--database-url", f"sqlite:///{tmp_path / 'i.sqlite3'}", "--port", "65536"], env)
    assert line == PROG + "--port: '65536' is not a port: 1 to 65535 (0: any free one)"


def test_a_sqlite_file_that_cannot_be_made_names_its_path(tmp_path):
    line = refused(tmp_path, ["--database-url", "sqlite:////nonexistent-folder/index.sqlite3"])
    assert line == (
        PROG + "--database-url: the model index (SQLite, /nonexistent-folder/index.sqlite3) can't be opened:"
        " unable to open database file"
    )


def test_a_blob_url_that_is_not_s3_is_refused(tmp_path):
    line = refused(tmp_path, ["--blob-url", "http://studio-qa18/team"])
    assert line == PROG + "--blob-url: 'http://studio-qa18/team' is not s3://BUCKET/PREFIX"


def test_an_s3_endpoint_nobody_answers_on_stops_the_server(tmp_path):
    env = clean_env(
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{closed_port()}",
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY=PASSWORD,
        AWS_DEFAULT_REGION="us-east-1",
    )
    line = refused(tmp_path, [], {**env, "ONNX_STUDIO_BLOB_URL": "s3://studio-blobs/team"})
    assert line.startswith(PROG + "ONNX_STUDIO_BLOB_URL: the blob store (S3) can't be reached: ")
    assert "Could not connect to the endpoint URL" in line


@pytest.mark.parametrize(
    ("args", "env", "file", "words"),
    [
        (["--port", "99999"], {}, None, "--port: '99999' is not a port: 1 to 65535 (0: any free one)"),
        ([], {"ONNX_STUDIO_PORT": "-1"}, None, "ONNX_STUDIO_PORT: '-1' is not a port"),
        ([], {}, "port = 70000", "port: 70000 is not a port"),
        ([], {"ONNX_STUDIO_PORT": "eighty"}, None, "ONNX_STUDIO_PORT: 'eighty' is not a whole number"),
        ([], {"ONNX_STUDIO_AUTH_TOKEN": "short-one"}, None, "ONNX_STUDIO_AUTH_TOKEN: is too short"),
    ],
)
def test_a_bad_setting_is_one_line_without_the_usage_block(tmp_path, args, env, file, words):
    if file is not None:
        config = tmp_path / "studio.toml"
        config.write_text(file + "\n")
        args = [*args, "--config", str(config)]
    line = refused(tmp_path, args, clean_env(**env))
    assert words in line
    assert "short-one" not in line  # a token refused is not echoed


def test_the_one_person_command_refuses_a_port_out_of_range(tmp_path):
    r = subprocess.run(
        [str(STUDIO), str(tmp_path / "m.onnx"), "--port", "99999", "--no-browser"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "argument --port: '99999' is not a port" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://studio:pw0rd@db:5432/studio", "postgresql://studio:***@db:5432/studio"),
        ("postgresql://studio:a/b+c@d@db/studio?sslmode=require", "postgresql://studio:***@db/studio?sslmode=require"),
        ("postgresql://db/studio?user=me&password=pw0rd", "postgresql://db/studio?user=me&password=***"),
        ("postgresql://studio@db/studio", "postgresql://studio@db/studio"),
        ("mysql:studio:pw0rd@db/studio", "mysql:studio:***@db/studio"),
        ("sqlite:////srv/index.sqlite3", "sqlite:////srv/index.sqlite3"),
        ("s3://bucket/prefix", "s3://bucket/prefix"),
    ],
)
def test_urls_are_shown_without_their_password(url, shown):
    assert masked_url(url) == shown


@pytest.mark.own_backends
def test_a_missing_bucket_stops_the_server_and_a_good_store_starts_it(tmp_path, postgres, s3_endpoint):
    """Against a real PostgreSQL and S3: a bucket that isn't there is named; with the right one
    the server starts, and its first line says what it serves, the password masked."""
    database = postgres.database("startup_" + secrets.token_hex(4))
    # the test cluster trusts loopback: a password in the URL is accepted (and must never show)
    url = database.replace("postgresql://studio@", f"postgresql://studio:{PASSWORD}@")
    line = refused(tmp_path, ["--database-url", url, "--blob-url", "s3://no-such-bucket/team"], clean_env())
    assert line == PROG + f"--blob-url: the bucket no-such-bucket does not exist at {s3_endpoint} (404)"

    from s3_server import BUCKET

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "server.log"
    args = ["serve", "--workers", "2", "--threads", "2", "--port", str(port), "--data-dir", str(tmp_path / "data")]
    args += ["--database-url", url, "--blob-url", f"s3://{BUCKET}/startup", "--log-format", "json"]
    with log.open("w") as out:
        proc = subprocess.Popen([str(STUDIO), *args], stdout=out, stderr=subprocess.STDOUT, env=clean_env())
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(30)
    text = log.read_text()
    assert PASSWORD not in text
    assert f"index: PostgreSQL {masked_url(url)}; blobs: S3 s3://{BUCKET}/startup at http://127.0.0.1:" in text
    assert "botocore" not in text  # its "Found credentials ..." lines, once per worker


@pytest.mark.parametrize(
    ("module", "args", "words"),
    [
        (
            "psycopg",
            ["--database-url", f"postgresql://studio:{PASSWORD}@127.0.0.1:5432/studio"],
            "--database-url: PostgreSQL",
        ),
        ("boto3", ["--blob-url", "s3://bucket/prefix"], "--blob-url: S3"),
    ],
)
def test_a_team_setting_without_its_client_says_how_to_install_it(tmp_path, module, args, words):
    """QA34 #12: the team server's clients are the `team` extra; a laptop's install goes without."""
    hidden = tmp_path / "hidden"
    (hidden / module).mkdir(parents=True)
    (hidden / module / "__init__.py").write_text("raise ImportError('not installed here')\n")
    line = refused(tmp_path, args, clean_env(PYTHONPATH=str(hidden)))
    assert line == PROG + f"{words}'s client ({module}) isn't installed: pip install 'onnx-studio[team]'"


def test_the_one_person_command_says_when_the_port_asked_is_taken(tmp_path):
    """QA34 #12: port 9160 taken, it served on 59159 without a word about the one asked."""
    import onnx
    from onnx import TensorProto, helper

    model = tmp_path / "m.onnx"
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    onnx.save(helper.make_model(graph), model)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = [str(STUDIO), str(model), "--port", str(port), "--no-browser", "--data-dir", str(tmp_path / "d")]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env())
        try:
            said = [proc.stdout.readline() for _ in range(2)]  # type: ignore[union-attr]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert said[0].startswith(f"Port {port} is taken: serving on "), said
    assert said[1].startswith("ONNX Studio on http://127.0.0.1:") and f":{port}/" not in said[1], said
