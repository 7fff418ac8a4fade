"""Acceptance (issue 44, point 5): offsets the table still needs, deleted from the topic (kafka-delete-records, as
retention would), stop the default run with exit 82 before anything is written; with on_data_loss = "skip" the run
goes on from the earliest offset, the table holds every offset kept, and the gap stays in the commits and status."""

from __future__ import annotations

import json
import time

import pytest

from cdcsync.exit_codes import ExitCode
from cdcsync.sinks import hudi
from tests import cli
from tests.integration.engine.helpers import both, completed_commits, run_once, write_config

pytestmark = pytest.mark.integration


def delete_records_below(bootstrap: str, topic: str, offset: int) -> None:
    """What retention does to partition 0, at once: every record below `offset` is gone."""
    from kafka import KafkaAdminClient, TopicPartition

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.delete_records({TopicPartition(topic, 0): offset})
    finally:
        admin.close()


def config(tmp_path, bootstrap, topic, **extra):
    return write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"], **extra})


@pytest.fixture
def behind_retention(spark, bootstrap, make_topic, produce, tmp_path) -> str:
    """A table that committed offsets 0..9, and a topic whose offsets 10..19 were deleted before it read them."""
    topic = make_topic()
    produce(topic, [{"id": i} for i in range(10)])
    assert run_once(config(tmp_path, bootstrap, topic), spark).totals["messages"] == 10
    produce(topic, [{"id": i} for i in range(10, 30)])
    delete_records_below(bootstrap, topic, 20)
    return topic


def test_offsets_deleted_below_the_table_stop_the_run_with_82_naming_the_range(spark, bootstrap, behind_retention,
                                                                               tmp_path):
    commits = completed_commits(spark, tmp_path / "table")
    cfg = config(tmp_path, bootstrap, behind_retention)
    t0 = time.monotonic()
    p = cli.cdcsync("run", cfg, "--once")
    assert p.returncode == ExitCode.DATA_LOSS == 82, p.stderr[-3000:]
    assert time.monotonic() - t0 < 120  # Spark's start; no batch was read
    assert f"{behind_retention}/0: offsets 10..19 (10 message(s)) are gone; the earliest offset is now 20" in p.stderr
    assert 'on_data_loss = "skip"' in p.stderr and "new table" in p.stderr
    assert [i for i, _ in completed_commits(spark, tmp_path / "table")] == [i for i, _ in commits]


def test_skip_goes_on_from_the_earliest_and_the_gap_stays_in_the_commits_and_status(spark, bootstrap, produce,
                                                                                    behind_retention, tmp_path):
    topic, path = behind_retention, tmp_path / "table"
    cfg = config(tmp_path, bootstrap, topic, **{"run.on_data_loss": "skip"})
    summary = run_once(cfg, spark)
    assert summary.totals["messages"] == 10 and summary.end_offsets == {topic: {0: 30}}
    by_spark, by_hudi_rs = both(spark, path)
    assert by_spark == by_hudi_rs and {k[0][1] for k in by_spark} == {*range(10), *range(20, 30)}
    gap = {"topic": topic, "partition": 0, "from": 10, "to": 20, "reason": "below_earliest", "batch_id": 1}
    _, md = completed_commits(spark, path)[-1]
    assert json.loads(md.getMetadata(hudi.META_DATA_LOSS)) == [gap]  # the batch that went past it

    produce(topic, [{"id": 30}])
    assert run_once(cfg, spark).totals["messages"] == 1
    _, md = completed_commits(spark, path)[-1]
    assert json.loads(md.getMetadata(hudi.META_DATA_LOSS)) == [gap]  # carried on: archiving never hides it

    p = cli.cdcsync("status", cfg, "--json", jvm_free=True)
    assert p.returncode == ExitCode.OK, p.stderr[-3000:]
    st = json.loads(p.stdout)
    assert st["data_loss"] == [gap] and st["committed_offsets"] == {topic: {"0": 31}}
    text = cli.cdcsync("status", cfg, jvm_free=True).stdout
    assert f"data loss      {topic}/0: offsets 10..19 (10 message(s)) are gone" in text


def test_a_routed_run_resumes_from_its_progress_record_and_judges_it_the_same_way(spark, bootstrap, make_topic,
                                                                                 produce, tmp_path):
    from cdcsync.errors import SourceError
    from tests.integration.engine.test_routing import canal, routed_config

    def users(ids):
        return [canal("shop", "users", "INSERT", [{"id": str(i)}], {"id": "int"}, 1000 + i) for i in ids]

    topic = make_topic()
    produce(topic, users(range(5)))
    routes = [{"source_table": r"shop\.users", "sink_table": "ods_users"}]
    assert run_once(routed_config(tmp_path, bootstrap, topic, "canal-json", routes), spark).totals["messages"] == 5
    produce(topic, users(range(5, 12)))
    delete_records_below(bootstrap, topic, 8)

    with pytest.raises(SourceError) as e:
        run_once(routed_config(tmp_path, bootstrap, topic, "canal-json", routes), spark)
    assert e.value.exit_code == ExitCode.DATA_LOSS and f"{topic}/0: offsets 5..7 (3 message(s))" in e.value.message

    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json", routes, **{"run.on_data_loss": "skip"})
    assert run_once(cfg, spark).totals["messages"] == 4
    by_spark, by_hudi_rs = both(spark, tmp_path / "db" / "ods_users")
    assert by_spark == by_hudi_rs and {k[0][1] for k in by_spark} == {*range(5), *range(8, 12)}
    st = json.loads(cli.cdcsync("status", cfg, "--json", jvm_free=True).stdout)
    assert st["data_loss"] == [{"topic": topic, "partition": 0, "from": 5, "to": 8, "reason": "below_earliest",
                                "batch_id": 1}]
