"""The helper process for heavy checks: answers like the in-process call, and leaves with the server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SERVER = """
import sys, multiprocessing
from app.onnx_io import offload
verdict = offload.validate_file(sys.argv[1], "key")
helpers = [p.pid for p in multiprocessing.active_children()]
print(verdict["ok"], *helpers, flush=True)
sys.stdin.read()  # until killed
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie has exited
        return f.read().split(")")[-1].split()[0] != "Z"


def test_helper_checks_a_model_and_exits_when_the_server_is_killed(tmp_path):
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(path)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        ok, *helpers = server.stdout.readline().split()
        assert ok == "True" and helpers, "the check ran in a helper process"
        server.send_signal(signal.SIGKILL)  # no shutdown code runs at all
        server.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(int(p)) for p in helpers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(int(p)) for p in helpers), "the helper outlived the server"
    finally:
        server.kill()


def test_a_pool_reset_twice_by_two_requests_is_no_error():
    """Two requests whose jobs shared the helper that crashed both reset its pool: the second
    found it shut down (its processes None) and answered 500 (QA15)."""
    from concurrent.futures import ProcessPoolExecutor

    from app.onnx_io import offload

    pool = ProcessPoolExecutor(max_workers=1)
    pool.submit(int, 1).result()
    offload._reset(pool, wait=True)
    offload._reset(pool)  # again, as the other request does
