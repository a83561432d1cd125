"""Applying a batch of edit ops all-or-nothing, with the validation gates: the result must
pass each check its base passed (onnx.checker, the full check, onnxruntime's smoke run)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import onnx

from ..errors import StudioError
from ..onnx_io import offload, parse_model
from ..onnx_io.address import carry, node_id, node_words, resolve_node
from ..onnx_io.causes import causes_of, graph_words
from ..onnx_io.external import TENSOR_PREFIX, data_refs
from ..onnx_io.function_expansion import check_expansion
from ..onnx_io.light import basic_check, light_copy
from ..onnx_io.limits import PROTOBUF_LIMIT
from ..onnx_io.runtime_check import against_base, nonfinite_words
from ..onnx_io.text_fields import is_bytes_error, readable_strings
from ..onnx_io.traverse import walk_graphs
from ..views.tree_words import tree_fault
from ..views.trees import ENSEMBLES
from .batch_end import LateLine, batch_end
from .contract import check_batch
from .missing_kernels import no_kernel_words
from .outputs_follow import outputs_following
from .quantization_fault import QUANTIZERS, quantization_fault
from .refusal_reads import reads_words
from .shape_hints import without_value_info_hint
from .sources import TensorFiles, blob_reader, tensor_files, tensor_source
from .stable_ops import stable_op
from .stale_value_info import reinfer_stale, says_stale


@dataclass
class EditResult:
    model: onnx.ModelProto
    data: bytes
    changes: list[str]
    validation: dict
    changed: bool = True  # False: the edited model serializes to the base's bytes (a no-op)
    runtime: dict | None = None  # onnxruntime's verdict when the gate ran it (or "pending")
    invalid: list[str] = field(default_factory=list)  # the gates' refusals, stored past with allow_invalid
    full: dict | None = None  # the full check's verdict when the gate ran it
    ops: list = field(default_factory=list)  # the ops as recorded: nodes and graphs by name (stable_ops.py)
    notes: list[str] = field(default_factory=list)  # a no-op's word on why it did nothing


def apply_edits(
    base_data: bytes,
    ops,
    base_validation: dict,
    read_blob=None,
    check_runtime: Callable[[onnx.ModelProto], dict] | None = None,
    allow_invalid: bool = False,
    tensors: TensorFiles | None = None,
    check_outputs: Callable[[onnx.ModelProto], str | None] | None = None,
) -> EditResult:
    """Apply `ops` in order to a fresh copy of the base model. Any failing op fails the batch.
    The result may not fail a check the base passed (base_validation: "ok", "full", "runtime");
    with allow_invalid it is kept anyway and the refusals are listed. read_blob(digest) -> bytes
    supplies uploaded .npy files that ops name; check_runtime(model) -> onnxruntime's verdict on
    the result (runtime_check.check_model, or {"status": "pending"} when it can't wait);
    `tensors`: where ops that rewrite weights find those kept outside the graph (the store's
    tensor blobs, external data files); check_outputs(model) -> why the result's outputs are
    refused (the model's reference cases, api/reference.output_gate), or None."""
    with blob_reader(read_blob), tensor_source(tensors):
        result = _apply(base_data, ops, base_validation, allow_invalid)
    if result.changed:
        _gate(result, base_data, base_validation, check_runtime, allow_invalid, check_outputs)
    return result


def _apply(base_data: bytes, ops, base_validation: dict, allow_invalid: bool = False) -> EditResult:
    checked = check_batch(ops)  # the whole batch, before the model is even parsed
    model = parse_model(base_data)
    # walking every tensor costs ~0.1 s on a 44k-node graph: only for ops that write tensors anew
    rewrites = any(entry.rewrites_tensors for entry, _ in checked)
    files = set(data_refs(model)) if rewrites else set()
    decoded = 0
    try:
        changes, invalid, recorded = _run_ops(model, base_data, checked, ops, allow_invalid)
    except (UnicodeError, TypeError) as exc:
        # a text field of invalid UTF-8 (upb gives it as bytes) tripped an op: the batch again on
        # the model with such fields decoded — walking every field of every edit's model would
        # cost ~8 µs a node, so only the rare model holding them pays
        if not is_bytes_error(exc):
            raise
        model = parse_model(base_data)
        decoded = readable_strings(model)
        if not decoded:
            raise
        changes, invalid, recorded = _run_ops(model, base_data, checked, ops, allow_invalid)
    if decoded and changes:
        changes[-1] += f"; {decoded} text field(s) held invalid UTF-8: written with replacement characters (U+FFFD)"
    check_expansion(model, "the edited model")  # a call made to fan out: refused before onnx's C++ expands it
    stored = tensor_files()  # what the ops streamed into the store's blobs is the model's own
    ours = {TENSOR_PREFIX + d for d in stored.added} if stored is not None else set()
    stray = set(data_refs(model)) - files - ours if rewrites else set()
    if stray:
        # no op writes data files: a tensor naming one the model didn't have points at nothing
        raise StudioError(
            "dangling_external_data",
            f"the edit would leave tensors naming external data {sorted(stray)[0]!r} that the model has no file for",
            422,
        )
    try:
        data = model.SerializeToString()
    except Exception as exc:  # e.g. the 2 GiB protobuf limit
        raise StudioError("cannot_serialize", f"the edit made a model that can't be serialized: {exc}", 422) from None
    if data == base_data:
        # saving a value unchanged, renaming to the same name...: no new revision to check or store;
        # a tool's own word on why it did nothing ("simplify: … find nothing to simplify here; kept
        # GroupNormalization ×13 …", a line naming its op) is kept for the answer
        names = {f"{o.get('op')}: " for o in ops if isinstance(o, dict)}
        notes = [c for c in changes if isinstance(c, str) and any(c.startswith(n) for n in names)]
        return EditResult(model, data, [], dict(base_validation), changed=False, ops=recorded, notes=notes)
    result = EditResult(model, data, changes, {}, invalid=invalid, ops=recorded)
    result.validation, result.full = _checks(model, len(data), base_validation)
    return result


def _run_ops(
    model: onnx.ModelProto, base_data: bytes, checked: list, ops: list, allow_invalid: bool
) -> tuple[list[str], list[str], list[dict]]:
    """Apply the checked ops in order to `model`: (each op's change line, what the batch's own
    checks refused and allow_invalid stores past, the ops as recorded)."""
    made: list[str | LateLine] = []
    invalid: list[str] = []
    recorded: list[dict] = []
    with _node_in_base(model, base_data), batch_end(invalid if allow_invalid else None):
        for k, (entry, op) in enumerate(checked):
            recorded.append(stable_op(entry, model, ops[k]))  # before it runs: its addresses read as sent
            alike = _alike_node(model, op.get("node"))  # before it runs: the op may remove or rename it
            try:
                made.append(_placed(entry.fn(model, op), alike))
            except StudioError as exc:
                detail = exc.message.removeprefix(f"{entry.name}: ")
                exc.message = f"op #{k + 1} ({entry.name}): {detail}"
                exc.args = (exc.message,)
                raise
    return [str(line) for line in made], invalid, recorded  # late lines (batch_end.py) written now


def _alike_node(model: onnx.ModelProto, address) -> tuple[str, str] | None:
    """(how a change line names the node an op addresses inside a subgraph, the same words
    with its graph) when nodes of other graphs bear its name: a merged decoder's two branches
    name every node alike, and "attribute 'axis' of node "…/Softmax" (Softmax)" said which
    neither in the change line nor the History (QA32 N7)."""
    if not isinstance(address, str) or "/" not in address:
        return None
    try:
        ref, _, node = resolve_node(model, address)
    except StudioError:
        return None
    if not ref.path or not node.name:
        return None
    bearing = sum(1 for r in walk_graphs(model) for n in r.container.node if n.name == node.name)
    if bearing < 2:
        return None
    said = node_words(node.name, node.op_type)
    return said, f"{said} in {graph_words(model, ref.path)}"


def _placed(line: str | LateLine, alike: tuple[str, str] | None) -> str | LateLine:
    """The op's change line with its node's graph said (_alike_node), where it names the node
    (a late line when it is written)."""
    if alike is None:
        return line
    said, placed = alike
    if isinstance(line, LateLine):
        return LateLine(lambda: str(_placed(line.write(), alike)))
    return line if placed in line else line.replace(said, placed, 1)


def _checks(model: onnx.ModelProto, size: int, base: dict) -> tuple[dict, dict | None]:
    """(the basic checker's verdict, the full check's when the base passed it). The full check
    runs the basic one first, so a pass of it is a pass of both: one run in the helper instead
    of two (each ~1 s on a 44k-node graph); the basic one runs alone only to tell which failed."""
    if not (base.get("full", {}).get("ok") and size < PROTOBUF_LIMIT):
        return basic_check(model, offload.checker_verdict), None
    full: dict = {}

    def verdict_of(light: onnx.ModelProto) -> dict:
        full.update(offload.checker_verdict(light, full=True))  # C++: in the helper process
        return {"ok": True, "message": ""} if full["ok"] else offload.checker_verdict(light)

    basic = basic_check(model, verdict_of)
    return basic, full or None


def _gate(
    result: EditResult, base_data: bytes, base: dict, check_runtime, allow_invalid: bool, check_outputs=None
) -> None:
    def refuse(
        message: str, details: list[str] | None = None, at: tuple[str, int] | None = None, fix: dict | None = None
    ) -> None:
        if not allow_invalid:
            node = _in_base(result.model, base_data, node_id(*at)) if at else None
            raise StudioError("invalid_result", message, 422, details, node, fix)
        result.invalid.append(message)

    if base.get("ok") and not result.validation["ok"]:
        causes = causes_of(result.validation["message"], result.model)
        refuse(f"the edit would make the model invalid: {causes.line()}", causes.more, causes.at)  # no shapes
    full = result.full
    if full is not None and result.validation["ok"] and not full["ok"] and says_stale(full["message"]):
        # stored value_info saying the shapes before the edit: re-inferred, then checked again
        try:
            line = reinfer_stale(result.model)
        except StudioError as exc:  # the re-inferred shapes make an If's branches disagree
            refuse(exc.message)  # (stored past it with allow_invalid: as the edit made it)
            result.model = onnx.ModelProto.FromString(result.data)
            line = None
        if line:
            result.data = result.model.SerializeToString()
            result.validation, result.full = _checks(result.model, len(result.data), base)
            # an op's "value_info still give the sizes before" no longer holds: one statement of what happened
            result.changes = [without_value_info_hint(c) if isinstance(c, str) else c for c in result.changes]
            result.changes.append(line)
            full = result.full
    if full is not None and result.validation["ok"] and not full["ok"]:
        # the base also passed the full check (strict shape inference): the result must too
        causes = causes_of(full["message"], result.model)
        fix = None if allow_invalid else outputs_following(result.model, causes.at, result.ops, _passes_full_check)
        refuse(
            f"the edit would break shape/type inference: {_with_reads(result.model, causes)}",
            causes.more,
            causes.at,
            fix,
        )
    if check_runtime is not None and (base.get("runtime") or {}).get("status") == "ok":
        # onnx's checks pass models onnxruntime refuses (a kernel_shape the weights don't have)
        result.runtime = against_base(check_runtime(result.model), base["runtime"])
        if result.runtime.get("new_nonfinite"):
            result.changes.append(nonfinite_words(result.runtime["new_nonfinite"]))
        if result.runtime.get("status") == "fails":
            at = _node_at(result.model, result.runtime)
            refuse(runtime_refusal(result.runtime, result.model) + reads_words(result.model, at), at=at)
    if check_outputs is not None and (result.runtime or {}).get("status") != "fails":
        refusal = check_outputs(result.model)  # the outputs the model's reference cases keep
        if refusal:
            refuse(refusal)


def _passes_full_check(model: onnx.ModelProto) -> bool:
    return bool(offload.checker_verdict(light_copy(model), full=True)["ok"])  # C++: in the helper


def _node_at(model: onnx.ModelProto, verdict: dict) -> tuple[str, int] | None:
    """Where the node a runtime verdict names is (its graph's path, its index), if it names one."""
    if not verdict.get("node"):
        return None
    try:
        ref, index, _ = resolve_node(model, verdict["node"])
    except StudioError:
        return None
    return ref.path, index


@contextmanager
def _node_in_base(model: onnx.ModelProto, base_data: bytes) -> Iterator[None]:
    """A refusal naming a node of the edited model (a spec check's at batch end) names it by its
    id in the base."""
    try:
        yield
    except StudioError as exc:
        if exc.node:
            exc.node = _in_base(model, base_data, exc.node)
        raise


def _in_base(model: onnx.ModelProto, base_data: bytes, address: str) -> str | None:
    """The id in the base revision (what the page shows while an edit is refused) of the node
    `address` names in the edited model; None where the base has no such node (one the batch
    added) or it can't be told."""
    try:
        return carry(model, parse_model(base_data), address)
    except (StudioError, ValueError):
        return None


def _with_reads(model: onnx.ModelProto, causes) -> str:
    """The first cause, what its node reads, and how many more causes there are."""
    first = causes.first + reads_words(model, causes.at)
    return first if not causes.more else f"{first} (+{len(causes.more)} more)"


def runtime_refusal(verdict: dict, model: onnx.ModelProto | None = None) -> str:
    """onnxruntime's refusal in words; for a tree ensemble whose lists make no trees, the tree
    reader's words for the fault (trees.py), not the C++ ones ("tree 3: node 7's true branch
    points at node 12, which isn't there", where onnxruntime dumps a template or a failed
    `coor.node_id` check, often without naming the node: then the ensemble at fault is looked for)."""
    found = _tree_at_fault(verdict, model) if model is not None else None
    found = found or (_quantization_at_fault(verdict, model) if model is not None else None)
    if found:
        (name, op_type, nid), fault = found
        return f"onnxruntime can't run the edited model: {node_words(name, op_type, nid)}: {fault}"
    why = no_kernel_words(model, verdict["message"]) if model is not None else ""
    return f"onnxruntime can't run the edited model: {verdict['message']}{why}"


def _quantization_at_fault(verdict: dict, model: onnx.ModelProto) -> tuple[tuple[str, str, str], str] | None:
    """((name, op_type, id), the fault in words) of the QuantizeLinear/DequantizeLinear the
    refusal names, whose scale doesn't fit its input (quantization_fault.py)."""
    if verdict.get("op_type") not in QUANTIZERS:
        return None
    if verdict.get("node"):
        try:
            ref, _, node = resolve_node(model, verdict["node"])
        except StudioError:
            return None
        fault = quantization_fault(ref, node)
        return ((node.name, node.op_type, verdict["node"]), fault) if fault else None
    # onnxruntime names a copy it made ("w_dq/duplicated", one per reader): the one pair at fault
    faults = [
        ((n.name, n.op_type, node_id(ref.path, k)), fault)
        for ref in walk_graphs(model)
        for k, n in enumerate(ref.container.node)
        if n.op_type in QUANTIZERS and (fault := quantization_fault(ref, n))
    ]
    return faults[0] if len(faults) == 1 else None


def _tree_at_fault(verdict: dict, model: onnx.ModelProto) -> tuple[tuple[str, str, str], str] | None:
    """((name, op_type, id), the fault in words) of the tree ensemble the refusal is about: the
    node the verdict names, or, where it names none, the one ensemble of the main graph whose
    lists make no trees."""
    if verdict.get("node"):
        try:
            _, _, node = resolve_node(model, verdict["node"])
        except StudioError:
            return None
        fault = tree_fault(node)
        return ((node.name, node.op_type, verdict["node"]), fault) if fault else None
    if verdict.get("op_type") not in (None, *ENSEMBLES):
        return None
    faults = [
        ((n.name, n.op_type, node_id("", k)), fault)
        for k, n in enumerate(model.graph.node)
        if n.op_type in ENSEMBLES and (fault := tree_fault(n))
    ]
    return faults[0] if len(faults) == 1 else None
