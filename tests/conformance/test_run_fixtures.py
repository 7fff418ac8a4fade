"""Acceptance (issue 3, point 1): every real CDC fixture, produced to the real broker, ends as the correct final
table (the files take MOR and COW in turn), read back with Spark and with hudi-rs. The expectation comes from the
pure-Python decoders (cdcsync.formats), an implementation independent of the Spark SQL path under test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.cdc_fixtures import FIXTURES, fixture_format, fixture_messages, require_corpus
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

FILES = sorted(require_corpus().glob("*.txt"))
KEYS = {"debezium-mysql-all-types-with-schema.txt": ["_id"]}


def expected_state(path: Path, key: list[str]) -> dict:
    from cdcsync.formats import get_decoder
    from cdcsync.formats.state import final_state

    decoder = get_decoder(fixture_format(path), typed=True)
    changes = [c for m in fixture_messages(path) for c in decoder.parse(m.encode())]
    state = final_state(changes, key)
    return by_key(list(state.values()), key)


def test_every_fixture_file_is_covered():
    assert len(FILES) >= 6, f"expected the six CDC fixture files in {FIXTURES}"


CASES = [pytest.param(f, ("MERGE_ON_READ", "COPY_ON_WRITE")[i % 2], id=f"{f.name}-{('MOR', 'COW')[i % 2]}")
         for i, f in enumerate(FILES)]


@pytest.mark.parametrize("fixture, table_type", CASES)
def test_fixture_lands_as_final_table(spark, bootstrap, make_topic, produce, tmp_path, fixture, table_type):
    fmt = fixture_format(fixture)
    key = KEYS.get(fixture.name, ["id"])
    topic = make_topic(partitions=1)
    msgs = fixture_messages(fixture)
    produce(topic, msgs)
    extra = {} if fmt in ("canal-json", "maxwell-json") else {"sink.primary_key": key}  # those carry their keys
    cfg = write_config(tmp_path, bootstrap, topic, fmt, table_type, **extra)

    summary = run_once(cfg, spark)

    assert summary.totals["messages"] == len(msgs)
    assert summary.totals["bad"] == 0
    want = expected_state(fixture, key)
    assert want, "the fixture must leave rows"
    got_spark = by_key(spark_rows(spark, str(tmp_path / "table")), key)
    got_rs = by_key(hudi_rs_rows(str(tmp_path / "table")), key)
    assert set(got_spark) == set(want), f"keys differ: spark={sorted(got_spark)} want={sorted(want)}"
    for k, row in want.items():
        for col, value in row.items():
            assert got_spark[k].get(col) == value, f"{fixture.name} {k} {col}: spark {got_spark[k].get(col)!r}"
            assert got_rs[k].get(col) == value, f"{fixture.name} {k} {col}: hudi-rs {got_rs[k].get(col)!r}"
    assert set(got_rs) == set(want)


def test_all_types_values_by_hand(spark, bootstrap, make_topic, produce, tmp_path):
    """Literal values decoded by hand from the all-types message: decimals exact, dates and times right."""
    import datetime as dt
    from decimal import Decimal

    fixture = FIXTURES / "debezium-mysql-all-types-with-schema.txt"
    topic = make_topic()
    produce(topic, fixture_messages(fixture))
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", "COPY_ON_WRITE", **{"sink.primary_key": ["_id"]})
    run_once(cfg, spark)
    df = spark.read.format("hudi").load(str(tmp_path / "table"))
    types = dict(df.dtypes)
    row = df.collect()[0].asDict()
    assert types["pt"] == "decimal(2,1)" and row["pt"] == Decimal("1.1")
    assert types["_numeric"] == "decimal(8,3)" and row["_numeric"] == Decimal("12345.110")
    assert types["_bigint_unsigned"] == "decimal(38,0)" and row["_bigint_unsigned"] == Decimal(20000000000)
    assert types["_big_decimal"] == "decimal(38,10)"
    assert row["_big_decimal"] == Decimal("2222222222222222400000000000.0000000000")
    # DECIMAL(40,3) exceeds Spark's 38 digits: kept exact as text
    assert types["_fixed"] == "string" and row["_fixed"] == "123456789876543212345678987654321.110"
    assert row["_decimal"] == Decimal(11111)
    assert types["_date"] == "date" and row["_date"] == dt.date(2023, 3, 23)
    assert types["_datetime"] == "timestamp" and row["_datetime"] == dt.datetime(2023, 3, 23, 14, 30, 5)
    assert row["_datetime6"] == dt.datetime(2023, 3, 23, 14, 30, 5, 123456)
    assert row["_timestamp"] == dt.datetime(2023, 3, 23, 22, 0, 10, 123456)
    assert row["_time"] == "10:13:23.000000"
    assert row["_year"] == 2023 and row["_bit1"] is True and row["_bigint"] == 10000000000
    assert bytes(row["_blob"]) == b"BLOB type test data"
    assert row["_set"] == "a,b" and row["_enum"] == "value1"
