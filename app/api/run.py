"""POST /api/models/<id>/run: run a revision with onnxruntime (CPU) in a worker process, bounded
in time and memory, on uploaded or random inputs; any intermediate tensor can be asked for (added
as a graph output for that run only). With compare_to, the other revision runs on the very same
input values and each output common to both is compared; with compare_model, another stored
model does (its head, or its revision compare_to): an export quantized or converted elsewhere
against its float source, inputs and outputs paired by name (or renamed in place).

  {"revision"?, "inputs"?: {NAME: {"npy": BLOB} | {"random": {"seed": S}}}, "dims"?: {SYMBOL: N},
   "outputs"?: [TENSOR, ...], "compare_to"?: REV, "compare_model"?: ID, "locate"?: true,
   "expected"?: {OUTPUT: {"npy": BLOB}}}
  -> {"revision", "outputs": {NAME: preview (+ "top"?: its largest values, views/top_values.py)},
      "inputs": {NAME: preview (+ "random": {"seed", "role"?} for one the run made)}, "ms", "onnxruntime",
      "declared_mismatches"?: [{"output", "declared", "shape"}],
      "branches"?: [{"node", "name", "ran": "then_branch" | "else_branch", "value"?, "input"?, "negated"?, "inputs"?, "through"?}]
        (each If whose condition is known from the inputs fed or constants: if_conditions.py),
      "expected"?: {"close_tolerance", "outputs": {NAME: as compare's}, "padding"?: as compare's},
      "compare"?: {"revision", "model"?: {"id", "name"}, "ms", "outputs": {NAME: {"max_abs", "max_rel", "equal", "shape"}},
                   "renamed": {NAME: its name in the other revision},
                   "only_in": {"here": [OUTPUT], "there": [OUTPUT]} (an output one side lacks: not compared),
                   "padding"?: [{"input", "positions", "outputs", "max_abs", "nodes"?, "nodes_max_abs"?}],
                   "diverges"?: {"node", "name", "op_type", "tensor", "max_abs", ...} | null,
                   "nodes"?: [{"node", "name", "op_type", "tensor", "rel_error", "sqnr_db", ...}]}}
With "locate", both also run again saving every node output the two revisions share (apart from
the runs whose outputs are answered: saving a tensor keeps onnxruntime from fusing across it, which
moves the outputs' last digits): "diverges" names
the first node (in graph order) whose output differs beyond rounding — where an edit changed what
the model computes — and "nodes" how far each node's output is from the other revision's (its
output furthest off): the relative error ‖Δ‖/‖value‖ and the SQNR in dB, where a conversion
(float16, int8) loses precision along the graph. "expected" (a test data set's output_0.pb,
uploaded) compares outputs with the values they should have, as "compare" does. Fed an attention
mask with 0s (a batch padded to one length), "expected", "compare" and "locate" leave the values at its
padded positions out, and measure them apart ("padded", "padding": padded_positions.py): the
model masks them, what they hold means nothing.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import tempfile
from pathlib import Path

import numpy as np
import onnx
from flask import current_app, jsonify

from ..errors import StudioError
from ..onnx_io import saved_values
from ..onnx_io.address import node_id, subgraph_path
from ..onnx_io.causes import graph_words
from ..onnx_io.declared_shapes import declared_mismatches, fed_sizes
from ..onnx_io.dim_names import axis_dim
from ..onnx_io.external import TENSOR_PREFIX, ExternalFiles, missing_data, missing_words, normalize_location
from ..onnx_io.if_conditions import branches_ran
from ..onnx_io.inference import input_dims
from ..onnx_io.input_elements import random_element, tensor_element
from ..onnx_io.input_roles import input_roles
from ..onnx_io.limits import MAX_DIM_SIZE, RUN_OUTPUTS_KEPT_BYTES
from ..onnx_io.loop_counts import LOOP, loop_counts
from ..onnx_io.output_compare import CLOSE_TOLERANCE, compare_outputs
from ..onnx_io.padded_positions import Padding, left_out, padding_of
from ..onnx_io.quant_switches import dequantized
from ..onnx_io.runtime_check import RUN_WALL_SECONDS, describe, run_model
from ..onnx_io.taken_branches import Inlined, inline_taken
from ..onnx_io.traverse import attribute_tensors_of, fed_inputs, node_graphs, tensors, walk_graphs
from ..onnx_io.vocabularies import input_vocabularies
from ..views.io_pairs import paired
from ..views.node_pairs import tensor_mates
from ..views.tensors import array_preview
from ..views.top_values import top_values
from ..views.values import dtype_name
from ..words import quoted
from . import bp
from .documents import inferred, load, missing_weights, store
from .kernel_times import kernel_times
from .request_body import json_object
from .runtime import ran_at

RUN_TENSORS = "studio-tensors"  # the folder beside a run's model.onnx the store's tensors are linked into
INLINE_ATTRIBUTE_BYTES = 16 << 20  # an attribute's tensor up to this big is put back in the graph a run loads
MAX_PROBES = 5000  # intermediate tensors saved per run to find where two revisions part
PROFILE_RUNS = 3  # timed runs per node time (their median), after one to warm up


def integer(value, what: str, minimum: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise StudioError("bad_request", f"{what} must be an integer ≥ {minimum}")
    return value


MAX_RANDOM_ITEMS = 256  # tensors in a random sequence input
RANDOM_ITEMS = 2  # ... when the request doesn't say


def check_inputs(raw, model: onnx.ModelProto) -> dict:
    """{name: {"npy": local path} | {"values": JSON} | {"seed": S}} for the worker, every name a
    graph input; a sequence or optional input fed random values also gets its items' type,
    shape and count (`"element"`: onnxruntime knows only the sequence's element type), and a
    categorical one the values it can hold (`"vocabulary"`, vocabularies.py), and one a Loop's
    trip count or condition comes from the value that runs it (`"loop"`, loop_counts.py)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise StudioError("bad_request", '"inputs" must map input names to {"npy": BLOB} or {"random": {"seed": S}}')
    names = set(fed_inputs(model.graph))
    out: dict[str, dict] = {}
    for name, spec in raw.items():
        if name not in names:
            raise StudioError(
                "unknown_input", f"the model has no input {name!r} (its inputs: {', '.join(sorted(names))})"
            )
        if isinstance(spec, dict) and isinstance(spec.get("npy"), str):
            out[name] = {"npy": uploaded_npy(spec["npy"])}
        elif isinstance(spec, dict) and isinstance(spec.get("random"), dict):
            random = spec["random"]
            out[name] = {"seed": integer(random.get("seed", 0), f"the seed of input {name!r}")}
            if "count" in random:
                count = integer(random["count"], f"the count of input {name!r}")
                if count > MAX_RANDOM_ITEMS:
                    raise StudioError("bad_request", f"input {name!r}: at most {MAX_RANDOM_ITEMS} random items")
                out[name]["count"] = count
        elif isinstance(spec, dict) and "values" in spec and spec["values"] is None:
            _optional_input(model.graph, name)
            out[name] = {"values": None}  # an empty optional
        elif isinstance(spec, dict) and "values" in spec:
            out[name] = {"values": typed_values(spec["values"], name)}
        else:
            raise StudioError(
                "bad_request",
                f'input {name!r}: give {{"npy": BLOB}}, {{"values": [...]}} or {{"random": {{"seed": S}}}}',
            )
    for vi in model.graph.input:
        element = random_element(vi.type)
        if vi.name in names and element is not None and not {"npy", "values"} & set(out.get(vi.name, {})):
            spec = out.setdefault(vi.name, {"seed": 0})
            out[vi.name] = {**spec, "element": {**element, "count": spec.pop("count", RANDOM_ITEMS)}}
    for name, vocabulary in input_vocabularies(model.graph, sorted(names)).items():
        if not {"npy", "values"} & set(out.get(name, {})):  # random ones are drawn from it
            out.setdefault(name, {"seed": 0})["vocabulary"] = vocabulary
    for name, role in input_roles(model.graph, names).items():
        # made: a mask of ones, positions in order; given: a mask's length places the made positions
        out.setdefault(name, {"seed": 0})["role"] = role
    for name, value in loop_counts(model.graph, names).items():
        if not {"npy", "values"} & set(out.get(name, {})):  # a made-up 0 runs a Loop 0 times
            out.setdefault(name, {"seed": 0}).update(role=LOOP, loop=value)
    return out


def _optional_input(graph: onnx.GraphProto, name: str) -> None:
    """Refuse "values": null (an empty optional) for an input that is no optional."""
    vi = next((v for v in graph.input if v.name == name), None)
    if vi is None or vi.type.WhichOneof("value") != "optional_type":
        raise StudioError(
            "bad_request",
            f"input {name!r}: null is an empty optional, and {name!r} is no optional input; type its values",
        )


def _how_made(spec: dict, saved: str) -> dict:
    """How the run made an input it was not given: {"random": {"seed", "role"?, "from"?}} (a
    mask's ones, positions in order from "from": after the cached past, input_roles.py), or
    nothing for values given. `saved`: the value fed."""
    if "npy" in spec or "values" in spec:
        return {}
    made = {"seed": spec.get("seed", 0), **({"role": spec["role"]} if "role" in spec else {})}
    if made.get("role") == "positions":
        value = saved_values.load(saved)
        if isinstance(value, np.ndarray) and value.size:
            made["from"] = int(value.flat[0])
    return {"random": made}


MAX_TYPED_VALUES = 100_000  # numbers, strings and keys in one input's "values"


def typed_values(raw, name: str):
    """An input's values as the request typed them (JSON: a number, string or boolean, nested
    lists of them, an object for a map, a list of objects for a sequence of maps), checked to
    be no bigger than MAX_TYPED_VALUES; the worker makes them the input's type."""
    count, stack = 0, [raw]
    while stack:
        item = stack.pop()
        count += 1
        if count > MAX_TYPED_VALUES:
            raise StudioError(
                "bad_request", f"input {name!r}: at most {MAX_TYPED_VALUES:,} values typed in; upload an .npy"
            )
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif item is None or not isinstance(item, int | float | str | bool):
            raise StudioError("bad_request", f"input {name!r}: values are numbers, strings, booleans, lists and maps")
    return raw


def uploaded_npy(digest: str) -> str:
    """Where an uploaded .npy is, for the worker to read (a local file)."""
    blobs = store().blobs
    try:
        if not blobs.exists(digest):
            raise FileNotFoundError(digest)
        return str(blobs.path(digest))
    except (ValueError, FileNotFoundError):
        raise StudioError("unknown_blob", f"no uploaded .npy {digest!r}: POST /api/blobs first", 404) from None


def _expected(raw, shown: list[str]) -> dict[str, str]:
    """{output: the .npy it should equal}: each one of the outputs the run returns."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("npy"), str) for v in raw.values()
    ):
        raise StudioError("bad_request", '"expected" maps output names to {"npy": BLOB}')
    for name in raw:
        if name not in shown:
            raise StudioError(
                "unknown_output", f"{name!r} is not an output of this run (its outputs: {', '.join(shown)})"
            )
    return {name: uploaded_npy(spec["npy"]) for name, spec in raw.items()}


def check_dims(raw, model: onnx.ModelProto | None = None) -> dict:
    """The sizes a request gives its model's symbolic dims; with `model`, a name that is no dim
    of its fed inputs is refused (a misspelt "seq_len" was ignored, and the run then asked for
    the size it was meant to give)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise StudioError("bad_request", '"dims" must map symbolic dim names to sizes')
    # 0 is a size: a decoder's first step has no past (past_sequence = 0)
    dims = {str(k): integer(v, f"dim {quoted(str(k))}") for k, v in raw.items()}
    big = next((k for k, v in dims.items() if v > MAX_DIM_SIZE), None)
    if big is not None:
        raise StudioError("bad_dims", f"{quoted(big)}: {dims[big]:.3g} is too big a size (at most {MAX_DIM_SIZE:.0e})")
    if model is not None:
        known = _dim_names(model)
        unknown = [k for k in dims if k not in known]
        if unknown:
            asked = input_dims(model)
            raise StudioError(
                "unknown_dim",
                f"{', '.join(map(quoted, unknown[:5]))} {'is no dim' if len(unknown) == 1 else 'are no dims'} of this"
                f" model's inputs (its dims: {', '.join(asked) if asked else 'none without a size'})",
            )
    return dims


def _dim_names(model: onnx.ModelProto) -> set[str]:
    """Every name "dims" can give a size by: input_dims, and each dim's own text (an
    expression's too), of the fed inputs and of the tensors their sequences hold."""
    names = set(input_dims(model))
    fed = set(fed_inputs(model.graph))
    for v in model.graph.input:
        if v.name not in fed:
            continue
        for shape in (tensor_element(v.type), random_element(v.type)):
            for axis, d in enumerate((shape or {}).get("shape") or []):
                names.add(d if isinstance(d, str) else axis_dim(v.name, axis))
    return names


def _outputs(raw, model: onnx.ModelProto) -> list[str] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw) or not raw:
        raise StudioError("bad_request", '"outputs" must be a list of tensor names')
    values = {o for n in model.graph.node for o in n.output if o} | {i.name for i in model.graph.input}
    weights = {t.name for t in model.graph.initializer}
    for name in raw:
        if name in weights and name not in values:
            raise StudioError(
                "not_computed", f"{quoted(name)} is a weight, not computed by a run: its values are in its tensor panel"
            )
        if name not in values:
            raise StudioError("unknown_tensor", f"the main graph has no tensor {quoted(name)}{_in_a_body(model, name)}")
    return list(dict.fromkeys(raw))


