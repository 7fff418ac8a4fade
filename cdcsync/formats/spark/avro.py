"""Avro decoded in the JVM with Spark's `from_avro`: in the Confluent wire format (magic byte 0, a 4-byte schema id,
the body) one writer schema per id; plain Avro (`avro`) with the one schema of an .avsc file. A value becomes the
Debezium envelope struct the JSON decoder reads (`with_envelope`: its images as the text Kafka Connect's
JsonConverter would have written, formats/avro_connect.py), so every Debezium rule applies unchanged without a
JSON round trip of the whole message; a key becomes JsonConverter's text. A body that is not in the wire format,
names a schema id the registry does not know, or does not decode with its schema is a bad record with its reason
(`reasons`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats import vocabulary as v
from cdcsync.formats.avro_connect import change_schema, is_envelope, parse, wire_schema, wrapper
from cdcsync.formats.registry import HEADER_BYTES
from cdcsync.formats.spark.position import SOURCE_FIELDS


@dataclass(frozen=True)
class AvroSchemas:
    """The writer schemas (JSON text) one side of a message may be written with: by the schema id behind the
    Confluent wire header, or the one schema of plain Avro (no header)."""
    by_id: dict[int, str] = field(default_factory=dict)
    plain: str | None = None


@dataclass(frozen=True)
class WriterSchemas:
    """A batch's Avro writer schemas: of the values (None: not Avro) and of the keys (None: not Avro)."""
    values: AvroSchemas | None = None
    keys: AvroSchemas | None = None


def schema_id(raw: Column) -> Column:
    """The big-endian schema id of bytes 2–5 (NULL when shorter)."""
    return F.when(F.octet_length(raw) >= HEADER_BYTES, F.conv(F.hex(F.substring(raw, 2, 4)), 16, 10).cast("long"))


def with_key_text(df: DataFrame, schemas: AvroSchemas) -> DataFrame:
    """df with `_key_text`: its Avro key as `{"schema": <Connect schema>, "payload": <record>}` (NULL for a
    missing key or bad bytes)."""
    def text(record: Column, schema: str) -> Column:
        head, tail = wrapper(schema, change=False)
        return F.concat(F.lit(head), F.to_json(record, _NULLS), F.lit(tail))

    return _decoded(df, C.KEY, schemas, C.KEY_TEXT, text)


def with_envelope(df: DataFrame, schemas: AvroSchemas) -> DataFrame:
    """df with `_e`, the Debezium envelope of its Avro value: STRUCT<schema, before, after, op: STRING, ts_ms:
    BIGINT, source: STRUCT<db, schema, table: STRING, ts_ms: BIGINT, SOURCE_FIELDS…: STRING>> with the images as
    JsonConverter's text and the Connect schema a literal of the writer schema; a plain row is a create of its
    record (avro_connect.wrapper). NULL for a tombstone or bad bytes."""
    return _decoded(df, C.RAW_VALUE, schemas, C.ENVELOPE, _envelope)


def _decoded(df: DataFrame, raw: str, schemas: AvroSchemas, out: str,
             build: Callable[[Column, str], Column]) -> DataFrame:
    """df with `out` = build(record, writer schema) of each record of the bytes column `raw`, NULL for a tombstone
    or bad bytes. Each writer schema's from_avro is a column of its own, read by the next projection: Spark copies
    an expression into every place that uses it, and the record is used once per field."""
    from pyspark.sql.avro.functions import from_avro

    if schemas.plain is not None:
        sides = [(F.col(raw).isNotNull(), F.col(raw), schemas.plain)]
    else:
        sid, body = schema_id(F.col(raw)), F.col(raw).substr(F.lit(HEADER_BYTES + 1), F.octet_length(raw))
        sides = [(sid == i, body, schema) for i, schema in sorted(schemas.by_id.items())]
    names = [f"{out}_avro_{n}" for n in range(len(sides))]
    df = df.select("*", *[F.when(cond, from_avro(body, wire_schema(schema), {"mode": "PERMISSIVE"})).alias(name)
                          for (cond, body, schema), name in zip(sides, names, strict=True)])
    value = F.lit(None)
    for (_, _, schema), name in zip(sides, names, strict=True):
        record = F.col(name)
        value = F.when(record.isNotNull() & ~_failed(record, schema), build(record, schema)).otherwise(value)
    return df.withColumn(out, value).drop(*names)


