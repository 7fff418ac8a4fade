"""canal-json: one Change per element of `data[]`; every value is text, typed by `mysqlType`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from cdcsync.formats import vocabulary as v
from cdcsync.formats.base import BadRecord, Change, at, load_object, optional_int, require, skip, table_name
from cdcsync.formats.mysql_types import decode_text, mysql_type

if TYPE_CHECKING:
    from cdcsync.schema.types import ColumnType

V = v.CANAL


class CanalDecoder:
    name = V.format

    def __init__(self, typed: bool = False, max_bytes: int | None = None):
        self.typed = typed  # convert text values by mysqlType (int, Decimal, date …)
        self.max_bytes = max_bytes

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip(v.TOMBSTONE)
        doc = load_object(value, self.max_bytes)
        table = table_name([at(doc, p) for p in V.table])
        ts_ms = optional_int(doc, "es") or optional_int(doc, "ts")  # es: binlog event time; ts: Canal's own clock
        if doc.get(V.op_field) is None:
            raise BadRecord(v.MISSING_FIELD, f"Canal message has no '{V.op_field}' field")
        kind = doc[V.op_field]
        if isinstance(kind, str) and kind in V.skip:
            return skip(V.skip[kind], table, ts_ms)
        if doc.get(v.CANAL_DDL_FLAG) is True:
            return skip(v.DDL, table, ts_ms)
        if not isinstance(kind, str) or not (kind in V.upsert or kind in V.delete):
            raise BadRecord(v.BAD_OP, f"unknown Canal type {kind!r}")
        rows = require(doc, V.row, list)
        if not rows:
            raise BadRecord(v.MISSING_FIELD, "Canal row change with an empty 'data'")
        pk = doc.get(cast(str, V.key))  # Canal's envelope names its key field (pkNames)
        key_columns = ([c for c in pk if isinstance(c, str)] or None) if isinstance(pk, list) else None
        declared = _declared(doc.get("mysqlType"))
        op = v.DELETE if kind in V.delete else v.UPSERT
        out = []
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise BadRecord(v.BAD_VALUE, f"data[{i}] is not an object")
            if self.typed and declared:
                row = _typed(row, declared, i)
            out.append(Change(op, table, row, key_columns, declared, ts_ms,
                              declared_source="hint" if declared else None, text_values=not self.typed))
        return out


def _declared(mysql: object) -> dict[str, ColumnType] | None:
    if not isinstance(mysql, dict):
        return None
    return {col: mysql_type(t) for col, t in mysql.items() if isinstance(t, str)} or None


def _typed(row: dict[str, Any], declared: dict[str, ColumnType], i: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for col, x in row.items():
        try:  # Canal renders values as text; a JSON number or boolean is read from its text the same way
            text = x if isinstance(x, str) or x is None else json.dumps(x)
            out[col] = decode_text(declared[col], text) if col in declared else x
        except ValueError as e:
            raise BadRecord(v.BAD_VALUE, f"data[{i}].{col}: {e}") from None
    return out