def _in_a_body(model: onnx.ModelProto, name: str) -> str:
    """Where a value a run can't return lives, when a body computes it, and how to get it out: a
    Loop's or Scan's body computes it once per iteration ("Collect each iteration" stacks them
    into an output of the node), an If's branch only when it runs (QA20 F8: the message named
    the main graph only)."""
    for ref in walk_graphs(model):
        g = ref.container
        if not ref.path or not isinstance(g, onnx.GraphProto) or ref.path.startswith(("fn[", "train[")):
            continue
        if any(name in n.output for n in g.node):
            where = graph_words(model, ref.path)
            if ref.path.endswith(("then_branch", "else_branch")):
                return f"; it is a value of {where}, which runs only when its If picks it: make it the branch's output to get it"
            return (
                f"; it is a value of {where}, computed once per iteration: on its panel, Collect each iteration"
                " makes the Loop or Scan return them all, stacked (its name + _all), which a run can return"
            )
    return ""


def _runnable(
    revision, model: onnx.ModelProto, outputs: list[str] | None, folder: Path, untyped: bool = False
) -> tuple[Path, dict, int]:
    """The revision's graph as a .onnx in `folder` (the tensors asked for added as graph outputs),
    its weights the store's own files: hard-linked beside it (the run folder is on the blobs'
    file system: onnxruntime maps them, nothing is copied), or where a link can't be made (a
    file linked in place on another disk), handed to the worker by the location the graph names
    them with, to map into its memory. A 415 MB BERT was written out whole for every run, a model
    of 2 GiB or more can't be one file at all, and onnxruntime refuses data reached by a symlink."""
    graph = onnx.ModelProto()
    graph.CopyFrom(model)  # the graph only: the store keeps the weights outside it
    extra = [name for name in outputs or [] if name not in {o.name for o in model.graph.output}]
    if extra:
        typed = inferred(revision.blob, model)
        known = {vi.name: vi for vi in [*(typed or model).graph.value_info, *model.graph.input]}
        for name in extra:
            if name in known:
                graph.graph.output.append(known[name])
            elif untyped:  # a node's output in a branch moved into the graph: onnxruntime types it
                graph.graph.output.add().name = name
            else:
                raise StudioError(
                    "unknown_type", f"shape inference can't tell the type of {name!r}, so it can't be an output"
                )
    # outputs added change no tensor: the revision's own kept answer stands
    path, in_memory = write_runnable(graph, [revision], folder, missing_weights(revision, model))
    return path, in_memory, store().model_size(revision)


