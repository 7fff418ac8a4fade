"""Avro decoded in the JVM with Spark's `from_avro` into the text Kafka Connect's JsonConverter would have written
(formats/avro_connect.py), so the JSON formats' decoders apply unchanged: in the Confluent wire format (magic byte 0,
a 4-byte schema id, the body) one writer schema per id; plain Avro (`avro`) with the one schema of an .avsc file.
A body that is not in the wire format, names a schema id the registry does not know, or does not decode with its
schema is a bad record with its reason."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync.formats import vocabulary as v
from cdcsync.formats.avro_connect import wire_schema, wrapper
from cdcsync.formats.registry import HEADER_BYTES


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


def connect_text(raw: Column, schemas: AvroSchemas, change: bool = True) -> Column:
    """Avro bytes → `{"schema": <Connect schema>, "payload": <record>}` (`change`: a plain row as a Debezium
    create, see avro_connect.wrapper); NULL for a tombstone or bad bytes."""
    if schemas.plain is not None:
        return _text(raw, schemas.plain, change)
    sid, body = schema_id(raw), raw.substr(F.lit(HEADER_BYTES + 1), F.octet_length(raw))
    out = F.lit(None).cast("string")
    for i, schema in sorted(schemas.by_id.items()):
        out = F.when(sid == i, _text(body, schema, change)).otherwise(out)
    return out


def _text(body: Column, schema: str, change: bool) -> Column:
    from pyspark.sql.avro.functions import from_avro

    head, tail = wrapper(schema, change)
    record = from_avro(body, wire_schema(schema), {"mode": "PERMISSIVE"})
    text = F.concat(F.lit(head), F.to_json(record, {"ignoreNullFields": "false"}), F.lit(tail))
    return F.when(~_failed(record, schema), text)


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


def verdict(raw: Column, decoded: Column, schemas: AvroSchemas) -> Column:
    """The bad-record reason of Avro bytes (NULL for good bytes and tombstones)."""
    if schemas.plain is not None:
        return F.when(raw.isNull(), None).when(decoded.isNull(), v.AVRO_DECODE_FAILED)
    sid, ids = schema_id(raw), sorted(schemas.by_id)
    return (F.when(raw.isNull(), None)
            .when(sid.isNull() | (F.substring(raw, 1, 1) != F.unhex(F.lit("00"))), v.NOT_AVRO_WIRE_FORMAT)
            .when(~sid.isin(*ids) if ids else F.lit(True), v.UNKNOWN_SCHEMA_ID)
            .when(decoded.isNull(), v.AVRO_DECODE_FAILED))


def mark_bad(env: DataFrame, schemas: AvroSchemas) -> DataFrame:
    """After the JSON decoder: bytes it saw as a tombstone (NULL text) but which were bad Avro become bad records."""
    raw = F.col("_raw_value")
    bad = verdict(raw, F.col("_value"), schemas)
    detail = (F.when(bad == v.UNKNOWN_SCHEMA_ID, F.format_string(f"{v.BAD_REASONS[v.UNKNOWN_SCHEMA_ID]}: %d",
                                                                 schema_id(raw)))
              .when(bad == v.NOT_AVRO_WIRE_FORMAT, v.BAD_REASONS[v.NOT_AVRO_WIRE_FORMAT])
              .when(bad == v.AVRO_DECODE_FAILED, v.BAD_REASONS[v.AVRO_DECODE_FAILED]))
    return (env.withColumn("_op", F.when(bad.isNotNull(), None).otherwise(F.col("_op")))
            .withColumn("_skip", F.when(bad.isNotNull(), None).otherwise(F.col("_skip")))
            .withColumn("_bad_detail", F.coalesce(detail, F.col("_bad_detail")))
            .withColumn("_bad", F.coalesce(bad, F.col("_bad"))))
