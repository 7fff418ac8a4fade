"""debezium-json: the bare envelope and the `{"schema": …, "payload": …}` form (JsonConverter schemas.enable)."""

from __future__ import annotations

from cdcsync.formats.base import DELETE, UPSERT, BadRecord, Change, load_json, load_object, optional_int, skip
from cdcsync.formats.debezium_types import decode_value, row_types

_UPSERT_OPS = {"c": "create", "r": "read (snapshot)", "u": "update"}


class DebeziumDecoder:
    name = "debezium-json"

    def __init__(self, typed: bool = False, max_bytes: int | None = None):
        self.typed = typed  # decode logical types (Decimal, dates …) into Python values
        self.max_bytes = max_bytes

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip("tombstone")  # log compaction's delete marker, emitted after every delete
        doc = load_object(value, self.max_bytes)
        schema = None
        if "payload" in doc and "schema" in doc:
            schema, doc = doc["schema"], doc["payload"]
            if doc is None:
                return skip("tombstone")
            if not isinstance(doc, dict):
                raise BadRecord("not_an_object", "'payload' is not an object")
        return self._envelope(doc, schema if isinstance(schema, dict) else None, key)

    def _envelope(self, doc: dict, schema: dict | None, key: bytes | None) -> list[Change]:
        source = doc.get("source") if isinstance(doc.get("source"), dict) else {}
        table = _table_name(source)
        # snapshot rows carry source.ts_ms = 0 (unknown): fall back to the connector's processing time
        ts_ms = optional_int(source, "ts_ms") or optional_int(doc, "ts_ms")
        op = doc.get("op")
        if op is None:
            return _non_row_event(doc, table, ts_ms)
        if not isinstance(op, str):
            raise BadRecord("bad_value", "'op' is not a string")
        if op == "t":
            return skip("truncate", table, ts_ms)
        if op == "m":
            return skip("message", table, ts_ms)
        before, after = doc.get("before"), doc.get("after")
        for name, image in (("before", before), ("after", after)):
            if image is not None and not isinstance(image, dict):
                raise BadRecord("bad_value", f"'{name}' is not an object")
        types, not_null = self._declared(schema, "after" if op in _UPSERT_OPS else "before")
        if op in _UPSERT_OPS:
            if after is None:
                raise BadRecord("missing_field", f"op '{op}' ({_UPSERT_OPS[op]}) without an 'after' image")
            row, op_kind = after, UPSERT
        elif op == "d":
            row = before if before is not None else _key_row(key)
            if row is None:
                raise BadRecord("missing_field", "delete without a 'before' image or a Kafka key")
            op_kind = DELETE
        else:
            raise BadRecord("bad_value", f"unknown op {op!r}")
        key_columns = _key_columns(key)
        if self.typed and types is not None:
            row = self._typed(row, schema, "after" if op_kind == UPSERT else "before")
        return [Change(op_kind, table, row, key_columns, types, ts_ms,
                       declared_source="envelope" if types is not None else None, not_null=not_null)]

    def _declared(self, schema: dict | None, image: str):
        struct = _image_schema(schema, image) or _image_schema(schema, "before" if image == "after" else "after")
        if struct is None:
            return None, frozenset()
        try:
            return row_types(struct)
        except (ValueError, TypeError, AttributeError) as e:  # a schema we cannot read is the record's fault
            raise BadRecord("bad_value", f"unreadable 'schema': {e}") from None

    def _typed(self, row: dict, schema: dict, image: str) -> dict:
        struct = _image_schema(schema, image) or {}
        fields = {f.get("field"): f for f in struct.get("fields") or [] if isinstance(f, dict)}
        try:
            return {k: decode_value(fields[k], v) if k in fields else v for k, v in row.items()}
        except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError) as e:
            raise BadRecord("bad_value", f"a value does not match its declared type: {e}") from None


def _image_schema(schema: dict | None, image: str) -> dict | None:
    if not schema:
        return None
    for f in schema.get("fields") or []:
        if isinstance(f, dict) and f.get("field") == image and f.get("type") == "struct":
            return f
    return None


def _table_name(source: dict) -> str | None:
    parts = [source.get(k) for k in ("db", "schema", "table")]  # Postgres/SQL Server add a schema level
    parts = [p for p in parts if isinstance(p, str) and p]
    return ".".join(parts) if source.get("table") else None


def _non_row_event(doc: dict, table: str | None, ts_ms: int | None) -> list[Change]:
    """Events on CDC topics that carry no row: transaction markers, schema changes, heartbeats."""
    if "status" in doc and doc.get("status") in ("BEGIN", "END"):
        return skip("transaction", table, ts_ms)
    if "ddl" in doc or "tableChanges" in doc or "historyRecord" in doc:
        return skip("ddl", table, ts_ms)
    if set(doc) <= {"ts_ms"}:
        return skip("heartbeat", table, ts_ms)
    raise BadRecord("missing_field", "no 'op' field: not a Debezium change event")


def _key_row(key: bytes | None) -> dict | None:
    if key is None:
        return None
    try:
        doc = load_json(key)
    except BadRecord as e:
        raise BadRecord(e.reason_code, f"Kafka key: {e.message}") from None
    if isinstance(doc, dict) and "payload" in doc and "schema" in doc:
        doc = doc["payload"]
    return doc if isinstance(doc, dict) and doc else None


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
        names = [f.get("field") for f in fields if isinstance(f, dict) and isinstance(f.get("field"), str)]
        return names or None
    if isinstance(doc, dict) and doc:
        return list(doc)
    return None
