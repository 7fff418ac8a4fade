"""Acceptance (issue 3, point 1): every real CDC fixture, produced to the real broker, ends as the correct final
table (the files take MOR and COW in turn), read back with Spark and with hudi-rs: the tests of
tests/integration/engine/test_run_fixtures.py that take `corpus`. The expectation comes from the pure-Python decoders
(cdcsync.formats), an implementation independent of the Spark SQL path under test (cdc_fixtures.Conformance.landed)."""

from __future__ import annotations

import pytest

from tests.conformance.cdc_fixtures import ALL_TYPES, CORPUS, messages  # noqa: F401 (CORPUS: fixture and hook read it)
from tests.corpus import corpus_fixture, pytest_generate_tests  # noqa: F401
from tests.integration.engine.helpers import run_once, write_config
from tests.integration.engine.test_run_fixtures import (  # noqa: F401
    test_every_fixture_file_is_covered,
    test_fixture_lands_as_final_table,
)

pytestmark = pytest.mark.integration


def test_all_types_values_by_hand(spark, bootstrap, make_topic, produce, tmp_path):
    """Literal values decoded by hand from the all-types message: decimals exact, dates and times right."""
    import datetime as dt
    from decimal import Decimal

    topic = make_topic()
    produce(topic, messages(ALL_TYPES))
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
