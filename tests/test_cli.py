"""The onnx-studio command: open one model, serve for uploads, refuse what isn't a model."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from testkit import ONNX_DATA

STUDIO = Path(sys.executable).parent / "onnx-studio"


def _start(args, tmp_path):
    proc = subprocess.Popen(
        [str(STUDIO), *args, "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said = []  # what it says before its address (the test data sets it kept)
    line = proc.stdout.readline()
    while " on http" not in line:
        said.append(line)
        line = proc.stdout.readline()
    return proc, line.split(" on ")[1].split()[0], said


def test_open_a_model_serves_its_page(tmp_path):
    model = ONNX_DATA / "light" / "light_resnet50.onnx"
    proc, url, _ = _start([str(model), "--no-browser", "--port", "0"], tmp_path)
    try:
        assert "/models/" in url
        base, mid = url.split("/models/")
        summary = json.load(urllib.request.urlopen(f"{base}/api/models/{mid}"))
        assert summary["name"] == "light_resnet50.onnx" and summary["counts"]["nodes"] == 415
        assert urllib.request.urlopen(f"{base}/api/models/{mid}/download").read() == model.read_bytes()
        assert b'id="graph"' in urllib.request.urlopen(url).read()
    finally:
        proc.terminate()
        proc.wait(10)
    assert not any((Path(__file__).parent.parent / "app").rglob("*.sqlite3"))  # data never in the package


def test_a_models_test_data_sets_beside_it_become_reference_cases(tmp_path):
    import shutil

    folder = tmp_path / "relu"
    shutil.copytree(ONNX_DATA / "pytorch-converted" / "test_ReLU", folder)
    proc, url, said = _start([str(folder / "model.onnx"), "--no-browser", "--port", "0"], tmp_path)
    try:
        assert said == ["kept test_data_set_0 as reference cases: every revision is held to their outputs\n"]
        base, mid = url.split("/models/")
        summary = json.load(urllib.request.urlopen(f"{base}/api/models/{mid}"))
        assert summary["validation"]["reference"]["status"] == "passed"
        assert summary["external_files"] == [] and summary["name"] == "relu.onnx"  # model.onnx, named by its folder
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_for_uploads(tmp_path):
    proc, url, _ = _start(["serve", "--port", "0"], tmp_path)
    try:
        assert json.load(urllib.request.urlopen(f"{url}api/models")) == {
            "models": [],
            "disk_bytes": 0,
            "other_bytes": 0,
        }
    finally:
        proc.terminate()
        proc.wait(10)
    assert (tmp_path / "data" / "index.sqlite3").exists()


def test_not_a_model_exits_with_a_message(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00garbage\xff" * 10)
    r = subprocess.run(
        [str(STUDIO), str(bad), "--no-browser", "--data-dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "is not a readable ONNX model" in r.stderr


def test_listening_on_every_address_says_how_remote_names_get_in(tmp_path, monkeypatch, capsys):
    """QA: `serve --host 0.0.0.0` answered 421 to every remote name, and nothing said why."""
    from app import cli

    served = []
    monkeypatch.setattr(cli, "_serve", lambda app, host, port: served.append((host, port)))
    args = ["--host", "0.0.0.0", "--port", "9", "--data-dir", str(tmp_path), "--auth-token", "t0ken-0f-twelve"]
    assert cli._serve_command(args) == 0 and served == [("0.0.0.0", 9)]
    assert "add the name people reach it by with --allowed-host NAME" in capsys.readouterr().out
    assert cli._serve_command([*args, "--allowed-host", "studio.example.com"]) == 0
    assert "--allowed-host" not in capsys.readouterr().out


def test_with_json_logs_every_start_up_line_is_json(tmp_path, monkeypatch, capsys):
    """QA18 F24: the made-up token and the 'answering localhost only' line were plain text among
    the JSON lines (a log shipper mis-parses them)."""
    import json
    import logging

    from app import cli

    monkeypatch.setattr(cli, "_serve", lambda app, host, port: None)
    monkeypatch.delenv("ONNX_STUDIO_AUTH_TOKEN", raising=False)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        args = ["--host", "0.0.0.0", "--port", "9", "--data-dir", str(tmp_path), "--log-format", "json"]
        assert cli._serve_command(args) == 0
    finally:
        root.handlers[:], root.level = handlers, level
    out = capsys.readouterr()
    assert out.out == ""
    lines = [json.loads(line) for line in out.err.splitlines() if line.strip()]
    said = " | ".join(line["message"] for line in lines)
    assert "Access token (anyone reaching 0.0.0.0 needs it)" in said and "ONNX_STUDIO_AUTH_TOKEN" in said
    assert "answering localhost only" in said


def test_a_killed_server_process_leaves_no_plain_text_warning_in_the_log():
    """QA18 F11: a SIGKILLed worker's helper pool left 'resource_tracker: There appear to be 5
    leaked semaphore objects' among the JSON lines."""
    script = (
        "import os, signal, time\n"
        "from app.onnx_io import offload\n"
        "offload.prewarm()\n"
        "time.sleep(2)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    repo = Path(__file__).resolve().parent.parent
    # the output is read to its end: the tracker's lines too (it holds the same stderr)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=repo)
    assert r.returncode == -9
    assert "leaked semaphore" not in r.stderr, r.stderr
