"""Element types numpy lacks (bfloat16, float8, float4, 4- and 2-bit integers): values packed as
onnxruntime reads them come back through a real session as the same values, and values onnx's
numpy_helper reads from a TensorProto widen exactly (narrowing them again gives the same bits)."""

from __future__ import annotations

import ctypes

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from app.onnx_io import narrow_types
from app.onnx_io.narrow_types import NARROW


def through_float(number: int, shape: list[int]) -> ort.InferenceSession:
    """x (of the type) -> Cast -> y (float) -> Cast -> z (of the type again)."""
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["x"], ["y"], to=onnx.TensorProto.FLOAT),
            helper.make_node("Cast", ["y"], ["z"], to=number),
        ],
        "g",
        [helper.make_tensor_value_info("x", number, shape)],
        [
            helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, shape),
            helper.make_tensor_value_info("z", number, shape),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def sample(n: narrow_types.Narrow, shape: list[int]) -> np.ndarray:
    """Values every one of which the type holds exactly (its whole range, for the small ones)."""
    rng = np.random.default_rng(0)
    count = int(np.prod(shape))
    if n.kind.startswith(("int", "uint")):
        lo, hi = (-(1 << (n.bits - 1)), 1 << (n.bits - 1)) if n.kind.startswith("int") else (0, 1 << n.bits)
        return (np.arange(count) % (hi - lo) + lo).reshape(shape)
    values = rng.standard_normal(count).astype(np.float32)
    if n.kind == "float8_e8m0fnu":  # powers of two only
        values = np.exp2(np.round(values * 4))
    return values.astype(narrow_types.ml_type(n)).astype(np.float32).reshape(shape)


# onnxruntime 1.32 has no CPU kernel at all for float4e2m1 (the packing test below covers it)
NO_KERNELS = {"float4e2m1"}


@pytest.mark.parametrize("name", sorted(set(NARROW) - NO_KERNELS))
@pytest.mark.parametrize("shape", [[2, 3], [5], [1, 7, 1], []])  # [] a scalar: it stays one
def test_values_go_through_onnxruntime_unchanged(name, shape):
    n = NARROW[name]
    values = sample(n, shape)
    fed = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(narrow_types.ort_input(values, n), n.number)
    y, z = through_float(n.number, shape).run_with_ort_values(None, {"x": fed})
    np.testing.assert_array_equal(y.numpy(), values.astype(np.float32))  # what onnxruntime read
    assert z.data_type() == f"tensor({name})" and narrow_types.of_ort_type(z.data_type()) is n
    back = narrow_types.from_ort_buffer(ctypes.string_at(z.data_ptr(), z.tensor_size_in_bytes()), z.shape(), n)
    assert back.dtype == np.dtype(n.wide) and back.shape == tuple(shape)
    np.testing.assert_array_equal(back, values.astype(n.wide))


@pytest.mark.parametrize("name", sorted(NARROW))
@pytest.mark.parametrize("shape", [[2, 3], [5], [1, 7, 1], [0], []])
def test_packed_as_onnx_packs_a_tensors_raw_data(name, shape):
    n = NARROW[name]
    values = sample(n, shape)
    raw_data = numpy_helper.from_array(values.astype(narrow_types.ml_type(n)), "t").raw_data
    fed = narrow_types.ort_input(values, n)
    assert fed.shape == tuple(shape)
    assert fed.tobytes()[: len(raw_data)] == raw_data
    np.testing.assert_array_equal(narrow_types.from_ort_buffer(raw_data, shape, n), values.astype(n.wide))


@pytest.mark.parametrize("name", sorted(NARROW))
def test_a_tensor_protos_values_widen_exactly(name):
    n = NARROW[name]
    values = sample(n, [3, 4])
    tensor = numpy_helper.from_array(values.astype(narrow_types.ml_type(n)), "t")
    assert tensor.data_type == n.number == onnx.TensorProto.DataType.Value(n.onnx_name)
    read = numpy_helper.to_array(tensor)
    assert narrow_types.of_numpy(read.dtype) is n
    wide = narrow_types.widen(read, n)
    assert wide.dtype == np.dtype(n.wide)
    again = numpy_helper.from_array(wide.astype(narrow_types.ml_type(n)), "t")
    assert again.SerializeToString() == tensor.SerializeToString()


def test_numpys_own_types_are_not_narrow():
    for dtype in (np.float32, np.float16, np.int8, np.uint8, np.bool_, np.int64):
        assert narrow_types.of_numpy(np.dtype(dtype)) is None
    assert narrow_types.of_ort_type("tensor(float)") is None and narrow_types.of_ort_type("seq(tensor(int4))") is None
