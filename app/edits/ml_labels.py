"""A classifier's class labels renamed where its ZipMap still names the old ones: said in the
change line (QA21 F10: the run then gave labels 'cls_B' while the probabilities stayed keyed by
'setosa', …). The edit stands: renaming both is the person's next op."""

from __future__ import annotations

import onnx

from ..onnx_io.address import node_id
from ..words import some_names
from .locate import node_words

LABELS = ("classlabels_strings", "classlabels_int64s", "classlabels_ints")  # ZipMap's: the first two
# what sits between a classifier's probabilities and its ZipMap in converters' graphs
PASS_THROUGH = {"Normalizer", "Cast", "Identity"}


def _labels(node: onnx.NodeProto) -> list:
    for a in node.attribute:
        if a.name == "classlabels_strings":
            return [s.decode("utf-8", "replace") for s in a.strings]
        if a.name in ("classlabels_int64s", "classlabels_ints"):
            return list(a.ints)
    return []


def zipmap_words(container, path: str, node: onnx.NodeProto, name: str) -> str:
    """ "; ZipMap n4 still names them 'setosa', 'versicolor', 'virginica' (its classlabels_strings):
    set them too" when `node`'s labels, just set, are not the ones a ZipMap reading its
    probabilities names; else ""."""
    if name not in LABELS or node.domain != "ai.onnx.ml" or len(node.output) < 2:
        return ""
    mine = _labels(node)
    reached = {node.output[1]}
    for i, other in enumerate(container.node):  # in graph order: what reads the probabilities, then its readers
        if not reached.intersection(other.input):
            continue
        if other.op_type in PASS_THROUGH:
            reached.update(o for o in other.output if o)
        elif other.op_type == "ZipMap" and other.domain == "ai.onnx.ml":
            theirs = _labels(other)
            if theirs and theirs != mine:
                attr = next(a.name for a in other.attribute if a.name in LABELS)
                shown = some_names([str(x) for x in theirs])
                return f"; {node_words(other, node_id(path, i))} still names them {shown} (its {attr}): set them too"
    return ""
