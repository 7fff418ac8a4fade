"""Stage 1 of decoding, in Spark SQL on the executors: each envelope format becomes one uniform change stream.

Output columns (every format):
  _kafka_topic, _kafka_partition, _kafka_offset, _kafka_timestamp, _kafka_timestamp_type, _kafka_key,
  _kafka_headers, _value (text), _pos (row index inside a multi-row message), _op ('u' upsert, 'd' delete,
  's' skip, NULL bad), _skip (why skipped), _bad (reason code), _bad_detail, _table ('db.table' or NULL),
  _row (the row image as JSON text), _key_row (JSON text of the key when the row image is missing),
  _ts_ms (event source time), _schema (Debezium schema envelope text, NULL otherwise), _types (Canal mysqlType
  map as JSON), _pk (key columns the envelope names, as an array), _position (the change's place in the source's
  log as sortable text, see position.py; NULL when the envelope carries none).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync.formats.spark import position

_SOURCE = ("STRUCT<db: STRING, table: STRING, ts_ms: BIGINT, "
           + ", ".join(f"{name}: STRING" for name in position.SOURCE_FIELDS) + ">")
_DBZ_BODY = f"before STRING, after STRING, op STRING, ts_ms BIGINT, source {_SOURCE}"
_DBZ = f"STRUCT<schema: STRING, payload: STRUCT<{_DBZ_BODY}>, {_DBZ_BODY}>"
_CANAL = ("STRUCT<data: ARRAY<STRING>, database: STRING, `table`: STRING, type: STRING, isDdl: BOOLEAN, "
          "es: BIGINT, ts: BIGINT, pkNames: ARRAY<STRING>, mysqlType: MAP<STRING, STRING>>")
_MAXWELL = ("STRUCT<database: STRING, `table`: STRING, type: STRING, ts: BIGINT, data: STRING, "
            "primary_key_columns: ARRAY<STRING>, position: STRING, xoffset: STRING>")


def kafka_columns(raw: DataFrame) -> DataFrame:
    """Rename Spark's Kafka source columns once; keep the raw bytes for dead-lettering."""
    return raw.select(
        F.col("topic").alias("_kafka_topic"),
        F.col("partition").alias("_kafka_partition"),
        F.col("offset").alias("_kafka_offset"),
        F.col("timestamp").alias("_kafka_timestamp"),
        F.col("timestampType").alias("_kafka_timestamp_type"),
        F.col("key").alias("_kafka_key"),
        F.col("headers").alias("_kafka_headers") if "headers" in raw.columns else F.lit(None).alias("_kafka_headers"),
        F.col("value").alias("_raw_value"),
        F.col("value").cast("string").alias("_value"),
    )


def _invalid_json(text: Column) -> Column:
    """Re-parses, but only runs for records whose envelope came out empty. get_json_object alone accepts raw
    control characters inside strings, which from_json (and JSON) refuse: such an object would decode as all NULL."""
    is_object = F.ltrim(text).startswith("{")
    return F.get_json_object(text, "$").isNull() | (is_object & F.from_json(text, "MAP<STRING, STRING>").isNull())


def _trailing(text: Column) -> Column:
    """Text after the object ('{…} junk'): Spark's parser stops at the first value and would accept it.
    (Two concatenated objects still read as the first, as with Flink's and Jackson's defaults.) Trailing
    whitespace, a newline included, is JSON."""
    return ~F.regexp_replace(text, r"\s+\z", "").endswith("}")


def _guard_utf8(df: DataFrame) -> DataFrame:
    """Bytes that are not UTF-8 decode with replacement characters: flag them rather than write mangled text."""
    invalid = F.col("_raw_value").isNotNull() & (F.encode(F.col("_value"), "UTF-8") != F.col("_raw_value"))
    return (df.withColumn("_op", F.when(invalid, None).otherwise(F.col("_op")))
            .withColumn("_skip", F.when(invalid, None).otherwise(F.col("_skip")))
            .withColumn("_bad_detail", F.when(invalid, "value is not valid UTF-8").otherwise(F.col("_bad_detail")))
            .withColumn("_bad", F.when(invalid, "invalid_utf8").otherwise(F.col("_bad"))))


def _kafka_ts_ms(df_col_ts: Column) -> Column:
    return (F.unix_micros(df_col_ts) / 1000).cast("long")


_NULL = {"_skip": "string", "_bad": "string", "_bad_detail": "string", "_table": "string", "_row": "string",
         "_key_row": "string", "_ts_ms": "long", "_schema": "string", "_types": "string", "_pk": "array<string>",
         "_position": "string"}


