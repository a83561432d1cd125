"""Bytes of an external data file that a model's tensors no longer read.

A weight replaced or deleted by an edit leaves its old bytes in the data file the upload came
with (the file is shared, not rewritten, so an edit stays cheap). Those bytes must not ship: a
person who swapped fine-tuned or licensed values would hand the old ones on unknowingly. What
some tensor read when the file arrived and none reads now is found here, and zeroed on the way
out (offsets stay, so the .onnx is unchanged); bytes no tensor ever read (padding, alignment)
are the upload's own and ship as they came.
"""

from __future__ import annotations

import onnx

from .external import ExternalFiles, data_refs

Spans = list[tuple[int, int]]  # sorted, disjoint [start, end) byte ranges


def read_spans(model: onnx.ModelProto, files: ExternalFiles) -> dict[str, Spans]:
    """file key -> the byte ranges the model's tensors read from it (a tensor without a length
    reads to the file's end)."""
    out: dict[str, Spans] = {}
    for location, refs in data_refs(model).items():
        key = files.key(location)
        if key is None:
            continue
        size = files.size(key)
        spans = []
        for r in refs:
            end = r.offset + r.length if r.length is not None else size
            if end is None:
                end = 1 << 62  # the rest of a file whose size can't be told
            if end > r.offset:
                spans.append((r.offset, end))
        out[key] = _merged(out.get(key, []) + spans)
    return out


def unread(before: Spans, now: Spans) -> Spans:
    """The parts of `before` that `now` does not cover."""
    out: Spans = []
    i = 0
    for start, end in before:
        while i < len(now) and now[i][1] <= start:
            i += 1
        j, at = i, start
        while j < len(now) and now[j][0] < end:
            if now[j][0] > at:
                out.append((at, now[j][0]))
            at = max(at, now[j][1])
            j += 1
        if at < end:
            out.append((at, end))
    return out


def span_bytes(spans: Spans) -> int:
    return sum(end - start for start, end in spans)


def _merged(spans: Spans) -> Spans:
    out: Spans = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
