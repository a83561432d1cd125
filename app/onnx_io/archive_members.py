"""Which model of an uploaded archive to open.

An export folder holds several models (Hugging Face Optimum's encoder_model.onnx,
decoder_model.onnx, decoder_with_past_model.onnx, decoder_model_merged.onnx and their data):
the upload names one by its path inside the archive (`member`), and is refused with the list
when it doesn't. The model named keeps the files of its own folder that its tensors read and its
test data sets: the other models, and their data, are no files of its."""

from __future__ import annotations

import posixpath
from typing import TypeVar

import onnx

from ..errors import StudioError
from ..words import plural, some_names
from .external import ExternalFiles, files_in_use, normalize_location
from .test_data_sets import split_test_data_sets

T = TypeVar("T")
LISTED_MODELS = 50  # an answer names at most this many of an archive's models (a hostile one holds thousands)
SAID_MODELS = 10  # and its message fewer: one line for people


MAX_LEFT_OUT = 20  # members an upload's answer names as left out; the rest counted


def left_out(member: str, why: str) -> dict:
    """An archive's member never unpacked, and why ("a path leaving the archive", "a link"): said
    in the upload's answer (QA34 #10: ../, absolute and linked members were skipped unsaid)."""
    return {"name": member[:200], "why": why}


def left_out_answer(skipped: list[dict]) -> dict:
    """The upload answer's part for members left out: {"left_out": [...], "left_out_count"?}."""
    if not skipped:
        return {}
    more = {"left_out_count": len(skipped)} if len(skipped) > MAX_LEFT_OUT else {}
    return {"left_out": skipped[:MAX_LEFT_OUT], **more}


def model_key(path: str) -> str | None:
    """A model's path inside an archive as `member` names it: clean, inside the archive, an .onnx."""
    key = normalize_location(path)
    if key is None or any(c in key for c in "\r\n") or not key.lower().endswith(".onnx"):
        return None
    return key


def pick_model(archive: str, models: dict[str, T], member: str | None) -> T:
    """The model `member` names among an archive's `models` ({path inside it: what reads it},
    in archive order); without `member`, the only one. A bare file name names the one model of
    that name. 400 `several_models` listing them when none is named, `unknown_member` for a
    name that is none of them."""
    if member is None:
        if len(models) == 1:
            return next(iter(models.values()))
        raise several_models(archive, list(models))
    key = normalize_location(member)
    if key is None:
        raise _with_models(
            StudioError("unknown_member", f"member {member!r} is no path inside {archive}"), list(models)
        )
    if key in models:
        return models[key]
    same_name = [k for k in models if posixpath.basename(k) == key]
    if len(same_name) == 1:
        return models[same_name[0]]
    held = f"; it holds {some_names(list(models), SAID_MODELS)}" if models else ""
    raise _with_models(StudioError("unknown_member", f"{archive} holds no model {member!r}{held}"), list(models))


def several_models(archive: str, models: list[str]) -> StudioError:
    return _with_models(
        StudioError(
            "several_models",
            f"{archive} holds {plural(len(models), 'model')}: {some_names(models, SAID_MODELS)}; name one to open (member)",
        ),
        models,
    )


def _with_models(error: StudioError, models: list[str]) -> StudioError:
    error.models = models[:LISTED_MODELS]  # in the answer too: the page offers each to open
    return error


def its_own_files(model: onnx.ModelProto, files: dict) -> dict:
    """Of the files beside a model picked from an archive ({path relative to its folder: reader}),
    its test data sets and the files its tensors read."""
    rest, _ = split_test_data_sets(files)
    named = files_in_use(model, ExternalFiles(dict(rest), lambda entry: entry))  # type: ignore[arg-type,return-value]  # only keys are looked at
    return {key: reader for key, reader in files.items() if key not in rest or key in named}
