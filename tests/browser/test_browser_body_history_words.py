"""Edits inside a body say which body, in the server's change lines and in History's op words
(QA20 F12: 'initializer set…' named no graph, 'graph n2/body/n8/then_branch' was positional, and
an add_node sent without outputs read "Add Softmax … writing")."""

from __future__ import annotations

from .browser_models import if_model
from .browser_pages import open_model, upload


def test_body_edits_say_which_body(page, server):
    mid = upload(page, server, if_model(), "if.onnx")["id"]
    ops = [
        {"op": "add_initializer", "graph": "n1/then_branch", "name": "two", "value": {"values": 2.0, "dtype": "FLOAT"}},
        {
            "op": "set_initializer",
            "graph": "@branch/then_branch",
            "name": "one",
            "value": {"values": [[1, 1, 1], [1, 1, 1]], "dtype": "FLOAT", "shape": [2, 3]},
        },
        {"op": "add_node", "graph": "n1/else_branch", "op_type": "Sigmoid", "inputs": ["x"]},
    ]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": ops})
    assert r.status == 200, r.text()
    changes = r.json()["changes"]
    assert changes[0].startswith("added initializer 'two' in branch/then_branch")
    assert changes[1].startswith("initializer 'one' in branch/then_branch set to FLOAT [2, 3]")
    assert " in branch/else_branch, reading 'x'" in changes[2]  # was "in graph n1/else_branch"

    open_model(page, server, mid, "")
    page.locator("#btn-history").click()
    item = page.locator("#history-list > li[data-revision='1'] .hist-op")
    item.first.wait_for()
    words = [t.strip() for t in item.locator(":scope > div:first-child").all_text_contents()]
    # the ops as recorded name the If by its name, whichever form was sent
    assert words[0] == 'Add initializer "two" (FLOAT scalar typed values) in branch/then_branch', words
    assert words[1].endswith(" in branch/then_branch"), words
    assert words[2] == "Add Sigmoid in branch/else_branch", words
