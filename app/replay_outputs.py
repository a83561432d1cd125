"""`onnx-studio apply --same-outputs`: whether a replayed recipe left what the model computes as
it was. The model and the result run with onnxruntime (the server's worker, its limits) on the
same inputs — each test data set beside the model, else seeded random values — and each output
of the result is compared with the model's of its name (or renamed in place: a recipe may rename
them; one it removes or adds is said, not compared), and
with the test data's expected values when there are some."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from .edits.sources import npy_from_tensor_file
from .errors import StudioError
from .onnx_io.inference import input_dims
from .onnx_io.output_compare import compare_outputs, rows_words
from .onnx_io.runtime_check import RUN_WALL_SECONDS, at_words, check_model, run_model
from .onnx_io.test_data_sets import MAX_TENSOR_BYTES, by_graph_names, test_data_sets_beside
from .onnx_io.traverse import fed_inputs
from .replay_store import Runnable
from .views.io_pairs import paired


@dataclass
class OutputsCheck:
    lines: list[str] = field(default_factory=list)  # what was compared, one line each
    problems: list[str] = field(default_factory=list)  # what differs beyond the tolerance
    comparable: bool = True  # False: the result's inputs or outputs aren't the model's (nothing compared)


def _run(model: Runnable, folder: Path, inputs: dict, dims: dict) -> dict:
    folder.mkdir()
    path, files = model.write(folder)
    answer = run_model(path, folder, inputs, dims, None, model.size, RUN_WALL_SECONDS, files)
    if answer.get("status") != "ok":
        stage = "load" if answer.get("stage") == "load" else "run"
        raise StudioError("run_failed", f"onnxruntime can't {stage} it: {' '.join(str(answer.get('message')).split())}")
    return answer


def _running_sizes(model: Runnable, at: dict, failure: StudioError) -> dict:
    """Sizes the model runs at (the smoke run's, runtime_check), over the dims `at` made up; the
    failure at `at`, naming them and --dims, when there are none."""
    verdict = check_model(model.model, model.read)
    if verdict.get("status") != "ok" or not verdict.get("sizes"):
        raise StudioError(
            "run_failed",
            f"{failure.message} (at {at_words(at)}, sizes made up: give the model's with --dims NAME=N,...)",
        )
    return {**at, **verdict["sizes"]}


def _fixed_by_result(before: onnx.ModelProto, after: onnx.ModelProto) -> dict[str, int]:
    """{symbol: size} for each dim the model names that the result fixes (a recipe's Make static:
    feature_size 3000), the inputs paired by position as the comparison feeds them: random inputs
    made at 1 there were refused by the result (QA45 #4)."""

    def dims(graph: onnx.GraphProto) -> list[list[onnx.TensorShapeProto.Dimension]]:
        types = {vi.name: vi.type for vi in graph.input}
        return [list(types[n].tensor_type.shape.dim) if n in types else [] for n in fed_inputs(graph)]

    fixed: dict[str, int] = {}
    for mine, theirs in zip(dims(before.graph), dims(after.graph), strict=False):
        for d, e in zip(mine, theirs, strict=False):
            if d.HasField("dim_param") and e.HasField("dim_value") and e.dim_value > 0:
                fixed.setdefault(d.dim_param, e.dim_value)
    return fixed


def _sources(model_path: Path, before: onnx.ModelProto, folder: Path) -> list[tuple[str, dict, dict]]:
    """(what the inputs are, {input: {"npy": path}} or {} for seeded random ones, {output index:
    expected .npy path}) for each set of inputs to run on."""
    sets = test_data_sets_beside(model_path)
    if not sets:
        return [("seeded random inputs", {}, {})]
    inputs, outputs = fed_inputs(before.graph), [o.name for o in before.graph.output]
    out = []
    for name, files in sets.items():
        if files["problem"]:
            raise StudioError("bad_test_data", f"{name}: {files['problem']}")
        saved: dict[str, list[tuple[str, str]]] = {}
        for side, readers in (("input", files["inputs"]), ("output", files["outputs"])):
            saved[side] = []
            for k, reader in enumerate(readers):
                read = npy_from_tensor_file(reader.read_all(MAX_TENSOR_BYTES), f"{name}/{side}_{k}.pb")
                path = folder / f"{name}-{side}-{k}.npy"
                path.write_bytes(read.npy)
                saved[side].append((read.name, str(path)))
        if len(saved["input"]) != len(inputs) or len(saved["output"]) != len(outputs):
            raise StudioError("bad_test_data", f"{name}: its files don't match the model's inputs and outputs")
        fed = by_graph_names(saved["input"], inputs)
        expected = by_graph_names(saved["output"], outputs)
        out.append((name, {n: {"npy": p} for n, p in fed.items()}, {outputs.index(n): p for n, p in expected.items()}))
    return out


def _two_shapes(c: dict) -> bool:
    """compare_outputs found two tensors (or sequences) of different shapes (lengths)."""
    shape = c.get("shape") or []
    return c["max_abs"] is None and len(shape) == 2 and all(isinstance(x, list) for x in shape)


def _shape(dims: list[int]) -> str:
    return "⟨" + "×".join(str(d) for d in dims) + "⟩"


def _percent(fraction: float | None) -> str:
    return "?" if fraction is None else f"{100 * fraction:.2g} %"


def same_outputs(model_path: Path, before: Runnable, after: Runnable, dims: dict, tolerance: float) -> OutputsCheck:
    check = OutputsCheck()
    model_before, model_after = before.model, after.model
    names_before = [o.name for o in model_before.graph.output]
    inputs_after = fed_inputs(model_after.graph)
    # outputs by name, or renamed in place: a recipe removing a debugging output compares the rest
    pairs = paired(model_before.graph, model_after.graph, "output")
    inputs_before = fed_inputs(model_before.graph)
    if len(inputs_before) != len(inputs_after):
        check.problems.append(
            f"the result takes {len(inputs_after)} input(s), the model {len(inputs_before)}: the same inputs"
            " can't feed both, so their outputs can't be compared"
        )
        check.comparable = False
        return check
    if not pairs:  # QA45 #5: "none of them the model's" read as blaming the inputs, renamed only
        made_names = ", ".join(o.name for o in model_after.graph.output)
        check.problems.append(
            f"none of the result's outputs ({made_names}) is one of the model's ({', '.join(names_before)}) or one"
            " renamed in its place: the recipe makes other outputs (a cut, say), which --same-outputs can't compare"
        )
        check.comparable = False
        return check
    kept = {b for b, _ in pairs}
    made = {a for _, a in pairs}
    check.lines += [f"{b}: removed by the recipe, not compared" for b in names_before if b not in kept]
    check.lines += [
        f"{o.name}: added by the recipe, not compared" for o in model_after.graph.output if o.name not in made
    ]
    with tempfile.TemporaryDirectory(prefix="same-outputs-") as tmp:
        folder = Path(tmp)
        # random inputs take a symbolic dim not given at 1 (--dims' default); a test data set's are its own
        symbols = input_dims(model_before)
        ones = dict.fromkeys(symbols, 1)
        # sizes only for the model's own symbols: a size it fixes can't be given (a recipe making
        # its batch dynamic is compared at the batch the model takes, its values fed to the result)
        fixed = sorted(set(dims) - set(symbols))
        if fixed:
            check.lines.append(
                f"--dims {', '.join(fixed)}: the model has no such dim (it fixes those sizes), so compared at its own"
            )
        dims = {k: v for k, v in dims.items() if k in symbols}
        # the sizes the recipe fixes the model's dims at: the only ones the result takes
        set_by_recipe = {
            k: v for k, v in _fixed_by_result(model_before, model_after).items() if k in symbols and k not in dims
        }
        if set_by_recipe:
            check.lines.append(f"compared with {at_words(set_by_recipe)}: the sizes the recipe fixes")
        for i, (what, fed, expected) in enumerate(_sources(model_path, model_before, folder)):
            at = dims if fed else {**ones, **set_by_recipe, **dims}
            try:
                first = _run(before, folder / f"before-{i}", fed, at)
            except StudioError as exc:
                if fed or set(symbols) <= set(dims) | set(set_by_recipe):
                    raise
                # sizes made up: the smoke run's, where the model runs (a speech model takes no
                # single sample, a UNet no 1×1 image)
                at = {**_running_sizes(before, at, exc), **set_by_recipe, **dims}
                first = _run(before, folder / f"before-{i}-again", fed, at)
                check.lines.append(f"compared with {at_words(at)}: the sizes the model runs at (--dims gives others)")
            # the very values the model was fed, to the result's inputs at the same positions
            same = {
                n: {"npy": first["inputs"][m]}
                for n, m in zip(inputs_after, fed_inputs(model_before.graph), strict=True)
            }
            second = _run(after, folder / f"after-{i}", same, at)
            for b, a in pairs:
                k = names_before.index(b)
                c = compare_outputs(second["outputs"][a], first["outputs"][b], tolerance=tolerance)
                shown = a if a == b else f"{a} (was {b})"
                far = _percent(c["max_rel_to_range"])
                if c["close"]:
                    check.lines.append(f"{shown}: as the model's on {what} (within {far} of range)")
                elif c.get("rows"):  # detections reordered: their indices say nothing as magnitudes
                    check.problems.append(f"{shown} against the model's on {what}: {rows_words(c['rows'])}")
                elif _two_shapes(c):  # no value to put against another: "? of its range off" said nothing
                    mine, theirs = (_shape(x) for x in c["shape"])
                    check.problems.append(f"{shown} is {mine} on {what}, the model's {theirs}: its shape changed")
                else:
                    check.problems.append(
                        f"{shown} is {far} of its range off the model's on {what} (tolerance {_percent(tolerance)})"
                    )
                if k in expected:  # the test data's values: a fault of the recipe only where the model gave them
                    was = compare_outputs(first["outputs"][b], expected[k], tolerance=tolerance)
                    now = compare_outputs(second["outputs"][a], expected[k], tolerance=tolerance)
                    if was["close"] and not now["close"]:
                        off = _percent(now["max_rel_to_range"])
                        check.problems.append(
                            f"{shown} is {off} of its range off {what}'s expected values, which the model gives"
                        )
                    elif not was["close"]:
                        off = _percent(was["max_rel_to_range"])
                        check.lines.append(f"{b}: the model itself is {off} of its range off {what}'s expected values")
    return check
