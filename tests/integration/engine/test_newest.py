"""Each key's newest change is chosen in Spark before Hudi sees the batch (stages/newest.py). A batch into a table
with no commit yet is a bulk_insert: the table equals what upserts would have left — newest change per key by log
position, not Kafka order; a key whose newest change is a delete has no row; a delete still leaves its marker. Later
batches upsert one change per key, Hudi's own combine off, to the same final state."""

from __future__ import annotations

import json

import pytest

from cdcsync.config import load_config
from tests.integration.engine.helpers import (
    TABLE_TYPES,
    change_rows,
    hudi_rs_rows,
    marker_keys,
    operations,
    spark_rows,
    sync_rows,
    write_config,
)

pytestmark = pytest.mark.integration


def change(op: str, key: int, name: str | None, pos: int, ver: int = 0) -> tuple[str, str]:
    """A Debezium change (Kafka key, value) at binlog position `pos`; a delete without `name` carries no before
    image, only the Kafka key."""
    row = None if name is None else {"id": key, "name": name, "ver": ver}
    image = {"before": row, "after": None} if op == "d" else {"before": None, "after": row}
    source = {"connector": "mysql", "ts_ms": 1_700_000_000_000, "file": "mysql-bin.000003", "pos": pos, "row": 0,
              "db": "app", "table": "t"}
    return json.dumps({"id": key}), json.dumps({"op": op, **image, "source": source})


# Kafka order; the binlog positions decide which change is newest
FIRST = [change("c", 1, "a1", 10), change("u", 1, "a3", 30), change("u", 1, "a2", 20),  # a late older change
         change("c", 2, "b1", 11), change("d", 2, "b1", 21),  # deleted
         change("c", 3, "c1", 12), change("d", 3, None, 22), change("c", 3, "c2", 32),  # deleted, then back
         change("d", 4, "d0", 23),  # a delete of a row the table never had
         change("c", 5, "e1", 14)]
SECOND = [change("u", 2, "b0", 15),  # older than batch 1's delete: must not bring key 2 back
          change("u", 5, "e3", 41), change("u", 5, "e2", 40),  # two changes of one key, the newer first
          change("d", 1, None, 50), change("c", 6, "f1", 51), change("d", 6, "f1", 52),  # created and deleted
          change("d", 3, "c2", 53), change("c", 3, "c3", 54)]  # deleted and back again


def names(rows: list[dict]) -> dict:
    return {r["id"]: r["name"] for r in rows}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_first_load_is_a_bulk_insert_with_the_upserts_final_state(spark, tmp_path, table_type):
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", table_type,
                                   **{"sink.primary_key": ["id"]}))
    first = sync_rows(spark, cfg, change_rows(spark, FIRST, 0))
    assert first.totals()["upserted"] == 7 and first.totals()["deleted"] == 3
    want = {1: "a3", 3: "c2", 5: "e1"}
    assert names(spark_rows(spark, cfg.sink.path)) == want == names(hudi_rs_rows(cfg.sink.path))
    assert operations(spark, cfg.sink.path) == ["BULK_INSERT"]
    assert marker_keys(spark, cfg.sink.path) == {
        '{"id":2}', '{"id":3}', '{"id":4}'}, "a first load's deletes leave their markers too"

    second = sync_rows(spark, cfg, change_rows(spark, SECOND, len(FIRST)))
    assert second.totals()["upserted"] == 5 and second.totals()["deleted"] == 3, "the ledger counts every change"
    want = {3: "c3", 5: "e3"}
    assert names(spark_rows(spark, cfg.sink.path)) == want == names(hudi_rs_rows(cfg.sink.path))
    assert operations(spark, cfg.sink.path)[-1] == "UPSERT"


def test_a_large_upsert_writes_one_change_per_key_and_hudi_does_not_combine_again(spark, tmp_path):
    from cdcsync.sinks import hudi
    from cdcsync.stages import newest

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"]}))
    spec = hudi.TableSpec.from_config(cfg)
    rows = spark.createDataFrame([(1, "old", "a", False), (1, "new", "b", False), (2, "gone", "c", True)],
                                 f"id BIGINT, name STRING, {hudi.ORDER} STRING, {hudi.DELETED} BOOLEAN")
    small, how = newest.settle(rows, spec, committed=True, changes=3)
    assert small is rows and "hoodie.combine.before.upsert" not in hudi.write_options(how), \
        "a small batch without ties is left to Hudi's combine"
    settled, how = newest.settle(rows, spec, committed=True, changes=newest.SPARK_FROM)
    assert sorted((r["id"], r["name"], r[hudi.DELETED]) for r in settled.collect()) == [
        (1, "new", False), (2, "gone", True)], "a delete is written, for Hudi to remove the row"
    assert hudi.write_options(how)["hoodie.combine.before.upsert"] == "false"
    assert hudi.write_options(how)["hoodie.datasource.write.operation"] == "upsert"


