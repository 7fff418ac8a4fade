"""The one interface every message format implements: bytes in, a list of `Change`s out, `BadRecord` on bad input.

Parsing here is pure Python (no JVM): infer-schema and the tests use it; the Spark path parses the same envelopes
with Spark expressions from the same vocabulary (vocabulary.py), and the parity test holds the two to one verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from cdcsync.formats.vocabulary import (
    BAD_VALUE,
    INVALID_JSON,
    INVALID_UTF8,
    MISSING_FIELD,
    NOT_AN_OBJECT,
    OVERSIZED,
    SKIP,
)

if TYPE_CHECKING:
    from cdcsync.schema.types import ColumnType


@dataclass(frozen=True, slots=True)
class Coord:
    """Where a record was read: one Kafka offset (file inputs use the file name and line number)."""

    topic: str
    partition: int
    offset: int

    def __str__(self) -> str:
        return f"topic {self.topic} partition {self.partition} offset {self.offset}"

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "offset": self.offset}


@dataclass(slots=True)
class Change:
    op: str  # vocabulary.UPSERT | DELETE | SKIP
    table: str | None  # "database.table" (or "database.schema.table") when the envelope carries it
    row: dict[str, Any] | None  # after-image (upsert) or before-image/key (delete); values JSON-typed unless typed=True
    key_columns: list[str] | None  # primary key when the format carries it
    declared: dict[str, ColumnType] | None  # types the envelope states (Debezium schema) or hints (Canal mysqlType)
    ts_ms: int | None  # source event time in ms
    skip_reason: str | None = None  # one of vocabulary.SKIP_REASONS
    declared_source: str | None = None  # "envelope" (authoritative) | "hint" (strong hint, data may overrule)
    not_null: frozenset[str] = field(default_factory=frozenset)  # columns the envelope declares NOT NULL
    text_values: bool = False  # values are text renderings (Canal, CSV): numbers/booleans are parsed from strings


class BadRecord(Exception):
    """A record that is not valid for its format. `reason_code` is stable (dead-letter files and metrics use it)."""

    def __init__(self, reason_code: str, message: str):
        super().__init__(f"{reason_code}: {message}")
        self.reason_code = reason_code
        self.message = message


class Decoder(Protocol):
    name: str

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]: ...


def skip(reason: str, table: str | None = None, ts_ms: int | None = None) -> list[Change]:
    return [Change(SKIP, table, None, None, None, ts_ms, skip_reason=reason)]


def load_json(value: bytes, max_bytes: int | None = None) -> Any:
    """bytes → JSON value, mapping every failure to a BadRecord reason code."""
    if max_bytes is not None and len(value) > max_bytes:
        raise BadRecord(OVERSIZED, f"{len(value)} bytes is more than the limit of {max_bytes}")
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRecord(INVALID_UTF8, f"not UTF-8 at byte {e.start}") from None
    try:
        doc, end = _JSON.raw_decode(text, len(text) - len(text.lstrip(" \t\n\r")))
    except RecursionError:  # a pathologically nested document must not crash the consumer
        raise BadRecord(INVALID_JSON, "nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, and int literals over Python's digit limit
        raise BadRecord(INVALID_JSON, str(e)[:200]) from None
    rest = text[end:].rstrip(" \t\n\r\x0b\x0c")
    # as run's Jackson reads it (and Flink's): text after an object is an error unless it too ends in "}"
    if rest and not (isinstance(doc, dict) and rest.endswith("}")):
        raise BadRecord(INVALID_JSON, f"text after the JSON value at character {end}")
    return doc


_JSON = json.JSONDecoder()


def load_object(value: bytes, max_bytes: int | None = None) -> dict[str, Any]:
    doc = load_json(value, max_bytes)
    if not isinstance(doc, dict):
        raise BadRecord(NOT_AN_OBJECT, f"expected a JSON object, got {_json_kind(doc)}")
    return doc


def require(doc: dict[str, Any], name: str, kinds: type | tuple[type, ...], where: str = "") -> Any:
    """doc[name], checked for presence (null counts as missing) and JSON kind."""
    v = doc.get(name)
    if v is None:
        raise BadRecord(MISSING_FIELD, f"no '{where}{name}' field")
    if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in _as_tuple(kinds)):
        raise BadRecord(BAD_VALUE, f"'{where}{name}' is {_json_kind(v)}")
    return v


def table_name(parts: list[Any]) -> str | None:
    """The source table's name from the envelope's name parts (vocabulary.Envelope.table): the non-empty ones
    joined with "."; None without the last, the table itself. A number or boolean reads as its JSON text; an
    object, an array, or text starting with "{" or "[" (run cannot tell those apart) is no name."""
    texts = [json.dumps(p) if isinstance(p, int | float) else p for p in parts]
    texts = [t if isinstance(t, str) and t and t[0] not in "{[" else None for t in texts]
    return ".".join(t for t in texts if t) if texts[-1] else None


def at(doc: dict[str, Any], path: str) -> Any:
    """doc's value at a dotted vocabulary path; None when any step is missing or not an object."""
    node: Any = doc
    for step in path.split("."):
        node = node.get(step) if isinstance(node, dict) else None
    return node


def optional_int(doc: dict[str, Any], name: str) -> int | None:
    v = doc.get(name)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _as_tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"
