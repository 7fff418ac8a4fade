"""Issue 8, point 3 (integration half): records the header filter rejects are absent from the table and counted
as skipped in the ledger."""

from __future__ import annotations

import pytest

from tests.integration.engine.helpers import hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration


def test_filtered_records_are_absent_and_counted(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    headers = [[("depart", b"toy")], [("depart", b"book")], [("depart", b"toy"), ("env", b"test")],
               [("depart", b"food")], []]
    produce(topic, [{"id": i} for i in range(5)], headers=headers)
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "source.header_filter": "depart:toy|depart:book&!env:test"})
    summary = run_once(cfg, spark)
    assert summary.totals == {"messages": 5, "rows": 5, "upserted": 2, "deleted": 0, "skipped": 3, "bad": 0}
    assert summary.ledger[f"{topic}/0"]["skipped"] == 3
    assert sorted(r["id"] for r in spark_rows(spark, str(tmp_path / "table"))) == [0, 1]
    assert sorted(r["id"] for r in hudi_rs_rows(str(tmp_path / "table"))) == [0, 1]
