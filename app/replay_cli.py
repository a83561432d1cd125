"""`onnx-studio apply MODEL.onnx RECIPE.json -o OUT.onnx`: replay a recipe (GET .../recipe) on a
model, headless, with the gates of the server's edits: each batch's result may not fail a check
its base passed (onnx.checker, strict shape inference, onnxruntime's smoke run)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import onnx

from .edits.recipe import replay
from .errors import StudioError
from .onnx_io import offload, parse_model
from .onnx_io.external import data_refs
from .onnx_io.limits import PROTOBUF_LIMIT
from .onnx_io.output_compare import CLOSE_TOLERANCE
from .onnx_io.runtime_check import check_model
from .onnx_io.save import EXTERNAL_THRESHOLD, external_bytes
from .onnx_io.sizes import size_text
from .replay_outputs import same_outputs


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


def _verdict(data: bytes, runtime: bool) -> dict:
    """What the server checks a base for before an edit: the checker and strict inference (in the
    helper process), and onnxruntime's smoke run."""
    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        f.write(data)
        f.flush()
        verdict = dict(offload.validate_file(f.name, offload.content_key(data)))
    verdict["runtime"] = check_model(parse_model(data)) if runtime else {"status": "skipped"}
    return verdict


def _say_batch(k: int, count: int, ops: list) -> None:
    """A long replay says where it is (a big model's batch takes a minute)."""
    print(f"batch {k + 1} of {count}: {len(ops)} op(s)…", file=sys.stderr, flush=True)


def _write(output: Path, result: bytes, outside: bool) -> str:
    """The result at `output`; a model that kept its weights outside keeps those over 1 KiB so, in
    one `<output>.data` beside it (the layout was lost: one .onnx of every weight, QA40 #1)."""
    if not outside:
        output.write_bytes(result)
        return str(output)
    location = f"{output.name}.data"
    (output.parent / location).unlink(missing_ok=True)  # save appends to an existing file
    onnx.save_model(
        onnx.load_from_string(result),
        str(output),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=location,
        size_threshold=EXTERNAL_THRESHOLD,
    )
    data = output.parent / location
    if not data.exists():  # no tensor as big as that
        return str(output)
    data.chmod(output.stat().st_mode & 0o777)  # onnx writes it 0600: readable as the .onnx is (QA42)
    return f"{output} (its weights in {location} beside it, as the model kept them outside)"


def apply_command(argv: list[str]) -> int:
    p = apply_parser()
    args = p.parse_args(argv)
    for path in (args.model, args.recipe):
        if not path.is_file():
            p.error(f"{path} is not a file")
    try:
        recipe = json.loads(args.recipe.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        p.error(f"{args.recipe} is not JSON: {exc}")
    try:
        shell = onnx.load(str(args.model), load_external_data=False)
    except Exception as exc:
        print(f"onnx-studio apply: {args.model} can't be read as an ONNX model: {exc}", file=sys.stderr)
        return 2
    outside = data_refs(shell)
    whole = args.model.stat().st_size + external_bytes(shell)
    if whole >= PROTOBUF_LIMIT:  # onnx's "Failed to serialize proto" said the file was unreadable (QA40 #1)
        print(
            f"onnx-studio apply: {args.model} with its external data is {size_text(whole)}, past the 2 GiB one"
            " protobuf holds, and apply edits a model in one: replay the recipe on a server instead (History ›"
            " Apply recipe…, or POST /api/models/<id>/recipe) and download the result with External data",
            file=sys.stderr,
        )
        return 2
    try:
        # external data inlined: the edits see every tensor, as the server's do
        data = onnx.load(str(args.model)).SerializeToString()
    except Exception as exc:
        print(f"onnx-studio apply: {args.model} can't be read as an ONNX model: {exc}", file=sys.stderr)
        return 2
    del shell
    if not 0 <= args.tolerance <= 1:
        p.error("--tolerance is a number from 0 to 1 (0.001: within 0.1 %)")
    runtime = not args.no_runtime
    try:
        results = replay(
            data,
            recipe,
            lambda base: _verdict(base, runtime),
            check_runtime=check_model if runtime else None,
            allow_invalid=args.allow_invalid,
            progress=_say_batch,
        )
    except StudioError as exc:
        print(f"onnx-studio apply: {exc.message}", file=sys.stderr)
        for line in exc.details or []:
            print(f"  {line}", file=sys.stderr)
        return 1
    result = results[-1].data if results else data
    if args.same_outputs:
        try:
            outputs = same_outputs(args.model, data, result, _dims(p, args.dims), args.tolerance)
        except StudioError as exc:
            print(f"onnx-studio apply: the outputs could not be compared: {exc.message}", file=sys.stderr)
            return 1
        if outputs.problems:
            for problem in outputs.problems:
                print(f"onnx-studio apply: {problem}", file=sys.stderr)
            if not args.allow_invalid:
                print("onnx-studio apply: nothing written (--allow-invalid writes it anyway)", file=sys.stderr)
                return 1
    written = _write(args.output, result, bool(outside))
    changes = [c for r in results for c in r.changes]
    print(f"{len(results)} batch(es) applied, {len(changes)} change(s): {written}")
    for change in changes:
        print(f"  {change}")
    if args.same_outputs:
        print("outputs, against the model's:")
        for line in outputs.lines:
            print(f"  {line}")
    for r in results:
        for reason in r.invalid:
            print(f"  refused by a gate, written anyway (--allow-invalid): {reason}", file=sys.stderr)
    return 0
