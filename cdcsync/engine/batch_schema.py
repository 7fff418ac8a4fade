"""The columns of one micro-batch, decided on the driver from small, JVM-computed summaries of the batch:
the distinct Debezium schema envelopes, the distinct Canal mysqlType maps, or Spark's JSON schema inference
over the row images (a JVM pass, all-null fields dropped so they never decide a type)."""

from __future__ import annotations

import json
import re

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync.engine import columns as C
from cdcsync.engine.columns import Col

_DBZ_LOGICAL = {
    "io.debezium.time.Date": ("DATE", C.DBZ_DATE),
    "org.apache.kafka.connect.data.Date": ("DATE", C.DBZ_DATE),
    "io.debezium.time.Timestamp": ("TIMESTAMP", C.DBZ_TS_MS),
    "org.apache.kafka.connect.data.Timestamp": ("TIMESTAMP", C.DBZ_TS_MS),
    "io.debezium.time.MicroTimestamp": ("TIMESTAMP", C.DBZ_TS_US),
    "io.debezium.time.NanoTimestamp": ("TIMESTAMP", C.DBZ_TS_NS),
    "io.debezium.time.ZonedTimestamp": ("TIMESTAMP", C.DBZ_ZONED),
    "io.debezium.time.Time": ("STRING", C.DBZ_TIME_MS),
    "org.apache.kafka.connect.data.Time": ("STRING", C.DBZ_TIME_MS),
    "io.debezium.time.MicroTime": ("STRING", C.DBZ_TIME_US),
    "io.debezium.time.NanoTime": ("STRING", C.DBZ_TIME_NS),
    "io.debezium.time.ZonedTime": ("STRING", C.PLAIN),
    "io.debezium.time.Year": ("BIGINT", C.PLAIN),
    "io.debezium.data.Bits": ("BINARY", C.PLAIN),
}
_DBZ_PRIMITIVE = {
    "int8": "BIGINT", "int16": "BIGINT", "int32": "BIGINT", "int64": "BIGINT",
    "float32": "DOUBLE", "float64": "DOUBLE", "float": "DOUBLE", "double": "DOUBLE",
    "boolean": "BOOLEAN", "string": "STRING", "bytes": "BINARY",
}


def debezium_field(f: dict) -> Col:
    """One Kafka Connect schema field → Col. Unknown logical types stay STRING (documented in the README)."""
    name, logical, ftype = f["field"], f.get("name"), f.get("type")
    if logical == "org.apache.kafka.connect.data.Decimal":
        params = f.get("parameters") or {}
        scale = int(params.get("scale", 0))
        precision = int(params.get("connect.decimal.precision", 38))
        spark_type = f"DECIMAL({precision},{scale})" if precision <= 38 else "STRING"
        return Col(name, spark_type, C.DBZ_DECIMAL, scale)
    if logical in _DBZ_LOGICAL:
        t, enc = _DBZ_LOGICAL[logical]
        return Col(name, t, enc)
    if ftype in ("struct", "array", "map"):
        return Col(name, "STRING", C.JSON_TEXT)
    return Col(name, _DBZ_PRIMITIVE.get(ftype, "STRING"))


def from_debezium_schema(schema_text: str) -> list[Col] | None:
    env = json.loads(schema_text)
    for image in ("after", "before"):
        for f in env.get("fields", []):
            if f.get("field") == image and f.get("type") == "struct":
                return [debezium_field(x) for x in f.get("fields", [])]
    return None


_MYSQL = [
    (r"^(tinyint|smallint|mediumint|int|integer|bigint)\b.*unsigned", "DECIMAL(20,0)"),
    (r"^(tinyint|smallint|mediumint|int|integer|bigint|year|serial)\b", "BIGINT"),
    (r"^(decimal|numeric|dec)\s*\((\d+)\s*,\s*(\d+)\)", None),
    (r"^(decimal|numeric|dec)\s*\((\d+)\)", None),
    (r"^(decimal|numeric|dec)\b", "DECIMAL(10,0)"),
    (r"^(float|double|real)\b", "DOUBLE"),
    (r"^(bool|boolean)\b", "BOOLEAN"),
    (r"^date$", "DATE"),
    (r"^(datetime|timestamp)\b", "TIMESTAMP"),
]


def mysql_type(t: str) -> str:
    """Canal's mysqlType text → Spark type; anything else (text, enum, json, time, blob) stays STRING."""
    s = t.strip().lower()
    for rx, out in _MYSQL:
        m = re.match(rx, s)
        if not m:
            continue
        if out:
            return out
        p = int(m.group(2))
        sc = int(m.group(3)) if m.lastindex and m.lastindex >= 3 else 0
        return f"DECIMAL({p},{sc})" if p <= 38 else "STRING"
    return "STRING"


def from_spark_type(name: str, dt) -> Col:
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
        return Col(name, "STRING", C.JSON_TEXT)
    return Col(name, "STRING")


def infer_batch_columns(env: DataFrame, fmt: str, max_schemas: int = 32) -> list[Col]:
    """Columns seen in this batch's row images, in first-seen order."""
    rows = env.filter(F.col("_op").isin("u", "d"))
    if fmt == "debezium-json":
        schemas = [r[0] for r in rows.select("_schema").where(F.col("_schema").isNotNull())
                   .distinct().limit(max_schemas).collect()]
        if schemas:
            return _merge_in_order([from_debezium_schema(s) or [] for s in schemas])
    if fmt == "canal-json":
        maps = [json.loads(r[0]) for r in rows.select("_types").where(F.col("_types").isNotNull())
                .distinct().limit(max_schemas).collect()]
        if maps:
            return _merge_in_order([[Col(k, mysql_type(v)) for k, v in m.items()] for m in maps])
    spark = env.sparkSession
    text = rows.select(F.coalesce("_row", "_key_row").alias("j")).where(F.col("j").isNotNull())
    reader = (spark._jsparkSession.read().option("dropFieldIfAllNull", "true")
              .option("prefersDecimal", "false").option("samplingRatio", "1.0"))
    inferred = reader.json(_as_strings(spark, text))
    from pyspark.sql import DataFrame as DF

    schema = DF(inferred, spark).schema
    order = _first_seen_order(text)
    fields = {f.name: f.dataType for f in schema.fields}
    names = [n for n in order if n in fields] + [n for n in fields if n not in order]
    return [from_spark_type(n, fields[n]) for n in names]


def _as_strings(spark, df: DataFrame):
    enc = spark._jvm.org.apache.spark.sql.Encoders.STRING()
    return getattr(df._jdf, "as")(enc)


def _first_seen_order(text: DataFrame) -> list[str]:
    """Spark's inference sorts fields by name; keep the source's column order from one row instead."""
    first = text.limit(1).collect()
    if not first:
        return []
    try:
        return list(json.loads(first[0][0]).keys())
    except (ValueError, AttributeError):
        return []


def _merge_in_order(lists: list[list[Col]]) -> list[Col]:
    seen: dict[str, Col] = {}
    for cols in lists:
        for c in cols:
            seen.setdefault(c.name, c)
    return list(seen.values())
