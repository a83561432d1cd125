"""A corpus of hostile files, built here (issue 12): each class is one way a file can try to crash,
exhaust or escape the server; each yields a few files. tests/test_hostile.py uploads every one
and opens every view of what is stored.

    python tests/hostile_corpus.py OUT_DIR    # write them out, e.g. for a campaign by hand
"""

from __future__ import annotations

import io
import random
import sys
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 17)]
HostileFile = tuple[str, bytes]  # (upload file name, bytes)
CLASSES: dict[str, Callable[[], Iterator[HostileFile]]] = {}


def hostile(fn: Callable[[], Iterator[HostileFile]]):
    CLASSES[fn.__name__] = fn
    return fn


def _model(nodes, inputs, outputs, inits=(), **kw) -> onnx.ModelProto:
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, list(inits)), opset_imports=OPSET, **kw)


def _f(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _relu() -> onnx.ModelProto:
    return _model([helper.make_node("Relu", ["x"], ["y"], name="r")], [_f("x", [1, 4])], [_f("y", [1, 4])])


def _bytes(m: onnx.ModelProto) -> bytes:
    return m.SerializeToString()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _zip(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return buf.getvalue()


@hostile
def garbage_bytes():
    rng = random.Random(1)
    for n in (1, 17, 4096, 100_000):
        yield f"garbage{n}.onnx", bytes(rng.getrandbits(8) for _ in range(n))
    yield "zeros.onnx", bytes(10_000)
    yield "ff.onnx", b"\xff" * 10_000


@hostile
def empty_and_tiny():
    yield "empty.onnx", b""
    yield "one.onnx", b"\x08"
    yield "tag_only.onnx", b"\x3a\x00"  # an empty graph, no ir_version


@hostile
def truncated_models():
    data = _bytes(_relu())
    for cut in (1, len(data) // 3, len(data) // 2, len(data) - 1):
        yield f"truncated{cut}.onnx", data[:cut]


@hostile
def huge_dims():
    yield (
        "huge_value_info.onnx",
        _bytes(_model([helper.make_node("Relu", ["x"], ["y"])], [_f("x", [2**62, 2**62])], [_f("y", None)])),
    )
    t = helper.make_tensor("w", TensorProto.FLOAT, [1], [1.0])
    t.dims[:] = [2**40, 2**40]
    yield (
        "huge_init_dims.onnx",
        _bytes(_model([helper.make_node("Add", ["x", "w"], ["y"])], [_f("x", [1])], [_f("y", None)], [t])),
    )
    yield (
        "negative_dims.onnx",
        _bytes(_model([helper.make_node("Relu", ["x"], ["y"])], [_f("x", [-5, -(2**62)])], [_f("y", None)])),
    )


@hostile
def data_propagation_blowup():
    """y = x + x with x: float[2^40] (150 bytes; data propagation allocated ~140 bytes an element)."""
    big = _model([helper.make_node("Add", ["x", "x"], ["y"])], [_f("x", [2**40])], [_f("y", None)])
    yield "x_plus_x_2e40.onnx", _bytes(big)
    shape = _model(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Add", ["s", "s"], ["y"])],
        [_f("x", [2**24])],
        [_f("y", None, TensorProto.INT64)],
    )
    yield "shape_add_16m.onnx", _bytes(shape)
    r = _model(
        [helper.make_node("Range", ["a", "b", "c"], ["y"])],
        [],
        [_f("y", None, TensorProto.INT64)],
        [helper.make_tensor(n, TensorProto.INT64, [], [v]) for n, v in (("a", 0), ("b", 2**40), ("c", 1))],
    )
    yield "range_2e40.onnx", _bytes(r)


@hostile
def inference_crashes():
    """Shape -> Slice with step 2^63-1: onnx's shape inference with data propagation segfaults."""
    for step in (2**63 - 1, -(2**63)):
        inits = [
            helper.make_tensor(n, TensorProto.INT64, [1], [v])
            for n, v in (("st", 0), ("en", 4), ("ax", 0), ("sp", step))
        ]
        m = _model(
            [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Slice", ["s", "st", "en", "ax", "sp"], ["y"])],
            [_f("x", [1, 2, 3, 4])],
            [_f("y", None, TensorProto.INT64)],
            inits,
        )
        yield f"slice_step_{'max' if step > 0 else 'min'}.onnx", _bytes(m)


@hostile
def unknown_dtypes():
    t = helper.make_tensor("w", TensorProto.FLOAT, [1], [1.0])
    t.data_type = 999
    yield (
        "init_dtype_999.onnx",
        _bytes(_model([helper.make_node("Add", ["x", "w"], ["y"])], [_f("x", [1])], [_f("y", None)], [t])),
    )
    m = _relu()
    m.graph.input[0].type.tensor_type.elem_type = 12345
    yield "input_dtype_12345.onnx", _bytes(m)
    c = helper.make_node("Cast", ["x"], ["y"], to=77)
    yield "cast_to_77.onnx", _bytes(_model([c], [_f("x", [1])], [_f("y", None)]))


def _external(location: str, offset: int = 0, length: int = 16) -> onnx.ModelProto:
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    del w.float_data[:]
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = w.external_data.add()
        e.key, e.value = k, v
    return _model([helper.make_node("Add", ["x", "w"], ["y"])], [_f("x", [4])], [_f("y", [4])], [w])


@hostile
def hostile_external_paths():
    for i, loc in enumerate(
        [
            "/etc/passwd",
            "../../../../etc/passwd",
            "..\\..\\windows\\win.ini",
            "a\0b",
            "~/.ssh/id_rsa",
            "/proc/self/environ",
            "C:\\boot.ini",
            "weights/../../x",
            ".",
        ]
    ):
        yield f"ext_path{i}.onnx", _bytes(_external(loc))


@hostile
def hostile_external_ranges():
    for i, (off, ln) in enumerate([(2**62, 16), (0, 2**62), (-5, 16), (0, -1), (10**30, 1)]):
        m = _external("w.bin")
        m.graph.initializer[0].external_data[1].value = str(off)
        m.graph.initializer[0].external_data[2].value = str(ln)
        yield f"ext_range{i}.zip", _zip({"m.onnx": _bytes(m), "w.bin": bytes(16)})


@hostile
def deep_subgraphs():
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "b", [], [_f("y", [1])])
    body = leaf
    for _ in range(30):  # the else branch stays a leaf: 30 levels, not 2^30 graphs (upb parses ~33)
        body = helper.make_graph(
            [helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=leaf)], "b", [], [_f("y", [1])]
        )
    g = helper.make_graph(body.node, "g", [_f("c", [], TensorProto.BOOL), _f("x", [1])], [_f("y", [1])])
    yield "if_30_deep.onnx", _bytes(helper.make_model(g, opset_imports=OPSET))

    # deeper than any parser allows, written byte by byte: graph.node.attribute.g ... 3,000 times
    def field(number: int, payload: bytes) -> bytes:
        return _varint(number << 3 | 2) + _varint(len(payload)) + payload

    graph = b""
    for _ in range(3000):
        graph = field(1, field(5, field(1, b"g") + field(6, graph)))  # GraphProto.node[0].attribute[0].g
    yield "graph_3000_deep.onnx", _varint(1 << 3) + _varint(8) + field(7, graph)


@hostile
def deep_text():
    body = "y = Identity (x)"
    for _ in range(5000):
        body = f"y = If (c) <then_branch = g () => (float[1] y) {{ {body} }}, else_branch = g () => (float[1] y) {{ y = Identity (x) }}>"
    text = f'<ir_version: 8, opset_import: ["" : 17]>\nmain (bool c, float[1] x) => (float[1] y) {{\n  {body}\n}}\n'
    yield "if_5000_deep.onnxtxt", text.encode()
    yield "brackets.onnxtxt", b"<ir_version: 8>\nm (float x) => (float y) {" + b"(" * 100_000 + b"}"


@hostile
def garbage_text():
    yield "not_text.onnxtxt", b"<ir_version: 8> this is not onnx { at all => }"
    yield "binary_as_text.onnxtxt", bytes(range(256)) * 10
    yield "huge_number.onnxtxt", b"<ir_version: 99999999999999999999999>\nm (float x) => (float y) { y = Relu(x) }"


@hostile
def invalid_utf8():
    data = _bytes(
        _model([helper.make_node("Relu", ["XXXX"], ["YYYY"], name="NNNN")], [_f("XXXX", [1])], [_f("YYYY", [1])])
    )
    for tok in (b"XXXX", b"NNNN", b"YYYY"):
        yield f"bad_utf8_{tok.decode()}.onnx", data.replace(tok, b"\xff\xfe\xc0\x80")


@hostile
def zip_bombs():
    yield "bomb.zip", _zip({"m.onnx": _bytes(_external("w.bin", 0, 16)), "w.bin": bytes(64 << 20)})
    yield "bomb_model.zip", _zip({"m.onnx": bytes(64 << 20)})


@hostile
def zip_damage():
    ok = _zip({"m.onnx": _bytes(_external("w.bin")), "w.bin": bytes(16)}, zipfile.ZIP_STORED)
    enc = bytearray(ok)
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = -1
        while (i := enc.find(sig, i + 1)) >= 0:
            enc[i + off] |= 1
    yield "encrypted.zip", bytes(enc)
    bad = bytearray(ok)
    bad[ok.index(bytes(16))] ^= 0xFF
    yield "bad_crc.zip", bytes(bad)
    yield "truncated.zip", ok[: len(ok) // 2]
    yield "not_a.zip", b"PK\x03\x04" + bytes(100)


@hostile
def zip_names():
    m = _bytes(_external("w.bin"))
    yield "crlf.zip", _zip({"m.onnx": m, "w\r\n.bin": bytes(16)})
    yield "traversal.zip", _zip({"m.onnx": m, "../../w.bin": bytes(16)})
    yield "two_models.zip", _zip({"a.onnx": m, "b.onnx": m})
    yield "no_model.zip", _zip({"w.bin": bytes(16)})
    yield "many_members.zip", _zip({f"f{i}": b"" for i in range(12_000)} | {"m.onnx": m})


@hostile
def wide_nodes():
    n = helper.make_node("Sum", [f"x{i}" for i in range(20_000)], ["y"])
    yield "sum_20k_inputs.onnx", _bytes(_model([n], [_f(f"x{i}", [1]) for i in range(20_000)], [_f("y", [1])]))
    c = helper.make_node("Concat", ["x"] * 50_000, ["y"], axis=0)
    yield "concat_same_50k.onnx", _bytes(_model([c], [_f("x", [1])], [_f("y", None)]))


@hostile
def symbolic_sizes():
    """Symbolic input dims a client gives any size to count costs at (GET .../stats?dims=, shapes
    inferred again from those numbers): a Range as long as the input, a Reshape to [N, N], a
    Shape -> Add chain."""
    ints = {"zero": [0], "one": [1], "first": [0]}
    consts = [
        helper.make_node("Constant", [], [k], value=numpy_helper.from_array(np.array(v, np.int64)))
        for k, v in ints.items()
    ]
    n = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "first"], ["n"])]
    rng = [helper.make_node("Squeeze", ["n"], ["n0"]), helper.make_node("Range", ["zero_s", "n0", "one_s"], ["r"])]
    scalars = [helper.make_node("Squeeze", [k], [f"{k}_s"]) for k in ("zero", "one")]
    yield (
        "range_of_input_length.onnx",
        _bytes(
            _model(
                [*consts, *n, *scalars, *rng, helper.make_node("Add", ["r", "r"], ["y"])],
                [_f("x", ["N"])],
                [_f("y", None, TensorProto.INT64)],
            )
        ),
    )
    square = [helper.make_node("Concat", ["n", "n"], ["nn"], axis=0), helper.make_node("Expand", ["x", "nn"], ["y"])]
    yield "expand_to_n_by_n.onnx", _bytes(_model([*consts, *n, *square], [_f("x", ["N"])], [_f("y", None)]))
    chain = [helper.make_node("Add", [f"s{i}" if i else "s", f"s{i}" if i else "s"], [f"s{i + 1}"]) for i in range(200)]
    yield (
        "shape_add_chain.onnx",
        _bytes(_model([n[0], *chain], [_f("x", ["A", "B", "C"])], [_f("s200", None, TensorProto.INT64)])),
    )


