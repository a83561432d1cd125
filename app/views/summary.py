"""The model summary: model-level fields, counts, validation."""

from __future__ import annotations

import onnx

from ..edits.unused import unread_inputs
from ..onnx_io.function_calls import declared_attributes
from .graph import count_subgraphs
from .message_json import message_json
from .values import text


def model_summary(model: onnx.ModelProto, validation: dict) -> dict:
    g = model.graph
    return {
        "ir_version": model.ir_version,
        "opset_import": [{"domain": o.domain, "version": o.version} for o in model.opset_import],
        "producer_name": model.producer_name,
        "producer_version": model.producer_version,
        "domain": model.domain,
        "model_version": model.model_version,
        "doc_string": text(model.doc_string, 100_000),
        "metadata_props": [{"key": p.key, "value": p.value} for p in model.metadata_props],
        "graph_name": g.name,
        "counts": {
            "nodes": len(g.node),
            "initializers": len(g.initializer) + len(g.sparse_initializer),
            "inputs": len(g.input),
            "outputs": len(g.output),
            "value_info": len(g.value_info),
            "functions": len(model.functions),
            "subgraphs": count_subgraphs(g),
        },
        "functions": [
            {
                "path": f"fn[{k}]",
                "name": f.name,
                "domain": f.domain,
                "overload": f.overload,
                "nodes": len(f.node),
                "inputs": len(f.input),
                "outputs": len(f.output),
                # what a call may set (an operator list offering the function as a node's op)
                "attributes": [
                    {
                        "name": a["name"],
                        "type": onnx.AttributeProto.AttributeType.Name(a["type"]) if a["type"] else None,
                    }
                    for a in declared_attributes(f)
                ],
            }
            for k, f in enumerate(model.functions)
        ],
        "training": [
            {
                "index": k,
                "init": f"train[{k}].init" if t.HasField("initialization") else None,
                "algo": f"train[{k}].algo" if t.HasField("algorithm") else None,
                "initialization_binding": [{"key": b.key, "value": b.value} for b in t.initialization_binding],
                "update_binding": [{"key": b.key, "value": b.value} for b in t.update_binding],
            }
            for k, t in enumerate(model.training_info)
        ],
        "configuration": [message_json(c) for c in model.configuration],
        # graph inputs nothing reads: Clean up offers to remove them
        "unread_inputs": unread_inputs(model),
        "validation": validation,
    }
