"""The model's validation state: onnx.checker (basic and full) and strict shape inference, with
inference errors tied to the node their message names."""

from __future__ import annotations

import re

import onnx

from .light import basic_check, light_copy
from .limits import PROTOBUF_LIMIT
from .load import checker_verdict

# onnx names the failing node as "(op_type:Conv, node name: conv1)"
_NODE_IN_MESSAGE = re.compile(r"\(op_type:([^,]*), node name: ([^)]*)\)")


def _check(model: onnx.ModelProto, full: bool) -> tuple[bool, str]:
    verdict = checker_verdict(model, full)
    return verdict["ok"], verdict["message"]


def inference_errors(model: onnx.ModelProto) -> list[dict]:
    """Strict shape/type inference errors, one per node the message names."""
    try:
        onnx.shape_inference.infer_shapes(light_copy(model), check_type=True, strict_mode=True)
        return []
    except Exception as exc:
        text = str(exc).strip()
    found = []
    parts = re.split(r"(?=\(op_type:)", text)
    for part in parts:
        m = _NODE_IN_MESSAGE.search(part)
        if not m:
            continue
        op_type, name = m.group(1).strip(), m.group(2).strip()
        ids = [f"n{i}" for i, n in enumerate(model.graph.node) if n.name == name and n.op_type == op_type]
        found.append(
            {"message": part.strip(), "op_type": op_type, "node_name": name, "node": ids[0] if len(ids) == 1 else None}
        )
    return found or [{"message": text, "op_type": None, "node_name": None, "node": None}]


def full_validation(model: onnx.ModelProto) -> dict:
    """{"ok", "message"} of the basic checker (the edit gate), plus the full check and inference."""
    basic = basic_check(model)
    ok, message = basic["ok"], basic["message"]
    out = {"ok": ok, "message": message}
    light = light_copy(model)
    if light.ByteSize() < PROTOBUF_LIMIT:  # the full check serialises the (weightless) model
        full_ok, full_message = _check(light, full=True) if ok else (False, message)
        out["full"] = {"ok": full_ok, "message": full_message}
        out["inference_errors"] = [] if full_ok else inference_errors(model)
    return out