def _finish(df: DataFrame, **cols: Column) -> DataFrame:
    """The uniform change stream (see the module doc) from a format's columns, named without their leading '_';
    a column a format does not set is NULL (`pos` is 0: one row per message)."""
    given = {f"_{k}": v for k, v in cols.items()}
    unknown = set(given) - set(_NULL) - {"_op", "_pos"}
    if unknown:
        raise TypeError(f"not a change-stream column: {sorted(unknown)}")
    out = {"_pos": given.get("_pos", F.lit(0)), "_op": given["_op"]}
    out |= {name: given.get(name, F.lit(None).cast(kind)) for name, kind in _NULL.items()}
    out["_ts_ms"] = F.coalesce(out["_ts_ms"], _kafka_ts_ms(F.col("_kafka_timestamp")))
    keep = [c for c in df.columns if c.startswith("_kafka_") or c in ("_value", "_raw_value")]
    return df.select(*keep, *[c.alias(name) for name, c in out.items()])


def debezium(df: DataFrame) -> DataFrame:
    e = F.from_json(F.col("_value"), _DBZ)
    df = df.withColumn("_e", e)
    p = F.col("_e.payload")

    def field(name: str) -> Column:
        return F.coalesce(p[name], F.col("_e")[name])

    op = field("op")
    before, after = field("before"), field("after")
    key_text = F.col("_kafka_key").cast("string")
    key_row = F.coalesce(F.get_json_object(key_text, "$.payload"), key_text)
    tombstone = F.col("_value").isNull()
    bad = (F.when(tombstone, None)
           .when(_trailing(F.col("_value")) | op.isNull() & _invalid_json(F.col("_value")), "invalid_json")
           .when(op.isNull(), "missing_field")
           .when(~op.isin("c", "r", "u", "d", "t", "m"), "bad_op")
           .when(op.isin("c", "r", "u") & after.isNull(), "missing_field")
           .when((op == "d") & before.isNull() & F.col("_kafka_key").isNull(), "missing_key"))
    detail = (F.when(bad == "invalid_json", "value is not valid JSON (truncated, or text after the object)")
              .when((bad == "missing_field") & op.isNull(), "Debezium envelope has no 'op' field")
              .when(bad == "missing_field", F.concat(F.lit("op '"), op, F.lit("' without an 'after' image")))
              .when(bad == "bad_op", F.concat(F.lit("unknown Debezium op '"), op, F.lit("'")))
              .when(bad == "missing_key", "delete with neither a 'before' image nor a Kafka key"))
    skip = F.when(tombstone, "tombstone").when(op.isin("t", "m"), "unsupported_op")
    out_op = (F.when(tombstone | op.isin("t", "m"), "s").when(bad.isNotNull(), None)
              .when(op == "d", "d").otherwise("u"))
    src = field("source")
    table = F.when(src.isNotNull(), F.concat_ws(".", src["db"], src["table"]))
    row = F.when(op == "d", before).otherwise(after)
    ts = F.coalesce(F.when(src["ts_ms"] != 0, src["ts_ms"]), field("ts_ms"))  # snapshot rows carry 0
    return _finish(df, op=out_op, skip=skip, bad=bad, bad_detail=detail, table=table, row=row,
                   key_row=F.when(op == "d", key_row), ts_ms=ts, schema=F.col("_e.schema"),
                   position=position.debezium(src))


def canal(df: DataFrame) -> DataFrame:
    e = F.from_json(F.col("_value"), _CANAL)
    df = df.withColumn("_e", e).select("*", F.posexplode_outer("_e.data").alias("_pos", "_elem"))
    t = F.upper(F.col("_e.type"))
    ddl = F.coalesce(F.col("_e.isDdl"), F.lit(False)) | ~t.isin("INSERT", "UPDATE", "DELETE")
    tombstone = F.col("_value").isNull()
    bad = (F.when(tombstone, None)
           .when(_trailing(F.col("_value")) | t.isNull() & _invalid_json(F.col("_value")), "invalid_json")
           .when(t.isNull(), "missing_field")
           .when(~ddl & F.col("_elem").isNull(), "missing_field"))
    detail = (F.when(bad == "invalid_json", "value is not valid JSON")
              .when(t.isNull(), "Canal message has no 'type' field")
              .when(bad == "missing_field", "Canal row change without 'data'"))
    skip = F.when(tombstone, "tombstone").when(ddl, "ddl")
    op = F.when(skip.isNotNull(), "s").when(bad.isNotNull(), None).when(t == "DELETE", "d").otherwise("u")
    table = F.concat_ws(".", F.col("_e.database"), F.col("_e.table"))
    return _finish(df, op=op, skip=skip, bad=bad, bad_detail=detail, table=table, row=F.col("_elem"),
                   ts_ms=F.coalesce(F.col("_e.es"), F.col("_e.ts")), types=F.to_json(F.col("_e.mysqlType")),
                   pk=F.col("_e.pkNames"), pos=F.coalesce(F.col("_pos"), F.lit(0)))


