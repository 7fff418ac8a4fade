"""An Avro writer schema and record as Kafka Connect's JsonConverter would have written them, so Avro topics reuse
every rule of the JSON formats (Debezium envelope, Connect types, ordering, deletes) instead of a second copy.

Debezium's AvroConverter keeps the Connect schema in the Avro schema (`connect.name`, `connect.parameters`,
`connect.type`); records written by other producers carry Avro logical types, mapped to the Connect types they
stand for. Values keep their wire form: a decimal is its unscaled bytes (base64 in JSON), a date its days, a
timestamp its epoch number — exactly JsonConverter's output — so the logical types are stripped before decoding.
"""

from __future__ import annotations

import base64
import copy
import io
import json
from typing import Any

AvroSchema = str | dict[str, Any] | list[Any]  # an Avro schema: its JSON text, or that text parsed

# Avro logical types of non-Debezium producers → the Connect (or Debezium) semantic type with the same wire value
_LOGICAL = {
    "date": "org.apache.kafka.connect.data.Date",
    "time-millis": "org.apache.kafka.connect.data.Time",
    "time-micros": "io.debezium.time.MicroTime",
    "timestamp-millis": "org.apache.kafka.connect.data.Timestamp",
    "timestamp-micros": "io.debezium.time.MicroTimestamp",
    "local-timestamp-millis": "io.debezium.time.Timestamp",
    "local-timestamp-micros": "io.debezium.time.MicroTimestamp",
    "uuid": "io.debezium.data.Uuid",
}
_PRIMITIVE = {"int": "int32", "long": "int64", "float": "float", "double": "float64", "boolean": "boolean",
              "string": "string", "bytes": "bytes", "fixed": "bytes", "enum": "string"}


def parse(schema: AvroSchema) -> Any:
    return json.loads(schema) if isinstance(schema, str) else schema


def connect_schema(schema: AvroSchema) -> dict[str, Any]:
    """The Kafka Connect schema (JsonConverter's "schema" object) of an Avro schema."""
    return _connect(parse(schema), {}, optional=False)


def _connect(s: Any, named: dict[str, Any], optional: bool, field: str | None = None) -> dict[str, Any]:
    if isinstance(s, list):  # a union: ["null", T] is an optional T; Connect has no other union
        rest = [b for b in s if b != "null"]
        if len(rest) != 1:
            raise ValueError(f"a union of {s} has no Kafka Connect type (only [\"null\", T] has)")
        return _connect(rest[0], named, optional="null" in s, field=field)
    if isinstance(s, str):
        s = named.get(s, {"type": s})
    kind = s["type"]
    if isinstance(kind, dict | list):  # {"type": {"type": "int", "connect.name": …}}
        return _connect(kind, named, optional, field)
    out: dict[str, Any]
    if kind == "record":
        named[s["name"]] = s
        if "namespace" in s:
            named[f"{s['namespace']}.{s['name']}"] = s
        out = {"type": "struct", "fields": [_connect(f["type"], named, False, f["name"]) for f in s["fields"]]}
        out["name"] = s.get("connect.name") or ".".join(filter(None, (s.get("namespace"), s["name"])))
    elif kind == "array":
        out = {"type": "array", "items": _connect(s["items"], named, False)}
    elif kind == "map":
        out = {"type": "map", "keys": {"type": "string", "optional": False}, "values": _connect(s["values"], named,
                                                                                                False)}
    elif kind in _PRIMITIVE:
        if kind in ("enum", "fixed"):
            named[s["name"]] = s
        out = {"type": s.get("connect.type") or _PRIMITIVE[kind]}
        name = s.get("connect.name")
        params = dict(s.get("connect.parameters") or {})
        if not name and s.get("logicalType") == "decimal":
            precision = {"connect.decimal.precision": str(s["precision"])} if "precision" in s else {}
            name, params = "org.apache.kafka.connect.data.Decimal", {"scale": str(s.get("scale", 0)), **precision,
                                                                     **params}  # as Confluent's AvroData has it
        name = name or _LOGICAL.get(s.get("logicalType", ""))
        if name:
            out["name"] = name
        if params:
            out["parameters"] = params
    else:
        raise ValueError(f"Avro type {kind!r} is not known")
    out["optional"] = optional
    if field is not None:
        out["field"] = field
    return out


def wire_schema(schema: AvroSchema) -> str:
    """The writer schema without logical types: the same binary layout, read as its wire values (what Spark's
    from_avro and fastavro then give is what JsonConverter writes)."""
    def strip(s: Any) -> Any:
        if isinstance(s, list):
            return [strip(b) for b in s]
        if isinstance(s, dict):
            return {k: strip(v) for k, v in s.items() if k != "logicalType"}
        return s

    return json.dumps(strip(copy.deepcopy(parse(schema))))


def is_envelope(schema: AvroSchema) -> bool:
    """A Debezium change event (before/after/op), as opposed to a plain row."""
    s = parse(schema)
    return isinstance(s, dict) and s.get("type") == "record" and {"before", "after", "op"} <= {
        f["name"] for f in s["fields"]}


def change_schema(schema: AvroSchema, change: bool = True) -> dict[str, Any]:
    """The Connect schema JsonConverter writes beside a record; as a `change`, a plain row's is that of a Debezium
    create holding it (see `wrapper`)."""
    conn = connect_schema(schema)
    if is_envelope(schema) or not change:
        return conn
    row = {**conn, "optional": True, "field": "after"}
    return {"type": "struct", "name": "cdcsync.avro.Row", "optional": False,
            "fields": [row, {"type": "string", "optional": False, "field": "op"}]}


def wrapper(schema: AvroSchema, change: bool = True) -> tuple[str, str]:
    """The text around a record's JSON that makes JsonConverter's `{"schema": …, "payload": …}`; as a `change`, a
    plain row goes inside a Debezium create (`"op": "c"`, the row as `after`), so every Avro record takes the
    Debezium decoder (a key is not a change: it stays as it is)."""
    head = f'{{"schema":{json.dumps(change_schema(schema, change))},"payload":'
    if is_envelope(schema) or not change:
        return head, "}"
    return head + '{"op":"c","after":', "}}"


def connect_json(body: bytes, schema: AvroSchema, change: bool = True) -> str:
    """One Avro-encoded body (no wire header) as JsonConverter's text (see `wrapper`)."""
    from fastavro import parse_schema, schemaless_reader

    value = schemaless_reader(io.BytesIO(body), parse_schema(json.loads(wire_schema(schema))), None)
    head, tail = wrapper(schema, change)
    return head + json.dumps(value, default=_bytes, separators=(",", ":")) + tail


def _bytes(v: Any) -> str:
    if isinstance(v, bytes | bytearray):
        return base64.b64encode(v).decode()
    raise TypeError(f"{type(v).__name__} is not JSON")
