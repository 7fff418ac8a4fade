"""maxwell-json: insert/update/delete rows, bootstrap rows, and the non-row messages Maxwell can emit."""

from __future__ import annotations

from typing import cast

from cdcsync.formats import vocabulary as v
from cdcsync.formats.base import BadRecord, Change, at, load_object, require, skip, table_name

V = v.MAXWELL


class MaxwellDecoder:
    name = V.format

    def __init__(self, typed: bool = False, max_bytes: int | None = None):
        self.max_bytes = max_bytes  # Maxwell values are already JSON-typed: `typed` changes nothing

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip(v.TOMBSTONE)
        doc = load_object(value, self.max_bytes)
        table = table_name([at(doc, p) for p in V.table])
        ts_ms = _ts_ms(doc.get("ts"))
        if doc.get(V.op_field) is None:
            raise BadRecord(v.MISSING_FIELD, f"Maxwell message has no '{V.op_field}' field")
        kind = doc[V.op_field]
        if not isinstance(kind, str):
            raise BadRecord(v.BAD_OP, f"unknown Maxwell type {kind!r}")
        if reason := V.skip_reason(kind):
            return skip(reason, table, ts_ms)
        # `xid`/`xoffset`/`commit` mark transaction boundaries inside row messages: the row itself still counts.
        if kind not in V.upsert and kind not in V.delete:
            raise BadRecord(v.BAD_OP, f"unknown Maxwell type {kind!r}")
        row = require(doc, V.row, dict)
        pk = doc.get(cast(str, V.key))  # Maxwell's envelope names its key field (primary_key_columns)
        key_columns = ([c for c in pk if isinstance(c, str)] or None) if isinstance(pk, list) else None
        return [Change(v.DELETE if kind in V.delete else v.UPSERT, table, row, key_columns, None, ts_ms)]


def _ts_ms(ts: object) -> int | None:
    """Maxwell's ts is in seconds."""
    if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not -1e12 < ts < 1e12:
        return None  # NaN, infinities and absurd values carry no time
    return int(ts * 1000)
