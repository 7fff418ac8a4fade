"""Stage 1 of decoding, in Spark SQL on the executors: each envelope format becomes one uniform change stream.

Output columns (every format):
  _kafka_topic, _kafka_partition, _kafka_offset, _kafka_timestamp, _kafka_timestamp_type, _kafka_key,
  _kafka_headers, _value (text; NULL for Avro), _pos (row index inside a multi-row message), _op ('u' upsert,
  'd' delete, 's' skip, NULL bad), _skip (why skipped), _bad (reason code), _bad_detail,
  _table ('db[.schema].table'/NULL), _row (the row image as JSON text), _key_row (JSON text of the key when
  the row image is missing),
  _ts_ms (event source time), _schema (Debezium schema envelope text, NULL otherwise), _types (Canal mysqlType
  map as JSON), _pk (key columns the envelope names, as an array), _position (the change's place in the source's
  log as sortable text, see position.py; NULL when the envelope carries none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats import vocabulary as v
from cdcsync.formats.spark import avro, position
from cdcsync.formats.spark.avro import WriterSchemas
from cdcsync.formats.spark.key_fields import key_object, key_text, with_key_fields
from cdcsync.formats.spec import format_spec

_SOURCE = ("STRUCT<db: STRING, schema: STRING, table: STRING, ts_ms: BIGINT, "
           + ", ".join(f"{name}: STRING" for name in position.SOURCE_FIELDS) + ">")
_DBZ_BODY = f"before STRING, after STRING, op STRING, ts_ms BIGINT, source {_SOURCE}"
_DBZ = f"STRUCT<schema: STRING, payload: STRUCT<{_DBZ_BODY}>, {_DBZ_BODY}>"
_CANAL = ("STRUCT<data: ARRAY<STRING>, database: STRING, `table`: STRING, type: STRING, isDdl: BOOLEAN, "
          "es: BIGINT, ts: BIGINT, pkNames: ARRAY<STRING>, mysqlType: MAP<STRING, STRING>>")
_MAXWELL = ("STRUCT<database: STRING, `table`: STRING, type: STRING, ts: BIGINT, data: STRING, "
            "primary_key_columns: ARRAY<STRING>, position: STRING, xoffset: STRING>")


def kafka_columns(raw: DataFrame, text: bool = True) -> DataFrame:
    """Rename Spark's Kafka source columns once. A text value is carried as text alone, its UTF-8 verdict taken in
    the scan's stage (the cast keeps the bytes as they came: `_finish` casts them back for dead-lettering)."""
    b, value = F.col("value"), F.col("value").cast("string")
    bytes_ = [(b.isNotNull() & (F.encode(value, "UTF-8") != b)).alias(C.UTF8_BAD)] if text else [b.alias(C.RAW_VALUE)]
    return raw.select(
        F.col("topic").alias(C.TOPIC),
        F.col("partition").alias(C.PARTITION),
        F.col("offset").alias(C.OFFSET),
        F.col("timestamp").alias(C.TIMESTAMP),
        F.col("timestampType").alias(C.TIMESTAMP_TYPE),
        F.col("key").alias(C.KEY),
        F.col("headers").alias(C.HEADERS) if "headers" in raw.columns else F.lit(None).alias(C.HEADERS),
        *bytes_,
        value.alias(C.VALUE),
    )


_JSON = {"allowSingleQuotes": "false"}  # Spark's default reads {'a': 1}, which is not JSON


def is_object(text: Column) -> Column:
    """Text that starts a JSON object after JSON whitespace (Jackson re-renders a nested object from its '{')."""
    return F.when(text.startswith("{"), True).otherwise(text.rlike(r"^[ \t\n\r]*\{"))  # the regex only if needed


