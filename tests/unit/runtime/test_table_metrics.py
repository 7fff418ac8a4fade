"""Per-table series (issue 46): a routed run's records, lag, write failures and compactions under each routed
table's name; an unrouted run's under [sink] table_name."""

from __future__ import annotations

import datetime as dt

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from cdcsync.errors import CdcsyncError, SchemaError, SinkError
from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import BatchResult, table_failure
from cdcsync.model.progress import Isolated, Isolation
from cdcsync.runtime.compactor import Compactions
from cdcsync.runtime.metrics import FAILURE_REASONS, RunMetrics, failure_reason


def _series(m: RunMetrics, name: str) -> dict:
    return {tuple(sorted(s.labels.items())): s.value
            for fam in text_string_to_metric_families(generate_latest(m.registry).decode())
            for s in fam.samples if s.name == name}


def _batch(start: int, end: int, tables: dict, failed: dict | None = None, standing: Isolation | None = None):
    ledger = {"t/0": {"messages": end - start, "rows": end - start, "upserted": end - start}}
    return BatchResult(0, Offsets({"t": {0: start}}), Offsets({"t": {0: end}}), None, ledger, tables=tables,
                       failed=failed or {}, standing=standing)


def test_a_routed_batch_counts_each_table_and_a_failed_one_only_as_its_failure():
    m = RunMetrics("unrouted_rows", stuck_after_s=60, routed=True)
    m.lag_seen(Offsets({"t": {0: 0}}), Offsets({"t": {0: 100}}))
    error = table_failure(SinkError("Hudi write to /db/b failed: java.io.IOException: disk gone"))
    isolated = Isolation(Offsets({"t": {0: 60}}), {"b": Isolated(Offsets({"t": {0: 0}}), error, 0.0)})
    m.batch_committed(_batch(0, 60, {"a": {"instant": "1", "upserted": 5, "deleted": 1}, "b": {"instant": None}},
                             failed={"b": error}, standing=isolated), 1.0)

    assert _series(m, "cdcsync_table_rows_total") == {(("class", "upserted"), ("table", "a")): 5,
                                                      (("class", "deleted"), ("table", "a")): 1}
    assert _series(m, "cdcsync_hudi_commits_total") == {(("table", "a"),): 1}
    assert _series(m, "cdcsync_table_write_failures_total") == {
        (("reason", reason), ("table", t)): float(t == "b" and reason == "sink_write")
        for t in ("a", "b") for reason in FAILURE_REASONS}
    # the others stand at the batch's end, the one set aside where it was: the lag of the end offsets last seen
    assert _series(m, "cdcsync_table_lag_messages") == {(("table", "a"),): 40, (("table", "b"),): 100}
    assert "unrouted_rows" not in str(_series(m, "cdcsync_table_lag_messages"))

    m.lag_seen(Offsets({"t": {0: 60}}), Offsets({"t": {0: 130}}))  # the next planning sees 30 more
    assert _series(m, "cdcsync_table_lag_messages") == {(("table", "a"),): 70, (("table", "b"),): 130}
    m.batch_committed(_batch(60, 130, {"b": {"instant": "2", "upserted": 130}},
                             standing=Isolation(Offsets({"t": {0: 130}}))), 1.0)  # b tried again, caught up
    assert _series(m, "cdcsync_table_lag_messages") == {(("table", "a"),): 0, (("table", "b"),): 0}
    assert _series(m, "cdcsync_hudi_commits_total") == {(("table", "a"),): 1, (("table", "b"),): 1}


def test_an_unrouted_run_has_its_table_s_rows_and_lag_and_no_failure_series():
    m = RunMetrics("orders", stuck_after_s=60)
    m.lag_seen(Offsets({"t": {0: 0}}), Offsets({"t": {0: 10}}))
    assert _series(m, "cdcsync_table_lag_messages") == {(("table", "orders"),): 10}
    m.batch_committed(_batch(0, 10, {}), 1.0)  # a --once run's last batch: no planning after it
    assert _series(m, "cdcsync_table_lag_messages") == {(("table", "orders"),): 0}
    assert _series(m, "cdcsync_consumer_lag_messages") == {(("partition", "0"), ("topic", "t")): 0}
    assert _series(m, "cdcsync_table_rows_total") == {(("class", "upserted"), ("table", "orders")): 10}
    assert _series(m, "cdcsync_table_write_failures_total") == {}


def test_a_failure_is_recorded_with_the_exit_code_it_would_have_stopped_the_run_with():
    assert table_failure(SchemaError("column v: int to struct")) == "schema_incompatible: column v: int to struct"
    assert table_failure(CdcsyncError("batch 3: Spark failed: x")).startswith("internal: batch 3")
    assert table_failure(RuntimeError("boom\nat line 2")) == "internal: boom"  # one line
    assert failure_reason(table_failure(SinkError("Hudi write to s3a://u:p@b/t failed"))) == "sink_write"
    assert "u:p" not in table_failure(SinkError("Hudi write to s3a://u:p@b/t failed"))
    assert failure_reason("Hudi write to /t failed: java.io.IOException") == "unknown"  # not table_failure's


def _instant(folder, stamp: dt.datetime, name: str) -> str:
    text = stamp.strftime("%Y%m%d%H%M%S%f")[:17]
    (folder / name.format(text)).write_bytes(b"")
    return text


def test_compactions_are_counted_once_each_from_the_timeline_and_a_pending_plan_is_watched(tmp_path):
    since = dt.datetime(2026, 11, 28, 12, 0, 0).astimezone()
    folder = tmp_path / "a" / ".hoodie" / "timeline"
    folder.mkdir(parents=True)
    (folder / "history").mkdir()  # the LSM timeline's folder: no instant
    old = _instant(folder, since - dt.timedelta(minutes=5), "{}.compaction.requested")  # an earlier run's plan
    load = _instant(folder, since + dt.timedelta(seconds=1), "{}.commit.requested")  # a first load: no compaction
    _instant(folder, since + dt.timedelta(seconds=2), f"{load}_{{}}.commit")
    watch = Compactions(since)
    tables = {"a": str(tmp_path / "a")}
    assert watch.look(tables, spark=None) == ([], [])

    plan = _instant(folder, since + dt.timedelta(seconds=10), "{}.compaction.requested")
    _instant(folder, since + dt.timedelta(seconds=11), f"{plan}.compaction.inflight")
    assert watch.look(tables, spark=None) == (["a"], [])
    assert watch.look({}, spark=None) == ([], [])  # not written since, but listed: its plans are pending
    _instant(folder, since + dt.timedelta(seconds=40), f"{plan}_{{}}.commit")
    _instant(folder, since + dt.timedelta(seconds=41), f"{old}_{{}}.commit")  # the earlier run's, completed now
    assert watch.look({}, spark=None) == ([], [("a", 341.0), ("a", 30.0)])
    assert watch.look(tables, spark=None) == ([], [])  # each once