@hostile
def huge_attributes():
    a = helper.make_node("Constant", [], ["y"], value_ints=list(range(2_000_000)))
    yield "constant_2m_ints.onnx", _bytes(_model([a], [], [_f("y", None, TensorProto.INT64)]))
    s = helper.make_node("Constant", [], ["y"], value_string="x" * (8 << 20))
    yield "constant_8mb_string.onnx", _bytes(_model([s], [], [_f("y", None, TensorProto.STRING)]))


@hostile
def graphs_attribute_storm():
    b = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "b", [_f("x", [1])], [_f("y", [1])])
    n = helper.make_node("Custom", ["x"], ["y"], domain="evil", bodies=[b] * 2000)
    m = _model([n], [_f("x", [1])], [_f("y", [1])])
    m.opset_import.append(helper.make_opsetid("evil", 1))
    yield "graphs_2000.onnx", _bytes(m)


@hostile
def sparse_out_of_range():
    values = helper.make_tensor("v", TensorProto.FLOAT, [2], [1.0, 2.0])
    idx = helper.make_tensor("i", TensorProto.INT64, [2], [5, 2**62])
    sp = helper.make_sparse_tensor(values, idx, [4])
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "v"], ["y"])], "g", [_f("x", [4])], [_f("y", [4])], sparse_initializer=[sp]
    )
    yield "sparse_oob.onnx", _bytes(helper.make_model(g, opset_imports=OPSET))


