"""Costs on control-flow models in the page (QA pass 20): a Scan RNN over a symbolic length draws
its table (it stopped with a TypeError), a while loop's body reads "per iteration" and its count
is a field like a size, an If's skipped branch comes last and is marked, and the model panel
counts the nodes in subgraphs too."""

from __future__ import annotations

from test_costs_control_flow import if_heavy, rnn_scan, while_loop

from .browser_pages import open_model, upload


def open_costs(page, server, model, name):
    summary = upload(page, server, model, name)
    open_model(page, server, summary["id"])
    page.click("#btn-model")
    costs = page.locator("#costs[data-ready=true]")
    costs.wait_for()
    stats = page.request.get(f"{server}/api/models/{summary['id']}/stats").json()
    return costs, stats


def test_a_scan_rnn_over_a_symbolic_length_draws_its_costs_table(page, server, artifacts):
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    costs, stats = open_costs(page, server, rnn_scan(), "rnn_scan.onnx")
    rows = page.locator("#cost-table tbody tr")
    assert rows.count() == len(stats["nodes"]) and not errors, errors
    assert page.locator("#costs .cost-heat button[data-metric=flops]").is_visible()  # the colouring too
    # the body's Identity costs 0, and the Scan's row says what its body costs in the inputs' sizes
    assert rows.locator("xpath=self::*[@data-node='n0/body/n4'] /td[2]").text_content().strip() == "0"
    scan = page.locator("#cost-table tr[data-node=n0]")
    assert "holds 504·seq" in scan.locator("td").nth(1).text_content()  # 2·8·12 + 2·12·12 + 12 + 12 a step
    costs.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "costs-scan-rnn.png"))

    # as the server answered before (and a stored answer still may): that row's FLOPs null with
    # an empty formula — read as 0, the table drawn
    def old_answer(route):
        answer = route.fetch().json()
        for n in answer["nodes"]:
            if n["node"] == "n0/body/n4":
                n["flops"], n["flops_formula"] = None, []
        route.fulfill(json=answer)

    page.route("**/stats*", old_answer)
    page.reload()
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    assert rows.count() == len(stats["nodes"]) and not errors, errors
    assert rows.locator("xpath=self::*[@data-node='n0/body/n4'] /td[2]").text_content().strip() == "0"


def test_a_while_loops_costs_say_per_iteration_and_take_its_count(page, server, artifacts):
    costs, stats = open_costs(page, server, while_loop(), "while_loop.onnx")
    per_iteration = 32 + 4 + 4 + 1
    text = costs.text_content()
    # the Relu after the Loop reads its stacked outputs: of a size unknown till the count is given
    assert f"{per_iteration} + 1 node unknown: Relu ×1 · a multiply-add counts 2" in text
    assert "in all: 45·while.iterations" in text  # the body and the Relu over its stacked outputs
    note = costs.locator(".cost-loops")
    assert "A lower bound: one iteration of Loop while is counted" in note.text_content()
    assert "max_len, or the body's condition" in note.text_content()
    body_row = page.locator('#cost-table tr[data-node="n0/body/n0"]')
    assert "per iteration" in body_row.locator("td").nth(1).text_content()
    loop_row = page.locator("#cost-table tr[data-node=n0]")
    assert f"holds {per_iteration} per iteration" in loop_row.locator("td").nth(1).text_content()
    # an unnamed body node is named with its graph
    assert (
        "#4 (unnamed) in while/body" in page.locator('#cost-table tr[data-node="n0/body/n4"] .cost-node').text_content()
    )
    costs.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "costs-while-loop.png"))

    # its count given: every iteration counted, the note gone, the rows over their runs
    page.fill('#costs input[name="while.iterations"]', "10")
    page.click("#costs form.cost-dims button[type=submit]")
    page.wait_for_function(
        "() => document.querySelector('#costs .flops-mac')?.parentElement.textContent.startsWith('450')"
    )
    assert costs.locator(".cost-loops").count() == 0
    assert "10 runs" in body_row.locator("td").nth(1).text_content()
    assert page.locator('#costs input[name="while.iterations"]').input_value() == "10"
    assert stats["loops"][0]["symbol"] == "while.iterations"

    # the Loop's own node panel says what its body holds, not only its own 0 (QA20 F18)
    page.locator("#graph g.box[data-node-id=n0]").click()
    held = page.locator("#node-costs .cost-inner").first
    held.wait_for()
    assert held.text_content().startswith("holds ")