_NULLS = {"ignoreNullFields": "false"}  # JsonConverter writes a null field as null


def _envelope(record: Column, schema: str) -> Column:
    text = F.lit(json.dumps(change_schema(schema), separators=(",", ":")))
    if not is_envelope(schema):
        return F.struct(text.alias("schema"), F.lit(None).cast("string").alias("before"),
                        F.to_json(record, _NULLS).alias("after"), F.lit("c").alias("op"),
                        F.lit(None).cast("long").alias("ts_ms"), _source(None, set()).alias("source"))
    fields = _fields(_expanded(schema))
    source = _fields(fields["source"]["type"]) if "source" in fields else {}

    def image(name: str) -> Column:
        return F.to_json(record[name], _NULLS) if name in fields else F.lit(None).cast("string")

    return F.struct(text.alias("schema"), image("before").alias("before"), image("after").alias("after"),
                    record["op"].cast("string").alias("op"),
                    (record["ts_ms"] if "ts_ms" in fields else F.lit(None)).cast("long").alias("ts_ms"),
                    _source(record["source"] if source else None, set(source)).alias("source"))


def _source(src: Column | None, present: set[str]) -> Column:
    """Debezium's source block in the JSON decoder's shape: the fields it reads, each NULL when absent."""
    def text(name: str, kind: str = "string") -> Column:
        return (src[name] if src is not None and name in present else F.lit(None)).cast(kind).alias(name)

    return F.struct(text("db"), text("schema"), text("table"), text("ts_ms", "long"), *map(text, SOURCE_FIELDS))


def _expanded(schema: str) -> str | list[Any] | dict[str, Any]:
    """The schema with every named type written out where it is used (a record's is a dict)."""
    from fastavro import parse_schema

    return parse_schema(parse(schema), expand=True, _write_hint=False)


def _fields(record: str | list[Any] | dict[str, Any]) -> dict[str, Any]:
    """{name: field} of a record type, or of the record in a ["null", record] union."""
    if isinstance(record, list):
        record = next((b for b in record if isinstance(b, dict)), {})
    return {f["name"]: f for f in record.get("fields") or []} if isinstance(record, dict) else {}


def _failed(record: Column, schema: str) -> Column:
    """from_avro's PERMISSIVE mode answers a body it cannot decode with every field NULL: a required field that is
    NULL, or all of them when none is required."""
    fields = json.loads(schema).get("fields") or []
    required = [f["name"] for f in fields if not (isinstance(f["type"], list) and "null" in f["type"])]
    names = required or [f["name"] for f in fields]
    if not names:
        return record.isNull()
    nulls = [record[n].isNull() for n in names]
    return reduce(lambda a, b: a | b, nulls) if required else reduce(lambda a, b: a & b, nulls)


def reasons(raw: Column, decoded: Column, schemas: AvroSchemas) -> list[tuple[Column, str]]:
    """(condition, bad-record reason) of non-NULL Avro bytes, in order; `decoded` is NULL when they did not decode."""
    if schemas.plain is not None:
        return [(decoded.isNull(), v.AVRO_DECODE_FAILED)]
    sid, ids = schema_id(raw), sorted(schemas.by_id)
    return [(sid.isNull() | (F.substring(raw, 1, 1) != F.unhex(F.lit("00"))), v.NOT_AVRO_WIRE_FORMAT),
            (~sid.isin(*ids) if ids else F.lit(True), v.UNKNOWN_SCHEMA_ID),
            (decoded.isNull(), v.AVRO_DECODE_FAILED)]


def unknown_id_detail(raw: Column) -> Column:
    return F.format_string(f"{v.BAD_REASONS[v.UNKNOWN_SCHEMA_ID]}: %d", schema_id(raw))