def test_a_custom_ordering_fields_ties_go_to_the_later_log_position(spark, tmp_path):
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"], "sink.ordering_field": "ver"}))
    sync_rows(spark, cfg, change_rows(spark, [change("c", 1, "a1", 10, ver=1)], 0))
    # one ver, three changes: the one latest in the source's log wins, wherever Kafka holds it
    ties = [change("u", 1, "a3", 30, ver=2), change("u", 1, "a4", 40, ver=2), change("u", 1, "a2", 20, ver=2)]
    sync_rows(spark, cfg, change_rows(spark, ties, 1))
    assert names(spark_rows(spark, cfg.sink.path)) == {1: "a4"} == names(hudi_rs_rows(cfg.sink.path))


def test_a_configured_write_operation_wins(spark, tmp_path):
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"],
                                      "sink.options": {"hoodie.datasource.write.operation": "upsert"}}))
    sync_rows(spark, cfg, change_rows(spark, FIRST, 0))
    assert names(spark_rows(spark, cfg.sink.path)) == {1: "a3", 3: "c2", 5: "e1"}
    assert operations(spark, cfg.sink.path) == ["UPSERT"]


def ordered_by_ver(tmp_path, table_type: str):
    return load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", table_type,
                                    **{"sink.primary_key": ["id"], "sink.ordering_field": "ver",
                                       "run.on_bad_record": "dead-letter"}))


def markers(spark, path: str) -> dict:
    from cdcsync.sinks.hudi import ORDER
    from cdcsync.stages.deletes import KEY, markers_path

    return {r[0]: r[1] for r in spark.read.parquet(markers_path(path)).select(KEY, ORDER).collect()}


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_key_only_delete_under_a_custom_ordering_field_removes_the_row_it_follows(spark, tmp_path, table_type):
    cfg = ordered_by_ver(tmp_path, table_type)
    sync_rows(spark, cfg, change_rows(spark, [change("c", 1, "a1", 10, ver=7), change("c", 2, "b1", 11, ver=7),
                                        change("c", 3, "c1", 12, ver=7)], 0))
    # PostgreSQL's default replica identity: a delete carries the key only, no ver. Key 1's delete follows the
    # table's row; key 2's follows a change in its own batch, key 3 is deleted and created again after it
    second = sync_rows(spark, cfg, change_rows(spark, [
        change("d", 1, None, 20), change("u", 2, "b2", 21, ver=9), change("d", 2, None, 22),
        change("d", 3, None, 23), change("c", 3, "c2", 24, ver=8), change("d", 4, None, 25)], 3))
    assert second.totals()["deleted"] == 4 and second.totals()["bad"] == 0
    assert names(spark_rows(spark, cfg.sink.path)) == {3: "c2"} == names(hudi_rs_rows(cfg.sink.path))
    # each placed delete leaves the value of the version it removed; key 4's removed nothing and leaves none
    assert markers(spark, cfg.sink.path) == {'{"id":1}': 7, '{"id":2}': 9, '{"id":3}': 7}
    # a late change older than the delete's version stays out; a newer one comes back
    sync_rows(spark, cfg, change_rows(spark, [change("u", 1, "a0", 5, ver=6), change("u", 2, "b3", 30, ver=10)], 9))
    assert names(spark_rows(spark, cfg.sink.path)) == {2: "b3", 3: "c2"} == names(hudi_rs_rows(cfg.sink.path))


def test_a_replayed_key_only_delete_leaves_a_later_version_of_its_key(spark, tmp_path):
    from cdcsync.model.batch import CommitMode

    cfg = ordered_by_ver(tmp_path, "MERGE_ON_READ")
    sync_rows(spark, cfg, change_rows(spark, [change("c", 1, "a1", 10, ver=1), change("d", 1, None, 20)], 0))
    sync_rows(spark, cfg, change_rows(spark, [change("c", 1, "a2", 30, ver=2)], 2))
    assert names(spark_rows(spark, cfg.sink.path)) == {1: "a2"}
    # the first range again: its delete is older in the log than the table's row, which it must not remove
    sync_rows(spark, cfg, change_rows(spark, [change("d", 1, None, 20)], 1), mode=CommitMode.REPLAY)
    assert names(spark_rows(spark, cfg.sink.path)) == {1: "a2"} == names(hudi_rs_rows(cfg.sink.path))