def _invalid_json(text: Column) -> Column:
    """Re-parses, but only runs for records whose envelope came out empty. get_json_object alone accepts raw
    control characters inside strings, which from_json (and JSON) refuse: such an object would decode as all NULL.
    Any other value must be exactly one JSON value: wrapped in [ ], an array of one element."""
    one_value = F.json_array_length(F.concat(F.lit("["), text, F.lit("]"))) == 1
    bad_object = F.get_json_object(text, "$").isNull() | F.from_json(text, "MAP<STRING, STRING>", _JSON).isNull()
    return F.when(is_object(text), bad_object).otherwise(~F.coalesce(one_value, F.lit(False)))


def _in(op: Column, values: Iterable[str]) -> Column:
    return op.isin(*sorted(values))


def _skip_reason(op: Column, env: v.Envelope) -> Column:
    """The vocabulary's skip reason for an operation value (NULL when the operation is not a skipped one); a value
    wins over a prefix (Envelope.skip_reason): the outermost test is the first one made."""
    out = F.lit(None).cast("string")
    for prefix, reason in sorted(env.skip_prefixes.items()):
        out = F.when(op.startswith(prefix), reason).otherwise(out)
    for value, reason in sorted(env.skip.items()):
        out = F.when(op == value, reason).otherwise(out)
    return out


def _table(parts: list[Column]) -> Column:
    """base.table_name in Spark SQL: the non-empty name parts joined with "."; NULL without the table itself."""
    texts = [F.when((p != "") & ~p.startswith("{") & ~p.startswith("["), p) for p in parts]
    return F.when(texts[-1].isNotNull(), F.concat_ws(".", *texts))


def _stage(df: DataFrame, name: str, value: Column) -> tuple[DataFrame, Column]:
    """`value` computed once as column `name`: Spark copies a Column into every expression that uses it, and the
    verdicts are read by several (one plan was 700 KB of generated code, analysed again at every step)."""
    return df.withColumn(name, value), F.col(name)


def _detail(bad: Column) -> Column:
    """The vocabulary's detail for a bad-record reason code."""
    out = F.lit(None).cast("string")
    for code, text in sorted(v.BAD_REASONS.items()):
        out = F.when(bad == code, text).otherwise(out)
    return out


def _trailing(text: Column) -> Column:
    """Text after the object ('{…} junk'): Spark's parser stops at the first value and would accept it.
    (Two concatenated objects still read as the first, as with Flink's and Jackson's defaults.) Trailing
    whitespace, a newline included, is JSON."""
    return ~text.endswith("}") & is_object(text) & ~F.regexp_replace(text, r"\s+\z", "").endswith("}")


def _guard_utf8(df: DataFrame) -> DataFrame:
    """Bytes that are not UTF-8 (kafka_columns' verdict) would be written mangled: the record is bad instead."""
    invalid = F.col(C.UTF8_BAD)
    return df.withColumns({
        C.OP: F.when(invalid, None).otherwise(F.col(C.OP)),
        C.SKIP: F.when(invalid, None).otherwise(F.col(C.SKIP)),
        C.BAD_DETAIL: F.when(invalid, v.BAD_REASONS[v.INVALID_UTF8]).otherwise(F.col(C.BAD_DETAIL)),
        C.BAD: F.when(invalid, v.INVALID_UTF8).otherwise(F.col(C.BAD))}).drop(C.UTF8_BAD)


_NULL = {C.SKIP: "string", C.BAD: "string", C.BAD_DETAIL: "string", C.TABLE: "string", C.ROW: "string",
         C.KEY_ROW: "string", C.TS_MS: "long", C.SCHEMA: "string", C.TYPES: "string", C.PK: "array<string>",
         C.POSITION: "string",
         # a binlog change's MySQL server (position.server) and its Debezium connector: where binlog runs begin
         C.SERVER: "long", C.SOURCE_NAME: "string"}


