"""Every test makes a fresh app, and werkzeug compiles each of its ~56 URL rules' two builder
functions (an AST and a compile()) anew: ~25 ms of each app, ~10,000 apps in `make test`. The
builders of equal rules are equal code that reads the rule only through its `self` argument, so
the test session compiles each one once and hands the same function to every later app's rule."""

from __future__ import annotations

from typing import Any

from werkzeug.routing.rules import Rule

_original = Rule._compile_builder
_compiled: dict[tuple, Any] = {}


def _key(rule: Rule, append_unknown: bool) -> tuple:
    # everything the generated code is made from: the parsed rule (its trace), the defaults baked
    # in as constants through their converters, and which of the two builders is asked for
    converters = sorted((name, type(c).__name__, c.regex) for name, c in rule._converters.items())
    return (
        rule.rule,
        rule.host,
        rule.subdomain,
        tuple(rule._trace),
        repr(rule.defaults),
        tuple(converters),
        append_unknown,
    )


def _compile_builder(self: Rule, append_unknown: bool = True):
    key = _key(self, append_unknown)
    builder = _compiled.get(key)
    if builder is None:
        builder = _compiled[key] = _original(self, append_unknown)
    return builder


def install() -> None:
    Rule._compile_builder = _compile_builder  # type: ignore[method-assign]
