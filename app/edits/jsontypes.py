"""JSON value types for declaring request fields: each type checks a decoded JSON value, words
itself for error messages and writes its JSON Schema, so one declaration serves the validator,
the OpenAPI document and the docs. Our own few classes: the edit-op contract needs no more than
this, and no third-party validator is installed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

INT64 = (-(2**63), 2**63 - 1)


def kind_of(value) -> str:
    """The JSON kind of a decoded value, as messages name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: JSON booleans are not integers
        return "boolean"
    for kind, py in (("integer", int), ("number", float), ("string", str), ("array", list), ("object", dict)):
        if isinstance(value, py):
            return kind
    return type(value).__name__


def _printable(text: str, limit: int) -> str:
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates as \ud800
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(value, limit: int = 40) -> str:
    """A short, printable rendering of a scalar for a message."""
    return f'"{_printable(value, limit)}"' if isinstance(value, str) else _printable(repr(value), limit)


def valid_text(s: str) -> bool:
    """Whether s can be stored as UTF-8: JSON's \\ud800 escapes decode to lone surrogates, which
    protobuf refuses deep inside an op."""
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _where(path: str) -> str:
    return f'field "{_printable(path, 80)}"'


class JsonType:
    """A type of JSON value. check() answers None, or the complaint naming the path."""

    label: str | None = None

    @property
    def words(self) -> str:
        """What a value must be, for "must be ..."."""
        return self.label or self._words()

    def _words(self) -> str:
        raise NotImplementedError

    def claims(self, value) -> bool:
        """Whether value is of this type's JSON kind (a union blames the option that claims it)."""
        raise NotImplementedError

    def check(self, value, path: str) -> str | None:
        if not self.claims(value):
            return f"{_where(path)} must be {self.words}, got {kind_of(value)}"
        return self._check(value, path)

    def _check(self, value, path: str) -> str | None:
        return None

    def schema(self) -> dict:
        out = self._schema()
        if self.label:
            out["description"] = self.label
        return out

    def _schema(self) -> dict:
        raise NotImplementedError

    def __or__(self, other: JsonType) -> OneOf:
        mine = self.options if isinstance(self, OneOf) else (self,)
        theirs = other.options if isinstance(other, OneOf) else (other,)
        return OneOf((*mine, *theirs))


@dataclass(frozen=True)
class String(JsonType):
    min_length: int = 0
    pattern: str | None = None
    label: str | None = None

    def _words(self) -> str:
        return "a non-empty string" if self.min_length else "a string"

    def claims(self, value) -> bool:
        return isinstance(value, str)

    def _check(self, value, path):
        if not valid_text(value):
            return f"{_where(path)} must be valid Unicode text, got {shown(value)} (a lone surrogate)"
        if len(value) < self.min_length or (self.pattern and not re.fullmatch(self.pattern, value)):
            return f"{_where(path)} must be {self.words}, got {shown(value)}"
        return None

    def _schema(self):
        out: dict[str, Any] = {"type": "string"}
        if self.min_length:
            out["minLength"] = self.min_length
        if self.pattern:
            out["pattern"] = f"^{self.pattern}$"
        return out