def _finish(df: DataFrame, **cols: Column) -> DataFrame:
    """The uniform change stream (see the module doc) from a format's columns, named without their leading '_';
    a column a format does not set is NULL (`pos` is 0: one row per message)."""
    given = {f"_{k}": v for k, v in cols.items()}
    unknown = set(given) - set(_NULL) - {C.OP, C.POS}
    if unknown:
        raise TypeError(f"not a change-stream column: {sorted(unknown)}")
    out = {C.POS: given.get(C.POS, F.lit(0)), C.OP: given[C.OP]}
    out |= {name: given.get(name, F.lit(None).cast(kind)) for name, kind in _NULL.items()}
    out[C.TS_MS] = F.coalesce(out[C.TS_MS], (F.unix_micros(F.col(C.TIMESTAMP)) / 1000).cast("long"))
    keep: list[str | Column] = [c for c in df.columns
                                if c.startswith(C.KAFKA_PREFIX) or c in (C.VALUE, C.RAW_VALUE, C.KEY_TEXT, C.UTF8_BAD)]
    if C.RAW_VALUE not in df.columns:  # a text format's bytes, as received (kafka_columns)
        keep.append(F.col(C.VALUE).cast("binary").alias(C.RAW_VALUE))
    return df.select(*keep, *[c.alias(name) for name, c in out.items()])


@dataclass(frozen=True)
class _Bytes:
    """What a Debezium message's bytes say before its envelope's fields are read: a tombstone; bad-record reasons
    (condition, code) in order; the kind of an op-less value that carries no row (NULL: none); details of
    reasons that say more than the vocabulary's text."""
    tombstone: Column
    bad: list[tuple[Column, str]]
    non_row: Column
    details: dict[str, Column] = field(default_factory=dict)
    dropped: Column | None = None  # a DROP TABLE's table (NULL: the envelope's), see _dropped


def debezium_envelope(value: Column) -> Column:
    """The one parse of a Debezium message's envelope: its fields, the row images as text (bench/parse.py times it)."""
    return F.from_json(value, _DBZ, _JSON)


def debezium(df: DataFrame) -> DataFrame:
    """Debezium's JSON envelope, bare or in JsonConverter's schemas.enable form."""
    df = df.withColumn(C.ENVELOPE, debezium_envelope(F.col(C.VALUE)))
    e, p, value = F.col(C.ENVELOPE), _e("payload"), F.col(C.VALUE)
    wrapped = e[v.DEBEZIUM.op_field].isNull() & p.isNotNull()  # JsonConverter's schemas.enable form

    def read(name: str) -> Column:
        return F.when(wrapped, p[name]).otherwise(e[name])

    no_op = read(v.DEBEZIUM.op_field).isNull()
    # the rest is parsed again only for op-less values, which are few: payload's kind, heartbeats, markers
    payload_text = F.get_json_object(value, "$.payload")
    top_keys = F.json_object_keys(value)
    keys = F.json_object_keys(F.when(wrapped, payload_text).otherwise(value))
    body = F.when(wrapped, payload_text).otherwise(value)
    drop = _drop_element(body)
    schema_change = F.arrays_overlap(keys, F.array(*map(F.lit, v.DBZ_SCHEMA_CHANGE_FIELDS)))
    non_row = (F.when(_in(F.get_json_object(body, "$.status"), v.DBZ_TRANSACTION_STATUS), v.TRANSACTION)
               .when(schema_change & drop.isNotNull(), v.DROP_TABLE)
               .when(schema_change, v.DDL)
               .when(F.array_sort(keys) == F.array(*map(F.lit, sorted(v.DBZ_HEARTBEAT_FIELDS))), v.HEARTBEAT))
    unwrapped = no_op & p.isNull()
    tombstone = value.isNull() | (unwrapped & payload_text.isNull() & F.array_contains(top_keys, "payload")
                                  & F.array_contains(top_keys, "schema") & ~_trailing(value))
    bad = [(_trailing(value) | no_op & _invalid_json(value), v.INVALID_JSON),
           (no_op & (~is_object(value) | unwrapped & payload_text.isNotNull()), v.NOT_AN_OBJECT)]
    return _debezium_changes(df, read, _Bytes(tombstone, bad, non_row, dropped=_dropped(drop)))