def test_a_first_loads_key_only_delete_removes_what_precedes_it(spark, tmp_path):
    cfg = ordered_by_ver(tmp_path, "COPY_ON_WRITE")
    sync_rows(spark, cfg, change_rows(spark, [change("c", 1, "a1", 10, ver=3), change("d", 1, None, 20),
                                        change("c", 2, "b1", 11, ver=3), change("d", 2, None, 21),
                                        change("c", 2, "b2", 31, ver=4)], 0))
    assert names(spark_rows(spark, cfg.sink.path)) == {2: "b2"} == names(hudi_rs_rows(cfg.sink.path))
    assert operations(spark, cfg.sink.path) == ["BULK_INSERT"]


def test_an_upsert_without_its_ordering_value_is_a_bad_record(spark, tmp_path):
    cfg = ordered_by_ver(tmp_path, "MERGE_ON_READ")
    sync_rows(spark, cfg, change_rows(spark, [change("c", 1, "a1", 10, ver=1)], 0))
    null_ver = change("u", 1, "a2", 20)
    null_ver = (null_ver[0], null_ver[1].replace('"ver": 0', '"ver": null'))
    seen = []
    result = sync_rows(spark, cfg, change_rows(spark, [null_ver, change("c", 2, "b1", 21, ver=1)], 1),
                       on_bad=lambda df, _b, _n: seen.extend(df.select("_kafka_offset", "_reason", "_reason_detail")
                                                             .collect()) or [])
    assert (result.totals()["bad"], result.totals()["upserted"]) == (1, 1)
    ((offset, reason, detail),) = seen
    assert (offset, reason) == (1, "missing_ordering_value") and "ordering_field 'ver' is null" in detail
    # Hudi never met the null (its MERGE_ON_READ log would fail every read after it)
    assert names(spark_rows(spark, cfg.sink.path)) == {1: "a1", 2: "b1"} == names(hudi_rs_rows(cfg.sink.path))


def test_an_ordering_field_the_rows_do_not_have_is_refused_with_a_close_match(spark, tmp_path):
    from cdcsync.errors import ConfigError

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"], "sink.ordering_field": "vers"}))
    with pytest.raises(ConfigError) as err:
        sync_rows(spark, cfg, change_rows(spark, [change("c", 1, "a1", 10, ver=1)], 0))
    assert "sink.ordering_field = 'vers'" in err.value.message and "did you mean 'ver'" in err.value.message
    assert err.value.facts["key"] == "sink.ordering_field"


@pytest.mark.parametrize("sort_mode", [None, "NONE"])
def test_a_partitioned_first_load_writes_each_partition_path_from_one_task(spark, tmp_path, sort_mode):
    """Hudi's default bulk_insert has every task open a file in every partition path it meets; cdcsync shuffles a
    partitioned first load by path (one file per path here), and a [sink.options] sort mode wins."""
    options = {"hoodie.bulkinsert.sort.mode": sort_mode} if sort_mode else None
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"], "sink.partition_by": ["ver"],
                                      "sink.options": options}))
    changes = [change("c", key, f"n{key}", key, ver=key % 4) for key in range(40)]
    coalesce = "spark.sql.adaptive.coalescePartitions.enabled"
    spark.conf.set(coalesce, "false")  # else the window's two shuffle partitions of 40 rows become one task
    try:
        sync_rows(spark, cfg, change_rows(spark, changes, 0))
    finally:
        spark.conf.unset(coalesce)
    assert operations(spark, cfg.sink.path) == ["BULK_INSERT"]
    assert {r["id"]: r["ver"] for r in hudi_rs_rows(cfg.sink.path)} == {k: k % 4 for k in range(40)}
    files = {p.name: len(list(p.glob("*.parquet"))) for p in (tmp_path / "table").glob("ver=*")}
    assert sorted(files) == ["ver=0", "ver=1", "ver=2", "ver=3"]
    if sort_mode is None:
        assert set(files.values()) == {1}, files
    else:  # two tasks, each meeting every path
        assert sum(files.values()) > 4, files
