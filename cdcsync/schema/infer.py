"""Streaming schema inference: feed Changes one at a time, ask for the per-table schemas at any point.

Type precedence per column: declared in config (wins; data that does not fit is an error) > envelope (Debezium's
schema, authoritative) > hint (Canal's mysqlType; a value that does not parse widens it) > the data itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from cdcsync.config.model import MASKED_TEXT
from cdcsync.errors import SchemaError
from cdcsync.formats.base import Change, Coord
from cdcsync.formats.vocabulary import SKIP, UPSERT
from cdcsync.schema.model import DATA, DECLARED, ENVELOPE, HINT, ColumnSchema, TableSchema
from cdcsync.schema.options import FLATTEN_SEP, InferOptions
from cdcsync.schema.spark_json import TEXT, JsonType, merge, value_type, vote
from cdcsync.schema.types import STRING, ColumnType, Kind, holds, widen
from cdcsync.schema.values import fits, seen_type_for, text_type

_NUMERIC = frozenset({Kind.BIGINT, Kind.DECIMAL, Kind.DOUBLE})
_JSON_KIND = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object", list: "array"}


class _Col:
    """Mutable per-column counters; slots keep the per-value path cheap."""

    __slots__ = ("name", "path", "type", "origin", "hint", "env", "present", "samples", "nulls", "example",
                 "coord", "kinds", "saturated", "spark", "votes")

    def __init__(self, name: str, path: tuple[str, ...], origin: str, ctype: ColumnType | None) -> None:
        self.name, self.path, self.origin, self.type = name, path, origin, ctype
        self.hint = ctype if origin == HINT else None
        self.env: ColumnType | None = None  # the envelope's type, when one states it
        self.present = self.samples = self.nulls = 0
        self.example: Any = None
        self.coord: Coord | None = None
        self.kinds: set[type] = set()
        self.saturated = ctype is STRING  # STRING absorbs everything: stop classifying
        self.spark: JsonType | None = None  # the values' type under Spark's JSON inference, as `run` reads them
        self.votes = [0, 0, 0]  # values Spark reads as a BIGINT, a DOUBLE, a BOOLEAN (the run's type vote)


class _Table:
    __slots__ = ("name", "cols", "upserts", "records", "primary_key", "paths", "not_null", "last_env", "sources",
                 "first_row", "hints", "env_names", "last_hints")

    def __init__(self, name: str) -> None:
        self.name = name
        self.cols: dict[str, _Col] = {}
        self.upserts = self.records = 0
        self.primary_key: list[str] | None = None
        self.paths: dict[str, tuple[str, ...]] = {}
        self.not_null: frozenset[str] = frozenset()
        self.last_env: dict[str, ColumnType] | None = None
        self.sources: dict[str, None] = {}  # the source tables whose changes it holds (several: table_of merged them)
        self.first_row: list[str] | None = None  # the fields of the first row image, in its order
        self.hints: dict[str, ColumnType] = {}  # every hinted column (Canal's mysqlType), its hints widened
        self.env_names: dict[str, None] = {}  # every column a schema envelope named
        self.last_hints: dict[str, ColumnType] | None = None


class SchemaInferrer:
    def __init__(self, options: InferOptions | None = None, masked: frozenset[str] = frozenset(),
                 one_table: str | None = None) -> None:
        """`masked`: the columns a [[mask]] names, whose values reach no example, warning or error; `one_table`:
        the name of the one table every source table's changes go to (one schema over all of them, as `run`
        without [[route]] writes them into one table), else each source table is its own."""
        self.options = options or InferOptions()
        self._one_table = one_table
        self._masked = masked
        self._declared = self.options.columns
        self._flatten = self.options.flatten_nested_columns
        self._as_string = self.options.primitive_as_string
        self._tables: dict[str, _Table] = {}
        self.skipped: Counter[str] = Counter()
        self.warnings: list[str] = []

    def observe(self, change: Change, coord: Coord | None = None) -> None:
        if change.op == SKIP:
            self.skipped[change.skip_reason or "skip"] += 1
            return
        source = change.table or (coord.topic if coord else "")
        name = self._one_table if self._one_table is not None else source
        t = self._tables.get(name)
        if t is None:
            t = self._tables[name] = _Table(name)
        t.sources[source] = None
        t.records += 1
        upsert = change.op == UPSERT
        if upsert:
            t.upserts += 1
        if change.key_columns:
            t.primary_key = list(change.key_columns)
        declared = change.declared
        hints = None
        if declared:
            if change.declared_source == "envelope":
                if declared != t.last_env:
                    self._envelope(t, declared, change.not_null, coord)
            else:
                hints = declared
                if hints is not t.last_hints:
                    self._hinted(t, hints)
        row = change.row or {}
        if t.first_row is None and change.row:
            t.first_row = list(row)
        items = self._flat(t, row) if self._flatten else row.items()
        cols, text = t.cols, change.text_values
        for col, v in items:
            c = cols.get(col)
            if c is None:
                c = self._new_column(t, col, hints)
            elif hints is not None and c.origin == HINT and col in hints and hints[col] != c.hint:
                self._rehint(c, hints[col])
            if upsert:
                c.present += 1
            if v is None:
                c.nulls += 1
                continue
            if c.spark != TEXT:
                c.spark = merge(c.spark, value_type(v))
            vote(c.votes, v)
            c.samples += 1
            c.kinds.add(type(v))
            if c.example is None:
                c.example, c.coord = (MASKED_TEXT if col in self._masked else v), coord
            if c.saturated:
                continue
            origin = c.origin
            if origin == DATA:
                seen = text_type(v, text, self._as_string)
                if seen is not c.type and seen != c.type:
                    c.type = widen(c.type, seen)
                    c.saturated = c.type is STRING or c.type == STRING
            elif origin == DECLARED:
                assert c.type is not None  # a declared column has the declared type
                if c.env is None and not fits(c.type, v):
                    raise self._mismatch(t, c, seen_type_for(c.type, v), v, coord)
            elif origin == HINT:
                assert c.type is not None  # a hinted column starts at the hint and only widens
                if not fits(c.type, v):
                    new = widen(c.type, text_type(v, True, False))
                    self.warnings.append(f"{t.name}.{col}: value {self._value(col, v)} at {coord} does not parse as "
                                         f"the hinted {c.type}; inferring {new}")
                    c.type = new
                    c.saturated = new == STRING

    # -- columns -------------------------------------------------------------------------------------------------

    def _new_column(self, t: _Table, col: str, hints: dict[str, ColumnType] | None) -> _Col:
        path = t.paths.get(col, (col,))
        if col in self._declared:
            c = _Col(col, path, DECLARED, self._declared[col])
        elif hints is not None and col in hints:
            c = _Col(col, path, HINT, STRING if self._as_string else hints[col])
        else:
            c = _Col(col, path, DATA, None)
        t.cols[col] = c
        return c

    def _hinted(self, t: _Table, hints: dict[str, ColumnType]) -> None:
        t.last_hints = hints
        for col, h in hints.items():
            t.hints[col] = widen(t.hints.get(col), h) or h

    def _rehint(self, c: _Col, new: ColumnType) -> None:
        c.hint = widen(c.hint, new)  # the source table changed type (ALTER TABLE) between messages
        if not self._as_string:
            c.type = widen(c.type, new)
            c.saturated = c.type == STRING

    def _envelope(self, t: _Table, declared: dict[str, ColumnType], not_null: frozenset[str],
                  coord: Coord | None) -> None:
        t.last_env = declared
        t.not_null = not_null
        t.env_names.update(dict.fromkeys(declared))
        for col, env_type in declared.items():
            c = t.cols.get(col)
            if c is None:
                c = self._new_column(t, col, None)
                if c.origin == DATA:
                    c.origin, c.type = ENVELOPE, env_type
            if c.origin == DECLARED:
                assert c.type is not None  # a declared column has the declared type
                if not holds(c.type, env_type):
                    raise self._mismatch(t, c, env_type, None, coord, envelope=True)
            elif c.origin == ENVELOPE and c.env is not None and env_type != c.env:
                c.type = widen(c.type, env_type)  # the source table changed type between messages
            elif c.origin == DATA:
                c.origin, c.type = ENVELOPE, widen(c.type, env_type)
            c.env = env_type
            c.saturated = c.origin == ENVELOPE or c.saturated

    def _flat(self, t: _Table, row: dict[str, Any], prefix: str = "",
              path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
        """(column, value) pairs of a row with nested objects flattened to `a_b` names; collisions are errors."""
        for k, v in row.items():
            name, p = f"{prefix}{k}", (*path, k)
            if type(v) is dict and v:
                yield from self._flat(t, v, f"{name}{FLATTEN_SEP}", p)
                continue
            known = t.paths.get(name)
            if known is None:
                t.paths[name] = p
            elif known != p:
                raise SchemaError(
                    f"{t.name}: flattening nested columns gives two columns the name '{name}': from "
                    f"{_show(known)} and from {_show(p)}",
                    hint="turn schema.flatten_nested_columns off, or rename one of the fields at the source",
                    table=t.name, column=name, paths=[list(known), list(p)])
            yield name, v

    def _value(self, col: str, v: object) -> str:
        """A value as a message shows it: ***masked*** in a masked column."""
        return MASKED_TEXT if col in self._masked else _short(v)

    def _mismatch(self, t: _Table, c: _Col, seen: ColumnType | None, v: object, coord: Coord | None,
                  envelope: bool = False) -> SchemaError:
        where = str(coord) if coord else "a sampled record"
        what = f"the message schema declares {seen}" if envelope else f"has {seen} (value {self._value(c.name, v)})"
        return SchemaError(
            f"{t.name}: column '{c.name}' is declared {c.type} in schema.columns but {where} {what}",
            hint=f"declare a type that holds {seen} (e.g. {widen(c.type, seen)}) or remove schema.columns.{c.name}",
            table=t.name, column=c.name, declared=str(c.type), seen=str(seen),
            **(coord.to_dict() if coord else {}))

    # -- results -------------------------------------------------------------------------------------------------

    def result(self) -> dict[str, TableSchema]:
        out = {}
        for t in self._tables.values():
            parents = {c.path[:i] for c in t.cols.values() for i in range(1, len(c.path))}
            cols = {}
            for c in t.cols.values():
                if c.path in parents and c.samples == 0:
                    continue  # a flattened object's own (null or struct-typed) column: its leaves stand for it
                nullable = c.nulls > 0 or c.present < t.upserts
                if c.env is not None and c.name not in t.not_null:
                    nullable = True  # the envelope says optional: a sample without nulls does not prove otherwise
                cols[c.name] = ColumnSchema(
                    c.name, c.type, nullable=nullable, samples=c.samples, nulls=c.nulls, example=c.example,
                    coord=c.coord, origin=c.origin, path=c.path,
                    json_kinds=frozenset(_JSON_KIND.get(k, "string") for k in c.kinds))
            out[t.name] = TableSchema(t.name, cols, t.primary_key, t.records)
        return out

    def source_tables(self) -> list[str]:
        """The source tables of the changes seen, in first-seen order."""
        return list(dict.fromkeys(s for t in self._tables.values() for s in t.sources))

    def unseen_declared(self) -> list[str]:
        """Columns declared in schema.columns that no sampled record carried."""
        seen = {c for t in self._tables.values() for c in t.cols}
        return [c for c in self._declared if c not in seen]


def _show(path: tuple[str, ...]) -> str:
    return " → ".join(repr(p) for p in path)


def _short(v: object, limit: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"