def _drop_element(body: Column) -> Column:
    """formats/debezium._dropped in Spark SQL: the text of a schema change's first tableChanges element of type
    DROP (NULL when none, or in a snapshot). Parsed only for the op-less values that reach it."""
    snapshot = F.coalesce(F.get_json_object(body, f"$.source.{v.DBZ_SNAPSHOT}"), F.lit(v.DBZ_NOT_SNAPSHOT))
    changes = F.from_json(F.get_json_object(body, f"$.{v.DBZ_TABLE_CHANGES}"), "ARRAY<STRING>", _JSON)
    first = F.try_element_at(F.filter(changes, lambda c: F.get_json_object(c, "$.type") == v.DBZ_DROP), F.lit(1))
    return F.when(snapshot == v.DBZ_NOT_SNAPSHOT, first)


def _dropped(drop: Column) -> Column:
    """The table a DROP element's `id` names: its quoted parts, "" read as ", non-empty ones joined with "."; NULL
    when it names none (a non-text id, or no part), and the envelope's table stands."""
    name = F.get_json_object(drop, "$.id")
    parts = F.transform(F.regexp_extract_all(name, F.lit(v.DBZ_ID_PART), 1), lambda p: F.replace(p, F.lit('""'),
                                                                                                   F.lit('"')))
    named = ~name.startswith("{") & ~name.startswith("[") & (F.try_element_at(parts, F.lit(-1)) != "")
    return F.when(named, F.array_join(F.filter(parts, lambda p: p != ""), "."))


def debezium_avro(df: DataFrame, schemas: avro.AvroSchemas) -> DataFrame:
    """Debezium's Avro envelope (or a plain Avro row, as a create), read into the JSON envelope's fields."""
    df = avro.with_envelope(df, schemas).withColumn(C.VALUE, F.lit(None).cast("string"))
    raw = F.col(C.RAW_VALUE)
    bytes_ = _Bytes(raw.isNull(), avro.reasons(raw, F.col(C.ENVELOPE), schemas), F.lit(None).cast("string"),
                    {v.UNKNOWN_SCHEMA_ID: avro.unknown_id_detail(raw)})
    return _debezium_changes(df, lambda name: F.col(C.ENVELOPE)[name], bytes_)


