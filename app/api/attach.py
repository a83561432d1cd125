"""POST /api/models/<id>/data-files: attach the external data files a model's tensors name but
that were not uploaded with it (a .onnx picked without its .bin), as a new revision: the graph
and everything else as they were, so the edits made meanwhile are kept. Each file must be one a
tensor names and hold the bytes its tensors need; otherwise nothing is stored. A file renamed since the export
is attached to the location a form field `location` names."""

from __future__ import annotations

import posixpath

from flask import jsonify, request

from ..errors import StudioError
from ..onnx_io.external import ExternalFiles, normalize_location
from ..onnx_io.sizes import size_text
from ..words import plural
from . import bp
from .documents import load, missing_weights, store
from .file_names import uploaded_file_name
from .routes import head_revision, summary_of


@bp.post("/models/<model_id>/data-files")
def attach_data_files(model_id):
    raw_base = request.form.get("base", "")
    if not raw_base.isdigit():
        raise StudioError("missing_base", 'send "base": the revision number the files are attached to')
    uploads = request.files.getlist("file")
    if not uploads:
        raise StudioError("missing_file", 'send the external data files as multipart form fields named "file"')
    base = int(raw_base)
    revision = head_revision(model_id, base)
    _, _, model = load(model_id, base)
    # keyed as the store keys a model's files: the tensors' locations find them by it (one that
    # leaves the model's folder names no file it may have: never a key, never a zip member)
    lacking = missing_weights(revision, model)
    missing = {key: m for m in lacking if (key := normalize_location(m["location"]))}
    if lacking and not missing:
        raise StudioError(
            "outside_folder",
            f"the missing data is at {', '.join(repr(m['location']) for m in lacking)}, outside the model's folder: "
            "no file is attached there (a tensor's location must name a file beside the model)",
            422,
        )
    files = {}
    named = request.form.get("location")  # a file renamed since the export: the location it stands for
    if named is not None and len(uploads) != 1:
        raise StudioError("bad_request", '"location" names where one file goes: send one file with it')
    for upload in uploads:
        location = _missing_location(named or uploaded_file_name(upload), missing, revision.external)
        if location in files:
            raise StudioError("duplicate_file", f"{location!r} was sent twice")
        files[location] = upload.stream

    def describe(entries: dict) -> list[str]:
        """Each file's change line, once its bytes are stored: refused when it holds too few."""
        s = store()
        sized = ExternalFiles(entries, s.external_path, s.data_file_size)
        lines = []
        for location in entries:
            need = missing[location]
            size = sized.size(location) or 0
            end = need["file_bytes"]
            if size < end:
                raise StudioError(
                    "external_data_short",
                    f"{location!r} holds {size_text(size)}; the tensors that name it need {size_text(end)}: "
                    "is it the file exported with this model?",
                    422,
                )
            held = plural(need["tensors"], "tensor")
            lines.append(f"attached external data file {location!r} ({size_text(size)}: the data of {held})")
        return lines

    s = store()
    new_rev = s.attach_files(model_id, base, files, describe)
    changes = s.revision(model_id, new_rev).changes
    return jsonify({"revision": new_rev, "changes": changes, "summary": summary_of(model_id)}), 201


def _missing_location(name: str, missing: dict, present: dict) -> str:
    """The missing location an uploaded file answers to: by its path, else by its base name
    (a browser sends bare names) when just one missing location has it."""
    if name in missing:
        return name
    same = [loc for loc in missing if posixpath.basename(loc) == posixpath.basename(name)]
    if len(same) == 1:
        return same[0]
    if name in present:
        raise StudioError("already_attached", f"the model has {name!r} already", 422)
    if not missing:
        raise StudioError("nothing_missing", "every external data file this model's tensors name is here already", 422)
    raise StudioError(
        "unknown_data_file",
        f"no tensor of this model has its data in a missing file named {name!r}; "
        f"missing: {', '.join(repr(loc) for loc in missing)}",
        422,
    )
