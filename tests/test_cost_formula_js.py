"""The page's cost totals (app/static/js/lib/cost-formula.js): a change between two formulas
in the input sizes is their difference term by term, cancelling terms dropped."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

MODULE = Path(__file__).resolve().parents[1] / "app" / "static" / "js" / "lib" / "cost-formula.js"


def run_js(body: str):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = f'import * as f from "{MODULE.as_uri()}";\nconsole.log(JSON.stringify({body}));\n'
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def term(c, **symbols):
    return {"coefficient": c, "symbols": symbols}


def test_formula_changes():
    a = [term(37300, batch=1, seq=2), term(1000, batch=1, seq=1), term(12)]
    b = [term(37300, seq=2, batch=1), term(1500, batch=1, seq=1), term(4)]  # symbols in another order
    fa, fb = (json.dumps({"formula": x}) for x in (a, b))
    out = run_js(
        f"[f.totalChange({fa}, {fb}, String), f.totalChange({fb}, {fa}, String), f.totalChange({fa}, {fa}, String),"
        f" f.totalChange({{value: 100}}, {{value: 150}}, String), f.totalChange({fa}, {{value: 3}}, String),"
        f" f.totalChange({{value: 4}}, {{value: 73900}}, String), f.totalChange({{value: 4}}, {{value: 40}}, String),"
        f" f.formulaDifference({json.dumps(a)}, {json.dumps(b)})]"
    )
    assert out[0] == "+500·batch·seq − 8"
    assert out[1] == "−500·batch·seq + 8"
    assert out[2] == "same"
    assert out[3] == "+50 (+50.0 %)"
    assert out[4] == "?"  # a count and a formula: not comparable
    # past tenfold a factor, not "(+1847400.0 %)" (which wrapped inside its column)
    assert out[5] == "+73896 (×18.5 K)"
    assert out[6] == "+36 (+900.0 %)"
    assert out[7] == [term(500, batch=1, seq=1), term(-8)]


def test_totals_wait_for_sizes():
    stats = {
        "totals": {"flops": 0, "activation_bytes": 0, "params": 32, "peak_activation_bytes": None},
        "input_dims": ["batch"],
        "dims": {},
        "unknown": {"flops_nodes": 2, "output_nodes": 2},
        "formula": {"flops": [term(72, batch=1)], "unknown_nodes": 0},
    }
    sized = {**stats, "dims": {"batch": 2}, "totals": {**stats["totals"], "flops": 144}, "unknown": {}}
    out = run_js(
        f"[{json.dumps(stats)}, {json.dumps(sized)}].flatMap((s) =>"
        ' ["flops", "activation_bytes", "params", "peak_activation_bytes"].map((k) => f.totalText(f.totalOf(s, k), String)))'
    )
    # FLOPs a formula, activations unknown (no formula), never 0 while batch has no size
    assert out[:4] == ["72·batch", "?", "32", "?"]
    assert out[4:] == ["144", "0", "32", "?"]


def test_a_symbol_that_is_an_expression_is_bracketed_in_a_product():
    """A size no input's dims make up (a dim named "total - 1" with no "total" elsewhere) stays a
    symbol of its own; among others it reads as one: "4·batch·(total - 1)"."""
    out = run_js(f"f.formulaText({json.dumps([term(4, batch=1, **{'total - 1': 1}), term(2, seq=2)])}, String)")
    assert out == "4·batch·(total - 1) + 2·seq²"


def test_an_input_dim_inference_named_is_written_as_its_size_field_names_it():
    """QA43 #4: a tf2onnx input's batch is unk__312; the formula read "12 B·height·?·width"
    where the size fields above it ask for unk__312."""
    out = run_js(f"f.formulaText({json.dumps([term(12, height=1, unk__312=1, width=1)])}, String)")
    assert out == "12·height·unk__312·width"


def test_a_dim_named_b_beside_the_byte_unit_spells_the_unit_out():
    """32 B·B·L·S reads as B²; with a dim named B the unit is "bytes", with none it stays B."""
    fmt = (MODULE.parent / "format.js").as_uri()
    terms = json.dumps([term(32, B=1, L=1, S=1), term(256, B=1, L=1)])
    other = json.dumps([term(32, batch=1, seq=1)])
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = (
        f'import * as f from "{MODULE.as_uri()}";\nimport {{ formatBytes }} from "{fmt}";\n'
        f"console.log(JSON.stringify([f.formulaText({terms}, formatBytes), f.formulaText({other}, formatBytes),"
        f" f.formulaText({terms})]));\n"
    )
    out = json.loads(
        subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True).stdout
    )
    assert out == ["32 bytes·B·L·S + 256 bytes·B·L", "32 B·batch·seq", "32·B·L·S + 256·B·L"]
