"""An encoder's node panel: its lookup as one table (key → value, category → column, n-gram →
column) read off the parallel lists of its attributes, and a filter that finds one entry."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from .browser_pages import open_model, upload


def _encoders() -> onnx.ModelProto:
    """text → TfIdfVectorizer of unigrams and bigrams; a string column → LabelEncoder."""
    nodes = [
        helper.make_node(
            "TfIdfVectorizer", ["words"], ["counts"], name="tfidf", mode="TF", min_gram_length=1, max_gram_length=2,
            max_skip_count=0, ngram_counts=[0, 3], ngram_indexes=[0, 1, 2, 3, 4],
            pool_strings=["cat", "dog", "sat", "cat", "sat", "dog", "ran"],
        ),
        helper.make_node(
            "LabelEncoder", ["color"], ["code"], name="codes", domain="ai.onnx.ml",
            keys_strings=["red", "green", "blue"], values_int64s=[7, 8, 9], default_int64=-1,
        ),
    ]  # fmt: skip
    g = helper.make_graph(
        nodes,
        "encoders",
        [
            helper.make_tensor_value_info("words", TensorProto.STRING, ["n", 4]),
            helper.make_tensor_value_info("color", TensorProto.STRING, ["n"]),
        ],
        [
            helper.make_tensor_value_info("counts", TensorProto.FLOAT, ["n", 5]),
            helper.make_tensor_value_info("code", TensorProto.INT64, ["n"]),
        ],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    return helper.make_model(g, opset_imports=opsets, ir_version=8)


def _rows(page) -> list[list[str]]:
    rows = page.locator("#node-lookup tbody tr")
    return [rows.nth(i).locator("td").all_text_contents() for i in range(rows.count())]


def test_the_lookup_tables_ngrams_and_labels_and_finds_one(page, server, artifacts):
    summary = upload(page, server, _encoders(), "encoders.onnx")
    open_model(page, server, summary["id"], "#node=n0")
    page.locator("#node-lookup").wait_for()
    assert page.locator("#node-lookup thead th").all_text_contents() == ["n-gram", "column"]
    assert _rows(page) == [["cat", "0"], ["dog", "1"], ["sat", "2"], ["cat sat", "3"], ["dog ran", "4"]]
    page.fill("#node-lookup .lookup-filter", "sat")
    assert _rows(page) == [["sat", "2"], ["cat sat", "3"]]
    assert page.locator("#node-lookup .lookup-note").text_content() == "2 matches"
    page.screenshot(path=str(artifacts / "node-lookup.png"))
    open_model(page, server, summary["id"], "#node=n1")
    page.locator("#node-lookup").wait_for()
    assert page.locator("#node-lookup thead th").all_text_contents() == ["key", "value"]
    assert _rows(page) == [["red", "7"], ["green", "8"], ["blue", "9"]]
    assert page.locator("#node-lookup .lookup-note").text_content() == "3 entries"
