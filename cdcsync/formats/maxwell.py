"""maxwell-json: insert/update/delete rows, bootstrap rows, and the non-row messages Maxwell can emit."""

from __future__ import annotations

from cdcsync.formats.base import DELETE, UPSERT, BadRecord, Change, load_object, require, skip

_OPS = {"insert": UPSERT, "update": UPSERT, "delete": DELETE, "bootstrap-insert": UPSERT}
_BOOTSTRAP_MARKERS = {"bootstrap-start", "bootstrap-complete"}


class MaxwellDecoder:
    name = "maxwell-json"

    def __init__(self, typed: bool = False, max_bytes: int | None = None):
        self.max_bytes = max_bytes  # Maxwell values are already JSON-typed: `typed` changes nothing

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip("tombstone")
        doc = load_object(value, self.max_bytes)
        table = _table_name(doc)
        ts_ms = _ts_ms(doc.get("ts"))
        kind = require(doc, "type", str)
        if kind in _BOOTSTRAP_MARKERS:
            return skip("bootstrap", table, ts_ms)
        if kind.startswith(("table-", "database-")) or kind == "ddl" or "sql" in doc:
            return skip("ddl", table, ts_ms)
        # `xid`/`xoffset`/`commit` mark transaction boundaries inside row messages: the row itself still counts.
        if kind not in _OPS:
            raise BadRecord("bad_value", f"unknown type {kind!r}")
        row = require(doc, "data", dict)
        pk = doc.get("primary_key_columns")
        key_columns = ([c for c in pk if isinstance(c, str)] or None) if isinstance(pk, list) else None
        return [Change(_OPS[kind], table, row, key_columns, None, ts_ms)]


def _table_name(doc: dict) -> str | None:
    db, table = doc.get("database"), doc.get("table")
    if not isinstance(table, str) or not table:
        return None
    return f"{db}.{table}" if isinstance(db, str) and db else table


def _ts_ms(ts) -> int | None:
    """Maxwell's ts is in seconds."""
    if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not -1e12 < ts < 1e12:
        return None  # NaN, infinities and absurd values carry no time
    return int(ts * 1000)
