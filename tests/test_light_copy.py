"""The weightless stand-in gives shape inference and the full check the same answers as the model."""

from __future__ import annotations

import onnx
import pytest
from testkit import ONNX_DATA, wheel_models

from app.onnx_io.light import light_copy

pytestmark = pytest.mark.corpus


def _inferred(m: onnx.ModelProto) -> dict:
    try:
        out = onnx.shape_inference.infer_shapes(m, data_prop=True)
    except Exception as exc:
        return {"error": type(exc).__name__}
    return {v.name: v.type.SerializeToString() for v in out.graph.value_info}


def _full_ok(m: onnx.ModelProto) -> bool:
    try:
        onnx.checker.check_model(m, full_check=True)
        return True
    except Exception:
        return False


# the wheel's weights are small, so shrink the thresholds to exercise the stand-in on real graphs
@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch):
    monkeypatch.setattr("app.onnx_io.light.SMALL_ELEMENTS", 16)
    monkeypatch.setattr("app.onnx_io.light.SMALL_INT_ELEMENTS", 64)


@pytest.mark.parametrize("path", wheel_models(), ids=lambda p: str(p.relative_to(ONNX_DATA)))
def test_light_copy_infers_like_the_model(path):
    model = onnx.load(path)
    light = light_copy(model)
    if light is model:
        return  # nothing big to strip
    assert light.ByteSize() < model.ByteSize()
    assert [n.SerializeToString() for n in light.graph.node] == [n.SerializeToString() for n in model.graph.node]
    assert _inferred(light) == _inferred(model)
    assert _full_ok(light) == _full_ok(model)
