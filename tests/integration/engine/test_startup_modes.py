"""Acceptance (issue 3, point 4): each startup mode starts where it should, and offsets recorded in the table
win over the mode on the next run."""

from __future__ import annotations

import pytest

from tests.integration.engine.helpers import run_once, spark_rows, timestamped_topic, write_config

pytestmark = pytest.mark.integration

BASE_TS = 1_700_000_000_000


@pytest.fixture
def topic10(make_topic, produce):
    return timestamped_topic(make_topic, produce, BASE_TS)


def ids(spark, tmp_path) -> set[int]:
    return {r["id"] for r in spark_rows(spark, str(tmp_path / "table"))}


def cfg(tmp_path, bootstrap, topic, **extra):
    return write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                        **{"sink.primary_key": ["id"], **extra})


def commit_group(bootstrap, topic, group, offsets: dict[int, int]):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    c.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})
    c.close()


def test_earliest_then_recorded_offsets_win(spark, bootstrap, topic10, produce, tmp_path):
    run_once(cfg(tmp_path, bootstrap, topic10, **{"source.startup_mode": "earliest-offset"}), spark)
    assert ids(spark, tmp_path) == {p * 100 + i for p in (0, 1) for i in range(10)}
    produce(topic10, [{"id": 50 + i, "i": i} for i in range(3)], partition=0)
    # a later run with another startup_mode continues from the table's commit, not from "latest"
    summary = run_once(cfg(tmp_path, bootstrap, topic10, **{"source.startup_mode": "latest-offset"}), spark)
    assert summary.started_from.startswith("offsets recorded")
    assert summary.totals["messages"] == 3
    assert len(ids(spark, tmp_path)) == 23


def test_latest_reads_only_what_arrives_after_the_first_run(spark, bootstrap, topic10, produce, tmp_path):
    config = cfg(tmp_path, bootstrap, topic10, **{"source.startup_mode": "latest-offset"})
    first = run_once(config, spark)
    assert first.totals["messages"] == 0 and first.batches == 0
    produce(topic10, [{"id": 900, "i": 0}], partition=0)
    produce(topic10, [{"id": 901, "i": 0}], partition=1)
    second = run_once(config, spark)  # the start decided by the first run holds: nothing is skipped
    assert second.totals["messages"] == 2
    assert ids(spark, tmp_path) == {900, 901}


def test_timestamp_resolves_per_partition(spark, bootstrap, topic10, tmp_path):
    run_once(cfg(tmp_path, bootstrap, topic10, **{"source.startup_mode": "timestamp",
                                                  "source.startup_timestamp_ms": BASE_TS + 6000}), spark)
    assert ids(spark, tmp_path) == {p * 100 + i for p in (0, 1) for i in range(6, 10)}


def test_specific_offsets_with_group_fallback_for_unlisted_partitions(spark, bootstrap, topic10, tmp_path):
    commit_group(bootstrap, topic10, "g-specific", {1: 7})
    run_once(cfg(tmp_path, bootstrap, topic10, **{"source.startup_mode": "specific-offsets",
                                                  "source.specific_offsets": "partition:0,offset:3",
                                                  "source.group_id": "g-specific"}), spark)
    assert ids(spark, tmp_path) == {i for i in range(3, 10)} | {100 + i for i in range(7, 10)}


def test_group_offsets(spark, bootstrap, topic10, tmp_path):
    commit_group(bootstrap, topic10, "g-offsets", {0: 5, 1: 8})
    summary = run_once(cfg(tmp_path, bootstrap, topic10, **{"source.startup_mode": "group-offsets",
                                                            "source.group_id": "g-offsets"}), spark)
    assert ids(spark, tmp_path) == {i for i in range(5, 10)} | {108, 109}
    # the group follows the Hudi commit (monitoring only)
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id="g-offsets", enable_auto_commit=False)
    assert c.committed(TopicPartition(topic10, 0)) == 10 and c.committed(TopicPartition(topic10, 1)) == 10
    c.close()
    assert summary.lag == {f"{topic10}/0": 0, f"{topic10}/1": 0}


def test_the_group_catches_up_with_the_table_on_a_run_that_reads_nothing(spark, bootstrap, topic10, tmp_path):
    """A crash between the Hudi commit and the group commit leaves the group behind; the next run puts it where
    the table's offsets are even when there is nothing new to read (monitoring sees no phantom lag)."""
    config = cfg(tmp_path, bootstrap, topic10, **{"source.group_id": "g-after-crash"})
    run_once(config, spark)
    commit_group(bootstrap, topic10, "g-after-crash", {0: 3, 1: 0})  # what the crash left
    assert run_once(config, spark).totals["messages"] == 0
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id="g-after-crash", enable_auto_commit=False)
    assert [c.committed(TopicPartition(topic10, p)) for p in (0, 1)] == [10, 10]
    c.close()


def test_group_offsets_without_offsets_or_reset_stops_with_config_error(spark, bootstrap, topic10, tmp_path):
    from cdcsync.errors import ConfigError
    from cdcsync.exit_codes import ExitCode

    with pytest.raises(ConfigError) as err:
        run_once(cfg(tmp_path, bootstrap, topic10, **{"source.startup_mode": "group-offsets",
                                                      "source.group_id": "g-never"}), spark)
    assert err.value.exit_code == ExitCode.CONFIG and "auto.offset.reset" in str(err.value)
    assert not (tmp_path / "table").exists()


def test_group_offsets_fall_back_to_auto_offset_reset(spark, bootstrap, topic10, tmp_path):
    run_once(cfg(tmp_path, bootstrap, topic10, **{"source.startup_mode": "group-offsets",
                                                  "source.group_id": "g-fresh",
                                                  "source.properties": {"auto.offset.reset": "earliest"}}), spark)
    assert len(ids(spark, tmp_path)) == 20
