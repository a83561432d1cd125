"""The page's text for numbers, types and attribute values, written in Python exactly as the
page writes them (lib/format.js, panels/attribute-view.js): Find matches what a person reads,
and the words of a diff or an edit's message quote values as the page shows them. No Flask.
"""

from __future__ import annotations

import json
import math
import re
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import onnx

from ..onnx_io.dtype_attributes import dtype_attribute_name
from .values import attribute_json

GRAPH_TYPES = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def js_number(x: float | int) -> str:
    """A number as JavaScript's String(x) writes it: 100, 0.1, 1e-7, 1.5e+22, NaN, Infinity."""
    if isinstance(x, int):
        return str(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(x))).normalize().as_tuple()  # shortest round-trip digits
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = int(exponent) + k  # x = 0.<digits> × 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    body = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{body}e{'+' if e >= 0 else '-'}{abs(e)}"


def format_float32(v) -> str:
    """lib/format.js formatFloat32: the shortest decimal that reads back as the same float32."""
    if isinstance(v, str) or not math.isfinite(v):
        return v if isinstance(v, str) else js_number(v)
    target = np.float32(v)
    if float(target) != v:
        return js_number(v)
    with np.errstate(over="ignore"):  # 3.5e+38 is beyond float32: inf, not a match
        for p in range(1, 10):
            s = float(_significant(v, p))
            if np.float32(s) == target:
                return js_number(s)
    return js_number(v)


def format_number(v) -> str:
    """lib/format.js formatNumber: ints as they are, other numbers to 6 significant digits."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, int):
        return str(v)
    if v.is_integer():
        return js_number(v)
    a = abs(v)
    if a != 0 and (a < 1e-4 or a >= 1e6):  # toExponential(4), trailing zeros dropped
        _, digit_tuple, exponent = _significant(v, 5).as_tuple()
        digits = "".join(map(str, digit_tuple))
        e = int(exponent) + len(digits) - 1  # 9999999.9 rounds up to 1e+7
        digits = digits.rstrip("0")
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{'-' if v < 0 else ''}{body}e{'+' if e >= 0 else '-'}{abs(e)}"
    return js_number(float(_significant(v, 6)))


def _significant(v: float, p: int) -> Decimal:
    """v rounded to p significant digits as JavaScript's toPrecision does (ties away from zero)."""
    d = Decimal(v)
    return d.quantize(Decimal(1).scaleb(d.adjusted() - p + 1), rounding=ROUND_HALF_UP)


def format_tensor(dtype, shape) -> str:
    """lib/format.js formatTensor: "FLOAT ⟨1×3×224×224⟩", "INT64 scalar"."""
    if shape is None:
        dims = ""
    elif not shape:
        dims = "scalar"
    else:
        dims = "⟨" + "×".join(dim_word(d, len(shape) > 1) for d in shape) + "⟩"
    return " ".join(x for x in (dtype or "", dims) if x)


_OPERATOR = re.compile(r"[\s+*/]")


# onnx's inference names a size it can't tell unk__N: no name of the model's (lib/format.js INVENTED_DIM)
_INVENTED_DIM = re.compile(r"unk__\d+$")


def dim_word(d, among: bool) -> str:
    """lib/format.js dimWord: a size, a name, "?" for neither or one inference invented; an expression of other dims
    bracketed among others, "batch×(past_sequence + sequence)"."""
    if d is None or d == "" or _INVENTED_DIM.match(str(d)):
        return "?"
    return f"({d})" if among and _OPERATOR.search(str(d)) else str(d)


def onnx_type(t) -> str:
    """lib/format.js onnxType: tensor(float)[N,3], seq(...), map(int64, ...), optional(...)."""
    if not t:
        return "?"
    kind = t.get("kind")

    def dims(shape):
        return "" if shape is None else "[" + ",".join("?" if d is None or d == "" else str(d) for d in shape) + "]"

    def word(d):
        return str(d).lower() if d else "?"

    if kind in ("tensor", "sparse_tensor"):
        return f"{kind}({word(t.get('dtype'))}){dims(t.get('shape'))}"
    if kind == "sequence":
        return f"seq({onnx_type(t.get('elem'))})"
    if kind == "optional":
        return f"optional({onnx_type(t.get('elem'))})"
    if kind == "map":
        return f"map({word(t.get('key'))}, {onnx_type(t.get('value'))})"
    if kind == "opaque":
        return f"opaque({'.'.join(x for x in (t.get('domain'), t.get('name')) if x)})"
    return "?"


def format_type(t) -> str:
    """lib/format.js formatType: plain tensors as "FLOAT ⟨batch×64⟩", everything else as onnx_type."""
    if not t or t.get("kind") in (None, "unknown"):
        return "unknown type"
    if t["kind"] == "tensor":
        return format_tensor(t.get("dtype"), t.get("shape")) or "tensor"
    return onnx_type(t)


def _tensor_line(v: dict, sparse: bool) -> str:
    out = format_tensor(v.get("dtype"), v.get("shape"))
    if sparse:
        out = f"sparse {out}" + (f" · {format_number(v['nnz'])} non-zero" if v.get("nnz") is not None else "")
    if v.get("values") is not None:  # the few values of a small Constant, as its box shows them
        out += " [" + ", ".join(format_number(x) for x in v["values"]) + "]"
    if v.get("name"):
        out += f" · {v['name']}"
    return out


def attribute_text(attr: onnx.AttributeProto, domain: str = "", op_type: str = "") -> str | None:
    """An attribute's value as the node panel shows it (the editor's text for the editable types,
    the value view's for the others); None for subgraphs, which are found as graphs."""
    if attr.type in GRAPH_TYPES:
        return None
    if attr.ref_attr_name:
        return f"function attribute {attr.ref_attr_name}"
    j = attribute_json(attr, "")
    v, kind, cut = j["value"], j["type"], "truncated" in j
    if kind == "FLOAT":
        return format_float32(v)
    if kind == "INT":
        dtype = dtype_attribute_name(attr, domain, op_type)  # Cast's to = 7: also "INT64"
        return f"{v} ({dtype})" if dtype else str(v)
    if kind == "STRING":
        return v
    if kind == "INTS":
        return "[" + ", ".join(str(x) for x in v) + "]"
    if kind == "FLOATS":
        return "[" + ", ".join((format_number if cut else format_float32)(x) for x in v) + "]"
    if kind == "STRINGS":
        if cut:
            return "[" + ", ".join(json.dumps(x, ensure_ascii=False) for x in v) + "]"
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    if kind in ("TENSOR", "SPARSE_TENSOR"):
        return _tensor_line(v, kind == "SPARSE_TENSOR")
    if kind in ("TENSORS", "SPARSE_TENSORS"):
        return "; ".join(_tensor_line(x, kind == "SPARSE_TENSORS") for x in v)
    if kind == "TYPE_PROTO":
        return onnx_type(v)
    if kind == "TYPE_PROTOS":
        return ", ".join(onnx_type(x) for x in v)
    return None
