"""The options a Hudi write carries for where it runs: Hudi's shuffles as wide as the session's, narrower for a write
of few rows; one JVM (a local master) goes without the embedded timeline server and with direct markers, a cluster
keeps Hudi's defaults; and [sink.options] win either way."""

from __future__ import annotations

from types import SimpleNamespace

from cdcsync.sinks.hudi import ROWS_PER_TASK, SAME_JVM, SHUFFLES, TableSpec, options_for, write_options


def spec(**options) -> TableSpec:
    return TableSpec(path="/t", table_name="t", table_type="MERGE_ON_READ", primary_key=["id"], partition_by=[],
                     ordering_fields=["_cdc_order"], options=options)


def session(master: str, shuffle_partitions: str = "4"):
    """What options_for reads of a SparkSession: its master and its SQL conf."""
    conf = {"spark.sql.shuffle.partitions": shuffle_partitions}
    return SimpleNamespace(sparkContext=SimpleNamespace(master=master), conf=SimpleNamespace(get=conf.__getitem__))


def test_a_local_session_writes_without_the_embedded_timeline_server():
    for master in ("local", "local[2]", "local[*]"):
        got = options_for(spec(), session(master))
        assert got["hoodie.embed.timeline.server"] == "false" and got["hoodie.write.markers.type"] == "DIRECT"
        assert got == write_options(spec()) | SAME_JVM | dict.fromkeys(SHUFFLES, "4")


def test_a_cluster_keeps_hudis_defaults_and_the_config_wins():
    assert options_for(spec(), session("spark://master:7077")) == write_options(spec()) | dict.fromkeys(SHUFFLES, "4")
    assert not (set(SAME_JVM) | set(SHUFFLES)) & set(write_options(spec()))
    own = spec(**{"hoodie.embed.timeline.server": "true"})
    got = options_for(own, session("local[2]"))
    assert got["hoodie.embed.timeline.server"] == "true" and got["hoodie.write.markers.type"] == "DIRECT"


def test_hudis_shuffles_follow_the_sessions_width_unless_the_config_sets_them():
    got = options_for(spec(), session("spark://master:7077", "64"))
    assert [got[k] for k in SHUFFLES] == ["64", "64"]
    own = spec(**{"hoodie.upsert.shuffle.parallelism": "8"})
    got = options_for(own, session("spark://master:7077", "64"))
    assert got["hoodie.upsert.shuffle.parallelism"] == "8" and got["hoodie.insert.shuffle.parallelism"] == "64"


def test_a_write_of_few_rows_gets_a_shuffle_task_per_rows_per_task():
    wide = session("spark://master:7077", "64")
    for rows, tasks in [(0, 1), (1, 1), (ROWS_PER_TASK, 1), (ROWS_PER_TASK + 1, 2), (10 * ROWS_PER_TASK, 10),
                        (64 * ROWS_PER_TASK, 64), (1000 * ROWS_PER_TASK, 64)]:
        got = options_for(spec(), wide, rows)
        assert [got[k] for k in SHUFFLES] == [str(tasks)] * 2, rows
    assert [options_for(spec(), wide)[k] for k in SHUFFLES] == ["64", "64"]  # rows unknown: the session's width
    own = spec(**{"hoodie.upsert.shuffle.parallelism": "8"})
    got = options_for(own, wide, 1)
    assert got["hoodie.upsert.shuffle.parallelism"] == "8" and got["hoodie.insert.shuffle.parallelism"] == "1"


def test_the_dead_letter_table_takes_the_sinks_writer_and_metadata_options_not_its_layout(tmp_path):
    from cdcsync.config import load_config
    from cdcsync.sinks.dead_letter import spec_for
    from tests.configs import minimal, write

    options = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
               "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider",
               "hoodie.clean.failed.writes.policy": "LAZY", "hoodie.metadata.enable": "false",
               "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4",
               "hoodie.compact.inline.max.delta.commits": "2"}
    cfg = load_config(write(tmp_path, minimal() + "[sink.options]\n" +
                            "".join(f'"{k}" = "{v}"\n' for k, v in options.items())))
    assert spec_for(cfg).options == {k: v for k, v in options.items()
                                     if k.split(".")[1] in ("write", "clean", "metadata")}
