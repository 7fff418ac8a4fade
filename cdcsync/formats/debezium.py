"""debezium-json: the bare envelope and the `{"schema": …, "payload": …}` form (JsonConverter schemas.enable)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from cdcsync.formats import vocabulary as v
from cdcsync.formats.base import BadRecord, Change, at, load_json, load_object, optional_int, skip, table_name
from cdcsync.formats.debezium_types import decode_value, row_types
from cdcsync.formats.key_fields import key_row

if TYPE_CHECKING:
    from cdcsync.schema.types import ColumnType

V = v.DEBEZIUM


class DebeziumDecoder:
    name = V.format

    def __init__(self, typed: bool = False, max_bytes: int | None = None):
        self.typed = typed  # decode logical types (Decimal, dates …) into Python values
        self.max_bytes = max_bytes

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip(v.TOMBSTONE)  # log compaction's delete marker, emitted after every delete
        doc = load_object(value, self.max_bytes)
        schema = None
        if doc.get(V.op_field) is None and "payload" in doc:  # JsonConverter's schemas.enable form
            if doc["payload"] is None and "schema" in doc:
                return skip(v.TOMBSTONE)
            if doc["payload"] is not None:
                schema, doc = doc.get("schema"), doc["payload"]
                if not isinstance(doc, dict):
                    raise BadRecord(v.NOT_AN_OBJECT, "'payload' is not an object")
        return self._envelope(doc, schema if isinstance(schema, dict) else None, key)

    def _envelope(self, doc: dict[str, Any], schema: dict[str, Any] | None, key: bytes | None) -> list[Change]:
        table = table_name([at(doc, p) for p in V.table])
        # snapshot rows carry source.ts_ms = 0 (unknown): fall back to the connector's processing time
        source = doc.get("source")
        ts_ms = optional_int(source if isinstance(source, dict) else {}, "ts_ms") or optional_int(doc, "ts_ms")
        op = doc.get(V.op_field)
        if op is None:
            return _non_row_event(doc, table, ts_ms)
        if not isinstance(op, str) or not (op in V.upsert or op in V.delete or op in V.skip):
            raise BadRecord(v.BAD_OP, f"unknown Debezium op {op!r}")
        if op in V.skip:
            return skip(V.skip[op], table, ts_ms)  # truncate: applied after decoding (stages/truncate.py)
        before, after = doc.get(V.old_row), doc.get(V.row)
        for name, image in ((V.old_row, before), (V.row, after)):
            if image is not None and not isinstance(image, dict):
                raise BadRecord(v.BAD_VALUE, f"'{name}' is not an object")
        upsert = op in V.upsert
        types, not_null = self._declared(schema, V.row if upsert else V.old_row)
        if upsert:
            if after is None:
                raise BadRecord(v.MISSING_FIELD, f"op '{op}' without an '{V.row}' image")
            row, op_kind = after, v.UPSERT
        else:
            row = before if before is not None else key_row(key)
            if row is None:
                raise BadRecord(v.MISSING_KEY, "delete with neither a 'before' image nor a Kafka key")
            op_kind = v.DELETE
        key_columns = _key_columns(key)
        if self.typed and types is not None:
            row = self._typed(row, schema, V.row if op_kind == v.UPSERT else V.old_row)
        return [Change(op_kind, table, row, key_columns, types, ts_ms,
                       declared_source="envelope" if types is not None else None, not_null=not_null)]

    def _declared(self, schema: dict[str, Any] | None,
                  image: str) -> tuple[dict[str, ColumnType] | None, frozenset[str]]:
        struct = _image_schema(schema, image) or _image_schema(schema, V.old_row if image == V.row else V.row)
        if struct is None:
            return None, frozenset()
        try:
            return row_types(struct)
        except (ValueError, TypeError, AttributeError):  # an unusable schema is ignored: the images decide
            return None, frozenset()

    def _typed(self, row: dict[str, Any], schema: dict[str, Any] | None, image: str) -> dict[str, Any]:
        struct = _image_schema(schema, image) or {}
        fields = {f.get("field"): f for f in struct.get("fields") or [] if isinstance(f, dict)}
        try:
            return {k: decode_value(fields[k], x) if k in fields else x for k, x in row.items()}
        except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError) as e:
            raise BadRecord(v.BAD_VALUE, f"a value does not match its declared type: {e}") from None


def _image_schema(schema: dict[str, Any] | None, image: str) -> dict[str, Any] | None:
    if not schema:
        return None
    for f in schema.get("fields") or []:
        if isinstance(f, dict) and f.get("field") == image and f.get("type") == "struct":
            return f
    return None


def _non_row_event(doc: dict[str, Any], table: str | None, ts_ms: int | None) -> list[Change]:
    """Events on CDC topics that carry no row: transaction metadata, schema changes, heartbeats."""
    if doc.get("status") in v.DBZ_TRANSACTION_STATUS:
        return skip(v.TRANSACTION, table, ts_ms)
    if any(f in doc for f in v.DBZ_SCHEMA_CHANGE_FIELDS):
        dropped = _dropped(doc)
        return skip(v.DDL, table, ts_ms) if dropped is None else skip(v.DROP_TABLE, dropped or table, ts_ms)
    if sorted(doc) == sorted(v.DBZ_HEARTBEAT_FIELDS):
        return skip(v.HEARTBEAT, table, ts_ms)
    raise BadRecord(v.MISSING_FIELD, "no 'op' field: not a Debezium change event")


def _dropped(doc: dict[str, Any]) -> str | None:
    """A schema change's DROP TABLE: the table its first DROP element's `id` names ("" when the id names none, and
    the envelope's table stands); None when it drops nothing (vocabulary.DBZ_TABLE_CHANGES)."""
    source = doc.get("source")
    snapshot = source.get(v.DBZ_SNAPSHOT) if isinstance(source, dict) else None
    changes = doc.get(v.DBZ_TABLE_CHANGES)
    if not (snapshot is None or snapshot is False or snapshot == v.DBZ_NOT_SNAPSHOT) or not isinstance(changes, list):
        return None
    drop = next((c for c in changes if isinstance(c, dict) and c.get("type") == v.DBZ_DROP), None)
    if drop is None:
        return None
    name = drop.get("id")
    if not isinstance(name, str) or name[:1] in ("{", "["):
        return ""
    parts = [p.replace('""', '"') for p in re.findall(v.DBZ_ID_PART, name)]
    return ".".join(p for p in parts if p) if parts and parts[-1] else ""


def _key_columns(key: bytes | None) -> list[str] | None:
    """Debezium keys are the primary key: the key schema's fields, or the bare key object's names."""
    if key is None:
        return None
    try:
        doc = load_json(key)
    except BadRecord:
        return None  # a non-JSON key does not spoil an upsert: the row is still good
    if isinstance(doc, dict) and isinstance(doc.get("schema"), dict) and "payload" in doc:
        fields = doc["schema"].get("fields") or []
        names = [f["field"] for f in fields if isinstance(f, dict) and isinstance(f.get("field"), str)]
        return names or None
    if isinstance(doc, dict) and doc:
        return list(doc)
    return None
