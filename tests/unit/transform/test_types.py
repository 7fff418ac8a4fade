"""[transform] sql's columns typed without a JVM (transform/types.py): Spark's types, as Spark 3.5.7 gives them for
the same SELECT over the same view (each expected type below was read from a local Spark session's analysed plan)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cdcsync import columns as C
from cdcsync.errors import ConfigError
from cdcsync.schema.model import DATA, DECLARED, ENVELOPE, KAFKA, TRANSFORM, ColumnSchema, TableSchema
from cdcsync.schema.render import facts, spark_ddl
from cdcsync.schema.types import BIGINT, DATE, STRING, TIMESTAMP_LTZ, ColumnType, Kind
from cdcsync.transform.sql import parse
from cdcsync.transform.types import META, metadata_view, project, spark_text, type_columns, vocabulary

VIEW = {"id": "BIGINT", "name": "STRING", "price": "DECIMAL(10,2)", "qty": "BIGINT", "ts": "TIMESTAMP", "d": "DATE",
        "f": "DOUBLE", "b": "BOOLEAN", "big": "DECIMAL(38,10)", **metadata_view(list(META))}


def transform(sql: str, primary_key=None, partition_by=()):
    return parse(sql, key="transform.sql", path="config.toml", primary_key=primary_key, ordering_field=None,
                 partition_by=list(partition_by))


def typed(expression: str, view=None):
    return type_columns(transform(f"SELECT {expression} AS c FROM source"), view or VIEW)[0]


@pytest.mark.parametrize("expression, spark", [
    # functions sqlglot types as Spark does
    ("upper(name)", "STRING"), ("to_date(ts)", "DATE"), ("to_date(name, 'yyyy-MM-dd')", "DATE"),
    ("to_timestamp(name)", "TIMESTAMP"), ("length(name)", "INT"), ("concat(name, qty)", "STRING"),
    ("date_format(ts, 'yyyy')", "STRING"), ("unix_timestamp(ts)", "BIGINT"), ("CAST(id AS STRING)", "STRING"),
    ("split(name, ',')", "ARRAY<STRING>"), ("sha2(name, 256)", "STRING"), ("qty > 1", "BOOLEAN"),
    ("CAST(name AS DECIMAL(18,4))", "DECIMAL(18,4)"), ("CAST(name AS DECIMAL)", "DECIMAL(10,0)"),
    ("CAST(name AS VARCHAR(10))", "STRING"), ("date_add(d, 1)", "DATE"), ("_kafka_headers[0].key", "STRING"),
    # integers: Spark keeps INT where both sides are INT
    ("_kafka_partition * _kafka_partition", "INT"), ("_kafka_partition + 1", "INT"), ("qty * _kafka_partition",
                                                                                        "BIGINT"),
    ("qty / 2", "DOUBLE"), ("qty DIV 2", "BIGINT"), ("qty % 7", "BIGINT"),
    # literals
    ("1", "INT"), ("2147483648", "BIGINT"), ("-2147483648", "INT"), ("9223372036854775808", "DECIMAL(19,0)"),
    ("1.5", "DECIMAL(2,1)"), ("0.001", "DECIMAL(3,3)"), ("100.0", "DECIMAL(4,1)"), ("1e3", "DOUBLE"),
    ("1L", "BIGINT"), ("1.5D", "DOUBLE"),
    # decimal arithmetic (DecimalPrecision), where sqlglot keeps the left operand's type
    ("price * qty", "DECIMAL(31,2)"), ("price * 2", "DECIMAL(12,2)"), ("price * -2", "DECIMAL(12,2)"),
    ("price + 1L", "DECIMAL(11,2)"), ("price / 3", "DECIMAL(14,6)"), ("price / price", "DECIMAL(23,13)"),
    ("price + price", "DECIMAL(11,2)"), ("price - _kafka_partition", "DECIMAL(13,2)"), ("price % 3", "DECIMAL(3,2)"),
    ("price + 1.5", "DECIMAL(11,2)"), ("qty * 1.5", "DECIMAL(23,1)"), ("big * big", "DECIMAL(38,6)"),
    ("big + big", "DECIMAL(38,9)"), ("big / big", "DECIMAL(38,6)"), ("(price * qty) * 1.1", "DECIMAL(34,3)"),
    ("price * price * price * price", "DECIMAL(38,6)"), ("try_divide(price, 3)", "DECIMAL(14,6)"),
    ("f * price", "DOUBLE"), ("name * 2", "DOUBLE"),
    # the common type of the values chosen from
    ("coalesce(price, 0)", "DECIMAL(12,2)"), ("coalesce(qty, 1.5)", "DECIMAL(21,1)"),
    ("CASE WHEN b THEN price ELSE qty END", "DECIMAL(22,2)"), ("if(b, 1, 2.5)", "DECIMAL(11,1)"),
    ("greatest(price, qty)", "DECIMAL(22,2)"), ("coalesce(name, qty)", "STRING"), ("coalesce(d, ts)", "TIMESTAMP"),
    ("if(b, null, price)", "DECIMAL(10,2)"), ("array(price, 1)", "ARRAY<DECIMAL(12,2)>"),
    ("nvl2(name, 1, 2)", "INT"),
    # rounding
    ("round(price, 1)", "DECIMAL(10,1)"), ("round(price)", "DECIMAL(9,0)"), ("round(qty, 1)", "BIGINT"),
    ("round(f, 1)", "DOUBLE"), ("floor(price)", "DECIMAL(9,0)"), ("ceil(f)", "BIGINT"),
    ("floor(f, 1)", "DECIMAL(17,1)"), ("bround(price, 1)", "DECIMAL(10,1)"), ("round(big, 2)", "DECIMAL(31,2)"),
    # date parts and functions sqlglot does not type as Spark
    ("year(ts)", "INT"), ("weekofyear(ts)", "INT"), ("trunc(d, 'MM')", "DATE"), ("date_trunc('DAY', ts)", "TIMESTAMP"),
    ("hash(name)", "INT"), ("xxhash64(name)", "BIGINT"), ("timestamp_millis(qty)", "TIMESTAMP"),
    ("to_utc_timestamp(ts, 'UTC')", "TIMESTAMP"), ("decode(_kafka_key, 'UTF-8')", "STRING"),
    ("d - d", "INTERVAL DAY"),
])
def test_a_computed_column_gets_the_type_spark_gives_it(expression, spark):
    c = typed(expression)
    assert (c.spark_type, c.why) == (spark, None)


@pytest.mark.parametrize("expression", ["foo(name)", "from_json(name, 'a INT')", "date_part('YEAR', ts)"])
def test_what_sqlglot_cannot_type_stays_untyped_and_says_so(expression):
    c = typed(expression)
    assert c.spark_type is None and "Spark decides its type" in c.why


def test_a_bare_null_is_refused_and_a_cast_one_typed():
    with pytest.raises(ConfigError, match="a bare NULL has no type"):  # VOID: no table can store it
        typed("NULL")
    assert typed("CAST(NULL AS DATE)").spark_type == "DATE"


def test_a_column_the_view_lacks_leaves_what_reads_it_untyped():
    out = type_columns(transform("SELECT id, upper(gone) AS g, length(name) AS n FROM source"), {"id": "BIGINT",
                                                                                               "name": "STRING"})
    assert [(c.name, c.spark_type) for c in out] == [("id", "BIGINT"), ("g", None), ("n", "INT")]
    assert "'gone'" in out[1].why


def test_renamed_and_passed_through_columns_keep_their_type_and_say_what_they_pass():
    out = type_columns(transform("SELECT id AS order_id, source.name, s.price FROM source s"), VIEW)
    assert [(c.name, c.spark_type, c.passes) for c in out] == [
        ("order_id", "BIGINT", "id"), ("name", "STRING", "name"), ("price", "DECIMAL(10,2)", "price")]


def test_star_expands_over_the_view_in_its_place_with_the_metadata_columns():
    view = {"id": "BIGINT", "Name": "STRING", **metadata_view(["offset", "topic", "partition"])}
    out = type_columns(transform("SELECT upper(Name) AS up, * FROM source WHERE id > 0"), view)
    assert [(c.name, c.spark_type) for c in out] == [
        ("up", "STRING"), ("id", "BIGINT"), ("Name", "STRING"), ("_kafka_topic", "STRING"),
        ("_kafka_partition", "INT"), ("_kafka_offset", "BIGINT")]


def test_a_struct_field_and_a_lambda_are_typed():
    out = type_columns(transform("SELECT id, filter(_kafka_headers, h -> h.key = 'x') AS hs, "
                                 "exists(_kafka_headers, h -> h.key = 'x') AS has FROM source"), VIEW)
    assert [c.spark_type for c in out] == ["BIGINT", "ARRAY<STRUCT<key: STRING, value: BINARY>>", "BOOLEAN"]


def test_metadata_columns_are_named_and_ordered_as_the_run_s_view():
    from cdcsync.stages import typed

    assert {m: name for m, (name, _) in META.items()} == C.METADATA
    metadata = ["offset", "key", "topic", "headers", "timestamp-type", "timestamp", "partition"]
    assert list(metadata_view(metadata)) == typed.meta_names(SimpleNamespace(source=SimpleNamespace(
        metadata_columns=metadata)))


def test_metadata_columns_have_the_types_of_spark_s_kafka_source():
    # Spark 3.5's Kafka source schema (includeHeaders) through formats/spark/envelope.py kafka_columns
    assert metadata_view(list(META)) == {
        "_kafka_topic": "STRING", "_kafka_partition": "INT", "_kafka_timestamp": "TIMESTAMP",
        "_kafka_timestamp_type": "INT", "_kafka_headers": "ARRAY<STRUCT<key: STRING, value: BINARY>>",
        "_kafka_key": "BINARY", "_kafka_offset": "BIGINT"}


def test_spark_text_and_the_vocabulary():
    from sqlglot import exp

    assert spark_text(exp.DataType.build("varchar(3)")) == "STRING"
    assert spark_text(exp.DataType.build("map<string, decimal(5, 1)>", dialect="spark")) == "MAP<STRING, DECIMAL(5,1)>"
    assert spark_text(exp.DataType.build("array<unknown>")) is None
    assert vocabulary("DECIMAL(12,2)") == ColumnType(Kind.DECIMAL, 12, 2) and vocabulary("STRING") == STRING
    assert vocabulary("INT") is None and vocabulary("ARRAY<STRING>") is None and vocabulary(None) is None


def _orders() -> TableSchema:
    cols = [ColumnSchema("id", BIGINT, nullable=False, samples=3, example=7, origin=ENVELOPE),
            ColumnSchema("customer", STRING, samples=3, example="ann", origin=ENVELOPE),
            ColumnSchema("updated_at", TIMESTAMP_LTZ, samples=3, origin=ENVELOPE),
            ColumnSchema("day", DATE, samples=3, origin=DATA)]
    return TableSchema("shop.orders", {c.name: c for c in cols}, ["id"], 3)


def test_project_keeps_a_passed_column_s_facts_and_types_the_computed_ones():
    tf = transform("SELECT id, customer AS who, upper(customer) AS up, updated_at, note, _kafka_offset, "
                   "_kafka_key, foo(id) AS odd FROM source WHERE day > '2024-01-01'", primary_key=["id"])
    p = project(_orders(), tf, ["topic", "offset", "key"], {"note": STRING})
    cols = p.table.columns
    assert p.refused is None and p.table.transform == "transform.sql" and p.table.primary_key == ["id"]
    assert list(cols) == ["id", "who", "up", "updated_at", "note", "_kafka_offset", "_kafka_key", "odd"]
    assert (cols["who"].type, cols["who"].example, cols["who"].origin) == (STRING, "ann", ENVELOPE)
    assert cols["updated_at"].type == TIMESTAMP_LTZ and cols["updated_at"].ddl_type() == "TIMESTAMP"
    assert (cols["up"].origin, cols["up"].computed, cols["up"].shown_type()) == (TRANSFORM, "UPPER(customer)",
                                                                                 "STRING")
    assert (cols["note"].type, cols["note"].origin) == (STRING, DECLARED)  # declared, in no sampled record yet
    assert (cols["_kafka_offset"].shown_type(), cols["_kafka_offset"].nullable, cols["_kafka_offset"].origin) == (
        "BIGINT", False, KAFKA)
    assert (cols["_kafka_key"].shown_type(), cols["_kafka_key"].nullable) == ("BINARY", True)
    assert cols["odd"].untyped and cols["odd"].shown_type() is None
    assert spark_ddl({"t": p.table}).splitlines() == [
        "-- `odd` = FOO(id): left out, infer-schema cannot type it (stderr says why)",
        "`id` BIGINT NOT NULL, `who` STRING, `up` STRING, `updated_at` TIMESTAMP, `note` STRING, "
        "`_kafka_offset` BIGINT NOT NULL, `_kafka_key` BINARY"]
    shown = {c["name"]: c for c in facts({"t": p.table})["tables"][0]["columns"]}
    assert facts({"t": p.table})["tables"][0]["transform"] == "transform.sql"
    assert (shown["up"]["type"], shown["up"]["expression"], shown["up"]["from"]) == ("STRING", "UPPER(customer)",
                                                                                    "transform")
    assert (shown["odd"]["type"], shown["odd"]["only_nulls"]) == (None, False)
    assert "expression" not in shown["who"]


def test_project_says_what_the_run_would_refuse():
    p = project(_orders(), transform("SELECT id, upper(gone) AS g FROM source"), [], {})
    assert "'gone'" in p.refused.message and p.table.columns["g"].untyped
    p = project(_orders(), transform("SELECT customer FROM source"), [], {})  # the envelope's key dropped
    assert "key column 'id'" in p.refused.message
