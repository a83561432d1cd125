"""Shared test helpers: uploads and the official ONNX model corpora."""

from __future__ import annotations

import functools
import io
from pathlib import Path

import numpy as np
import onnx

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"


def corpus_app(tmp_path_factory):
    """The app the corpus tests share, one per module: every tensor with raw_data stored as a
    blob of its own (the store's split path, store/wire.py, on the whole corpus, not only on
    tensors of 4 KiB and more). Each test uploads its own model and reads only that one back;
    an app made per test was half of each test's time over ~2,000 models."""
    from app import create_app

    folder = tmp_path_factory.mktemp("corpus")
    return create_app({"DATA_DIR": str(folder / "data"), "TESTING": True, "STORE_SPLIT_MIN_BYTES": 1})


def upload(client, data: bytes, name: str = "model.onnx", extra: list[tuple[bytes, str]] = ()):
    files = [(io.BytesIO(data), name)] + [(io.BytesIO(d), n) for d, n in extra]
    return client.post("/api/models", data={"file": files}, content_type="multipart/form-data")


def diff_between(client, old: onnx.ModelProto, new: onnx.ModelProto) -> dict:
    """GET .../diff of two models uploaded for it: `new` against `old` (?other=)."""
    ids = []
    for m in (old, new):
        r = upload(client, m.SerializeToString())
        assert r.status_code == 201, r.get_json()
        ids.append(r.get_json()["id"])
    r = client.get(f"/api/models/{ids[1]}/diff?other={ids[0]}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def settled_reference(client, model_id: str, answer: dict) -> dict:
    """The reference-case verdict an upload's or edit's answer gives, once settled: the answer
    says it, or (a loaded machine: a case ran past the quick budget, so the model's verdicts go
    to the background) "pending", and GET .../checks/verdict waits for it."""
    ref = answer["validation"]["reference"]
    if ref["status"] == "pending":
        ref = client.get(f"/api/models/{model_id}/checks/verdict?revision={answer['revision']}").get_json()
    return ref


def npy_blob(client, arr: np.ndarray) -> str:
    """`arr` uploaded as an .npy (POST /api/blobs): its blob, as ops and runs name it."""
    buf = io.BytesIO()
    np.save(buf, arr)
    r = client.post("/api/blobs", data={"file": (io.BytesIO(buf.getvalue()), "array.npy")})
    assert r.status_code == 201, r.get_json()
    return r.get_json()["blob"]


def wheel_models() -> list[Path]:
    """Every model the onnx wheel ships under backend/test/data (light, pytorch-*, simple, real)."""
    return sorted(ONNX_DATA.rglob("*.onnx"))


@functools.lru_cache(maxsize=1)
def node_testcases() -> dict:
    """name -> TestCase for the ~1,900 official node-test models."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():  # the test-case builders' own (numpy casts, deprecations)
        warnings.simplefilter("ignore")
        return {c.name: c for c in collect_testcases(None)}


def node_testcase_names() -> list[str]:
    return sorted(node_testcases())


def nested_search_model() -> onnx.ModelProto:
    """For search: the main graph holds an If (`If_0`) whose then branch holds a Loop (`Loop_3`)
    whose body holds the model's only Conv (`inner_conv`); next to them a Transpose (perm
    [0, 2, 1, 3]), a Cast to INT64, a ConvTranspose, a Relu named `my_conv_name` and a call to
    the model-local function `Swish` (Sigmoid, Mul)."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    f = lambda name, shape: h.make_tensor_value_info(name, T.FLOAT, shape)  # noqa: E731
    weight = nh.from_array(np.ones((3, 3, 1, 1), np.float32), "conv_weight")
    body = h.make_graph(
        [
            h.make_node("Conv", ["x", "conv_weight"], ["conv_out"], name="inner_conv", kernel_shape=[1, 1]),
            h.make_node("Add", ["acc_in", "conv_out"], ["acc_out"], name="accumulate"),
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
        ],
        "loop_body",
        [
            h.make_tensor_value_info("iter", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            f("acc_in", [1, 3, 4, 4]),
        ],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), f("acc_out", [1, 3, 4, 4])],
        [weight],
    )
    then_g = h.make_graph(
        [h.make_node("Loop", ["trips", "cond", "x"], ["then_y"], name="Loop_3", body=body)],
        "then_graph",
        [],
        [f("then_y", [1, 3, 4, 4])],
    )
    else_g = h.make_graph(
        [h.make_node("Identity", ["x"], ["else_y"], name="else_identity")],
        "else_graph",
        [],
        [f("else_y", [1, 3, 4, 4])],
    )
    swish = h.make_function(
        "local",
        "Swish",
        ["X"],
        ["Y"],
        [h.make_node("Sigmoid", ["X"], ["S"], name="fn_sigmoid"), h.make_node("Mul", ["X", "S"], ["Y"], name="fn_mul")],
        [h.make_opsetid("", 17)],
    )
    nodes = [
        h.make_node("Transpose", ["x"], ["xt"], name="transpose_in", perm=[0, 2, 1, 3]),
        h.make_node("Cast", ["x"], ["x_int"], name="cast_in", to=T.INT64),
        h.make_node("ConvTranspose", ["x", "deconv_weight"], ["deconv_out"], name="up", kernel_shape=[1, 1]),
        h.make_node("Relu", ["x"], ["relu_out"], name="my_conv_name"),
        h.make_node("If", ["cond"], ["branch_out"], name="If_0", then_branch=then_g, else_branch=else_g),
        h.make_node("Swish", ["x"], ["swish_out"], name="call_swish", domain="local"),
        h.make_node("LeakyRelu", ["x"], ["leaky_out"], name="leaky", alpha=0.1),
    ]
    graph = h.make_graph(
        nodes,
        "main_graph",
        [f("x", [1, 3, 4, 4]), h.make_tensor_value_info("cond", T.BOOL, [])],
        [
            f("xt", [1, 4, 3, 4]),
            h.make_tensor_value_info("x_int", T.INT64, [1, 3, 4, 4]),
            f("deconv_out", [1, 3, 4, 4]),
            f("relu_out", [1, 3, 4, 4]),
            f("branch_out", [1, 3, 4, 4]),
            f("swish_out", [1, 3, 4, 4]),
            f("leaky_out", [1, 3, 4, 4]),
        ],
        [
            nh.from_array(np.full((), 2, np.int64), "trips"),
            nh.from_array(np.ones((3, 3, 1, 1), np.float32), "deconv_weight"),
        ],
    )
    model = h.make_model(graph, functions=[swish], opset_imports=[h.make_opsetid("", 17), h.make_opsetid("local", 1)])
    onnx.checker.check_model(model, full_check=True)
    return model


def argmax_classifier() -> onnx.ModelProto:
    """Logits, then an ArgMax made a graph output over the batch (axis 0, keepdims 1), its output
    declared as inference typed it then ([1, 3]): the edit refusals' outputs_follow case."""
    from onnx import TensorProto as T
    from onnx import helper as h

    w = onnx.numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "w")
    g = h.make_graph(
        [
            h.make_node("MatMul", ["x", "w"], ["logits"], name="fc"),
            h.make_node("ArgMax", ["logits"], ["class_id"], name="argmax", axis=0, keepdims=1),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 4])],
        [
            h.make_tensor_value_info("logits", T.FLOAT, ["batch", 3]),
            h.make_tensor_value_info("class_id", T.INT64, [1, 3]),
        ],
        [w],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