def write_runnable(
    graph: onnx.ModelProto, revisions: list, folder: Path, missing: list[dict] | None = None
) -> tuple[Path, dict]:
    """`graph` (its tensors the store's, or the external files of `revisions`) as folder/model.onnx
    for onnxruntime, and {location: file} of the files to hand the worker to map (_runnable).
    `missing`: what its tensors lack, where already known (a stored revision's, kept: the walk
    of every tensor it saves is ~0.13 s a run on 44k nodes)."""
    s = store()
    if missing is None:
        files = {k: v for r in revisions for k, v in s.data_files(r).items()}
        missing = missing_data(graph, ExternalFiles(files, s.external_path, s.data_file_size))
    if missing:
        raise StudioError("external_data_missing", f"onnxruntime can't run it: {missing_words(missing)}", 422)
    _inline_loaded_by_onnx(graph)
    wanted = {f"{RUN_TENSORS}/{d}": s.blobs.path(d) for d in _tensors_beside(graph)}
    for revision in revisions:
        for location, entry in (revision.external or {}).items():
            key = normalize_location(location)
            if key and not key.startswith(RUN_TENSORS):
                wanted.setdefault(location, s.external_path(entry))
    in_memory = {}
    for location, source in wanted.items():
        target = folder / (normalize_location(location) or location)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:  # another file system, or not ours to link
            in_memory[location] = str(source)
    path = folder / "model.onnx"
    path.write_bytes(graph.SerializeToString())
    return path, in_memory


