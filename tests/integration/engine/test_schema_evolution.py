"""Acceptance (issue 4, points 3 and 4): the table evolves batch by batch without a restart — a new column, and an
integer column that starts carrying fractions — read back with Spark and hudi-rs in MOR and COW; an incompatible
change stops the run before committing its batch."""

from __future__ import annotations

import json

import pytest

from tests.integration.engine.helpers import completed_commits, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

BEFORE = [{"id": i, "qty": i * 10, "name": f"n{i}"} for i in range(5)]
AFTER = [{"id": 5 + i, "qty": 2.5 + i, "name": f"m{i}", "color": "red"} for i in range(4)] + [
    {"id": 1, "qty": 7.25, "name": "n1-updated", "color": "blue"}]


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_new_column_and_int_to_fraction_evolve_without_restart(spark, bootstrap, make_topic, produce, tmp_path,
                                                               table_type):
    topic = make_topic()
    produce(topic, BEFORE + AFTER)
    cfg = write_config(tmp_path, bootstrap, topic, "json", table_type,
                       **{"sink.primary_key": ["id"], "run.max_records_per_batch": 5})
    summary = run_once(cfg, spark)  # one run, two batches: the second one brings the changes

    assert summary.batches == 2
    assert "new column color STRING" in summary.schema_changes
    assert "column qty widened BIGINT → DOUBLE" in summary.schema_changes
    want = {0: (0.0, "n0", None), 1: (7.25, "n1-updated", "blue"), 2: (20.0, "n2", None), 3: (30.0, "n3", None),
            4: (40.0, "n4", None), 5: (2.5, "m0", "red"), 6: (3.5, "m1", "red"), 7: (4.5, "m2", "red"),
            8: (5.5, "m3", "red")}
    df = spark.read.format("hudi").load(str(tmp_path / "table"))
    assert dict(df.dtypes)["qty"] == "double" and dict(df.dtypes)["color"] == "string"
    got = {r["id"]: (r["qty"], r["name"], r["color"]) for r in spark_rows(spark, str(tmp_path / "table"))}
    assert got == want
    got_rs = {r["id"]: (r["qty"], r["name"], r["color"]) for r in hudi_rs_rows(str(tmp_path / "table"))}
    assert got_rs == want
    history = commit_metadata(spark, str(tmp_path / "table"), "_cdcsync.schema_changes")
    assert history[0] is None and set(json.loads(history[1])) == {"new column color STRING",
                                                                  "column qty widened BIGINT → DOUBLE"}


def commit_metadata(spark, path: str, key: str) -> list:
    """`key` of every completed commit carrying cdcsync offsets, oldest first (the recorded schema history)."""
    return [md.getMetadata(key) or None for _, md in completed_commits(spark, path)
            if md.getMetadata("_cdcsync.offsets")]


def test_incompatible_change_fails_before_committing(spark, bootstrap, make_topic, produce, tmp_path):
    from cdcsync.errors import SchemaError
    from cdcsync.exit_codes import ExitCode
    from cdcsync.sinks.hudi import last_checkpoint

    topic = make_topic()
    produce(topic, [{"id": i, "flag": i % 2 == 0} for i in range(4)] + [{"id": 9, "flag": "maybe"}])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.max_records_per_batch": 4,
                          "schema.on_incompatible": "fail"})
    with pytest.raises(SchemaError) as err:
        run_once(cfg, spark)
    assert err.value.exit_code == ExitCode.SCHEMA_INCOMPATIBLE
    msg = str(err.value)
    assert "flag" in msg and "BOOLEAN" in msg and "STRING" in msg and f"{topic}/0: 4..5" in msg
    # batch 0 committed; the incompatible batch 1 left nothing behind
    assert last_checkpoint(spark, str(tmp_path / "table"))["offsets"] == {topic: {0: 4}}
    assert sorted(r["id"] for r in spark_rows(spark, str(tmp_path / "table"))) == [0, 1, 2, 3]
