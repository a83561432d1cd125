"""The values the spec allows each closed-set string attribute of a standard operator (Resize's
mode, a conv's auto_pad, an RNN's direction), over every opset: a value valid in another
version is left to onnxruntime's run, which knows the model's. One table: the edit's quick
check (edits/attribute_rules.py) refuses others before anything runs, and the node panel
offers them as a choice (views/schema.py) instead of a free text field (QA23: "bilinear" for a
Resize was caught only by the onnxruntime gate, 1.9 s later)."""

from __future__ import annotations

PADDED = (  # the convs and pools that pad
    "Conv",
    "ConvTranspose",
    "ConvInteger",
    "QLinearConv",
    "AveragePool",
    "MaxPool",
    "LpPool",
)

_CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    **{(op, "auto_pad"): ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID") for op in PADDED},
    ("Pad", "mode"): ("constant", "reflect", "edge", "wrap"),
    ("Resize", "mode"): ("nearest", "linear", "cubic"),
    ("Upsample", "mode"): ("nearest", "linear", "bilinear"),  # Upsample-1's bilinear
    ("Resize", "coordinate_transformation_mode"): (
        "half_pixel",
        "half_pixel_symmetric",
        "pytorch_half_pixel",
        "align_corners",
        "asymmetric",
        "tf_half_pixel_for_nn",
        "tf_crop_and_resize",
    ),
    ("Resize", "nearest_mode"): ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"),
    ("Resize", "keep_aspect_ratio_policy"): ("stretch", "not_larger", "not_smaller"),
    ("GridSample", "mode"): ("bilinear", "nearest", "bicubic", "linear", "cubic"),
    ("GridSample", "padding_mode"): ("zeros", "border", "reflection"),
    **{(op, "direction"): ("forward", "reverse", "bidirectional") for op in ("RNN", "GRU", "LSTM")},
    **{
        (op, "reduction"): ("none", "add", "mul", "max", "min")
        for op in ("ScatterElements", "ScatterND", "TensorScatter")
    },
    ("DepthToSpace", "mode"): ("DCR", "CRD"),
    ("RoiAlign", "mode"): ("avg", "max"),
    ("RoiAlign", "coordinate_transformation_mode"): ("half_pixel", "output_half_pixel"),
    ("Gelu", "approximate"): ("none", "tanh"),
    ("TfIdfVectorizer", "mode"): ("TF", "IDF", "TFIDF"),
    ("StringNormalizer", "case_change_action"): ("LOWER", "UPPER", "NONE"),
}


def attribute_choices(op_type: str, domain: str, name: str) -> tuple[str, ...] | None:
    """The values attribute `name` of a standard `op_type` may take, or None (any)."""
    if domain not in ("", "ai.onnx"):
        return None
    return _CHOICES.get((op_type, name))
