"""Acceptance (issue 14, point 2): no resurrection. A delete read in one batch stays a delete against every older
change to its key read later: a late event, or `replay-from-offset` of any applied range (property-based, 50
ranges). `[sink] deletes = "hard"` removes the row and keeps a marker beside the table; `"soft"` keeps the row
flagged `_cdc_deleted` with its last image."""

from __future__ import annotations

import json
import random
import shutil
from itertools import pairwise
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from cdcsync.config import load_config
from cdcsync.engine.replay import Replayer
from cdcsync.reporting import PlainReporter
from cdcsync.stages.deletes import markers_path
from tests.integration.engine.helpers import (
    both,
    by_key,
    change_rows,
    hudi_rs_rows,
    marker_keys,
    run_once,
    spark_rows,
    sync_rows,
    write_config,
)

pytestmark = pytest.mark.integration


def change(op: str, key: int, row: dict | None, ts: int, table: str = "t") -> tuple[str, str]:
    """One Debezium change as (Kafka key, value); a delete's `row` is its before image (None: key only)."""
    image = {"before": row, "after": None} if op == "d" else {"before": None, "after": row}
    # the binlog position follows the source time, so ordering by either gives the same change order
    source = {"connector": "mysql", "ts_ms": ts, "file": "mysql-bin.000003", "pos": 4 + ts, "row": 0, "db": "app",
              "table": table}
    return json.dumps({"id": key}), json.dumps({"op": op, **image, "source": source})


def send(produce, topic, changes):
    produce(topic, [v for _, v in changes], keys=[k for k, _ in changes])


def history(n: int, seed: int) -> tuple[list[tuple[str, str]], dict[int, dict]]:
    """`n` changes over a few keys (inserts, updates, deletes, re-inserts) in source order, and the final state."""
    rng, state, out = random.Random(seed), {}, []
    for i in range(n):
        k = rng.randint(1, 4)
        ts = 1_000_000 + i * 1000
        if k in state and rng.random() < 0.35:
            out.append(change("d", k, state.pop(k), ts))
        else:
            out.append(change("u" if k in state else "c", k, {"id": k, "v": f"v{i}"}, ts))
            state[k] = {"id": k, "v": f"v{i}"}
    return out, state


@pytest.mark.soak  # 50 replays, one Hudi commit each
def test_replaying_any_applied_range_never_resurrects(spark, bootstrap, make_topic, produce, tmp_path):
    changes, final = history(40, seed=14)
    topic = make_topic()
    send(produce, topic, changes)
    # no metadata table: the ranges are what this tests, and each replay's commit costs less without one
    config = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"], "sink.options": {"hoodie.metadata.enable": "false"}})
    run_once(config, spark)
    table = tmp_path / "table"
    want = by_key(list(final.values()), ["id"])
    assert both(spark, table) == (want, want)
    deleted_keys = {json.loads(k)["id"] for k, v in changes if json.loads(v)["op"] == "d"} - set(final)
    assert deleted_keys, "the history must end with some keys deleted"
    ranges = []

    # no shrinking: every example is a replay with one or two Hudi commits; the failing range is in the message
    @settings(max_examples=50, deadline=None, database=None, phases=[Phase.explicit, Phase.generate])
    @given(st.integers(0, len(changes) - 1).flatmap(lambda a: st.tuples(st.just(a), st.integers(a + 1, len(changes)))))
    @example((0, len(changes) - 1))
    def replay(r):
        a, b = r
        rp = Replayer(load_config(config), PlainReporter(quiet=True), f"partition:0,offset:{a}",
                      f"partition:0,offset:{b}", spark=spark)
        rp.run(rp.plan())
        ranges.append(r)
        got = both(spark, table)
        assert got == (want, want), f"replay of [{a}, {b}) changed the table (Spark, hudi-rs): {got}"

    replay()
    assert len(set(ranges)) >= 50


CASES = [("MERGE_ON_READ", "hard"), ("MERGE_ON_READ", "soft"),  # make soak adds COPY_ON_WRITE's
         *(pytest.param("COPY_ON_WRITE", mode, marks=pytest.mark.soak) for mode in ("hard", "soft"))]


