"""The tables as `run` stores them: what infer-schema's table view, `--json` and `-o spark-ddl` show.

infer-schema reads a sample's values in Python (infer.py, values.py); `run` types each batch in Spark
(schema/spark/infer.py). They share the lattice (types.py), the Debezium and MySQL type mappings and the
`[schema]` options, and they agree wherever a format carries its types. Where the row images decide, the run's
table follows Spark's JSON inference (spark_json.py), and this module applies the run's rules to the sample:

- a column of schemaless values has the type Spark's JSON inference gives it: a JSON string is STRING even when
  every value reads as a date, a timestamp, a time, or (CSV and Canal text) a number or a boolean; a field holding
  only nulls (or empty strings, objects and arrays: Spark infers "" as a null) is no column yet;
- a table whose changes carry a Debezium schema envelope (or an Avro schema) has the envelope's columns, after
  the `key_fields` columns it does not name (other fields are not stored); one whose changes carry Canal's
  mysqlType has the hinted columns, each of the hint's type (a value that does not parse is a bad record,
  `bad_value`, not a wider column);
- column order: an envelope's or the hints' order; a csv's `csv_columns`; otherwise the first row image's fields
  in its order, then the other columns by name (Spark's inference sorts them), a flattened object's leaves in
  place of the object;
- a column name Hudi cannot store is no column (its records are bad, `bad_column_name`);
- a `[schema.columns]` column no change has carried (or only with nulls) comes last, as the run adds it.

The notes say where the table differs from what the values look like (`-o toml` and `-o json-schema` still show
that: a TIMESTAMP there is a type to declare in `[schema.columns]`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from cdcsync.schema.model import DATA, DECLARED, HINT, ColumnSchema, TableSchema
from cdcsync.schema.spark_json import column_type, is_text, utf16
from cdcsync.schema.types import STRING, Kind, parse_type

if TYPE_CHECKING:
    from cdcsync.config.model import MaskConfig
    from cdcsync.schema.infer import SchemaInferrer, _Col, _Table

# a Hudi column name (schema/spark/columns.py NAME, which imports pyspark): letters, digits, _ (not first a digit)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a new column's type the run settles by a vote, and the narrower types that can win it (stages/type_conflicts.py)
_NARROWER = {"STRING": ("BIGINT", "DOUBLE", "BOOLEAN"), "DOUBLE": ("BIGINT",)}
_VOTE = {"BIGINT": 0, "DOUBLE": 1, "BOOLEAN": 2}  # the narrower type's place in _Col.votes


@dataclass(frozen=True)
class RunRules:
    """The config's settings that shape the run's table beyond the `[schema]` options the inferrer has."""

    order: list[str] | None = None  # column names in the order the format fixes (a csv's csv_columns)
    key_fields: list[str] | None = None  # columns the rows take from the Kafka key (first, beside an envelope)
    deleted_field: str | None = None  # marks deletes: no column, even when an Avro row's schema names it
    primary_key: list[str] | None = None  # [sink] primary_key; else key_fields, else what the format carries
    vote_all: bool = False  # [schema] on_type_conflict = "dead-letter": every new column's type is voted, not only keys


def stored(inferrer: SchemaInferrer, rules: RunRules | None = None) -> tuple[dict[str, TableSchema], list[str]]:
    """(the tables as `run` creates them from the changes `inferrer` saw (a SchemaInferrer), notes on where and why
    they differ from what the values show)."""
    rules = rules or RunRules()
    shown = inferrer.result()
    declared = inferrer.options.columns
    out, notes = {}, []
    for t in inferrer._tables.values():
        table = shown[t.name]
        typed_by = t.env_names or t.hints  # the envelope's or the hints' columns, else the row images'
        from_key = [k for k in rules.key_fields or [] if k not in typed_by] if t.env_names else []
        key = set(rules.primary_key or rules.key_fields or table.primary_key or [])
        cols: dict[str, ColumnSchema] = {}
        for c in t.cols.values():
            col = table.columns.get(c.name)
            if col is None or c.name == rules.deleted_field:
                continue  # a flattened object (its leaves stand for it), or the deletes' flag
            if typed_by and c.name not in typed_by and c.name not in from_key:
                if c.origin != DECLARED:  # a declared column that is no batch column: the run adds it last
                    notes.append(f"{t.name}.{c.name}: not stored: the table's columns are those "
                                 f"{'the schema envelope' if t.env_names else 'mysqlType'} names")
                continue
            vote = not typed_by and (c.name in key or rules.vote_all) and len(c.path) == 1
            col, note = _column(inferrer.options.primitive_as_string, t, c, col, not typed_by or c.name in from_key,
                                vote)
            notes += [note] if note else []
            if col is None:
                continue
            if not NAME.fullmatch(c.name) or any(n.lower() == c.name.lower() for n in cols):
                notes.append(f"{t.name}: column name {c.name!r} cannot be stored in a Hudi table: the run counts "
                             "the records carrying it bad (bad_column_name)")
                continue
            cols[c.name] = col
        as_string = inferrer.options.primitive_as_string
        for name in t.hints:  # a hinted column no row image carried is a column of the run's table too
            if name not in cols and name not in table.columns:
                cols[name] = ColumnSchema(name, STRING if as_string else t.hints[name], origin=HINT)
        names = _ordered(t, list(cols), rules.order, from_key)
        for name in (n for n in declared if n not in cols):  # as the run adds them: after the batch's columns
            names.append(name)
            cols[name] = table.columns.get(name) or ColumnSchema(name, declared[name], origin=DECLARED)
            cols[name] = replace(cols[name], type=declared[name], nullable=True)
        if len(t.sources) > 1:
            notes.append(f"{t.name}: the run writes the changes of {len(t.sources)} source tables into this one "
                         f"table ({', '.join(list(t.sources)[:5])}{', …' if len(t.sources) > 5 else ''})")
        out[t.name] = TableSchema(t.name, {n: cols[n] for n in names}, table.primary_key, table.records,
                                  table.transform)
    return out, notes


def _column(as_string: bool, t: _Table, c: _Col, col: ColumnSchema, from_rows: bool,
            vote: bool) -> tuple[ColumnSchema | None, str | None]:
    """(one column as the run stores it (None: not a column yet), a note); `from_rows`: typed by the row images'
    values; `vote`: a new column whose type the run settles by a vote."""
    if c.origin == HINT:
        return replace(col, type=STRING if as_string else t.hints[c.name]), None
    if c.origin not in (DATA, DECLARED) or not from_rows:
        return col, None
    spark = column_type(c.spark)
    if spark is None:  # Spark drops a field that holds no value (a declared one the run adds last)
        return None, None if c.origin == DECLARED else (
            f"{t.name}.{c.name}: only nulls (or empty strings, objects, arrays) sampled: run adds the column when a "
            "value arrives")
    if c.origin == DECLARED:
        return col, None
    if as_string:
        return replace(col, type=STRING), None
    if vote and str(spark) in _NARROWER and (spark != STRING or is_text(c.spark)):
        kept = next((k for k in _NARROWER[str(spark)] if c.votes[_VOTE[k]] * 2 > c.samples), None)
        if kept:
            return replace(col, type=parse_type(kept)), (
                f"{t.name}.{c.name}: its values need {spark}, and most are {kept}: run keeps {kept} (a new key "
                f"column's type is the majority's) and counts the records of the other "
                f"{c.samples - c.votes[_VOTE[kept]]} value(s) bad (incompatible_type)")
    note = None
    if spark == STRING and col.type is not None and col.type.kind is not Kind.STRING:
        note = (f"{t.name}.{c.name}: every sampled value reads as {col.type}, and run stores it as STRING (it types "
                f"no text); declare it in [schema.columns] to store {col.type} (-o toml prints the block)")
    return replace(col, type=spark), note


def _ordered(t: _Table, names: list[str], order: list[str] | None, from_key: list[str]) -> list[str]:
    """The run's column order (module docstring)."""
    if t.env_names or t.hints:
        fixed = [n for n in [*from_key, *(t.env_names or t.hints)] if n in names]
        return fixed + [n for n in names if n not in fixed]
    paths = {n: t.cols[n].path if n in t.cols else (n,) for n in names}
    top = list(dict.fromkeys(paths[n][0] for n in names))
    first = order if order is not None else (t.first_row or [])
    ranked = [n for n in first if n in top]
    ranked += sorted((n for n in top if n not in ranked), key=utf16)
    rank = {n: i for i, n in enumerate(ranked)}
    return sorted(names, key=lambda n: (rank[paths[n][0]], [utf16(p) for p in paths[n][1:]]))


def masked(tables: dict[str, TableSchema], masks: list[MaskConfig]) -> dict[str, TableSchema]:
    """The tables as run stores them under [[mask]]: a masked column's type and nullability what the mask writes (the
    inferrer kept its values out of examples and messages). A mask names target tables, and infer-schema's tables
    may be source tables: a column any mask names is masked."""
    for table in tables.values():
        for m in masks:
            c = table.columns.get(m.column)
            if c is not None:
                c.type = STRING if m.stores_text and c.type is not None else c.type
                c.nullable = c.nullable or not m.stores_text  # a NULL redaction stores only nulls
    return tables