def maxwell(df: DataFrame) -> DataFrame:
    e = F.from_json(F.col("_value"), _MAXWELL)
    df = df.withColumn("_e", e)
    t = F.lower(F.col("_e.type"))
    tombstone = F.col("_value").isNull()
    rowchange = t.isin("insert", "update", "delete", "bootstrap-insert")
    bad = (F.when(tombstone, None)
           .when(_trailing(F.col("_value")) | t.isNull() & _invalid_json(F.col("_value")), "invalid_json")
           .when(t.isNull(), "missing_field")
           .when(rowchange & F.col("_e.data").isNull(), "missing_field"))
    detail = (F.when(bad == "invalid_json", "value is not valid JSON")
              .when(t.isNull(), "Maxwell message has no 'type' field")
              .when(bad == "missing_field", "Maxwell row change without 'data'"))
    skip = F.when(tombstone, "tombstone").when(~rowchange, F.when(t.startswith("bootstrap"), "bootstrap_marker")
                                                .otherwise("ddl"))
    op = F.when(skip.isNotNull(), "s").when(bad.isNotNull(), None).when(t == "delete", "d").otherwise("u")
    table = F.concat_ws(".", F.col("_e.database"), F.col("_e.table"))
    return _finish(df, op=op, skip=skip, bad=bad, bad_detail=detail, table=table, row=F.col("_e.data"),
                   ts_ms=F.col("_e.ts") * 1000, pk=F.col("_e.primary_key_columns"),
                   position=position.maxwell(F.col("_e.position"), F.col("_e.xoffset")))


def plain_json(df: DataFrame) -> DataFrame:
    tombstone = F.col("_value").isNull()
    is_object = F.ltrim(F.col("_value")).startswith("{")
    bad = (F.when(tombstone, None).when(_trailing(F.col("_value")) | _invalid_json(F.col("_value")), "invalid_json")
           .when(~is_object, "not_an_object"))
    detail = (F.when(bad == "invalid_json", "value is not valid JSON")
              .when(bad.isNotNull(), "value is not a JSON object"))
    op = F.when(tombstone, "s").when(bad.isNotNull(), None).otherwise("u")
    return _finish(df, op=op, skip=F.when(tombstone, "tombstone"), bad=bad, bad_detail=detail, row=F.col("_value"))


def csv(df: DataFrame, columns: list[str], delimiter: str) -> DataFrame:
    """RFC 4180 like formats/delimited.py (Python's csv): quotes open a field only at its start, "" is a quote."""
    schema = ", ".join(f"`{c}` STRING" for c in columns)
    text = F.regexp_replace(F.col("_value"), r"[\r\n]+\z", "")  # a trailing line break ends the record
    sep = "\\\\" if delimiter == "\\" else delimiter  # Spark refuses a lone backslash; it reads "\\" as one
    parsed = F.from_csv(text, schema, {"sep": sep, "mode": "PERMISSIVE", "escape": '"'})
    d = _regex_escape(delimiter)
    # possessive and unrolled: Java's engine recurses per character on (a|b)*, and a long field overflowed the stack
    quoted = r'"[^"]*+(?:""[^"]*+)*+"'
    field = f'(?:{quoted}|[^"{d}\\r\\n][^{d}\\r\\n]*+)?+'
    well_formed = (text != "") & text.rlike(f"^{field}(?:{d}{field})*+\\z")  # \z: Java's $ allows a final \u2028
    n_fields = F.size(F.split(F.regexp_replace(text, f"(^|{d}){quoted}(?={d}|\\z)", "$1"), d))  # quoted ones emptied
    tombstone = F.col("_value").isNull()
    bad = (F.when(tombstone, None).when(~well_formed, "invalid_csv")
           .when(n_fields != len(columns), "bad_field_count"))
    detail = (F.when(bad == "invalid_csv", "not one CSV record: a quoted field is not closed, text follows its "
                     "closing quote, or a line break outside quotes starts a second record")
              .when(bad.isNotNull(), F.format_string(f"expected {len(columns)} fields, found %d", n_fields)))
    op = F.when(tombstone, "s").when(bad.isNotNull(), None).otherwise("u")
    return _finish(df, op=op, skip=F.when(tombstone, "tombstone"), bad=bad, bad_detail=detail, row=F.to_json(parsed))


def raw(df: DataFrame) -> DataFrame:
    tombstone = F.col("_value").isNull()
    op = F.when(tombstone, "s").otherwise("u")
    return _finish(df, op=op, skip=F.when(tombstone, "tombstone"),
                   row=F.to_json(F.struct(F.col("_value").alias("value"))))


def _regex_escape(ch: str) -> str:
    """One literal character for a Java regex, inside or outside [...] ('-', '&', '^' and ']' included)."""
    return ch if ch.isalnum() else "\\" + ch  # Java: a backslash before a non-letter is always that character


def decode_envelope(raw_df: DataFrame, fmt: str, csv_columns: list[str] | None = None,
                    csv_delimiter: str = ",") -> DataFrame:
    df = kafka_columns(raw_df)
    decoders = {"debezium-json": debezium, "canal-json": canal, "maxwell-json": maxwell, "json": plain_json,
                "raw": raw, "csv": lambda d: csv(d, csv_columns or [], csv_delimiter)}
    return _guard_utf8(decoders[fmt](df))