def _debezium_changes(df: DataFrame, read: Callable[[str], Column], body: _Bytes) -> DataFrame:
    """The change stream of decoded Debezium envelopes (`_e`): read(name) is one of the envelope's fields."""
    V = v.DEBEZIUM
    op = read(V.op_field)
    no_op = op.isNull()
    before, after = read(V.old_row), read(V.row)
    key_row = key_object(key_text(df))
    key_ok = F.coalesce(F.size(F.json_object_keys(key_row)) > 0, F.lit(False))
    image_bad = ((before.isNotNull() & ~before.startswith("{")) | (after.isNotNull() & ~after.startswith("{")))
    bad = F.when(body.tombstone, None)
    for cond, code in body.bad:
        bad = bad.when(cond, code)
    bad = (bad.when(no_op & body.non_row.isNull(), v.MISSING_FIELD)
           .when(no_op, None)
           .when(~_in(op, V.upsert | V.delete | set(V.skip)), v.BAD_OP)
           .when(_in(op, V.skip), None)
           .when(image_bad, v.BAD_VALUE)
           .when(_in(op, V.upsert) & after.isNull(), v.MISSING_FIELD)
           .when(_in(op, V.delete) & before.isNull() & ~key_ok, v.MISSING_KEY))
    df, bad = _stage(df, C.BAD, bad)
    detail = (F.when((bad == v.MISSING_FIELD) & no_op, f"{V.label} envelope has no '{V.op_field}' field")
              .when(bad == v.MISSING_FIELD, F.concat(F.lit("op '"), op, F.lit(f"' without an '{V.row}' image")))
              .when(bad == v.BAD_OP, F.concat(F.lit(f"unknown {V.label} op '"), op, F.lit("'"))))
    for code, text in body.details.items():
        detail = detail.when(bad == code, text)
    detail = detail.otherwise(_detail(bad))
    df, skip = _stage(df, C.SKIP, F.when(body.tombstone, v.TOMBSTONE).when(bad.isNotNull(), None)
                      .when(no_op, body.non_row).otherwise(_skip_reason(op, V)))
    out_op = (F.when(skip.isNotNull(), v.OP_SKIP).when(bad.isNotNull(), None)
              .when(_in(op, V.delete), v.OP_DELETE).otherwise(v.OP_UPSERT))
    table = _table([read(head)[rest] for head, rest in (path.split(".") for path in V.table)])
    if body.dropped is not None:  # a DROP TABLE names its table in tableChanges, not in source (a list there)
        table = F.when(skip == v.DROP_TABLE, F.coalesce(body.dropped, table)).otherwise(table)
    src = read("source")
    row = F.when(_in(op, V.delete), before).otherwise(after)
    ts = F.coalesce(F.when(src["ts_ms"] != 0, src["ts_ms"]), read("ts_ms"))  # snapshot rows carry 0
    return _finish(df, op=out_op, skip=skip, bad=bad, bad_detail=detail, table=table, row=row,
                   key_row=F.when(_in(op, V.delete), key_row), ts_ms=ts, schema=_e("schema"),
                   position=position.debezium(src), server=position.server(src["server_id"]),
                   source_name=src["name"])


def canal(df: DataFrame) -> DataFrame:
    V = v.CANAL
    e = F.from_json(F.col(C.VALUE), _CANAL, _JSON)
    df = df.withColumn(C.ENVELOPE, e)
    value, t, data = F.col(C.VALUE), F.col(C.ENVELOPE)[V.op_field], F.col(C.ENVELOPE)[V.row]
    skip_type = _skip_reason(t, V)
    ddl = F.coalesce(F.col(C.ENVELOPE)[v.CANAL_DDL_FLAG], F.lit(False))
    tombstone = value.isNull()
    # one malformed element makes the whole message bad, as in the Python decoder: a message is applied whole
    elem_bad = F.exists(data, lambda x: x.isNull() | ~x.startswith("{"))
    bad = (F.when(tombstone, None)
           .when(_trailing(value) | t.isNull() & _invalid_json(value), v.INVALID_JSON)
           .when(t.isNull() & ~is_object(value), v.NOT_AN_OBJECT)
           .when(t.isNull(), v.MISSING_FIELD)
           .when(skip_type.isNotNull() | ddl, None)
           .when(~_in(t, V.upsert | V.delete), v.BAD_OP)
           .when(data.isNull() & F.get_json_object(value, f"$.{V.row}").isNotNull(), v.BAD_VALUE)
           .when(data.isNull() | (F.size(data) == 0), v.MISSING_FIELD)
           .when(elem_bad, v.BAD_VALUE))
    df, bad = _stage(df, C.BAD, bad)
    detail = (F.when((bad == v.MISSING_FIELD) & t.isNull(), f"{V.label} message has no '{V.op_field}' field")
              .when(bad == v.MISSING_FIELD, f"{V.label} row change without rows in 'data'")
              .when(bad == v.BAD_OP, F.concat(F.lit(f"unknown {V.label} type '"), t, F.lit("'")))
              .otherwise(_detail(bad)))
    df, skip = _stage(df, C.SKIP, F.when(tombstone, v.TOMBSTONE).when(bad.isNotNull(), None)
                      .when(skip_type.isNotNull(), skip_type).when(ddl, v.DDL))
    op = (F.when(skip.isNotNull(), v.OP_SKIP).when(bad.isNotNull(), None).when(_in(t, V.delete), v.OP_DELETE)
          .otherwise(v.OP_UPSERT))
    table = _table([F.col(C.ENVELOPE)[name] for name in V.table])
    # a row per element of a row change; one for a skipped or bad message, as the Python decoder counts them
    df = df.select("*", F.posexplode_outer(F.when(op.isin(*v.CHANGE_OPS), data)).alias(C.POS, C.ELEMENT))
    return _finish(df, op=op, skip=skip, bad=bad, bad_detail=detail, table=table, row=F.col(C.ELEMENT),
                   ts_ms=F.coalesce(_e("es"), _e("ts")), types=F.to_json(_e("mysqlType")),
                   pk=F.col(C.ENVELOPE)[V.key], pos=F.coalesce(F.col(C.POS), F.lit(0)))


