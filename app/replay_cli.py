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
from .onnx_io.runtime_check import check_model


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
    return p


def _verdict(data: bytes, runtime: bool) -> dict:
    """What the server checks a base for before an edit: the checker and strict inference (in the
    helper process), and onnxruntime's smoke run."""
    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        f.write(data)
        f.flush()
        verdict = dict(offload.validate_file(f.name, offload.content_key(data)))
    verdict["runtime"] = check_model(parse_model(data)) if runtime else {"status": "skipped"}
    return verdict


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
        # external data inlined: the edits see every tensor, as the server's do
        data = onnx.load(str(args.model)).SerializeToString()
    except Exception as exc:
        print(f"onnx-studio apply: {args.model} can't be read as an ONNX model: {exc}", file=sys.stderr)
        return 2
    runtime = not args.no_runtime
    try:
        results = replay(
            data,
            recipe,
            lambda base: _verdict(base, runtime),
            check_runtime=check_model if runtime else None,
            allow_invalid=args.allow_invalid,
        )
    except StudioError as exc:
        print(f"onnx-studio apply: {exc.message}", file=sys.stderr)
        for line in exc.details or []:
            print(f"  {line}", file=sys.stderr)
        return 1
    args.output.write_bytes(results[-1].data if results else data)
    changes = [c for r in results for c in r.changes]
    print(f"{len(results)} batch(es) applied, {len(changes)} change(s): {args.output}")
    for change in changes:
        print(f"  {change}")
    for r in results:
        for reason in r.invalid:
            print(f"  refused by a gate, written anyway (--allow-invalid): {reason}", file=sys.stderr)
    return 0
