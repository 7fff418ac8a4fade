"""Kafka Connect decimals of any size decode to their exact digits on the Spark path (schema/spark/columns.py)."""

from __future__ import annotations

import base64
import json
from decimal import Context, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.integration

EDGES = [0, 1, -1, 127, -128, 255, -256, 10**38 - 1, -(10**38) + 1, 2**119, -(2**119) - 1, 2**127 - 1, -(2**127),
         2**127, -(2**127) - 1, 10**45, -(10**45), -(10**45) + 1, -(10**60) - 7, 10**70 + 9]


def _connect_bytes(v: int) -> str:
    """Kafka Connect's Decimal: the unscaled value's minimal big-endian two's complement, base64 in JSON."""
    return base64.b64encode(v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True)).decode()


def _decode(spark, values: list[int], scale: int) -> list[str | None]:
    from pyspark.sql import functions as F

    from cdcsync.schema.spark.columns import DBZ_DECIMAL, Col, typed_row

    df = spark.createDataFrame([(i, json.dumps({"x": v if isinstance(v, float) else _connect_bytes(v)}))
                                for i, v in enumerate(values)], "i int, row string")
    (x,), _ = typed_row(F.col("row"), [Col("x", "STRING", DBZ_DECIMAL, scale)])
    rows = df.select("i", x).collect()
    return [r.x for r in sorted(rows)]


def _exact(v: int, scale: int) -> Decimal:
    return Decimal(v).scaleb(-scale, context=Context(prec=200))


@pytest.mark.parametrize("scale", [0, 3])
def test_edges_of_the_16_byte_boundary(spark, scale):
    got = _decode(spark, EDGES, scale)
    assert [None if g is None else Decimal(g) for g in got] == [_exact(v, scale) for v in EDGES]


def test_base64_that_reads_as_a_number_is_still_base64_and_a_json_number_is_a_number(spark):
    """-534595 is "99e9" in base64, which is also how a JSON number (decimal.format=NUMERIC) would read."""
    assert _connect_bytes(-534595) == "99e9" and _connect_bytes(-832203) == "8001"
    assert [Decimal(g) for g in _decode(spark, [-534595, -832203, 99e9, 12.5], 0)] == [
        Decimal(-534595), Decimal(-832203), Decimal("99e9"), Decimal("12.5")]


@settings(max_examples=4, deadline=None)
@given(st.lists(st.integers(min_value=-(10**80), max_value=10**80), min_size=100, max_size=200),
       st.integers(min_value=0, max_value=20))
def test_any_unscaled_value_keeps_every_digit(spark, values, scale):
    got = _decode(spark, values, scale)
    assert [Decimal(g) for g in got] == [_exact(v, scale) for v in values]


def test_a_wide_table_of_decimals_decodes_in_one_projection(spark):
    """MySQL's all-types table has 17 Connect decimals; each conversion used to copy its input into every place it
    was used (318 KB of expression per column) and the projection's generated code exhausted the driver heap."""
    from pyspark.sql import functions as F

    from cdcsync.schema.spark.columns import DBZ_DECIMAL, Col, convert, typed_row

    assert len(convert(F.col("b"), Col("x", "STRING", DBZ_DECIMAL, 3))._jc.toString()) < 20_000
    values = [(-1) ** i * (10**i + i) for i in range(24)]
    cols = [Col(f"d{i}", "STRING" if i % 2 else "DECIMAL(38,3)", DBZ_DECIMAL, 3) for i in range(len(values))]
    row = "{" + ",".join(f'"d{i}":"{_connect_bytes(v)}"' for i, v in enumerate(values)) + "}"
    typed, bad = typed_row(F.col("v"), cols)
    got = spark.createDataFrame([(row,)], "v string").select(*typed, bad.alias("bad")).collect()[0]
    assert got.bad == []
    assert [Decimal(str(got[f"d{i}"])) for i in range(len(values))] == [_exact(v, 3) for v in values]


def test_malformed_base64_is_a_bad_value_not_a_failed_batch(spark):
    """Spark's unbase64 throws on a last unit of one character ("Last unit does not have enough valid bits"): the
    fuzz test found a Debezium message whose batch failed with exit 70 on it."""
    from pyspark.sql import functions as F

    from cdcsync.schema.spark.columns import DBZ_DECIMAL, Col, convert

    texts = ["AQ==", "AQ", "AQI", "A", "AQ=", "AQ==A", 'A"B', "", "AQID"]
    df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i int, t string")
    rows = df.select("i", convert(F.col("t"), Col("d", "STRING", DBZ_DECIMAL, 0)).alias("d"),
                     convert(F.col("t"), Col("b", "BINARY")).alias("b")).orderBy("i").collect()
    assert [r.d for r in rows] == ["1", "1", "258", None, None, None, None, None, "66051"]
    assert [None if r.b is None else bytes(r.b) for r in rows] == [
        b"\x01", b"\x01", b"\x01\x02", None, None, None, None, b"", b"\x01\x02\x03"]


def test_a_row_is_parsed_once_however_many_columns_are_read(spark):
    """Spark's optimizer split a from_json whose fields are read one by one into one parse per field: the typing
    and the fit check read each of a table's columns, so a row of N columns was parsed N times."""
    import re

    from pyspark.sql import functions as F

    from cdcsync.schema.spark import fit
    from cdcsync.schema.spark.columns import Col, typed_row

    cols = [Col(f"c{i}", t) for i, t in enumerate(["BIGINT", "STRING", "DOUBLE", "BOOLEAN"] * 3)]
    row = json.dumps({"c0": 5, "c1": "x", "c2": 1.5, "c3": True})
    df = spark.createDataFrame([("u", row)], "_op string, _row string").select(
        "*", *(F.lit(None).cast("string").alias(c) for c in ("_key_row", "_schema", "_types")))
    typed, bad = typed_row(F.coalesce("_row", "_key_row"), cols)
    full = df.select(F.struct(*typed).alias("t"), bad.alias("bad"))
    plan = full._jdf.queryExecution().optimizedPlan().toString()
    assert {m.group(1) for m in re.finditer(r"from_json\(StructField\((\w+),", plan)} == {"c0"}  # one schema: all
    assert full.collect()[0] == ((5, "x", 1.5, True, None, None, None, None, None, None, None, None), [])

    # the known columns' way: one typed parse that the typing and the fit check both read, in a projection of its own
    kept = fit.with_typed_parse(df, cols).select(F.struct(*fit.typed(cols)).alias("t"),
                                                 fit.misfit(cols).alias("misfit"))
    assert kept._jdf.queryExecution().optimizedPlan().toString().count("from_json(") == 1
    got = kept.collect()[0]
    assert (got.t.c0, got.t.c1, got.t.c2, got.t.c3, got.t.c4, got.misfit) == (5, "x", 1.5, True, None, False)
