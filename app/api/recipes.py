"""GET /api/models/<id>/recipe?from=REV&to=REV: the edits from one revision to another as a
recipe (edits/recipe.py) that `onnx-studio apply` replays on the next export of the model."""

from __future__ import annotations

import io

import orjson
from flask import request, send_file

from ..edits.recipe import make_recipe, recipe_parents, restored_from, revision_path
from . import bp
from .documents import revision_number, store
from .file_names import file_name
from .routes import read_uploaded_blob


@bp.get("/models/<model_id>/recipe")
def get_recipe(model_id):
    """?from= (default 0) an ancestor of ?to= (default the head); ?download=1 as a .recipe.json file."""
    s = store()
    record = s.model(model_id)
    start = revision_number(request.args.get("from"))
    end = revision_number(request.args.get("to"))
    start = 0 if start is None else start
    end = record.head if end is None else end
    revisions = {r.rev: r for r in s.revisions(model_id)}
    path = revision_path(recipe_parents({rev: (r.parent, r.ops) for rev, r in revisions.items()}), start, end)
    # restores replay as the edits they restored; attaching data files has no ops to replay
    batches = [(rev, r.ops) for rev in path if (r := revisions[rev]).ops and restored_from(r.ops) is None]
    recipe = make_recipe(record.name, start, end, batches, read_uploaded_blob)
    body = orjson.dumps(recipe, option=orjson.OPT_INDENT_2)
    stem = file_name(record.name).removesuffix(".onnx")
    return send_file(
        io.BytesIO(body),
        mimetype="application/json",
        as_attachment=bool(request.args.get("download")),
        download_name=f"{stem}.r{start}-r{end}.recipe.json",
    )
