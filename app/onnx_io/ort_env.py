"""onnxruntime's telemetry off in every process of the server. From 1.29 onnxruntime records
session events (the model's file, graph and producer names among them) in a database under the
user's home (~/.cache/Microsoft/DeveloperTools/.onnxruntime) and uploads them; a server holding
a team's models writes only in its data folder and sends nothing. The switch is an environment
variable read once when onnxruntime is first imported (disable_telemetry_events() comes after
the database is made), so it is set before any import of it; the worker and helper processes
inherit it. A person who wants telemetry sets ORT_DISABLE_TELEMETRY=0 themselves."""

from __future__ import annotations

import os

VARIABLE = "ORT_DISABLE_TELEMETRY"


def telemetry_off() -> None:
    os.environ.setdefault(VARIABLE, "1")
