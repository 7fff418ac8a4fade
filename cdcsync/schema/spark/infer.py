"""The columns of one micro-batch, decided on the driver from small, JVM-computed summaries of the batch:
the distinct Debezium schema envelopes, the distinct Canal mysqlType maps, or Spark's JSON schema inference
over the row images (a JVM pass, all-null fields dropped so they never decide a type)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats.debezium_types import DECIMAL_NAME, field_type
from cdcsync.formats.mysql_types import mysql_type
from cdcsync.formats.spark.envelope import is_object  # after any JSON whitespace, as the decoders read it
from cdcsync.formats.spec import format_spec
from cdcsync.formats.vocabulary import CHANGE_OPS
from cdcsync.schema.spark.columns import (
    DBZ_DATE,
    DBZ_DECIMAL,
    DBZ_TIME_MS,
    DBZ_TIME_NS,
    DBZ_TIME_US,
    DBZ_TS_MS,
    DBZ_TS_NS,
    DBZ_TS_US,
    DBZ_VARIABLE_DECIMAL,
    DBZ_ZONED,
    JSON_TEXT,
    PLAIN,
    Col,
)
from cdcsync.schema.types import parse_type, widen

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DataType

# How Debezium carries each logical type on the wire; the column *type* comes from formats.debezium_types,
# the one mapping infer-schema uses too.
_DBZ_ENCODING = {
    "io.debezium.time.Date": DBZ_DATE,
    "org.apache.kafka.connect.data.Date": DBZ_DATE,
    "io.debezium.time.Timestamp": DBZ_TS_MS,
    "org.apache.kafka.connect.data.Timestamp": DBZ_TS_MS,
    "io.debezium.time.MicroTimestamp": DBZ_TS_US,
    "io.debezium.time.NanoTimestamp": DBZ_TS_NS,
    "io.debezium.time.ZonedTimestamp": DBZ_ZONED,
    "io.debezium.time.Time": DBZ_TIME_MS,
    "org.apache.kafka.connect.data.Time": DBZ_TIME_MS,
    "io.debezium.time.MicroTime": DBZ_TIME_US,
    "io.debezium.time.NanoTime": DBZ_TIME_NS,
    "io.debezium.data.VariableScaleDecimal": DBZ_VARIABLE_DECIMAL,
}


MAX_SCALE = 38  # Spark's largest decimal precision; a Debezium scale beyond it is junk


def debezium_field(f: dict[str, Any]) -> Col:
    """One Kafka Connect schema field → Col. Types docs/formats.md lists as kept as strings stay STRING."""
    name, logical = f["field"], f.get("name")
    if not isinstance(name, str):
        raise TypeError(f"field name {name!r} is not a string")
    spark_type = field_type(f).spark_ddl()
    if logical == DECIMAL_NAME:
        scale = int((f.get("parameters") or {}).get("scale", 0))
        if not 0 <= scale <= MAX_SCALE:  # a junk scale would pad every value with that many zeros
            raise ValueError(f"decimal scale {scale} outside 0..{MAX_SCALE}")
        return Col(name, spark_type, DBZ_DECIMAL, scale)
    if logical in _DBZ_ENCODING:
        return Col(name, spark_type, _DBZ_ENCODING[logical])
    if f.get("type") in ("struct", "array", "map"):
        return Col(name, "STRING", JSON_TEXT)
    return Col(name, spark_type)


def from_debezium_schema(schema_text: str) -> list[Col] | None:
    """None for an envelope without a usable row schema: a junk schema in one message must not fail the batch."""
    try:
        env = json.loads(schema_text)
        for image in ("after", "before"):
            for f in env.get("fields", []):
                if f.get("field") == image and f.get("type") == "struct":
                    return [debezium_field(x) for x in f.get("fields", [])]
    except (ValueError, TypeError, AttributeError, KeyError):
        return None
    return None


def from_spark_type(name: str, dt: DataType) -> Col:
    from pyspark.sql import types as T

    if isinstance(dt, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
        return Col(name, "BIGINT")
    if isinstance(dt, T.DecimalType):
        return Col(name, f"DECIMAL({dt.precision},{dt.scale})")
    if isinstance(dt, (T.DoubleType, T.FloatType)):
        return Col(name, "DOUBLE")
    if isinstance(dt, T.BooleanType):
        return Col(name, "BOOLEAN")
    if isinstance(dt, (T.StructType, T.ArrayType, T.MapType)):
        return Col(name, "STRING", JSON_TEXT)
    return Col(name, "STRING")


MAX_VERSIONS = 64  # Debezium schema versions one batch may hold; more is refused rather than decoded wrongly


@dataclass(frozen=True)
class BatchColumns:
    """A batch's columns (its schema versions merged on the widening lattice) and, when the batch holds several
    Debezium schema versions, each version's own columns by the xxhash64 of its envelope text: every record is
    decoded with the schema it carries (a Timestamp that became a MicroTimestamp, a decimal's new scale)."""

    columns: list[Col]
    versions: dict[int, list[Col]] = field(default_factory=dict)
    from_rows: bool = True  # inferred from the row images' JSON (no schema envelope, no mysqlType)


def infer_batch_columns(env: DataFrame, fmt: str, key_fields: list[str] | None = None,
                        deleted_field: str | None = None, order: list[str] | None = None) -> BatchColumns:
    """Columns seen in this batch's row images: an envelope's in its order, row images' in the first one's order
    and then by name; several schema versions widen to one. `key_fields`: columns the rows took from the key, which
    a schema envelope does not name; `deleted_field`: a field the decoder took out of the row images, which an Avro
    row's schema still names; `order`: names whose order the format fixes (csv_columns), first in that order."""
    rows = env.filter(F.col(C.OP).isin(*CHANGE_OPS))
    if format_spec(fmt).reads_as == "debezium-json":
        usable = {h: [c for c in cols if c.name != deleted_field] for h, cols in _debezium_versions(rows)
                  if cols is not None}
        if usable and key_fields:
            from_key = _key_columns(rows, key_fields)
            usable = {h: [*(c for c in from_key if c.name not in {x.name for x in cols}), *cols]
                      for h, cols in usable.items()}
        if usable:  # otherwise the row images decide, as for schemaless events
            return BatchColumns(_widest(list(usable.values())), usable if len(usable) > 1 else {}, from_rows=False)
    if fmt == "canal-json":  # Canal's values are text: its mysqlType versions only need the widest type
        maps = [json.loads(text) for text, _ in _oldest_first(rows, C.TYPES, MAX_VERSIONS)]
        if maps:
            return BatchColumns(_widest([[Col(k, mysql_type(v).spark_ddl()) for k, v in m.items()] for m in maps]),
                                from_rows=False)
    text = rows.select(F.coalesce(C.ROW, C.KEY_ROW).alias("j"))
    fields = _json_fields(text)
    order = order or _first_seen_order(text.where(is_object(F.col("j"))))
    names = [n for n in order if n in fields] + [n for n in fields if n not in order]
    return BatchColumns([from_spark_type(n, fields[n]) for n in names])


def _key_columns(rows: DataFrame, names: list[str]) -> list[Col]:
    """The key columns `names`, typed by the key's Connect schema (an Avro key, a JsonConverter key with schemas),
    else inferred from the keys' JSON."""
    from cdcsync.formats.spark.key_fields import key_object, key_text

    text = key_text(rows)
    schema = rows.select(F.get_json_object(text, "$.schema").alias("s")).where(F.col("s").isNotNull()).first()
    if schema is not None:
        try:
            fields = {f.get("field"): f for f in json.loads(schema[0]).get("fields") or []}
            typed = [debezium_field(fields[n]) for n in names if n in fields]
            if typed:
                return typed
        except (ValueError, TypeError, AttributeError):
            pass  # a key member that happens to be called "schema": the JSON decides
    types = _json_fields(rows.select(key_object(text).alias("j")))
    return [from_spark_type(n, types[n]) for n in names if n in types]


def _json_fields(text: DataFrame) -> dict[str, DataType]:
    """{name: Spark type} inferred over the JSON objects of `text`'s one column, every record read."""
    spark = text.sparkSession
    # only objects: Spark's reader would unwrap an array image into columns, or add _corrupt_record for a scalar
    objects = text.where(is_object(F.col(text.columns[0])))
    reader = (spark._jsparkSession.read().option("dropFieldIfAllNull", "true").option("mode", "DROPMALFORMED")
              .option("prefersDecimal", "false").option("samplingRatio", "1.0"))
    schema = DataFrame(reader.json(_as_strings(spark, objects)), spark).schema
    return {f.name: f.dataType for f in schema.fields if f.name != C.CORRUPT_RECORD}


def _oldest_first(rows: DataFrame, column: str, most: int) -> list[tuple[str, int]]:
    """The distinct values of `column` with their xxhash64, in the order the batch first carries them; past `most`
    of them, `most` + 1 of them in no order. Sorted on the driver: a distributed sort would sample the batch in a
    job of its own."""
    first = F.min(F.struct(C.TOPIC, C.PARTITION, C.OFFSET)).alias(C.FIRST)
    found = (rows.where(F.col(column).isNotNull()).groupBy(column)
             .agg(first, F.first(F.xxhash64(column)).alias(C.HASH)).limit(most + 1).collect())
    return [(r[0], r[2]) for r in (found if len(found) > most else sorted(found, key=lambda r: tuple(r[1])))]


def _debezium_versions(rows: DataFrame) -> list[tuple[int, list[Col] | None]]:
    found = _oldest_first(rows, C.SCHEMA, MAX_VERSIONS)
    if len(found) > MAX_VERSIONS:
        from cdcsync.errors import SchemaError

        raise SchemaError(f"one batch holds more than {MAX_VERSIONS} Debezium schema versions",
                          hint="lower run.max_records_per_batch so a batch spans fewer schema changes")
    return [(h, from_debezium_schema(text)) for text, h in found]


def _as_strings(spark: SparkSession, df: DataFrame) -> Any:
    jvm = spark._jvm
    assert jvm is not None  # set from the session's start (pyspark asserts the same)
    enc = jvm.org.apache.spark.sql.Encoders.STRING()
    return getattr(df._jdf, "as")(enc)


def _first_seen_order(text: DataFrame) -> list[str]:
    """Spark's inference sorts fields by name; keep the source's column order from one row instead."""
    first = text.limit(1).collect()
    if not first:
        return []
    row = first[0][0]
    try:  # the first JSON value, as the decoders read it (formats/base.py load_json: Jackson reads no further)
        return list(_JSON.raw_decode(row, len(row) - len(row.lstrip(" \t\n\r")))[0].keys())
    except (ValueError, AttributeError, RecursionError):
        return []


_JSON = json.JSONDecoder()


def _widest(lists: list[list[Col]]) -> list[Col]:
    """Columns of several schema versions (or shards) merged on the widening lattice, in first-seen order; a
    decimal's scale is the largest (each version still decodes its own, see BatchColumns)."""
    seen: dict[str, Col] = {}
    for cols in lists:
        for c in cols:
            old = seen.get(c.name)
            if old is None:
                seen[c.name] = c
                continue
            if old.type == c.type:
                continue
            wide = widen(parse_type(old.type), parse_type(c.type))
            wide_t = wide.spark_ddl() if wide else "STRING"
            enc = old.encoding if wide_t == old.type or old.encoding == c.encoding else \
                c.encoding if wide_t == c.type else PLAIN
            seen[c.name] = Col(c.name, wide_t, enc, max(old.scale, c.scale))
    return list(seen.values())