def _inline_loaded_by_onnx(graph: onnx.ModelProto) -> None:
    """Put back into the graph the values the store keeps of the tensors onnxruntime reads with
    onnx's loader, which refuses a hard-linked file as a possible attack: those of node
    attributes (a Constant's value; a main-graph one feeding a Reshape's shape also "Please load
    external data into raw data") and the initializers of subgraphs (what Simplify leaves in an
    If branch). A main-graph Constant over INLINE_ATTRIBUTE_BYTES (a weight kept as a Constant)
    stays in its file: onnxruntime maps it."""
    blobs = store().blobs
    for ref in walk_graphs(graph):
        g = ref.container
        held = list(attribute_tensors_of(g))
        if ref.path and isinstance(g, onnx.GraphProto):
            held += [*g.initializer, *(x for sp in g.sparse_initializer for x in (sp.values, sp.indices))]
        for t in held:
            where = next((e.value for e in t.external_data if e.key == "location"), "")
            if t.data_location != onnx.TensorProto.EXTERNAL or not where.startswith(TENSOR_PREFIX):
                continue
            digest = where[len(TENSOR_PREFIX) :]
            if ref.path == "" and blobs.size(digest) > INLINE_ATTRIBUTE_BYTES:
                continue
            t.raw_data = blobs.get(digest)
            del t.external_data[:]
            t.data_location = onnx.TensorProto.DEFAULT


def _tensors_beside(graph: onnx.ModelProto) -> set[str]:
    """Point each reference to a tensor of the store (TENSOR_PREFIX + digest) at the file
    RUN_TENSORS/<digest> beside the model, in place; the digests."""
    found: set[str] = set()
    for t in tensors(graph):
        if t.data_location == onnx.TensorProto.EXTERNAL:
            for entry in t.external_data:
                if entry.key == "location" and entry.value.startswith(TENSOR_PREFIX):
                    digest = entry.value[len(TENSOR_PREFIX) :]
                    entry.value = f"{RUN_TENSORS}/{digest}"
                    found.add(digest)
    return found


def run_raw(
    revision,
    model,
    inputs: dict,
    dims: dict,
    outputs,
    folder: Path,
    profile: int = 0,
    wall: float = RUN_WALL_SECONDS,
    untyped: bool = False,
) -> dict:
    """The worker's answer to running the revision (ort_worker.run), whatever its status;
    `untyped`: outputs asked for that inference doesn't type are returned all the same."""
    folder.mkdir()
    path, files, size = _runnable(revision, model, outputs, folder, untyped)
    answer = run_model(path, folder, inputs, dims, outputs, size, wall, files, profile)
    if answer.get("status") == "ok":  # sizes it runs at, where the smoke run's made-up ones may have failed
        ran_at(revision, model, lambda: {**dims, **fed_sizes(model, _shapes(answer.get("inputs") or {}))})
    return answer


def _shapes(fed: dict) -> dict[str, list[int]]:
    """The shapes of a run's inputs as saved (.npy files; a sequence's are no one shape)."""
    out = {}
    for name, path in fed.items():
        if isinstance(path, str):
            with contextlib.suppress(ValueError, OSError):
                out[name] = list(np.load(path, mmap_mode="r", allow_pickle=False).shape)
    return out


def _run(
    revision, model, inputs: dict, dims: dict, outputs, folder: Path, profile: int = 0, untyped: bool = False
) -> dict:
    answer = run_raw(revision, model, inputs, dims, outputs, folder, profile, untyped=untyped)
    status = answer.get("status")
    if status == "refused":
        raise StudioError("bad_inputs", answer["message"])
    if status != "ok":
        raise run_failed(answer, model)
    return answer


