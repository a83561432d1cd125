"""The JSON types edit-op fields share: names, element types, shapes, tensor values."""

from __future__ import annotations

import onnx

from .jsontypes import AnyJson, Array, Boolean, Enum, Integer, Null, Number, Object, OneOf, String, optional, required

MAX_RANK = 64

STRING = String()
BOOLEAN = Boolean()
NUMBER = Number()
NULL = Null()
# ONNX never names a value "" (an empty input name means "not given"), so value names can't be empty
NAME = String(min_length=1, label="a non-empty name")
NODE = String(min_length=1, label='a node id ("n3", "n3/body/n0") or a node name unique in the model')
GRAPH_PATH = String(label='a graph path ("" the main graph, "n3/body", "fn[0]", ...)')
# the main graph or a body held by a node at any depth, not a model function's (whose values
# are its callers' to type and name: edits.bodies.graph_at refuses one)
BODY_PATH = String(label='a graph path ("" the main graph, or a body: "n3/body", "n2/then_branch/n0/body")')
DTYPE = Enum(
    tuple(n for n, v in onnx.TensorProto.DataType.items() if v != onnx.TensorProto.UNDEFINED),
    label="a tensor element type name (FLOAT, INT64, FLOAT16, ...)",
)
# any dim a model has (PaddlePaddle writes -1 and "?"): set_io_shape keeps those as they are and
# checks only the dims it changes (non-negative, names like "batch")
DIM = OneOf((Integer(), String(min_length=1, label="a symbolic name"), NULL))
SHAPE = OneOf(
    (Array(DIM, max_items=MAX_RANK, label="an array of dims"), NULL),
    label="an array of dims (each a non-negative integer, a symbolic name or null for unknown), or null",
)

NPY_TENSOR = Object(
    (
        required("npy", String(min_length=1), "the digest POST /api/blobs answered for an uploaded .npy"),
        optional("dtype", DTYPE, "cast the array to this element type"),
    ),
    tag="npy",
)
JSON_TENSOR = Object(
    (
        required("dtype", DTYPE, "the element type"),
        optional(
            "shape",
            Array(Integer(minimum=0), label="an array of non-negative integers"),
            "the dims; [len(values)] by default ([] for one value)",
        ),
        required(
            "values",
            Array(AnyJson()) | NUMBER | STRING | BOOLEAN,
            'the values flat in row-major order, or one value (filling the shape); floats may be "NaN", "Infinity",'
            ' "-Infinity"',
        ),
    )
)
TENSOR_VALUE = OneOf(
    (NPY_TENSOR, JSON_TENSOR),
    label='a tensor: {"npy": blob digest} or {"dtype", "shape", "values"}',
)
ATTRIBUTE_VALUE = OneOf(
    (NUMBER, STRING, Array(AnyJson()), TENSOR_VALUE),
    label="a value of the attribute's type: a number (FLOAT, INT), a string (STRING), "
    "an array (FLOATS, INTS, STRINGS, TENSORS) or a tensor (TENSOR)",
)
