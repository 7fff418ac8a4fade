"""The four outputs of infer-schema: a rich table, JSON Schema (2020-12), Spark DDL, and a `[schema.columns]` block.

The JSON Schema describes the row objects as they travel (a Debezium Decimal is a base64 string, a Canal number is
text), annotated with the column type under "x-cdcsync-type"; the same topic's rows validate against it.

With [transform] sql, the table view, its JSON and Spark DDL show the table's columns after it (transform/types.py):
Spark types outside the inference vocabulary (INT, ARRAY<…>), and columns infer-schema cannot type (left out of
the DDL, named on a `--` line).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from cdcsync.schema.model import ENVELOPE, ColumnSchema, TableSchema
from cdcsync.schema.types import BIGINT_MAX, BIGINT_MIN, STRING, ColumnType, Kind, widen

if TYPE_CHECKING:
    from rich.table import Table

DRAFT = "https://json-schema.org/draft/2020-12/schema"

# Text renderings of non-string types (CSV fields, Canal values, numeric strings a declared type parses).
_TEXT_PATTERN = {
    Kind.BIGINT: r"^[+-]?\d+$",
    Kind.DECIMAL: r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$",
    Kind.DOUBLE: r"^([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|NaN|[+-]?Infinity)$",
    Kind.BOOLEAN: r"^(?i:true|false|0|1)$",
}


# -- JSON Schema ---------------------------------------------------------------------------------------------------

def json_schema(tables: dict[str, TableSchema]) -> dict[str, Any]:
    """One schema for one table; for several tables, one $defs entry each and an anyOf over them."""
    if len(tables) == 1:
        return {"$schema": DRAFT, **table_json_schema(next(iter(tables.values())))}
    return {
        "$schema": DRAFT,
        "$defs": {name: table_json_schema(t) for name, t in tables.items()},
        "anyOf": [{"$ref": "#/$defs/" + name.replace("~", "~0").replace("/", "~1")} for name in tables],
    }


def table_json_schema(t: TableSchema) -> dict[str, Any]:
    root = _object_node(t.name)
    if t.primary_key:
        root["x-primary-key"] = list(t.primary_key)
    for c in t.columns.values():
        node = root
        for part in c.path[:-1]:  # flattened columns live inside nested objects in the row
            child = node["properties"].setdefault(part, _object_node(None, nullable=True))
            if not c.nullable:  # a leaf in every row means its parent object was there too, never null
                child["type"] = "object"
                _require(node, part)
            node = child
        leaf = c.path[-1] if c.path else c.name
        node["properties"][leaf] = column_json_schema(c)
        if not c.nullable:
            _require(node, leaf)
    return root


def _require(node: dict[str, Any], name: str) -> None:
    required = node.setdefault("required", [])
    if name not in required:
        required.append(name)


def _object_node(title: str | None, nullable: bool = False) -> dict[str, Any]:
    node: dict[str, Any] = {"type": ["object", "null"] if nullable else "object"}
    if title:
        node["title"] = title
    node["properties"] = {}
    node["additionalProperties"] = False  # a column not sampled yet is a schema change, not a valid row
    return node


def column_json_schema(c: ColumnSchema) -> dict[str, Any]:
    t = c.type
    if t is None:
        return {"type": "null", "x-cdcsync-type": str(STRING)}
    canon = t.json_schema()
    kinds = set(c.json_kinds) or {canon["type"]}
    if "number" in kinds:
        kinds.discard("integer")  # JSON Schema's number includes integers
    accepted = {canon["type"], "integer"} if canon["type"] == "number" else {canon["type"]}
    if kinds <= accepted:
        out = canon
        out["type"] = canon["type"] if len(kinds) == 1 or canon["type"] == "number" else sorted(kinds)
    else:
        out = {"type": sorted(kinds)}
        if "string" in kinds and t.kind in _TEXT_PATTERN and c.origin != ENVELOPE:
            out["pattern"] = _TEXT_PATTERN[t.kind]  # text renderings: the envelope's own encodings are not text
        if {"integer", "number"} & kinds and t.kind is Kind.BIGINT:
            out["minimum"], out["maximum"] = BIGINT_MIN, BIGINT_MAX
    if c.nullable or c.nulls:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = [*types, "null"]
    out["x-cdcsync-type"] = str(t)
    return out


# -- Spark DDL -----------------------------------------------------------------------------------------------------

def spark_ddl(tables: dict[str, TableSchema]) -> str:
    """`col TYPE[ NOT NULL], …` per table (StructType.fromDDL / from_json syntax); a `-- table` line before each
    when there are several."""
    lines = []
    for name, t in tables.items():
        ddl = table_spark_ddl(t)
        lines.append(f"-- {name}\n{ddl}" if len(tables) > 1 else ddl)
    return "\n".join(lines)


def table_spark_ddl(t: TableSchema) -> str:
    """A column [transform] sql computes and infer-schema cannot type is left out, named on a `--` line before
    (Spark decides its type when the run analyses the SELECT)."""
    parts, notes = [], []
    for c in t.columns.values():
        quoted = "`" + c.name.replace("`", "``") + "`"
        if c.untyped:
            notes.append(f"-- {quoted} = {c.computed}: left out, infer-schema cannot type it (stderr says why)")
            continue
        parts.append(f"{quoted} {c.ddl_type()}{'' if c.nullable else ' NOT NULL'}")
    return "\n".join([*notes, ", ".join(parts)])


# -- TOML ----------------------------------------------------------------------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_columns(tables: dict[str, TableSchema]) -> str:
    """A `[schema.columns]` block to paste into config.toml (columns of several tables merged by widening)."""
    merged: dict[str, ColumnType | None] = {}
    null_only: list[str] = []
    for t in tables.values():
        for c in t.columns.values():
            if c.type is None:
                null_only.append(c.name)
                continue
            merged[c.name] = widen(merged.get(c.name), c.type)
    lines = [f"# inferred by cdcsync infer-schema from {', '.join(tables) or 'no records'}", "[schema.columns]"]
    lines += [f"{_toml_key(name)} = \"{t}\"" for name, t in merged.items()]
    lines += [f"# {_toml_key(n)}: only nulls seen, type unknown" for n in null_only if n not in merged]
    return "\n".join(lines)


def _toml_key(name: str) -> str:
    if _BARE_KEY.match(name):
        return name
    return json.dumps(name, ensure_ascii=False).replace("\x7f", "\\u007F")  # TOML wants DEL escaped, JSON does not


# -- rich table ----------------------------------------------------------------------------------------------------

def rich_tables(tables: dict[str, TableSchema]) -> list[Table]:
    from rich.table import Table

    out = []
    for name, t in tables.items():
        pk = f", primary key: {', '.join(t.primary_key)}" if t.primary_key else ""
        after = f"; the table's columns after {t.transform}" if t.transform else ""
        table = Table(title=f"{name or '(no table name)'} ({t.records} records{pk}{after})", title_justify="left")
        for head in ("column", "type", "nullable", "samples", "from", "example", "seen at"):
            table.add_column(head, overflow="fold")
        for c in t.columns.values():
            where = f"{c.coord.topic}[{c.coord.partition}]@{c.coord.offset}" if c.coord else ""
            table.add_row(c.name, _type_cell(c), "yes" if c.nullable else "no", str(c.samples), c.origin,
                          f"= {c.computed}" if c.computed else _example(c.example), where)
        out.append(table)
    return out


def facts(tables: dict[str, TableSchema]) -> dict[str, Any]:
    """What the table view shows, as data (`infer-schema --json`)."""
    return {"tables": [{
        "table": name, "records": t.records, "primary_key": list(t.primary_key or []),
        **({"transform": t.transform} if t.transform else {}),
        "columns": [{"name": c.name, "type": c.shown_type(), "only_nulls": _only_nulls(c), "nullable": c.nullable,
                     "samples": c.samples, "from": c.origin, "example": c.example,
                     **({"expression": c.computed} if c.computed else {}),
                     "seen_at": ({"topic": c.coord.topic, "partition": c.coord.partition, "offset": c.coord.offset}
                                 if c.coord else None)} for c in t.columns.values()],
    } for name, t in tables.items()]}


def _only_nulls(c: ColumnSchema) -> bool:
    return c.type is None and c.spark_type is None and c.computed is None


def _type_cell(c: ColumnSchema) -> str:
    shown = c.shown_type()
    if shown is None:  # untyped
        return "? (Spark decides at run time)"
    return shown + (" (only nulls)" if _only_nulls(c) else "")


def _example(v: object, limit: int = 40) -> str:
    if v is None:
        return ""
    text = v if isinstance(v, str) else json.dumps(v, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