def run_failed(answer: dict, model: onnx.ModelProto, what: str = "the model") -> StudioError:
    """A worker's failed run as the error a request gets, in the words the Validation panel uses
    for the same failure (runtime_check.describe): the node named as 'node "flatten" (Reshape)
    in the main graph', onnxruntime's status prefix and C++ source locations taken out."""
    stage = "load" if answer.get("stage") == "load" else "run"
    verdict = describe(answer, model)
    message = verdict.get("message") or answer.get("message") or answer.get("status")
    # the node by its id in the revision run; a switched model's ids are its own
    node = verdict.get("node") if what == "the model" else None
    return StudioError("run_failed", f"onnxruntime can't {stage} {what}: {message}", 422, node=node)


def _not_the_same(mine: dict, theirs: dict, was_in: dict) -> list[str]:
    """The other revision's inputs (by its names) that did not get this run's values: ones it has
    and this revision lacks (made up for it), or ones whose values its types or sizes changed."""
    fed = {was_in[name]: path for name, path in mine.items() if name in was_in}
    return sorted(
        name
        for name, path in theirs.items()
        if name not in fed or not (isinstance(path, str) and filecmp.cmp(path, fed[name], shallow=False))
    )


def _fed_value(saved) -> saved_values.Value | None:
    """The value an input was fed, read back from its file (None: none saved)."""
    return saved_values.load(saved) if isinstance(saved, str) else None


def _preview(saved, count: int, converted: str | None = None, top: bool = False) -> dict:
    """An input's or output's preview (of its file, or of a value read from one): a tensor's as
    GET .../tensors gives it; `converted`: the ONNX type of one the worker widened (a bfloat16
    or float8 one saved as float32), named as such with the widened values; a sequence's
    {"kind", "count", "items": [each one's preview]}, a map's {"kind", "keys", "values"}, an
    empty optional's {"kind", "empty"}. `top`: an output's largest values along its last axis too
    (top_values)."""
    value = saved_values.load(saved) if isinstance(saved, str) else saved
    if isinstance(value, saved_values.Sequence):  # each tensor (or map) previewed, the first MAX_ITEMS
        items = [_preview(a, count) for a in value.items[:MAX_ITEMS]]
        return {"kind": "sequence", "count": len(value.items), "shape": [len(value.items)], "items": items}
    if isinstance(value, saved_values.Map):
        keys, values = _preview_array(value.keys, count), _preview_array(value.values, count)
        return {"kind": "map", "count": len(value.keys), "shape": [len(value.keys)], "keys": keys, "values": values}
    if isinstance(value, saved_values.Empty):
        return {"kind": "optional", "empty": True}
    out = _preview_array(value, count, converted)
    if converted:
        out["converted_from"] = converted
    largest = top_values(value) if top else None
    if largest is not None:
        out["top"] = largest
    return out


MAX_ITEMS = 16  # a sequence's tensors previewed in a run's answer


def _keep_outputs(previews: dict[str, dict], saved: dict) -> None:
    """Each tensor output's .npy stored as a blob, its digest the preview's "npy" (GET
    /api/blobs/<digest> gives it whole: the answer holds its first values only), up to
    RUN_OUTPUTS_KEPT_BYTES a run; unreferenced, the collector removes them after its grace."""
    budget = RUN_OUTPUTS_KEPT_BYTES
    s = store()
    if previews:
        s.collect_after_grace()
    for name, preview in previews.items():
        path = saved.get(name)
        if "dtype" not in preview or not isinstance(path, str) or not path.endswith(".npy"):
            continue  # a sequence, map or optional: no .npy
        size = os.path.getsize(path)
        if size > budget:
            continue
        budget -= size
        with open(path, "rb") as f:
            preview["npy"] = s.blobs.put_stream(f)


def _preview_array(arr: np.ndarray, count: int, converted: str | None = None) -> dict:
    return {"dtype": converted or _onnx_dtype(arr.dtype), **array_preview(arr, 0, count)}


def _onnx_dtype(dtype: np.dtype) -> str:
    """The output's ONNX type name, as a tensor preview names it: the page formats values by it
    (a float32's shortest decimal, not its float64 digits)."""
    try:
        return dtype_name(onnx.helper.np_dtype_to_tensor_dtype(dtype))
    except (KeyError, ValueError, TypeError):
        return str(dtype)


def _typed(revision, model: onnx.ModelProto) -> set[str]:
    """Tensors of the main graph a run can return: the graph's outputs and the values shape
    inference types."""
    typed = inferred(revision.blob, model)
    return {o.name for o in model.graph.output} | {vi.name for vi in (typed or model).graph.value_info}


def _probes(revision, model: onnx.ModelProto, other, shown: list[str], mates: dict[str, str | None]) -> list[str]:
    """The node outputs both revisions have (and can return), in the graph's order; `mates`:
    this one's tensor -> the other's, where another model names it otherwise (tensor_mates)."""
    _, other_revision, other_model = other
    mine, theirs = _typed(revision, model), _typed(other_revision, other_model)
    names = [
        o
        for n in model.graph.node
        for o in n.output
        if o and o in mine and o not in shown and mates.get(o, o) in theirs
    ]
    _bounded_probes(len(names))
    return names


def _bounded_probes(count: int) -> None:
    """Refuse a comparison that would save more than MAX_PROBES tensors a run."""
    if count > MAX_PROBES:
        raise StudioError(
            "too_many_tensors",
            f"finding where the revisions part would save {count} tensors per run (at most {MAX_PROBES})",
            422,
        )