@pytest.mark.parametrize("table_type, mode", CASES)
def test_a_late_older_event_never_brings_a_deleted_row_back(table_type, mode, spark, bootstrap, make_topic, produce,
                                                             tmp_path):
    topic = make_topic()
    send(produce, topic, [change("c", 1, {"id": 1, "v": "a"}, 1000), change("c", 3, {"id": 3, "v": "p"}, 1100),
                          change("c", 2, {"id": 2, "v": "x"}, 1500), change("u", 1, {"id": 1, "v": "b"}, 2000),
                          change("d", 1, {"id": 1, "v": "b"}, 3000),
                          change("d", 3, None, 3100)])  # PostgreSQL REPLICA IDENTITY DEFAULT: only the Kafka key
    config = write_config(tmp_path, bootstrap, topic, "debezium-json", table_type,
                          **{"sink.primary_key": ["id"], "sink.deletes": mode})
    run_once(config, spark)
    table = tmp_path / "table"
    send(produce, topic, [change("u", 1, {"id": 1, "v": "old"}, 2500), change("c", 3, {"id": 3, "v": "late"}, 1200)])
    assert run_once(config, spark).totals["upserted"] == 2  # applied: the ordering discarded them
    if mode == "hard":
        want = by_key([{"id": 2, "v": "x"}], ["id"])
        assert markers_path(str(table)) == str(tmp_path / "table_cdcsync_delete_markers")
        assert marker_keys(spark, str(table)) == {'{"id":1}', '{"id":3}'}
    else:  # the delete's last image stays: the before image, or the key alone
        want = by_key([{"id": 1, "v": "b", "_cdc_deleted": True}, {"id": 2, "v": "x", "_cdc_deleted": False},
                       {"id": 3, "v": None, "_cdc_deleted": True}], ["id"])
        assert not (tmp_path / "table_cdcsync_delete_markers").exists()
    assert both(spark, table) == (want, want)

    send(produce, topic, [change("c", 1, {"id": 1, "v": "new"}, 4000)])  # a re-insert newer than the delete wins
    run_once(config, spark)
    flag = {"_cdc_deleted": False} if mode == "soft" else {}
    want |= by_key([{"id": 1, "v": "new", **flag}], ["id"])
    assert both(spark, table) == (want, want)