@hostile
def odd_versions():
    m = _relu()
    m.ir_version = 2**62
    yield "ir_huge.onnx", _bytes(m)
    m = _relu()
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("", 2**40))
    yield "opset_huge.onnx", _bytes(m)
    m = _relu()
    m.opset_import.extend(helper.make_opsetid(f"d{i}", i) for i in range(20_000))
    yield "opsets_20k.onnx", _bytes(m)


@hostile
def recursive_functions():
    f = helper.make_function("local", "F", ["x"], ["y"], [helper.make_node("F", ["x"], ["y"], domain="local")], OPSET)
    m = _model([helper.make_node("F", ["x"], ["y"], domain="local")], [_f("x", [1])], [_f("y", [1])], functions=[f])
    m.opset_import.append(helper.make_opsetid("local", 1))
    yield "function_calls_itself.onnx", _bytes(m)
    g = helper.make_function("local", "G", ["x"], ["y"], [helper.make_node("H", ["x"], ["y"], domain="local")], OPSET)
    h = helper.make_function("local", "H", ["x"], ["y"], [helper.make_node("G", ["x"], ["y"], domain="local")], OPSET)
    m = _model([helper.make_node("G", ["x"], ["y"], domain="local")], [_f("x", [1])], [_f("y", [1])], functions=[g, h])
    m.opset_import.append(helper.make_opsetid("local", 1))
    yield "functions_mutual.onnx", _bytes(m)


