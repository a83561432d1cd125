"""onnxruntime (1.29+) records session events — the model's file, graph and producer names among
them — in a database under the home folder and uploads them. The server and every process it
starts (onnxruntime's workers, the helper running the model tools) keep it off: nothing is
written outside the data folder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import io, sys
    sys.path.insert(0, {tests!r})
    from app import create_app
    from browser.browser_models import tiny_cnn

    client = create_app({{"DATA_DIR": {data!r}, "TESTING": True}}).test_client()
    r = client.post("/api/models", data={{"file": (io.BytesIO(tiny_cnn().SerializeToString()), "m.onnx")}})
    mid = r.get_json()["id"]
    assert client.post(f"/api/models/{{mid}}/run", json={{}}).status_code == 200
    ops = [{{"op": "quantize_dynamic"}}]  # onnxruntime's quantizer, in the helper process
    assert client.post(f"/api/models/{{mid}}/edits", json={{"base": 0, "ops": ops}}).status_code == 200
    """
)


def test_onnxruntime_writes_nothing_under_the_home_folder(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    script = SCRIPT.format(tests=str(Path(__file__).parent), data=str(tmp_path / "data"))
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    run = subprocess.run(
        [sys.executable, "-c", script], env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert [str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()] == []