def maxwell(df: DataFrame) -> DataFrame:
    V = v.MAXWELL
    e = F.from_json(F.col(C.VALUE), _MAXWELL, _JSON)
    df = df.withColumn(C.ENVELOPE, e)
    value, t, data = F.col(C.VALUE), F.col(C.ENVELOPE)[V.op_field], F.col(C.ENVELOPE)[V.row]
    skip_type = _skip_reason(t, V)
    tombstone = value.isNull()
    bad = (F.when(tombstone, None)
           .when(_trailing(value) | t.isNull() & _invalid_json(value), v.INVALID_JSON)
           .when(t.isNull() & ~is_object(value), v.NOT_AN_OBJECT)
           .when(t.isNull(), v.MISSING_FIELD)
           .when(skip_type.isNotNull(), None)
           .when(~_in(t, V.upsert | V.delete), v.BAD_OP)
           .when(data.isNull(), v.MISSING_FIELD)
           .when(~data.startswith("{"), v.BAD_VALUE))
    df, bad = _stage(df, C.BAD, bad)
    detail = (F.when((bad == v.MISSING_FIELD) & t.isNull(), f"{V.label} message has no '{V.op_field}' field")
              .when(bad == v.MISSING_FIELD, f"{V.label} row change without 'data'")
              .when(bad == v.BAD_OP, F.concat(F.lit(f"unknown {V.label} type '"), t, F.lit("'")))
              .otherwise(_detail(bad)))
    df, skip = _stage(df, C.SKIP, F.when(tombstone, v.TOMBSTONE).when(bad.isNotNull(), None).otherwise(skip_type))
    op = (F.when(skip.isNotNull(), v.OP_SKIP).when(bad.isNotNull(), None).when(_in(t, V.delete), v.OP_DELETE)
          .otherwise(v.OP_UPSERT))
    table = _table([F.col(C.ENVELOPE)[name] for name in V.table])
    return _finish(df, op=op, skip=skip, bad=bad, bad_detail=detail, table=table, row=_e("data"),
                   ts_ms=_e("ts") * 1000, pk=_e("primary_key_columns"),
                   position=position.maxwell(_e("position"), _e("xoffset")),
                   server=position.server(F.get_json_object(F.col(C.VALUE), "$.server_id")))


def plain_json(df: DataFrame) -> DataFrame:
    tombstone = F.col(C.VALUE).isNull()
    bad = (F.when(tombstone, None).when(_trailing(F.col(C.VALUE)) | _invalid_json(F.col(C.VALUE)), v.INVALID_JSON)
           .when(~is_object(F.col(C.VALUE)), v.NOT_AN_OBJECT))
    df, bad = _stage(df, C.BAD, bad)
    op = F.when(tombstone, v.OP_SKIP).when(bad.isNotNull(), None).otherwise(v.OP_UPSERT)
    return _finish(df, op=op, skip=F.when(tombstone, v.TOMBSTONE), bad=bad, bad_detail=_detail(bad),
                   row=F.col(C.VALUE))