def test_an_ifs_skipped_branch_comes_last_marked_and_the_model_counts_its_subgraphs(page, server, artifacts):
    _, stats = open_costs(page, server, if_heavy(), "if_heavy.onnx")
    marks = page.locator("#cost-table tbody tr").evaluate_all(
        "(rows) => rows.map((r) => [r.dataset.node, r.classList.contains('cost-skipped'), r.querySelector('.cost-skipped-note')?.textContent || ''])"
    )
    skipped = {n["node"] for n in stats["nodes"] if "branch_skipped" in n}
    assert skipped and {node for node, left, _ in marks if left} == skipped
    first_left = next(i for i, (_, left, _) in enumerate(marks) if left)
    assert all(left for _, left, _ in marks[first_left:])  # after every counted one
    assert {note for _, left, note in marks if left} == {"not counted: the other branch costs more"}
    # sorted the other way, still after the counted ones
    page.click("#cost-table th[data-key=flops] button")
    assert page.locator("#cost-table tbody tr").last.get_attribute("class") == "cost-skipped"
    assert page.locator("#cost-table tbody tr").first.get_attribute("class") is None
    # Contents: the main graph's 3 nodes and all of them
    contents = page.locator(".model-node-count")
    page.wait_for_function("() => document.querySelector('.model-node-count').textContent.includes('in its subgraphs')")
    assert contents.text_content() == f"3 nodes in the main graph, {len(stats['nodes']) - 3} more in its subgraphs"
    page.locator("#cost-table tr.cost-skipped").first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "costs-if-skipped-branch.png"))


def test_rows_of_nodes_both_branches_name_alike_say_their_branch(page, server):
    """QA31: a merged decoder's branches repeat every node name; two "…/self_attn/Softmax" rows
    told apart only by a note were one row too many to read. Each says its branch."""
    from merged_decoder import merged_decoder

    _, stats = open_costs(page, server, merged_decoder(), "decoder_model_merged.onnx")
    softmax = [n["node"] for n in stats["nodes"] if n["name"] == "/model/decoder/layers.0/self_attn/Softmax"]
    assert len(softmax) == 2 and {s.split("/")[1] for s in softmax} == {"then_branch", "else_branch"}, softmax
    page.click("#costs .cost-more")  # the first 50 rows hold one of them
    labels = {node: page.locator(f'#cost-table tr[data-node="{node}"] .cost-node').text_content() for node in softmax}
    assert {label.split(" in ")[-1] for label in labels.values()} == {
        stats["graphs"][node.rsplit("/", 1)[0]] for node in softmax
    }, labels
    # a name only one graph has stays as it is
    proj = next(n for n in stats["nodes"] if n["name"] == "/model/decoder/layers.0/encoder_attn/k_proj/MatMul")
    assert " in " not in page.locator(f'#cost-table tr[data-node="{proj["node"]}"] .cost-node').text_content()


def test_sized_the_note_gives_each_branchs_flops(page, server, artifacts):
    """QA32: the merged decoder's step with the cache, left out of the totals when its first
    step costs more, appeared nowhere; sized, the note says what each branch costs."""
    from merged_decoder import merged_decoder

    costs, _ = open_costs(page, server, merged_decoder(), "decoder_model_merged.onnx")
    sizes = {
        "batch_size": 1,
        "decoder_sequence_length": 1,
        "past_decoder_sequence_length": 4,
        "encoder_sequence_length": 6,
        "encoder_sequence_length_out": 6,
    }
    for name, size in sizes.items():
        page.fill(f'#costs input[name="{name}"]', str(size))
    page.click("#costs form.cost-dims button[type=submit]")
    line = page.locator("#costs .cost-branch-flops li")
    line.wait_for()
    costs.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "costs-branch-flops.png"))
    text = line.text_content()
    assert text.startswith("optimum::if: else_branch ") and "(counted), then_branch " in text, text
