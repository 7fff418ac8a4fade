"""Acceptance (issue 3, point 1): every CDC file of a corpus, produced to the real broker with its keys and tombstones,
ends as the source table's final state, read back with Spark and with hudi-rs; the files take MOR and COW in turn (one
run each keeps `make test` in its budget). Here the in-repo files (tests/fixtures/cdc), whose expectation is the
generator's model of the source table, independent of both the Spark SQL path under test and the pure-Python
decoders; tests/conformance/test_run_fixtures.py runs the tests that take `corpus` on the real-tool corpus."""

from __future__ import annotations

import pytest

from tests.corpus import IN_REPO, TABLE_TYPES, corpus_fixture, pytest_generate_tests  # noqa: F401 (fixture, hook)
from tests.fixtures import cdc_cases
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

CORPUS = IN_REPO
# Spark 3.5 has neither a TIME nor a zoned TIMESTAMP type: how the engine stores what inference calls those
SPARK_TYPE = {"TIME": "string", "TIMESTAMP_LTZ": "timestamp"}


def test_every_fixture_file_is_covered(corpus):
    names = corpus.names()
    assert len(names) >= corpus.min_files and {corpus.format_of(n) for n in names} == {"debezium-json", "canal-json",
                                                                                      "maxwell-json"}


def test_both_table_types_see_schema_envelopes_and_row_images():
    kinds = {(TABLE_TYPES[i % 2], bool(cdc_cases.case(n).envelope_nullability)) for i, n in enumerate(CORPUS.names())}
    assert kinds == {(t, e) for t in TABLE_TYPES for e in (True, False)}


def test_fixture_lands_as_final_table(spark, bootstrap, make_topic, produce, tmp_path, corpus, cdc_file, table_type):
    fmt = corpus.format_of(cdc_file)
    key, rows = corpus.landed(cdc_file)
    topic = make_topic(partitions=1)
    n = corpus.produce(produce, topic, cdc_file)
    extra = {} if fmt in ("canal-json", "maxwell-json") else {"sink.primary_key": key}  # those carry their keys
    cfg = write_config(tmp_path, bootstrap, topic, fmt, table_type, **extra)

    summary = run_once(cfg, spark)

    assert summary.totals["messages"] == n
    assert summary.totals["bad"] == 0
    want = by_key(rows, key)
    assert want, "the history must leave rows"
    got_spark = by_key(spark_rows(spark, str(tmp_path / "table")), key)
    got_rs = by_key(hudi_rs_rows(str(tmp_path / "table")), key)
    assert set(got_spark) == set(want), f"keys differ: spark={sorted(got_spark)} want={sorted(want)}"
    for k, row in want.items():
        for col, value in row.items():
            assert got_spark[k].get(col) == value, f"{cdc_file} {k} {col}: spark {got_spark[k].get(col)!r}"
            assert got_rs[k].get(col) == value, f"{cdc_file} {k} {col}: hudi-rs {got_rs[k].get(col)!r}"
    assert set(got_rs) == set(want)
    if corpus.typed_by_envelope(cdc_file):
        # with the schema envelope, each column's Spark type is the one the Connect schema states (the model's DDL):
        # decimals keep precision and scale, dates and times are typed, DECIMAL wider than 38 digits is exact text
        _, _, types, _ = corpus.expected_schema(cdc_file)
        df = spark.read.format("hudi").load(str(tmp_path / "table"))
        want_types = {c: SPARK_TYPE.get(t, t.lower()) for c, t in types.items()}
        assert {c: t for c, t in df.dtypes if c in types} == want_types
