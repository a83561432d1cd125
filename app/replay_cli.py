"""`onnx-studio apply MODEL.onnx RECIPE.json -o OUT.onnx`: replay a recipe (GET .../recipe) on a
model, headless, with the gates of the server's edits: each batch's result may not fail a check
its base passed (onnx.checker, strict shape inference, onnxruntime's smoke run)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from . import create_app
from .api.documents import external_reader
from .cli import external_files
from .edits.recipe import recipe_parts, replay
from .errors import StudioError
from .onnx_io import offload, parse_model
from .onnx_io.external import missing_data, normalize_location
from .onnx_io.output_compare import CLOSE_TOLERANCE
from .replay_outputs import same_outputs
from .replay_store import StoredModel


def apply_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="onnx-studio apply",
        description="Replay a recipe (the edits between two revisions, from the history's Download recipe or "
        "GET /api/models/<id>/recipe) on a model: the next export of the same model, say.",
    )
    p.add_argument("model", type=Path, help="the .onnx file to edit (external data is read from its folder)")
    p.add_argument("recipe", type=Path, help="the .recipe.json file")
    p.add_argument("-o", "--output", type=Path, required=True, help="where to write the edited model")
    p.add_argument("--allow-invalid", action="store_true", help="write the result even when a gate refuses it (listed)")
    p.add_argument("--no-runtime", action="store_true", help="skip the onnxruntime gate (a smoke run per batch)")
    p.add_argument(
        "--same-outputs",
        action="store_true",
        help="refuse a result whose outputs differ from the model's (beyond --tolerance) on the test data sets "
        "beside the model (test_data_set_N/), else on seeded random inputs",
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=CLOSE_TOLERANCE,
        help="with --same-outputs: how close is the same, a fraction of each value plus of the output's largest "
        "magnitude (default 0.001: within 0.1 %%)",
    )
    p.add_argument("--dims", default="", help="with --same-outputs: sizes of symbolic dims, NAME=N,NAME=N (default 1)")
    return p


def _dims(p: argparse.ArgumentParser, text: str) -> dict[str, int]:
    dims = {}
    for part in filter(None, (x.strip() for x in text.split(","))):
        name, _, size = part.partition("=")
        if not name or not size.isdigit():  # 0 too: a decoder's first step has no past
            p.error(f"--dims: {part!r} is not NAME=N with N ≥ 0")
        dims[name.strip()] = int(size)
    return dims


def _verdict(data: bytes, stored: StoredModel, runtime: bool) -> dict:
    """What the server checks a base for before an edit: the checker and strict inference (in the
    helper process, on the graph: its weights are the store's), and onnxruntime's smoke run."""
    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        f.write(data)
        f.flush()
        verdict = dict(offload.validate_file(f.name, offload.content_key(data)))
    verdict["runtime"] = stored.check_runtime(parse_model(data)) if runtime else {"status": "skipped"}
    return verdict


def _say_batch(k: int, count: int, ops: list) -> None:
    """A long replay says where it is (a big model's batch takes a minute)."""
    print(f"batch {k + 1} of {count}: {len(ops)} op(s)…", file=sys.stderr, flush=True)


def _missing_said(model: Path, missing: list[dict]) -> str:
    """What external data the model lacks, in a file's words (external.missing_data says it in
    an upload's)."""
    first = missing[0]
    names = ", ".join(first["names"][:3]) + (f" and {first['tensors'] - 3} more" if first["tensors"] > 3 else "")
    where = model.resolve().parent
    location = first["location"]
    held = (where / location).is_file() if normalize_location(location) else False
    why = "which holds fewer bytes than they need" if held else f"which is no file in {where}"
    return f"the data of {names} is in {location!r}, {why}"


def _failed(exc: StudioError, what: str = "") -> int:
    print(f"onnx-studio apply: {what}{exc.message}", file=sys.stderr)
    for line in exc.details or []:
        print(f"  {line}", file=sys.stderr)
    return 1


def apply_command(argv: list[str]) -> int:
    p = apply_parser()
    args = p.parse_args(argv)
    for path in (args.model, args.recipe):
        if not path.is_file():
            p.error(f"{path} is not a file")
    if not args.output.resolve().parent.is_dir():
        p.error(f"{args.output.parent} is not a folder")
    try:
        recipe = json.loads(args.recipe.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        p.error(f"{args.recipe} is not JSON: {exc}")
    if not 0 <= args.tolerance <= 1:
        p.error("--tolerance is a number from 0 to 1 (0.001: within 0.1 %)")
    dims = _dims(p, args.dims)
    try:
        recipe_parts(recipe)  # a malformed recipe said before the model is read
    except StudioError as exc:
        return _failed(exc)
    # the store's blobs hold the model's weights a while: on the output's disk, not in a /tmp
    # that may be memory
    with tempfile.TemporaryDirectory(prefix=".onnx-studio-apply-", dir=args.output.resolve().parent) as folder:
        app = create_app({"DATA_DIR": folder})
        try:
            with app.app_context():
                return _apply(args, recipe, dims)
        finally:
            offload.stop()


def _apply(args: argparse.Namespace, recipe: dict, dims: dict[str, int]) -> int:
    try:
        stored = StoredModel.put(args.model, lambda graph: external_files(args.model, graph, warn=False))
    except StudioError as exc:
        print(f"onnx-studio apply: {exc.message}", file=sys.stderr)  # it names the file already
        return 2
    missing = missing_data(parse_model(stored.graph), external_reader(stored.revision))
    if missing:
        print(
            f"onnx-studio apply: {args.model} can't be replayed: {_missing_said(args.model, missing)}", file=sys.stderr
        )
        return 2
    outside = bool(stored.revision.external)
    before = stored.runnable() if args.same_outputs else None
    runtime = not args.no_runtime
    try:
        results = replay(
            stored.graph,
            recipe,
            lambda base: _verdict(base, stored, runtime),
            check_runtime=stored.check_runtime if runtime else None,
            allow_invalid=args.allow_invalid,
            progress=_say_batch,
            weights=stored,
        )
    except StudioError as exc:
        return _failed(exc)
    if before is not None:
        try:
            outputs = same_outputs(args.model, before, stored.runnable(), dims, args.tolerance)
        except StudioError as exc:
            return _failed(exc, "the outputs could not be compared: ")
        if outputs.problems:
            for problem in outputs.problems:
                print(f"onnx-studio apply: {problem}", file=sys.stderr)
            if not args.allow_invalid:
                # a result whose outputs aren't the model's (a cut) is written by leaving the check out
                how = (
                    "without --same-outputs it is written"
                    if not outputs.comparable
                    else "--allow-invalid writes it anyway"
                )
                print(f"onnx-studio apply: nothing written ({how})", file=sys.stderr)
                return 1
    try:
        written = stored.write(args.output, outside)
    except StudioError as exc:
        return _failed(exc, f"{args.output} not written: ")
    changes = [c for r in results for c in r.changes]
    print(f"{len(results)} batch(es) applied, {len(changes)} change(s): {written}")
    for change in changes:
        print(f"  {change}")
    if before is not None and outputs.lines:
        print("outputs, against the model's:")
        for line in outputs.lines:
            print(f"  {line}")
    for r in results:
        for reason in r.invalid:
            print(f"  refused by a gate, written anyway (--allow-invalid): {reason}", file=sys.stderr)
    return 0