def _branch_probes(flat: Inlined, flat_there: Inlined, asked: list[str], mates: dict[str, str | None]) -> list[str]:
    """The outputs of the nodes an If's branch that ran moved into the graph (inline_taken) that
    the other side computes too, beyond those `asked`; bounded as _probes are."""
    have = set(asked)
    names = [
        o
        for n, nid in zip(flat.model.graph.node, flat.ids, strict=True)
        if nid is not None and "/" in nid
        for o in n.output
        if o and o not in have and mates.get(o, o) in flat_there.made
    ]
    _bounded_probes(len(names) + len(asked))
    return names


def _node_errors(
    model: onnx.ModelProto,
    other: onnx.ModelProto,
    mine: dict,
    theirs: dict,
    read_as: tuple[dict, dict],
    padding: Padding | None = None,
    mates: dict[str, str | None] | None = None,
    flat: Inlined | None = None,
) -> list[dict]:
    """Each main-graph node with an output both runs saved (graph order, which is topological):
    how far its output furthest from the other revision's is ("equal" within rounding), each
    side's output read as its next nodes read it (`read_as`: dequantized() of either model), and
    the node of the other revision writing that tensor ("other_name", "other_op"): the node to
    leave out when the other revision is quantized again (a dynamic quantization's Conv output
    is written by an Add it made, named after no node of the float model). `padding`: the
    values at positions a fed attention mask pads are left out (padded_positions.py); `mates`:
    this model's tensor -> the other's, where another model names it otherwise; `flat`: the
    graph is one with If branches moved in (inline_taken): each node's address and name as
    stored (a node it made, left out)."""
    mates = mates or {}
    writers = {o: n for n in other.graph.node for o in n.output if o}
    nodes = []
    for i, node in enumerate(model.graph.node):
        nid = node_id("", i) if flat is None else flat.ids[i]
        if nid is None:
            continue
        label = node.name if flat is None else flat.names[i]
        worst = None
        for name in node.output:
            there = mates.get(name, name)
            if name in mine and there is not None and there in theirs:
                a = mine.get(read_as[0].get(name, ""), mine[name])
                b = theirs.get(read_as[1].get(there, ""), theirs[there])
                c = {"tensor": name, **compare_outputs(a, b, close=True, attended=_attended(padding, name))}
                if worst is None or _further(c, worst):
                    worst = c
        if worst is not None:
            row = {"node": nid, "name": label, "op_type": node.op_type, **worst}
            theirs_writer = writers.get(mates.get(worst["tensor"]) or worst["tensor"])
            if theirs_writer is not None:
                row.update(other_name=theirs_writer.name, other_op=theirs_writer.op_type)
            nodes.append(row)
    return nodes


def _attended(padding: Padding | None, tensor: str):
    """What compare_outputs leaves in of `tensor` (Padding.attended), or None: all of it."""
    return padding.attended(tensor) if padding is not None else None


def _further(a: dict, b: dict) -> bool:
    """Whether output comparison `a` is further off than `b`: unequal first, then of another
    shape in the two runs (a Loop run another number of times: no error measured, QA20 F2's
    KeyError), then by error."""
    if a["equal"] != b["equal"]:
        return not a["equal"]
    if bool(a.get("non_finite")) != bool(b.get("non_finite")):  # an overflow on one side: furthest
        return bool(a.get("non_finite"))
    reshaped = (_reshaped(a), _reshaped(b))
    if reshaped[0] != reshaped[1]:
        return reshaped[0]
    return (a.get("rel_error") or 0.0) > (b.get("rel_error") or 0.0)


def _reshaped(c: dict) -> bool:
    shape = c.get("shape") or []
    return bool(shape) and isinstance(shape[0], list)  # [its shape here, its shape there]


