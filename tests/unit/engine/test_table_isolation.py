"""Issue 46, point 2: [run] on_table_failure = "isolate". Spark-free: where a routed batch's Kafka read starts and
where each table stands (model/progress.py), the progress record's round trip (and an older record without
isolation), the backoff, which failures set a table aside (engine/routing.py), and run's batch planning with a table
set aside (engine/runner.py), with a fake topic."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from cdcsync.config import load_config
from cdcsync.config.model import RunConfig
from cdcsync.engine import routing
from cdcsync.engine.runner import KafkaBatches
from cdcsync.engine.sync import Summary
from cdcsync.errors import ConfigError, LedgerError, SinkError
from cdcsync.exit_codes import MEANING, ExitCode
from cdcsync.kafka.offsets import BELOW_EARLIEST, Gap, Offsets
from cdcsync.model.batch import BatchInput, BatchResult
from cdcsync.model.progress import DONE, WRITING, Isolated, Isolation, Progress, backoff, error_line
from cdcsync.runtime.metrics import RunMetrics
from tests.configs import minimal, write

T0 = 1_800_000_000.0


def off(**parts) -> Offsets:
    """Offsets of topic "t": off(p0=5, p1=7)."""
    return Offsets({"t": {int(k[1:]): v for k, v in parts.items()}})


def held(at: Offsets, attempts: int = 1, retry_at: float = T0) -> Isolated:
    return Isolated(at, "sink_write: Hudi write failed", T0 - 100, attempts, retry_at)


def test_backoff_starts_at_30_s_and_doubles_up_to_10_min():
    assert [backoff(n) for n in range(1, 8)] == [30, 60, 120, 240, 480, 600, 600]


def test_offsets_lowest_raised_and_covering_go_partition_by_partition():
    a, b = off(p0=10, p1=50), off(p0=30, p1=20)
    assert a.lowest(b, Offsets({"other": {0: 1}})) == off(p0=10, p1=20)  # partitions `a` lacks are not added
    assert a.raised_to(b) == off(p0=30, p1=50)
    assert off(p0=10).covering(off(p0=3, p1=4)) == off(p0=10, p1=4)  # its own offset wins; the new partition added


def test_the_read_starts_at_the_lowest_of_fresh_and_the_tables_tried_again():
    standing = Isolation(off(p0=100, p1=100), {"a": held(off(p0=40, p1=100), retry_at=T0 + 60),
                                               "b": held(off(p0=100, p1=70), retry_at=T0 - 1)})
    assert standing.read_from() == off(p0=100, p1=100)  # nothing tried again: the tables not set aside only
    assert standing.due(T0).retry == {"b"} and standing.due(T0).read_from() == off(p0=100, p1=70)
    every = standing.due(T0, every=True)  # a --once run's first batch, a redo
    assert every.retry == {"a", "b"} and every.read_from() == off(p0=40, p1=70)
    assert standing.slowest() == off(p0=40, p1=70)  # the consumer group's and status's lag: the slowest table


def test_after_a_batch_caught_up_tables_leave_failed_ones_keep_their_position():
    before = Isolation(off(p0=100), {"again": held(off(p0=40), attempts=2), "waits": held(off(p0=60)),
                                     "ok": held(off(p0=50))}).due(T0, every=True)
    before = Isolation(before.fresh, before.tables, frozenset({"again", "ok"}))  # "waits" not tried this batch
    after = before.after(off(p0=130), {"again": "sink_write: still broken", "new": "internal: disk gone"}, T0)
    assert after.fresh == off(p0=130) and list(after.tables) == ["again", "new", "waits"]
    again, new, waits = after.tables["again"], after.tables["new"], after.tables["waits"]
    assert (again.offsets, again.attempts, again.error, again.since) == (off(p0=40), 3, "sink_write: still broken",
                                                                         T0 - 100)
    assert again.retry_at == T0 + 120  # the third failure in a row: 30 s doubled twice
    assert (new.offsets, new.attempts, new.since, new.retry_at) == (off(p0=100), 1, T0, T0 + 30)  # fresh: before
    assert waits == before.tables["waits"]


def test_a_new_partition_is_read_from_its_start_by_every_table_and_lost_offsets_move_only_tables_tried():
    standing = Isolation(off(p0=100), {"a": held(off(p0=40)), "b": held(off(p0=20))}, frozenset({"a"}))
    grown = standing.covering(off(p0=100, p1=0))
    assert grown.fresh == off(p0=100, p1=0) and grown.tables["b"].offsets == off(p0=20, p1=0)
    moved = grown.within(earliest=off(p0=50, p1=0), latest=off(p0=200, p1=9))  # p0 below 50 is gone
    assert moved.tables["a"].offsets == off(p0=50, p1=0)  # tried now: past the gap, which run reports
    assert moved.tables["b"].offsets == off(p0=20, p1=0) and moved.fresh == off(p0=100, p1=0)  # judged when tried


def test_the_record_round_trips_through_json():
    standing = Isolation(off(p0=100, p1=8), {"t_b": held(off(p0=40, p1=8), attempts=2, retry_at=T0 + 60)})
    rec = Progress(7, WRITING, off(p0=40, p1=8), off(p0=150, p1=9), standing,
                   (Gap("t", 0, 1, 5, BELOW_EARLIEST, 3),))
    text = json.dumps(rec.to_json(), sort_keys=True)
    back = Progress.from_json(json.loads(text))
    assert back == Progress(7, WRITING, rec.start, rec.end, Isolation(standing.fresh, standing.tables), rec.data_loss)
    shown = json.loads(text)["isolated"]["t_b"]
    assert shown["since"] == "2027-01-15T07:58:20+00:00" and shown["attempts"] == 2  # for people: ISO times


@pytest.mark.parametrize("state, fresh", [(DONE, 20), (WRITING, 10)])
def test_a_record_older_than_isolation_reads_as_every_table_at_its_end_or_start(state, fresh):
    old = {"batch_id": 3, "state": state, "start": {"t": {"0": 10}}, "end": {"t": {"0": 20}}, "data_loss": []}
    rec = Progress.from_json(old)
    assert rec.standing == Isolation(off(p0=fresh)) and rec.data_loss == ()


def test_an_error_is_one_line_without_credentials_and_bounded():
    text = "Hudi write to s3a://key:secret@bucket/db/t failed: java.io.IOException\n\tat org.apache…"
    assert error_line(text) == "Hudi write to s3a://***@bucket/db/t failed: java.io.IOException"
    assert len(error_line("x" * 5000)) == 300


class _Lines:
    def __init__(self):
        self.lines, self.events = [], []

    def warn(self, text):
        self.lines.append(text)

    info = warn

    def event(self, name, **fields):
        self.events.append((name, fields))


def _pipe(alive: bool = True):
    sc = SimpleNamespace(_jsc=SimpleNamespace(sc=lambda: SimpleNamespace(isStopped=lambda: not alive)))
    run = RunConfig(checkpoint_dir="/tmp/unused", write_retries=0)
    return SimpleNamespace(cfg=SimpleNamespace(run=run), reporter=_Lines(), spark=SimpleNamespace(sparkContext=sc))


class _JavaFailure(Exception):
    """What py4j raises: the Java exception behind it on `java_exception`."""

    def __init__(self, text):
        super().__init__(text)
        self.java_exception = object()


def _raises(e):
    def job():
        raise e
    return job


def test_a_write_or_storage_failure_is_the_tables_own_anything_else_stops_the_batch():
    pipe = _pipe()
    sink = SinkError("Hudi write to /db/t failed: lock")
    assert routing._failure_kept(pipe, "batch 1, table t", _raises(sink)) is sink
    assert isinstance(routing._failure_kept(pipe, "t", _raises(OSError("disk"))), OSError)
    assert isinstance(routing._failure_kept(pipe, "t", _raises(_JavaFailure("HoodieIOException"))), _JavaFailure)
    for stops in (LedgerError("ledger mismatch"), ValueError("a bug"), KeyboardInterrupt()):
        with pytest.raises(type(stops)):
            routing._failure_kept(pipe, "t", _raises(stops))
    with pytest.raises(SinkError):  # the JVM is gone: no table's own failure
        routing._failure_kept(_pipe(alive=False), "t", _raises(SinkError("Hudi write failed")))


def _batch(standing: Isolation | None) -> BatchInput:
    return BatchInput(4, off(p0=0), off(p0=10), standing=standing)


def test_a_failed_table_is_set_aside_and_named_while_the_others_results_merge():
    pipe, ok = _pipe(), BatchResult(4, off(p0=0), off(p0=10), "001", {})
    before = Isolation(off(p0=0))
    done, failed = routing._set_aside(pipe, _batch(before), before, [("a", 0), ("b", 0)],
                                      [ok, SinkError("Hudi write to /db/b failed: unreadable")])
    assert done == [("a", ok)] and failed == {"b": "sink_write: Hudi write to /db/b failed: unreadable"}
    assert "table b is set aside" in pipe.reporter.lines[0] and "t/0:0" in pipe.reporter.lines[0]
    assert pipe.reporter.events == [("table_isolated", {"batch": 4, "table": "b", "error": failed["b"],
                                                        "offsets": "t/0:0"})]


def test_every_table_failing_is_no_one_tables_failure_unless_one_was_set_aside_before():
    first, second = SinkError("storage down"), SinkError("storage down too")
    before = Isolation(off(p0=0))
    with pytest.raises(SinkError) as e:
        routing._set_aside(_pipe(), _batch(before), before, [("a", 0), ("b", 0)], [first, second])
    assert e.value is first
    tried = Isolation(off(p0=5), {"a": held(off(p0=0))}, frozenset({"a"}))
    done, failed = routing._set_aside(_pipe(), _batch(tried), tried, [("a", 0)], [first])
    assert done == [] and set(failed) == {"a"}  # the table set aside failed again: it stays aside


class _Topic:
    def __init__(self, end: int):
        self.end = end

    def latest(self, topics):
        return off(p0=self.end)

    def earliest(self, topics):
        return off(p0=0)


def _routed_source(once: bool, end: int, isolated: dict, fresh: int) -> KafkaBatches:
    run = RunConfig(checkpoint_dir="/tmp/unused", trigger_interval="0s")
    pipe = SimpleNamespace(cfg=SimpleNamespace(run=run, source=SimpleNamespace(topic_pattern=None),
                                               routes=[object()]), heartbeat=lambda: None, reporter=_Lines())
    source = KafkaBatches(pipe, _Topic(end), once=once, metrics=RunMetrics("t", stuck_after_s=60))
    source.topics, source.redo_end, source.batch_id, source.isolated = ["t"], None, 0, isolated
    source.stop_at = off(p0=end) if once else None
    source.next_start, source.summary = off(p0=fresh), Summary("t", "/tmp/t", "test")
    return source


def test_a_once_run_reads_from_a_set_aside_table_in_its_first_batch_then_ends_when_it_fails_again():
    source = _routed_source(True, 100, {"a": held(off(p0=40), retry_at=time.time() + 600)}, fresh=100)
    batches = source.batches()
    first = next(batches)  # nothing new for the other tables, yet the table set aside is tried again
    assert first.start == off(p0=40) and first.end == off(p0=100) and first.standing.retry == {"a"}
    failed_again = first.standing.after(first.end, {"a": "sink_write: still broken"}, time.time())
    source.isolated, source.next_start = dict(failed_again.tables), first.end  # as `committed` leaves them
    assert list(batches) == []  # not due again within this run: the run ends, and exits 83
    assert source.slowest(source.next_start) == off(p0=40)


def test_a_service_tries_a_set_aside_table_only_once_its_backoff_has_passed():
    source = _routed_source(False, 100, {"a": held(off(p0=40), retry_at=time.time() + 600)}, fresh=50)
    b = next(source.batches())
    assert b.start == off(p0=50) and b.standing.retry == frozenset()  # the others go on from fresh
    source = _routed_source(False, 100, {"a": held(off(p0=40), retry_at=time.time() - 1)}, fresh=50)
    b = next(source.batches())
    assert b.start == off(p0=40) and b.end == off(p0=100) and b.standing.retry == {"a"}


def test_on_table_failure_is_read_with_routes_and_refused_without(tmp_path):
    route = "\n[[route]]\nsource_table = 'shop\\.public\\..*'\nsink_table = \"<>\"\n"
    assert load_config(write(tmp_path, minimal() + route)).run.on_table_failure == "isolate"
    cfg = load_config(write(tmp_path, minimal() + route + '\n[run]\non_table_failure = "stop"\n'))
    assert cfg.run.on_table_failure == "stop"
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, minimal() + '\n[run]\non_table_failure = "stop"\n'))
    assert "'run.on_table_failure' says what becomes of a [[route]] table" in err.value.render()


def test_exit_83_is_the_table_set_aside():
    assert ExitCode.TABLE_ISOLATED == 83 and "set aside" in MEANING[ExitCode.TABLE_ISOLATED]