@dataclass(frozen=True)
class Integer(JsonType):
    """A JSON integer that fits protobuf's int64 (JSON booleans and 2.0 are not integers)."""

    minimum: int | None = None
    label: str | None = None

    def _words(self) -> str:
        if self.minimum == 0:
            return "a non-negative integer"
        return "a positive integer" if self.minimum == 1 else "an integer"

    def claims(self, value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def _check(self, value, path):
        if not INT64[0] <= value <= INT64[1]:
            return f"{_where(path)} must fit in a 64-bit integer, got {shown(value)}"
        if self.minimum is not None and value < self.minimum:
            return f"{_where(path)} must be {self.words}, got {value}"
        return None

    def _schema(self):
        out: dict[str, Any] = {"type": "integer", "format": "int64"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out


@dataclass(frozen=True)
class Number(JsonType):
    label: str | None = None

    def _words(self) -> str:
        return "a number"

    def claims(self, value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    def _schema(self):
        return {"type": "number"}


@dataclass(frozen=True)
class Boolean(JsonType):
    label: str | None = None

    def _words(self) -> str:
        return "true or false"

    def claims(self, value) -> bool:
        return isinstance(value, bool)

    def _schema(self):
        return {"type": "boolean"}


@dataclass(frozen=True)
class Null(JsonType):
    label: str | None = None

    def _words(self) -> str:
        return "null"

    def claims(self, value) -> bool:
        return value is None

    def _schema(self):
        return {"type": "null"}


@dataclass(frozen=True)
class Enum(JsonType):
    """One of a fixed set of strings."""

    values: tuple[str, ...]
    label: str | None = None

    def _words(self) -> str:
        return "one of " + ", ".join(f'"{v}"' for v in self.values)

    def claims(self, value) -> bool:
        return isinstance(value, str)

    def _check(self, value, path):
        if value not in self.values:
            # a name in another case ("bool" for BOOL, QA45): the one meant, said
            same = next((v for v in self.values if v.lower() == value.lower()), None)
            hint = f' (did you mean "{same}"?)' if same else ""
            return f"{_where(path)} must be {self.words}, got {shown(value)}{hint}"
        return None

    def _schema(self):
        return {"type": "string", "enum": list(self.values)}


@dataclass(frozen=True)
class Array(JsonType):
    items: JsonType
    min_items: int = 0
    max_items: int | None = None
    label: str | None = None

    def _words(self) -> str:
        return "a non-empty array" if self.min_items else "an array"

    def claims(self, value) -> bool:
        return isinstance(value, list)

    def _check(self, value, path):
        if len(value) < self.min_items:
            return f"{_where(path)} must have at least {self.min_items} item(s)"
        if self.max_items is not None and len(value) > self.max_items:
            return f"{_where(path)} must have at most {self.max_items} items, got {len(value)}"
        for i, item in enumerate(value):
            problem = self.items.check(item, f"{path}[{i}]")
            if problem:
                return problem
        return None

    def _schema(self):
        out: dict[str, Any] = {"type": "array", "items": self.items.schema()}
        if self.min_items:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        return out


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Field:
    """A named member of a JSON object: its type, whether it must be there, what it means, and
    (for an optional one) the value its absence stands for."""

    name: str
    type: JsonType
    description: str
    required: bool = True
    default: Any = MISSING

    def schema(self) -> dict:
        label = self.type.label  # a named type's meaning (a node id or name, ...) stays with the field's
        description = f"{self.description} ({label})" if label else self.description
        out = {**self.type.schema(), "description": description}
        if self.default is not MISSING:
            out["default"] = self.default
        return out


def required(name: str, type: JsonType, description: str) -> Field:
    return Field(name, type, description)


def optional(name: str, type: JsonType, description: str, default: Any = MISSING) -> Field:
    return Field(name, type, description, required=False, default=default)


@dataclass(frozen=True)
class Object(JsonType):
    """An object with declared fields only. `tag`: the field whose presence makes a union pick
    this option to blame (as "npy" does for an uploaded tensor)."""

    fields: tuple[Field, ...]
    tag: str | None = None
    label: str | None = None

    def _words(self) -> str:
        return "an object {" + ", ".join(f'"{f.name}"' + ("" if f.required else "?") for f in self.fields) + "}"

    def claims(self, value) -> bool:
        return isinstance(value, dict) and (self.tag is None or self.tag in value)

    def _check(self, value, path):
        known = {f.name: f for f in self.fields}
        for key in value:
            if key not in known:
                return f"unexpected {_where(_join(path, key))} (fields: {', '.join(known) or 'none'})"
        for f in self.fields:
            if f.name not in value:
                if f.required:
                    return f"{_where(_join(path, f.name))} is required"
                continue
            problem = f.type.check(value[f.name], _join(path, f.name))
            if problem:
                return problem
        return None

    def _schema(self):
        return {
            "type": "object",
            "properties": {f.name: f.schema() for f in self.fields},
            "required": [f.name for f in self.fields if f.required],
            "additionalProperties": False,
        }


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@dataclass(frozen=True)
class Map(JsonType):
    """An object whose keys are names the client chooses (non-empty), each value of one type."""

    values: JsonType
    label: str | None = None

    def _words(self) -> str:
        return "an object"

    def claims(self, value) -> bool:
        return isinstance(value, dict)

    def _check(self, value, path):
        for key, item in value.items():
            if not key or not valid_text(key):
                return f"{_where(path)} keys must be non-empty valid Unicode text, got {shown(key)}"
            problem = self.values.check(item, _join(path, key))
            if problem:
                return problem
        return None

    def _schema(self):
        return {"type": "object", "propertyNames": {"minLength": 1}, "additionalProperties": self.values.schema()}


@dataclass(frozen=True)
class AnyJson(JsonType):
    """Any JSON value; its strings and keys must still be valid Unicode (they end up in protobuf)."""

    label: str | None = None

    def _words(self) -> str:
        return "a JSON value"

    def claims(self, value) -> bool:
        return True

    def _check(self, value, path):
        stack = [value]  # a loop, not recursion: JSON nests as deep as the parser allows
        while stack:
            v = stack.pop()
            if isinstance(v, str) and not valid_text(v):
                return f"{_where(path)} holds a string that is not valid Unicode text ({shown(v)}: a lone surrogate)"
            if isinstance(v, list):
                stack.extend(v)
            elif isinstance(v, dict):
                stack.extend(v.keys())
                stack.extend(v.values())
        return None

    def _schema(self):
        return {}


@dataclass(frozen=True)
class OneOf(JsonType):
    """A value of any of the options. A miss is blamed on the option of the value's kind, if one."""

    options: tuple[JsonType, ...]
    label: str | None = None

    def _words(self) -> str:
        words = [o.words for o in self.options]
        return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]

    def claims(self, value) -> bool:
        return any(o.claims(value) for o in self.options)

    def _check(self, value, path):
        problems = [o.check(value, path) for o in self.options if o.claims(value)]
        return None if None in problems else problems[0]

    def _schema(self):
        return {"anyOf": [o.schema() for o in self.options]}