def test_routed_tables_keep_deletes_each_with_its_own_mode(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    send(produce, topic, [c for table in ("hard_t", "soft_t") for c in (
        change("c", 1, {"id": 1, "v": "a"}, 1000, table), change("d", 1, {"id": 1, "v": "a"}, 3000, table))])
    config = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ")
    with config.open("a") as f:
        f.write('[[route]]\nsource_table = "app.hard_t"\nsink_table = "hard_t"\nprimary_key = ["id"]\n'
                '[[route]]\nsource_table = "app.soft_t"\nsink_table = "soft_t"\nprimary_key = ["id"]\n'
                'deletes = "soft"\n')
    run_once(config, spark)
    send(produce, topic, [change("u", 1, {"id": 1, "v": "old"}, 2000, table) for table in ("hard_t", "soft_t")])
    run_once(config, spark)
    base = tmp_path / "table"
    assert both(spark, base / "hard_t") == ({}, {}) and (base / "hard_t_cdcsync_delete_markers").is_dir()
    soft = by_key([{"id": 1, "v": "a", "_cdc_deleted": True}], ["id"])
    assert both(spark, base / "soft_t") == (soft, soft)


def marker_files(table: str) -> list[str]:
    return sorted(p.name for p in Path(markers_path(table)).glob("*.parquet"))


def test_marker_files_are_consolidated_newest_per_key(spark, tmp_path, monkeypatch):
    from cdcsync.stages import deletes

    monkeypatch.setattr(deletes, "CONSOLIDATE_AT", 2)
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"]}))
    offset = 0
    for i, key in enumerate([1, 2, 1, 3]):  # key 1 deleted twice: the newer marker is the one kept
        changes = [change("c", key, {"id": key, "v": f"v{i}"}, 1000 * i + 1), change("d", key, None, 1000 * i + 2)]
        sync_rows(spark, cfg, change_rows(spark, changes, offset))
        offset += len(changes)
        assert len(marker_files(cfg.sink.path)) <= 2
    assert marker_keys(spark, cfg.sink.path) == {'{"id":1}', '{"id":2}', '{"id":3}'}
    kept = spark.read.parquet(markers_path(cfg.sink.path)).where("_cdc_key = '{\"id\":1}'").collect()
    assert len(kept) == 1, "consolidation keeps one marker per key"

    # an older change to key 1 (between its two deletes) stays deleted; one newer than the last delete comes back
    late = [change("u", 1, {"id": 1, "v": "late"}, 1500), change("u", 3, {"id": 3, "v": "new"}, 9000)]
    assert sync_rows(spark, cfg, change_rows(spark, late, offset)).totals()["upserted"] == 2
    want = by_key([{"id": 3, "v": "new"}], ["id"])
    assert both(spark, cfg.sink.path) == (want, want)


def test_a_runs_batch_writes_its_markers_unlooked_and_a_replay_looks_first(spark, tmp_path):
    from cdcsync.model.batch import CommitMode

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"]}))
    changes = [change("c", 1, {"id": 1, "v": "a"}, 1001), change("c", 2, {"id": 2, "v": "b"}, 1002),
               change("d", 1, None, 1003)]
    want = by_key([{"id": 2, "v": "b"}], ["id"])
    sync_rows(spark, cfg, change_rows(spark, changes, 0))
    assert len(marker_files(cfg.sink.path)) == 1
    # each file is whole once it appears: no job marker, no staging folder left beside it
    assert not {"_SUCCESS", "_temporary"} & {p.name for p in Path(markers_path(cfg.sink.path)).iterdir()}
    # the same range again as a run reads it after a crash before its commit: new to the run, markers written again
    sync_rows(spark, cfg, change_rows(spark, changes, 0))
    assert len(marker_files(cfg.sink.path)) == 2 and marker_keys(spark, cfg.sink.path) == {'{"id":1}'}
    assert both(spark, cfg.sink.path) == (want, want)
    # a replay of an applied range finds its markers written: nothing added
    sync_rows(spark, cfg, change_rows(spark, changes, 0), mode=CommitMode.REPLAY)
    assert len(marker_files(cfg.sink.path)) == 2
    assert both(spark, cfg.sink.path) == (want, want)


def test_an_earlier_versions_marker_table_is_moved_into_the_folder(spark, tmp_path):
    from cdcsync.sinks import hudi
    from cdcsync.stages import deletes

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"]}))
    first = [change("c", 1, {"id": 1, "v": "a"}, 1000), change("c", 2, {"id": 2, "v": "b"}, 1100),
             change("d", 1, None, 5000)]
    sync_rows(spark, cfg, change_rows(spark, first, 0))
    # what an earlier version left: the same markers in a Hudi table at <path>_cdcsync_deletes, no folder
    legacy = cfg.sink.path + deletes.LEGACY_SUFFIX
    spec = hudi.TableSpec(legacy, "t" + deletes.LEGACY_SUFFIX, "COPY_ON_WRITE", [deletes.KEY], [], [hudi.ORDER],
                          {"hoodie.metadata.enable": "false"})
    hudi.write_batch(spark.read.parquet(markers_path(cfg.sink.path)), spec, {})
    shutil.rmtree(markers_path(cfg.sink.path))

    late = [change("u", 1, {"id": 1, "v": "late"}, 3000)]  # older than the delete the legacy table remembers
    sync_rows(spark, cfg, change_rows(spark, late, len(first)))
    want = by_key([{"id": 2, "v": "b"}], ["id"])
    assert both(spark, cfg.sink.path) == (want, want)
    assert marker_keys(spark, cfg.sink.path) == {'{"id":1}'}
    assert not hudi.table_exists(spark, legacy), "the legacy table is gone once its markers moved"


def test_markers_follow_a_custom_ordering_column_that_widens(spark, tmp_path):
    """A marker written while the ordering column was BIGINT still answers once its values need DOUBLE."""
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"], "sink.ordering_field": "ver"}))
    first = [change("c", 1, {"id": 1, "ver": 1}, 1000), change("c", 2, {"id": 2, "ver": 1}, 1100),
             change("u", 1, {"id": 1, "ver": 2}, 1200), change("d", 1, {"id": 1, "ver": 2}, 1300)]
    sync_rows(spark, cfg, change_rows(spark, first, 0))
    folder = markers_path(cfg.sink.path)
    written = spark.read.parquet(folder)
    assert written.schema["_cdc_order"].dataType.simpleString() == "bigint"
    # as a crash in the middle of rewriting them leaves the markers: a DOUBLE copy beside the BIGINT file
    written.select("_cdc_key", written["_cdc_order"].cast("double")).write.mode("append").parquet(folder)
    # ver widens to DOUBLE: a late change to key 1 older than its delete stays out, a newer one to key 2 lands
    late = [change("u", 1, {"id": 1, "ver": 1.5}, 1400), change("u", 2, {"id": 2, "ver": 2.5}, 1500)]
    assert sync_rows(spark, cfg, change_rows(spark, late, len(first))).totals()["upserted"] == 2
    want = by_key([{"id": 2, "ver": 2.5}], ["id"])
    assert both(spark, cfg.sink.path) == (want, want)
    assert len(marker_files(cfg.sink.path)) == 1
    assert spark.read.parquet(folder).schema["_cdc_order"].dataType.simpleString() == "double"
    # a re-create of key 1 newer than its (BIGINT) marker comes back
    again = [change("c", 1, {"id": 1, "ver": 4.5}, 1600)]
    sync_rows(spark, cfg, change_rows(spark, again, len(first) + len(late)))
    want = by_key([{"id": 1, "ver": 4.5}, {"id": 2, "ver": 2.5}], ["id"])
    assert both(spark, cfg.sink.path) == (want, want)


def test_a_first_load_skips_the_join_with_its_own_markers_and_a_later_batch_does_not(spark, tmp_path):
    """Into a table with no commit the markers are the batch's own, and each key's newest change already drops what
    they cover (test_newest's first load holds the final state): only later batches are joined with the folder."""
    from dataclasses import replace

    from cdcsync.model.batch import TableState
    from cdcsync.schema.spark.columns import Col
    from cdcsync.sinks import hudi
    from cdcsync.stages import deletes

    spec = hudi.TableSpec(path=str(tmp_path / "t"), table_name="t", table_type="MERGE_ON_READ", primary_key=["id"],
                          partition_by=[], ordering_fields=[hudi.ORDER], options={})
    rows = spark.createDataFrame([(1, "a", "0001", False), (1, None, "0002", True), (2, "b", "0003", False)],
                                 f"id BIGINT, name STRING, {hudi.ORDER} STRING, {hudi.DELETED} BOOLEAN")
    counts = {"t/0": {"upserted": 2, "deleted": 1}}

    def joined(state: TableState) -> bool:
        plan = deletes.settle(rows, state, "hard", counts, new_range=True)._jdf.queryExecution().optimizedPlan()
        return "Join LeftAnti" in plan.toString()

    assert not joined(TableState(spec=spec, committed=False))
    assert marker_keys(spark, spec.path) == {'{"id":1}'}, "a first load still leaves its markers"
    assert joined(TableState(spec=spec, committed=True, columns=[Col(hudi.ORDER, "STRING")]))
    custom = replace(spec, ordering_fields=["name"])  # a custom ordering can tie: the markers' rule decides
    assert joined(TableState(spec=custom, committed=False))


def _scanned(df) -> int:
    """Rows `df` reads from its Parquet files once collected: a row group its filter's statistics skip is not read."""
    df.collect()
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    return sum(leaves.apply(i).metrics().apply("numOutputRows").value() for i in range(leaves.size()))


@pytest.mark.parametrize("ordering", [None, "at"], ids=["log-position", "timestamp-field"])
def test_a_batch_reads_only_the_markers_at_least_as_new_as_its_oldest_change(spark, tmp_path, monkeypatch, ordering):
    """The folder grows with every key ever deleted; a batch of newer changes skips its older row groups, while a
    late change older than a delete still finds that delete's marker. Ordered by log position (text) or by a
    TIMESTAMP column, whose markers Spark writes as microseconds (INT96 has no statistics a filter reads)."""
    from cdcsync.stages import deletes

    monkeypatch.setattr(deletes, "CONSOLIDATE_AT", 0)  # every append rewrites the folder as one sorted file
    monkeypatch.setattr(deletes, "ROW_GROUP", 1024)  # row groups of ~100 markers (Parquet checks every 100 rows)
    monkeypatch.setattr(deletes, "PRUNE_FROM", 0)
    reads, real = [], deletes._Store.read
    monkeypatch.setattr(deletes._Store, "read", lambda self, *a, **k: reads.append(real(self, *a, **k)) or reads[-1])
    custom = {"sink.ordering_field": "at", "schema.columns": {"at": "TIMESTAMP"}} if ordering else {}
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"]}, **custom))

    def at(op: str, k: int, v: str | None, ts: int) -> tuple[str, str]:  # the row's `at` follows the source time
        return change(op, k, {"id": k, "v": v, "at": f"2026-01-01T00:00:{ts // 1000:02d}.{ts % 1000:03d}"}, ts)

    created = [at("c", k, "a", 1000 + k) for k in range(1, 3001)]
    dropped = [at("d", k, None, 10_000 + k) for k in range(1, 2001)]  # 2,000 markers, oldest first
    sync_rows(spark, cfg, change_rows(spark, created, 0))
    sync_rows(spark, cfg, change_rows(spark, dropped, len(created)))
    groups = pq.ParquetFile(next(Path(markers_path(cfg.sink.path)).glob("*.parquet"))).metadata
    spans = [(groups.row_group(i).column(1).statistics.min, groups.row_group(i).column(1).statistics.max)
             for i in range(groups.num_row_groups)]
    assert len(spans) >= 10 and all(a[1] < b[0] for a, b in pairwise(spans)), "sorted, in many row groups"

    offset = len(created) + len(dropped)
    # the oldest of these changes is newer than all deletes but the last 51 (of keys 1950-2000)
    newer = [at("u", k, "b", 11_950 - 2500 + k) for k in range(2500, 2601)]
    reads.clear()
    sync_rows(spark, cfg, change_rows(spark, newer, offset))
    assert 51 <= _scanned(reads[-1]) <= 400, "the newest row groups only, not 2,000 markers"

    late = [at("u", 10, "late", 5_000), at("u", 2700, "c", 30_000)]
    reads.clear()
    sync_rows(spark, cfg, change_rows(spark, late, offset + len(newer)))
    assert _scanned(reads[-1]) >= 1990, "a change older than the deletes reads the markers from its own on"
    got = [{k: r[k] for k in ("id", "v")} for r in spark_rows(spark, cfg.sink.path)]
    want = by_key([{"id": k, "v": "b" if 2500 <= k <= 2600 else "c" if k == 2700 else "a"} for k in range(2001, 3001)],
                  ["id"])
    assert by_key(got, ["id"]) == want
    assert by_key([{k: r[k] for k in ("id", "v")} for r in hudi_rs_rows(cfg.sink.path)], ["id"]) == want


def test_the_oldest_order_passes_exactly_through_python(spark):
    """The bound a batch reads markers from is its oldest ordering value exactly, whatever the type; a timestamp
    goes as microseconds (a datetime would pass through the local time zone), a type without an exact way gives
    none (every marker is read)."""
    from cdcsync.stages.deletes import _oldest

    df = spark.sql("SELECT * FROM VALUES "
                   "(TIMESTAMP'2026-11-01 05:30:00.123456', 3.1D, 12345678901234567890.123456789BD, 'b', 2L, "
                   " DATE'2026-03-29', TIMESTAMP_NTZ'2026-01-01 00:00:00'), "
                   "(TIMESTAMP'2026-11-01 06:30:00', 2.9D, 12345678901234567890.123456790BD, 'a', 1L, "
                   " DATE'2026-03-30', TIMESTAMP_NTZ'2026-01-01 00:00:00') AS t(ts, d, dec, s, n, day, ntz)")
    for name in ("ts", "d", "dec", "s", "n", "day"):
        bound = _oldest(df, name)
        assert spark.range(1).select(bound.alias("b")).schema["b"].dataType == df.schema[name].dataType, name
        assert df.where(df[name] == bound).count() == 1 and df.where(df[name] < bound).count() == 0, name
    assert _oldest(df, "ntz") is None
    assert _oldest(df.where("false"), "n") is None
