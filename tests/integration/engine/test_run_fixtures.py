"""Acceptance (issue 3, point 1): every in-repo CDC file (tests/fixtures/cdc), produced to the real broker with its
keys and tombstones, ends as the source table's final state, read back with Spark and with hudi-rs; the files take MOR
and COW in turn (one run each keeps `make test` in its budget; the conformance suite does the same over the corpus).
The expectation is the generator's model of the source table, independent of both the Spark SQL path under test
and the pure-Python decoders. The real-corpus version is tests/conformance/test_run_fixtures.py."""

from __future__ import annotations

import pytest

from tests.fixtures import cdc_cases
from tests.integration.engine.helpers import (
    by_key,
    expected_state,
    hudi_rs_rows,
    produce_fixture,
    run_once,
    spark_rows,
    write_config,
)

pytestmark = pytest.mark.integration

NAMES = cdc_cases.names()
# Spark 3.5 has neither a TIME nor a zoned TIMESTAMP type: how the engine stores what inference calls those
SPARK_TYPE = {"TIME": "string", "TIMESTAMP_LTZ": "timestamp"}


def test_every_fixture_file_is_covered():
    assert len(NAMES) >= 8 and {cdc_cases.format_of(n) for n in NAMES} == {"debezium-json", "canal-json",
                                                                           "maxwell-json"}


CASES = [(n, ("MERGE_ON_READ", "COPY_ON_WRITE")[i % 2]) for i, n in enumerate(NAMES)]


def test_both_table_types_see_schema_envelopes_and_row_images():
    kinds = {(t, bool(cdc_cases.case(n).envelope_nullability)) for n, t in CASES}
    assert kinds == {(t, e) for t in ("MERGE_ON_READ", "COPY_ON_WRITE") for e in (True, False)}


@pytest.mark.parametrize("name, table_type", CASES, ids=[f"{n}-{t}" for n, t in CASES])
def test_fixture_lands_as_final_table(spark, bootstrap, make_topic, produce, tmp_path, name, table_type):
    fmt = cdc_cases.format_of(name)
    key = cdc_cases.key_columns(name)
    topic = make_topic(partitions=1)
    n = produce_fixture(produce, topic, name)
    extra = {} if fmt in ("canal-json", "maxwell-json") else {"sink.primary_key": key}  # those carry their keys
    cfg = write_config(tmp_path, bootstrap, topic, fmt, table_type, **extra)

    summary = run_once(cfg, spark)

    assert summary.totals["messages"] == n
    assert summary.totals["bad"] == 0
    want = expected_state(name, key)
    assert want, "the history must leave rows"
    got_spark = by_key(spark_rows(spark, str(tmp_path / "table")), key)
    got_rs = by_key(hudi_rs_rows(str(tmp_path / "table")), key)
    assert set(got_spark) == set(want), f"keys differ: spark={sorted(got_spark)} want={sorted(want)}"
    for k, row in want.items():
        for col, value in row.items():
            assert got_spark[k].get(col) == value, f"{name} {k} {col}: spark {got_spark[k].get(col)!r}"
            assert got_rs[k].get(col) == value, f"{name} {k} {col}: hudi-rs {got_rs[k].get(col)!r}"
    assert set(got_rs) == set(want)
    if cdc_cases.case(name).envelope_nullability:
        # with the schema envelope, each column's Spark type is the one the Connect schema states (the model's DDL):
        # decimals keep precision and scale, dates and times are typed, DECIMAL wider than 38 digits is exact text
        _, _, types, _ = cdc_cases.expected_schema(name)
        df = spark.read.format("hudi").load(str(tmp_path / "table"))
        want_types = {c: SPARK_TYPE.get(t, t.lower()) for c, t in types.items()}
        assert {c: t for c, t in df.dtypes if c in types} == want_types