def _kept(graph: onnx.GraphProto) -> dict[str, int]:
    """onnxruntime's numbering of a graph's nodes -> their index in the graph: its Constant nodes
    become initializers (no index, no time)."""
    kept = [i for i, n in enumerate(graph.node) if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx"))]
    return {str(k): i for k, i in enumerate(kept)}


def _profiled_node(
    model: onnx.ModelProto, key: str, ops: dict, names: dict, kept: dict[str, dict[str, int]]
) -> tuple[str, onnx.NodeProto] | None:
    """The node a profile key names ("3": onnxruntime's node 3 of the main graph; "3/0": node 0
    of the subgraph node 3 ran): its id and the node, when index, op and name agree at every
    level (a nameless node is called <op>_<index>) and exactly one of a node's subgraphs has it.
    `kept`: each graph's numbering (by its path), made once for all of a profile's keys."""
    segments = key.split("/")
    graphs: list[tuple[str, onnx.GraphProto]] = [("", model.graph)]
    found = None
    for depth, seg in enumerate(segments):
        prefix = "/".join(segments[: depth + 1])
        matches = []
        for path, g in graphs:
            if path not in kept:
                kept[path] = _kept(g)
            i = kept[path].get(seg)
            if (
                i is not None
                and ops.get(prefix) == g.node[i].op_type
                and names.get(prefix) == (g.node[i].name or f"{g.node[i].op_type}_{seg}")
            ):
                matches.append((node_id(path, i), g.node[i]))
        if len(matches) != 1:
            return None
        found = matches[0]
        graphs = [(subgraph_path(found[0], attr, item), sub) for attr, item, sub in node_graphs(found[1])]
    return found


def _node_times(model: onnx.ModelProto, raw: dict) -> dict:
    """The profiler's times as {"nodes": [{"node", "name", "op_type", "time_us"}] (the main
    graph's, in its order), "subgraph_nodes" (those inside If/Loop/Scan bodies, a Loop's body
    summed over its iterations, each "within" the main graph's node whose time includes it),
    "ms", "runs", "optimized_run"}. A time is kept only where onnxruntime's index, op and name
    agree with the model's node (_profiled_node)."""
    if "error" in raw:
        raise StudioError("run_failed", f"onnxruntime's profiler failed: {raw['error']}", 422)
    times, ops, names = raw.get("nodes", {}), raw.get("ops", {}), raw.get("names", {})
    nodes, inside = [], []
    numbering: dict[str, dict[str, int]] = {}
    for key, us in times.items():
        hit = _profiled_node(model, key, ops, names, numbering)
        if hit is None:
            continue
        entry = {"node": hit[0], "name": hit[1].name, "op_type": hit[1].op_type, "time_us": round(us, 1)}
        if "/" in key:
            inside.append({**entry, "within": hit[0].split("/", 1)[0]})
        else:
            nodes.append(entry)
    nodes.sort(key=lambda n: int(n["node"][1:]))
    # the same runs as onnxruntime runs the model by default: its graph's nodes are fused and
    # reordered ones, not the model's, so they are summed by operator, the slowest first
    fused = raw.get("optimized") or {}
    optimized_run = {
        "ms": fused.get("ms"),
        "nodes": fused.get("nodes", 0),
        "ops": [
            {"op_type": op, "time_us": round(us, 1)}
            for op, us in sorted((fused.get("ops") or {}).items(), key=lambda kv: -kv[1])
        ],
    }
    if "error" in fused:
        optimized_run["error"] = fused["error"]
    elif fused.get("kernels") is not None:
        on_nodes = kernel_times(model, fused["kernels"], fused.get("graph") or [])
        optimized_run["by_node"], optimized_run["other"] = on_nodes["nodes"], on_nodes["other"]
    return {
        "nodes": nodes,
        "subgraph_nodes": sorted(inside, key=lambda n: -n["time_us"]),
        "ms": raw.get("ms"),
        "runs": raw.get("runs", 0),
        "optimized": False,
        "optimized_run": optimized_run,
    }


def _only_in(shown: list[str], both: list[str], other: onnx.ModelProto, there: dict[str, str] | None) -> dict:
    """The outputs one side of a comparison has and the other lacks, said rather than compared
    (as a recipe's --same-outputs says them): {"here": this run's, "there": the other
    revision's graph outputs no output of this run pairs with (`there`: this run's output ->
    its name there; None when the run asked for tensors of its own, not the graph outputs)}."""
    met = set((there or {}).values())
    return {
        "here": [name for name in shown if name not in both],
        "there": [o.name for o in other.graph.output if o.name not in met] if there is not None else [],
    }


def _other_model(other_id: str, model_id: str, record) -> dict:
    """{"model": {"id", "name"}} when the run is compared with another model, else {}."""
    return {"model": {"id": other_id, "name": record.name}} if other_id != model_id else {}


@bp.post("/models/<model_id>/run")
def post_run(model_id):
    body = json_object('{"inputs": {...}, "dims"?, "outputs"?, "compare_to"?, "profile"?}')
    rev = body.get("revision")
    if rev is not None:
        rev = integer(rev, '"revision"')
    _, revision, model = load(model_id, rev)
    inputs = check_inputs(body.get("inputs"), model)
    dims = check_dims(body.get("dims"), model)
    outputs = _outputs(body.get("outputs"), model)
    compare_to = body.get("compare_to")
    compare_model = body.get("compare_model", model_id)
    if not isinstance(compare_model, str) or not compare_model:
        raise StudioError("bad_request", '"compare_model" is the id of a stored model')
    # another model (an export quantized elsewhere against its float source): its head unless a
    # revision of it is asked
    if compare_to is not None or compare_model != model_id:
        at = integer(compare_to, '"compare_to"') if compare_to is not None else None
        other = load(compare_model, at)
    else:
        other = None
    profile = body.get("profile", False)
    if not isinstance(profile, bool):
        raise StudioError("bad_request", '"profile" is true or false')
    locate = body.get("locate", False)
    if not isinstance(locate, bool) or (locate and other is None):
        raise StudioError(
            "bad_request", '"locate": true finds where two revisions part: it needs "compare_to" or "compare_model"'
        )
    shown = outputs or [o.name for o in model.graph.output]
    expected = _expected(body.get("expected"), shown)
    # another model's node outputs, paired by what writes them (its names may have shifted)
    mates = (
        tensor_mates(other[2].graph, model.graph) if locate and other is not None and compare_model != model_id else {}
    )
    probes = _probes(revision, model, other, shown, mates) if locate else []
    read_as = (dequantized(model), dequantized(other[2])) if locate and other is not None else ({}, {})
    mine_typed = _typed(revision, model) if read_as[0] else set()
    probes += [read_as[0][p] for p in probes if read_as[0].get(p) in mine_typed]
    count = current_app.config["PREVIEW_MAX_COUNT"]
    with tempfile.TemporaryDirectory(prefix="run-", dir=store().blobs.scratch()) as tmp:
        # the outputs as the revision gives them: the tensors "locate" saves, made outputs, keep
        # onnxruntime from fusing across them, which moves the outputs' last digits
        first = _run(revision, model, inputs, dims, outputs, Path(tmp) / "a", PROFILE_RUNS if profile else 0)
        answer = {
            "revision": revision.rev,
            "outputs": {
                name: _preview(first["outputs"][name], count, first.get("converted", {}).get(name), top=True)
                for name in shown
                if name in first["outputs"]
            },
            "inputs": {
                name: {
                    **_preview(p, min(count, 100), first.get("converted_inputs", {}).get(name)),
                    **_how_made(inputs.get(name, {"seed": 0}), p),
                }
                for name, p in first["inputs"].items()
            },
            "ms": first["ms"],
            "onnxruntime": first.get("onnxruntime"),
        }
        _keep_outputs(answer["outputs"], first["outputs"])
        ran = branches_ran(model.graph, lambda name: _fed_value(first["inputs"].get(name)))
        if ran:  # which branch of each If ran, where the inputs fed tell (QA31 #8)
            answer["branches"] = ran
        shapes = {name: p["shape"] for name, p in answer["outputs"].items() if "dtype" in p}
        fed = {name: p["shape"] for name, p in answer["inputs"].items() if "shape" in p}
        mismatches = declared_mismatches(model, shapes, fed_sizes(model, fed))
        if mismatches:
            answer["declared_mismatches"] = mismatches
        # the positions a fed attention mask pads are left out of every comparison, and said apart
        padding = padding_of(model, first["inputs"], lambda: inferred(revision.blob, model))
        if expected:
            answer["expected"] = {
                "close_tolerance": CLOSE_TOLERANCE,
                "outputs": {
                    name: compare_outputs(first["outputs"][name], path, attended=_attended(padding, name))
                    for name, path in expected.items()
                },
            }
            said = left_out(padding, answer["expected"]["outputs"], None) if padding is not None else []
            if said:
                answer["expected"]["padding"] = said
        if profile:
            answer["profile"] = _node_times(model, first.get("profile") or {})
        if other is not None:
            _, other_revision, other_model = other
            # an input renamed since is fed its old self
            was_in = {mine: old for old, mine in paired(other_model.graph, model.graph, "input")}
            same_inputs = {was_in[name]: {"npy": p} for name, p in first["inputs"].items() if name in was_in}
            theirs = _typed(other_revision, other_model)
            # an output renamed since is compared with its old self
            was = {mine: old for old, mine in paired(other_model.graph, model.graph, "output")}
            there = {n: was.get(n, n) for n in shown}
            asked = [there[n] for n in shown if there[n] in theirs]
            try:
                second = _run(other_revision, other_model, same_inputs, dims, asked or None, Path(tmp) / "b")
            except StudioError as exc:
                if exc.code != "bad_inputs":
                    raise
                # this run stands; the revision compared with can't take its inputs, said beside it
                what = f"revision {other_revision.rev}" if compare_model == model_id else repr(other[0].name)
                answer["compare"] = {
                    "revision": other_revision.rev,
                    **_other_model(compare_model, model_id, other[0]),
                    "refused": f"{what} can't take this run's inputs: {exc.message}",
                }
                return jsonify(answer)
            both = [n for n in shown if there[n] in second["outputs"]]
            answer["compare"] = {
                "revision": other_revision.rev,
                **_other_model(compare_model, model_id, other[0]),
                "ms": second["ms"],
                "close_tolerance": CLOSE_TOLERANCE,
                "outputs": {
                    name: compare_outputs(
                        first["outputs"][name], second["outputs"][there[name]], attended=_attended(padding, name)
                    )
                    for name in both
                },
                "renamed": {name: there[name] for name in both if there[name] != name},
                "only_in": _only_in(shown, both, other_model, there if outputs is None else None),
                "inputs_renamed": {
                    mine: old for mine, old in was_in.items() if mine != old and mine in first["inputs"]
                },
                "other_inputs": _not_the_same(first["inputs"], second["inputs"], was_in),
            }
            if locate:
                # both again, saving every tensor they share: where they part, node by node — in
                # the If branches that ran too, moved into the graph (taken_branches)
                again = {name: {"npy": p} for name, p in first["inputs"].items()}
                fed_there = lambda name: _fed_value((same_inputs.get(name) or {}).get("npy"))  # noqa: E731
                flat = inline_taken(model, {b["node"]: b["ran"] for b in ran})
                flat_there = inline_taken(
                    other_model, {b["node"]: b["ran"] for b in branches_ran(other_model.graph, fed_there)}
                )
                inside = _branch_probes(flat, flat_there, shown + probes, mates)
                mine = _run(revision, flat.model, again, dims, shown + probes + inside, Path(tmp) / "c", untyped=True)
                asked = [
                    t
                    for n in shown + probes + inside
                    if (t := mates.get(n, n)) is not None and (t in theirs or t in flat_there.made)
                ]
                asked += [read_as[1][n] for n in asked if read_as[1].get(n) in theirs]
                other_run = _run(
                    other_revision, flat_there.model, same_inputs, dims, asked, Path(tmp) / "d", untyped=True
                )
                nodes = _node_errors(
                    flat.model,
                    flat_there.model,
                    mine["outputs"],
                    other_run["outputs"],
                    read_as,
                    padding,
                    mates,
                    flat,
                )
                answer["compare"]["diverges"] = next((n for n in nodes if not n["equal"]), None)
                answer["compare"]["nodes"] = nodes
            if padding is not None:
                compared = answer["compare"]
                said = left_out(padding, compared["outputs"], compared.get("nodes"))
                if said:
                    compared["padding"] = said
    return jsonify(answer)
