"""A model held to a deployment target's limits (QA37 #10: an NPU compiler that takes opset ≤ 13,
static shapes, no control flow, a list of operators and a node budget — checked by hand-written
scripts until now). Each limit given is a rule; the answer says, rule by rule, whether the model
keeps it and, where not, which nodes or inputs break it and what in the Studio fixes that.

  {"ok": bool, "rules": [{"rule", "ok", "message", "nodes"?: [node id], "fix"?}]}

Rules (each only when asked): max_opset (the ai.onnx import, and the operators no opset up to it
has), static (every fed input's dims known), control_flow=false (no If, Loop or Scan in the graphs
that run), ops (operator types allowed: every other's nodes), standard (no operator of another
domain than ai.onnx), max_nodes (the nodes that run, bodies included)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import onnx

from ..edits.converted_bodies import has_body, worth_writing_out
from ..edits.opset_down import missing_at
from ..onnx_io.address import node_id
from ..onnx_io.traverse import opset_version, running_graphs, standard_domain
from ..words import plural, some_names

CONTROL_FLOW = ("If", "Loop", "Scan")
NODES_NAMED = 20  # node ids an answer lists per rule


@dataclass(frozen=True)
class Target:
    max_opset: int | None = None
    static: bool = False
    control_flow: bool = True
    ops: frozenset[str] | None = None
    standard: bool = False
    max_nodes: int | None = None


def check_target(model: onnx.ModelProto, target: Target) -> dict:
    nodes = [(node_id(ref.path, i), n) for ref in running_graphs(model) for i, n in enumerate(ref.container.node)]
    rules = []
    if target.max_opset is not None:
        rules.append(_opset(model, target.max_opset))
    if target.static:
        rules.append(_static(model))
    if not target.control_flow:
        rules.append(_by_op("control_flow", nodes, lambda n: n.op_type in CONTROL_FLOW and _standard(n), _FLOW))
    if target.ops is not None:
        allowed = target.ops
        rules.append(_by_op("ops", nodes, lambda n: _kind(n) not in allowed, _OPS))
    if target.standard:
        rules.append(_by_op("standard", nodes, lambda n: not _standard(n), _DOMAINS))
    if target.max_nodes is not None:
        ok = len(nodes) <= target.max_nodes
        rules.append(
            {
                "rule": "max_nodes",
                "ok": ok,
                "message": f"{plural(len(nodes), 'node')} {'within' if ok else 'past'} the budget of {target.max_nodes}",
                **({} if ok else {"fix": "Simplify folds and fuses; Split the model here (a value's panel) halves it"}),
            }
        )
    return {"ok": all(r["ok"] for r in rules), "nodes": len(nodes), "rules": rules}


def _standard(n: onnx.NodeProto) -> bool:
    return standard_domain(n.domain) == ""


def _kind(n: onnx.NodeProto) -> str:
    """An operator as the target's list names it: its type, or DOMAIN.Type for another domain's
    (com.microsoft.FastGelu is not ai.onnx's, nor is a model's own local.Swish)."""
    return n.op_type if _standard(n) else f"{n.domain}.{n.op_type}"


def _opset(model: onnx.ModelProto, most: int) -> dict:
    current = opset_version(model, model.graph, "") or 0
    lacking = missing_at(model, most)
    if current <= most:
        return {"rule": "max_opset", "ok": True, "message": f"ai.onnx opset {current}, at most {most}"}
    # what the older opset lacks: written out first where onnx defines it by others (QA39 #5: it
    # said so of ConstantOfShape, which has no such definition)
    out = ", ".join(f"{op} ×{k}" for op, k in lacking.most_common() if has_body(op))
    stuck = ", ".join(f"{op} ×{k}" for op, k in lacking.most_common() if not has_body(op))
    fix = f"Convert opset… to {most}" + (f", after Write out of {out}, which opset {most} lacks" if out else "")
    if stuck:
        fix += f"; opset {most} lacks {stuck} too, which onnx defines by no other operators"
    return {"rule": "max_opset", "ok": False, "message": f"ai.onnx opset {current}, past {most}", "fix": fix}


def _static(model: onnx.ModelProto) -> dict:
    g = model.graph
    weights = {t.name for t in g.initializer}
    open_dims = {}
    for v in g.input:
        if v.name in weights or not v.type.HasField("tensor_type"):
            continue
        dims = v.type.tensor_type.shape.dim if v.type.tensor_type.HasField("shape") else None
        if dims is None:
            open_dims[v.name] = "no shape"
            continue
        named = [d.dim_param or "?" for d in dims if not d.HasField("dim_value")]
        if named:
            open_dims[v.name] = ", ".join(named)
    if not open_dims:
        return {"rule": "static", "ok": True, "message": "every input's shape is static"}
    said = "; ".join(f"{name} ({dims})" for name, dims in list(open_dims.items())[:NODES_NAMED])
    return {
        "rule": "static",
        "ok": False,
        "message": f"{plural(len(open_dims), 'input')} with dims left open: {said}",
        "inputs": list(open_dims),
        "fix": "Make static… gives each a size",
    }


def _flow_fix(kinds: Counter) -> str:
    """What removes each kind present."""
    fixes = []
    if "If" in kinds:
        fixes.append(
            "Simplify removes an If whose condition is known (give its inputs their values first: Make static, Fix input)"
        )
    looping = " or ".join(op for op in ("Loop", "Scan") if op in kinds)
    if looping:
        fixes.append(
            f"Unroll (a {looping}'s panel) replaces a {looping} that runs a known number of times by its body,"
            " once per iteration"
        )
    return "; ".join(fixes)


def _ops_fix(kinds: Counter) -> str:
    """Write out for the operators onnx defines by others; Simplify for constants it folds."""
    bodies = sorted(op for op in kinds if "." not in op and worth_writing_out(op))
    said = [f"Write out puts primitives in place of {', '.join(bodies)}"] if bodies else []
    if "ConstantOfShape" in kinds or "Constant" in kinds or "Identity" in kinds or "Dropout" in kinds:
        said.append("Simplify folds constants and removes Identity and Dropout")
    return "; ".join(said)


_FLOW = ("control flow", _flow_fix)
_OPS = ("operators the target doesn't take", _ops_fix)
_DOMAINS = ("operators of other domains than ai.onnx", lambda kinds: "")


def _by_op(rule: str, nodes, breaks, words) -> dict:
    found = [(nid, n) for nid, n in nodes if breaks(n)]
    what, fixing = words
    if not found:
        return {"rule": rule, "ok": True, "message": f"no {what}"}
    kinds = Counter(_kind(n) for _, n in found)
    fix = fixing(kinds)
    listed = ", ".join(f"{op} ×{k}" for op, k in kinds.most_common())
    out = {
        "rule": rule,
        "ok": False,
        "message": f"{plural(len(found), 'node')} of {what}: {listed}",
        "nodes": [nid for nid, _ in found[:NODES_NAMED]],
        "names": some_names([n.name or nid for nid, n in found], 5),
    }
    return {**out, "fix": fix} if fix else out
