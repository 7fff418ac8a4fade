"""Debezium's Kafka Connect schema → ColumnType, and wire value → Python value.

Encodings (Debezium docs, "Data type mappings"): Decimal = base64 big-endian two's-complement unscaled bytes with
parameters.scale; Date = days since epoch; Time/Timestamp = ms; Micro* = µs; Nano* = ns; Zoned* = ISO-8601 text;
Year = int; Bits = little-endian bytes; VariableScaleDecimal = {scale, value}; bytes = base64 text.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from decimal import Decimal
from functools import lru_cache
from typing import Any

from cdcsync.schema.types import (
    BIGINT,
    BINARY,
    BOOLEAN,
    DATE,
    DOUBLE,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    ColumnType,
)

DECIMAL_NAME = "org.apache.kafka.connect.data.Decimal"
VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)

_LOGICAL = {
    "io.debezium.time.Date": DATE,
    "org.apache.kafka.connect.data.Date": DATE,
    "io.debezium.time.Time": TIME,
    "io.debezium.time.MicroTime": TIME,
    "io.debezium.time.NanoTime": TIME,
    "org.apache.kafka.connect.data.Time": TIME,
    "io.debezium.time.ZonedTime": STRING,  # a time of day with an offset has no column type anywhere downstream
    "io.debezium.time.Timestamp": TIMESTAMP,
    "io.debezium.time.MicroTimestamp": TIMESTAMP,
    "io.debezium.time.NanoTimestamp": TIMESTAMP,
    "org.apache.kafka.connect.data.Timestamp": TIMESTAMP,
    "io.debezium.time.ZonedTimestamp": TIMESTAMP_LTZ,
    "io.debezium.time.Year": BIGINT,
    "io.debezium.data.Bits": BINARY,
    "io.debezium.data.Json": STRING,
    "io.debezium.data.Enum": STRING,
    "io.debezium.data.EnumSet": STRING,
    "io.debezium.data.Uuid": STRING,
    "io.debezium.data.Xml": STRING,
    "io.debezium.time.MicroDuration": BIGINT,
    "io.debezium.time.Interval": STRING,
}

_PRIMITIVE = {
    "boolean": BOOLEAN,
    "int8": BIGINT, "int16": BIGINT, "int32": BIGINT, "int64": BIGINT,
    "float": DOUBLE, "float32": DOUBLE, "float64": DOUBLE, "double": DOUBLE,
    "string": STRING,
    "bytes": BINARY,
    "struct": STRING, "array": STRING, "map": STRING,  # nested values are carried as JSON text
}


def field_type(schema: dict[str, Any]) -> ColumnType:
    """ColumnType of one field schema ({"type": "int32", "name": "io.debezium.time.Date", ...})."""
    name = schema.get("name")
    if name is None:  # most fields: a plain Connect type
        return _PRIMITIVE.get(schema.get("type", ""), STRING)
    if name == DECIMAL_NAME:
        params = schema.get("parameters") or {}
        # No precision stated (MySQL BIGINT UNSIGNED, Postgres NUMERIC without one): the widest DECIMAL that keeps
        # the stated scale; a value that outgrows it is still exact as text.
        return _decimal(params.get("connect.decimal.precision") or "38", params.get("scale", "0"))
    if name == VARIABLE_DECIMAL:
        return STRING  # the scale varies per value: only text keeps every value exact
    if name in _LOGICAL:
        return _LOGICAL[name]
    return _PRIMITIVE.get(schema.get("type", ""), STRING)


@lru_cache(maxsize=1024)
def _decimal(precision: str, scale: str) -> ColumnType:
    return ColumnType.decimal(int(precision), int(scale))


def row_types(struct_schema: dict[str, Any]) -> tuple[dict[str, ColumnType], frozenset[str]]:
    """Column types and NOT NULL columns of a before/after struct schema."""
    types, not_null = {}, set()
    for f in struct_schema.get("fields") or []:
        if isinstance(f, dict) and isinstance(f.get("field"), str):
            types[f["field"]] = field_type(f)
            if f.get("optional") is False:
                not_null.add(f["field"])
    return types, frozenset(not_null)


def decode_value(schema: dict[str, Any], value: Any) -> object:
    """The Python value of a Debezium wire value: Decimal, date, datetime, time, bytes, or the JSON value itself.

    Columns whose ColumnType is STRING come back as text (JSON text for structs), so the result matches the type.
    """
    if value is None:
        return None
    name = schema.get("name")
    if name == DECIMAL_NAME:
        scale = int((schema.get("parameters") or {}).get("scale", 0))
        d = decode_decimal(value, scale)
        return d if field_type(schema) != STRING else str(d)
    if name == VARIABLE_DECIMAL:
        return str(decode_decimal(value["value"], int(value["scale"])))
    if name in ("io.debezium.time.Date", "org.apache.kafka.connect.data.Date"):
        return EPOCH_DATE + dt.timedelta(days=value)
    if name in ("io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp"):
        return EPOCH + dt.timedelta(milliseconds=value)
    if name == "io.debezium.time.MicroTimestamp":
        return EPOCH + dt.timedelta(microseconds=value)
    if name == "io.debezium.time.NanoTimestamp":
        return EPOCH + dt.timedelta(microseconds=value // 1000)  # Python datetimes stop at microseconds
    if name == "io.debezium.time.ZonedTimestamp":
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if name in ("io.debezium.time.Time", "org.apache.kafka.connect.data.Time"):
        return _time_of_day(value * 1000)
    if name == "io.debezium.time.MicroTime":
        return _time_of_day(value)
    if name == "io.debezium.time.NanoTime":
        return _time_of_day(value // 1000)
    kind = schema.get("type")
    if kind == "bytes":
        return base64.b64decode(value, validate=True)
    if kind in ("struct", "array", "map"):
        return json.dumps(value, separators=(",", ":"), sort_keys=False)
    return value


def decode_decimal(value: str, scale: int) -> Decimal:
    """base64 big-endian two's-complement unscaled integer → Decimal with `scale` fractional digits."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError, TypeError) as e:
        raise ValueError(f"not a base64 Decimal: {value!r}") from e
    unscaled = int.from_bytes(raw, "big", signed=True)
    # built from its parts: Decimal arithmetic would round to the 28-digit default context
    return Decimal((1 if unscaled < 0 else 0, tuple(int(c) for c in str(abs(unscaled))), -scale))


def _time_of_day(micros: int) -> dt.time:
    micros %= 86_400_000_000  # MySQL TIME can exceed a day; the column is a time of day
    return (dt.datetime.min + dt.timedelta(microseconds=micros)).time()
