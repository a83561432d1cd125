"""GET /api/models/<id>/readers?name=&path=[&revision=]: the nodes that read value `name` of the
graph at `path` — its own nodes and those of the bodies they hold that read it from around them
(onnx_io/scoped_readers.py) — each with its graph: {"name", "path", "readers": [{"node", "name",
"op_type", "graph"}]}. A weight of a merged decoder's main graph is read only inside its If's
branches; its panel names those nodes."""

from __future__ import annotations

from flask import jsonify, request

from ..errors import StudioError
from ..onnx_io.address import resolve_graph
from ..onnx_io.scoped_readers import reading_nodes
from ..onnx_io.text_fields import shown
from . import bp
from .documents import load, revision_number

MAX_READERS = 1000  # a value read more often is listed up to this many times ("truncated")


@bp.get("/models/<model_id>/readers")
def get_readers(model_id):
    name = request.args.get("name", "")
    if not name:
        raise StudioError("bad_request", "name the value whose readers are asked for (?name=)")
    _, _, model = load(model_id, revision_number(request.args.get("revision")))
    ref = resolve_graph(model, request.args.get("path", ""))
    if ref.is_function:
        raise StudioError("bad_path", "readers are listed for a graph, not a function body")
    found = reading_nodes(ref.container, ref.path, name)
    readers = [
        {
            "node": nid,
            "name": shown(n.name),
            "op_type": shown(n.op_type),
            "graph": nid.rsplit("/", 1)[0] if "/" in nid else "",
        }
        for nid, n in found[:MAX_READERS]
    ]
    return jsonify({"name": name, "path": ref.path, "readers": readers, "truncated": len(found) > MAX_READERS})