def csv(df: DataFrame, columns: list[str], delimiter: str) -> DataFrame:
    """RFC 4180 like formats/delimited.py (Python's csv): quotes open a field only at its start, "" is a quote."""
    schema = ", ".join(f"`{c}` STRING" for c in columns)
    text = F.regexp_replace(F.col(C.VALUE), r"[\r\n]+\z", "")  # a trailing line break ends the record
    sep = "\\\\" if delimiter == "\\" else delimiter  # Spark refuses a lone backslash; it reads "\\" as one
    parsed = F.from_csv(text, schema, {"sep": sep, "mode": "PERMISSIVE", "escape": '"'})
    d = _regex_escape(delimiter)
    # possessive and unrolled: Java's engine recurses per character on (a|b)*, and a long field overflowed the stack
    quoted = r'"[^"]*+(?:""[^"]*+)*+"'
    field = f'(?:{quoted}|[^"{d}\\r\\n][^{d}\\r\\n]*+)?+'
    well_formed = (text != "") & text.rlike(f"^{field}(?:{d}{field})*+\\z")  # \z: Java's $ allows a final \u2028
    n_fields = F.size(F.split(F.regexp_replace(text, f"(^|{d}){quoted}(?={d}|\\z)", "$1"), d))  # quoted ones emptied
    tombstone = F.col(C.VALUE).isNull()
    bad = (F.when(tombstone, None).when(~well_formed, v.INVALID_CSV)
           .when(n_fields != len(columns), v.BAD_FIELD_COUNT))
    df, bad = _stage(df, C.BAD, bad)
    detail = (F.when(bad == v.BAD_FIELD_COUNT, F.format_string(f"expected {len(columns)} fields, found %d", n_fields))
              .otherwise(_detail(bad)))
    op = F.when(tombstone, v.OP_SKIP).when(bad.isNotNull(), None).otherwise(v.OP_UPSERT)
    return _finish(df, op=op, skip=F.when(tombstone, v.TOMBSTONE), bad=bad, bad_detail=detail, row=F.to_json(parsed))


def raw(df: DataFrame) -> DataFrame:
    tombstone = F.col(C.VALUE).isNull()
    op = F.when(tombstone, v.OP_SKIP).otherwise(v.OP_UPSERT)
    return _finish(df, op=op, skip=F.when(tombstone, v.TOMBSTONE),
                   row=F.to_json(F.struct(F.col(C.VALUE).alias("value"))))


def _regex_escape(ch: str) -> str:
    """One literal character for a Java regex, inside or outside [...] ('-', '&', '^' and ']' included)."""
    return ch if ch.isalnum() else "\\" + ch  # Java: a backslash before a non-letter is always that character


def decode_envelope(raw_df: DataFrame, fmt: str, csv_columns: list[str] | None = None,
                    csv_delimiter: str = ",", writers: WriterSchemas | None = None,
                    key_fields: list[str] | None = None) -> DataFrame:
    """`writers`: the Avro writer schemas of the batch's values and keys, for the Avro formats; `key_fields`: the
    columns each row takes from the key (formats/spark/key_fields.py). The deletes of keyed rows follow, by
    formats/spark/upserts.with_upserts."""
    traits = format_spec(fmt)
    df = kafka_columns(raw_df, text=not traits.writer_schema)
    if writers is not None and writers.keys is not None:
        df = avro.with_key_text(df, writers.keys)
    decoder = globals()[traits.spark_decoder]  # this module's function the format's spec names
    if traits.writer_schema:
        if writers is None or writers.values is None:
            raise ValueError(f"the {fmt} format needs the batch's writer schemas of the values")
        env = decoder(df, writers.values)
    elif decoder is csv:
        env = _guard_utf8(csv(df, csv_columns or [], csv_delimiter))
    else:
        env = _guard_utf8(decoder(df))
    return with_key_fields(env, key_fields) if key_fields else env


def _e(field: str) -> Column:
    """A field of the parsed envelope."""
    return F.col(f"{C.ENVELOPE}.{field}")
