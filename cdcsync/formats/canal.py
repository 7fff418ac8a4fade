"""canal-json: one Change per element of `data[]`; every value is text, typed by `mysqlType`."""

from __future__ import annotations

from cdcsync.formats.base import DELETE, UPSERT, BadRecord, Change, load_object, optional_int, require, skip
from cdcsync.formats.mysql_types import decode_text, mysql_type

_OPS = {"INSERT": UPSERT, "UPDATE": UPSERT, "DELETE": DELETE}


class CanalDecoder:
    name = "canal-json"

    def __init__(self, typed: bool = False, max_bytes: int | None = None):
        self.typed = typed  # convert text values by mysqlType (int, Decimal, date …)
        self.max_bytes = max_bytes

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip("tombstone")
        doc = load_object(value, self.max_bytes)
        table = _table_name(doc)
        ts_ms = optional_int(doc, "es") or optional_int(doc, "ts")  # es: binlog event time; ts: Canal's own clock
        kind = require(doc, "type", str)
        if doc.get("isDdl") is True or kind not in _OPS:
            return skip("ddl", table, ts_ms)  # CREATE/ALTER/ERASE/QUERY …: no rows
        rows = require(doc, "data", list)
        pk = doc.get("pkNames")
        key_columns = ([c for c in pk if isinstance(c, str)] or None) if isinstance(pk, list) else None
        declared = _declared(doc.get("mysqlType"))
        out = []
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise BadRecord("bad_value", f"data[{i}] is not an object")
            for col, v in row.items():
                if v is not None and not isinstance(v, str):  # Canal renders every value as text
                    raise BadRecord("bad_value", f"data[{i}].{col} is not a string")
            if self.typed and declared:
                row = _typed(row, declared, i)
            out.append(Change(_OPS[kind], table, row, key_columns, declared, ts_ms,
                              declared_source="hint" if declared else None, text_values=not self.typed))
        return out


def _table_name(doc: dict) -> str | None:
    db, table = doc.get("database"), doc.get("table")
    if isinstance(table, str) and table:
        return f"{db}.{table}" if isinstance(db, str) and db else table
    return None


def _declared(mysql: object):
    if not isinstance(mysql, dict):
        return None
    return {col: mysql_type(t) for col, t in mysql.items() if isinstance(t, str)} or None


def _typed(row: dict, declared: dict, i: int) -> dict:
    out = {}
    for col, v in row.items():
        try:
            out[col] = decode_text(declared[col], v) if col in declared else v
        except ValueError as e:
            raise BadRecord("bad_value", f"data[{i}].{col}: {e}") from None
    return out
