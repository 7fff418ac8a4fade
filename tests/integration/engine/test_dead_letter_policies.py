"""on_bad_record = "skip", and max_bad_records stopping a run after the batch that crossed it."""

from __future__ import annotations

import pytest

from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, write_config
from tests.integration.engine.test_dead_letter import config, expected_table, mixed, produce_mixed

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_skip_counts_bad_records_and_writes_no_dead_letter_table(spark, bootstrap, make_topic, tmp_path):
    topic = make_topic(partitions=2)
    data = mixed(n_good=100, n_bad=16, n_ids=25, seed=8)
    coords = produce_mixed(bootstrap, topic, data)
    summary = run_once(config(tmp_path, bootstrap, topic, **{"run.on_bad_record": "skip"}), spark)
    assert summary.totals["messages"] == len(coords) and summary.totals["bad"] == 16
    assert summary.dead_letter_path is None and not (tmp_path / "table_dead_letter").exists()
    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == expected_table(data.rows)


def test_max_bad_records_stops_after_committing_the_batch_that_crossed_it(spark, bootstrap, make_topic, tmp_path):
    from cdcsync.errors import DecodeError
    from cdcsync.exit_codes import ExitCode
    from cdcsync.sinks import hudi

    topic = make_topic(partitions=2)
    data = mixed(n_good=120, n_bad=24, n_ids=30, seed=9)
    coords = produce_mixed(bootstrap, topic, data)
    cfg = config(tmp_path, bootstrap, topic, **{"run.max_bad_records": 3, "run.max_records_per_batch": 48})
    with pytest.raises(DecodeError) as err:
        run_once(cfg, spark)
    assert err.value.exit_code == ExitCode.BAD_RECORD and "more than run.max_bad_records = 3" in str(err.value)
    last = hudi.last_checkpoint(spark, str(tmp_path / "table"))
    assert last["batch_id"] == 0 and sum(last["offsets"][topic].values()) == 48  # one batch, then stopped
    end = last["offsets"][topic]
    want = {(p, o) for (p, o), (k, _) in zip(coords, data.expect, strict=True) if k == "bad" and o < end[p]}
    assert len(want) > 3
    got = {(r.partition, r.offset) for r in spark.read.format("hudi").load(str(tmp_path / "table_dead_letter"))
           .select("partition", "offset").collect()}
    assert got == want


def test_a_column_name_hudi_cannot_store_dead_letters_its_records(spark, bootstrap, make_topic, produce, tmp_path):
    """Regression (found by the Spark-path fuzz test): such a name used to fail the whole Hudi commit."""
    topic = make_topic()
    produce(topic, [{"id": 1, "a": 1}, {"id": 2, "a": 2, "prix €": 5}, {"id": 3, "a": 3}])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.on_bad_record": "dead-letter"})

    summary = run_once(cfg, spark)

    assert summary.totals == {"messages": 3, "rows": 3, "upserted": 2, "deleted": 0, "skipped": 0, "bad": 1}
    rows = hudi_rs_rows(str(tmp_path / "table"))
    assert sorted((r["id"], r["a"]) for r in rows) == [(1, 1), (3, 3)] and "prix €" not in rows[0]
    dead = spark.read.format("hudi").load(summary.dead_letter_path).collect()
    assert [(d["offset"], d["reason"]) for d in dead] == [(1, "bad_column_name")]
    assert "'prix €' cannot be stored in a Hudi table" in dead[0]["error"]