@hostile
def cycles_and_dangling():
    m = _model(
        [helper.make_node("Relu", ["b"], ["a"], name="p"), helper.make_node("Relu", ["a"], ["b"], name="q")],
        [_f("x", [1])],
        [_f("a", [1])],
    )
    yield "cycle.onnx", _bytes(m)
    m = _model([helper.make_node("Relu", ["nowhere"], ["y"])], [], [_f("y", [1])])
    yield "dangling_input.onnx", _bytes(m)
    m = _model([helper.make_node("Relu", ["x"], ["y"])] * 3, [_f("x", [1])], [_f("y", [1])])
    yield "same_output_thrice.onnx", _bytes(m)


@hostile
def tensor_data_lies():
    t = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    t.raw_data = b"\x00" * 3
    yield (
        "raw_data_short.onnx",
        _bytes(_model([helper.make_node("Add", ["x", "w"], ["y"])], [_f("x", [4])], [_f("y", [4])], [t])),
    )
    s = helper.make_tensor("s", TensorProto.STRING, [1], [b"a"])
    s.dims[:] = [3]  # three strings said, one given
    yield (
        "string_count_lies.onnx",
        _bytes(_model([helper.make_node("Identity", ["s"], ["y"])], [], [_f("y", [3], TensorProto.STRING)], [s])),
    )
    f = helper.make_tensor("f", TensorProto.FLOAT4E2M1, [4], [0.5, 1.0, 2.0, 0.0])
    f.dims[:] = [2**33]
    yield "float4_dims_lie.onnx", _bytes(_model([helper.make_node("Identity", ["f"], ["y"])], [], [_f("y", None)], [f]))


@hostile
def not_models():
    yield (
        "tensor_as_model.onnx",
        numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "t").SerializeToString(),
    )
    yield "png.onnx", b"\x89PNG\r\n\x1a\n" + bytes(100)
    yield "zlib.onnx", zlib.compress(_bytes(_relu()))
    yield "html.onnx", b"<html><script>alert(1)</script></html>"


@hostile
def xss_names():
    payload = '"><img src=x onerror=alert(1)><script>alert(2)</script>'
    m = _model(
        [helper.make_node("Relu", ["x"], ["y"], name=payload, doc_string=payload)],
        [_f("x", [1])],
        [_f("y", [1])],
        producer_name=payload,
        doc_string=f"[link](javascript:alert(3)) {payload}",
    )
    helper.set_model_props(m, {payload: payload})
    yield "xss.onnx", _bytes(m)


def corpus() -> list[tuple[str, str, bytes]]:
    """(class, file name, bytes) for every hostile file."""
    return [(cls, name, data) for cls, make in CLASSES.items() for name, data in make()]


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile-corpus")
    out.mkdir(parents=True, exist_ok=True)
    files = corpus()
    for cls, name, data in files:
        (out / cls).mkdir(exist_ok=True)
        (out / cls / name).write_bytes(data)
    print(f"{len(CLASSES)} classes, {len(files)} files in {out}")
