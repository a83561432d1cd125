"""What a Loop's inputs and outputs are, on the page (QA20 F7, F10): the Loop's panel tags each
(trip count, condition, carried → its final value, scan output), the body's input and output
boxes say their role under their name, a body input's panel says what it carries from where to
where, and its shape is edited there."""

from __future__ import annotations

import onnx
from test_loop_roles import beam_loop_if  # tests/ is on sys.path

from .browser_pages import downloaded, open_model, upload, wait_revision


def dims(v: onnx.ValueInfoProto) -> list:
    return [d.dim_param or (d.dim_value if d.HasField("dim_value") else None) for d in v.type.tensor_type.shape.dim]


def test_the_loop_panel_and_its_body_say_what_is_carried_and_what_is_scanned(page, server, artifacts):
    model = upload(page, server, beam_loop_if(), "beam_loop_if.onnx")
    open_model(page, server, model["id"])
    page.click("#graph [data-node-id=n2]")
    panel = page.locator("#sidebar")
    rows = panel.locator(".tensor-row.has-role")
    assert [r.get_attribute("data-role") for r in rows.all()] == [
        "trip_count",
        "condition",
        "carried",
        "carried",
        "carried",
        "carried",
        "scan_output",
        "scan_output",
    ]
    h0 = panel.locator(".tensor-row.has-role", has=page.locator("[data-tensor=h0]"))
    assert h0.locator(".tag-role").text_content() == "carried"
    assert h0.locator(".io-role-text").text_content() == "→ final_hidden: the body's hidden_in on the first iteration"
    tokens = panel.locator(".tensor-row.has-role", has=page.locator("[data-tensor=tokens]"))
    assert (
        tokens.locator(".io-role").text_content().startswith("scan output stacked per iteration: the body's tok_scan")
    )
    h0.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "loop-roles-node-panel.png"))

    # the body: each input and output box says its role under its name
    open_model(page, server, model["id"], "#path=n2/body")
    box = page.locator('#graph [data-box="input:hidden_in"]')
    assert "carried ↔ hidden_out" in box.text_content()
    assert "iteration #" in page.locator('#graph [data-box="input:iter"]').text_content()
    assert "scan out → tokens" in page.locator('#graph [data-box="output:tok_scan"]').text_content()
    page.screenshot(path=str(artifacts / "loop-roles-body.png"))

    # a body input's panel: what it carries, and its shape to free
    box.click()
    assert panel.locator(".panel-kicker").text_content() == "Loop body input"
    assert (
        panel.locator("#value-role")
        .text_content()
        .endswith(
            "Carried: h0 on entry (the Loop's input 3), hidden_out after each iteration;"
            " the Loop's final_hidden (output 1) after the last."
        )
    )
    form = panel.locator("#io-edit form")
    assert [form.locator(f"input[name=dim-{i}]").input_value() for i in range(2)] == ["1", "16"]
    assert form.locator("select[name=dtype]").count() == 0  # a carried value keeps h0's FLOAT
    form.locator("input[name=dim-0]").fill("batch")
    page.screenshot(path=str(artifacts / "loop-roles-body-input.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    # the Loop's outputs' batch of 1 is now another size: what follows is re-inferred, and said
    toast = page.locator("#toast").text_content()
    assert (
        "'hidden_in' (carried input of while/body) is now FLOAT ⟨batch×16⟩; 1 output shape updated; the bodies' shapes re-inferred"
        in toast
    )
    stored = downloaded(page, server, model["id"])
    onnx.checker.check_model(stored, full_check=True)
    body = next(a.g for a in stored.graph.node[2].attribute if a.name == "body")
    assert dims(body.input[3]) == dims(body.output[2]) == ["batch", 16]  # hidden_in, and hidden_out after it
