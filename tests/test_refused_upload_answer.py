"""An upload over the server's limit gets its 413, not a connection reset (QA18 F25: the server
answered and closed while the client was still sending; http.client saw a broken pipe)."""

from __future__ import annotations

import http.client
import os

from test_serve_workers import Served, multipart


def test_an_upload_over_the_limit_is_answered_413_every_time(tmp_path, monkeypatch):
    monkeypatch.setenv("ONNX_STUDIO_MAX_UPLOAD_BYTES", "1000000")
    served = Served(tmp_path, workers=2)
    try:
        body, ctype = multipart(os.urandom(4_000_000), "big.onnx")
        answers = []
        for _ in range(10):
            c = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
            try:
                c.request("POST", "/api/models", body, {"Content-Type": ctype})
                r = c.getresponse()
                answers.append((r.status, r.read()))
            except OSError as exc:  # the body cut off by the server's close
                answers.append((0, repr(exc).encode()))
            finally:
                c.close()
        assert all(status == 413 for status, _ in answers), answers
        assert b"the upload is larger than this server accepts (at most 976.6 KiB)" in answers[0][1]
        assert served.get("/readyz")[0] == 200
    finally:
        served.stop()
