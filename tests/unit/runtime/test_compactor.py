"""MERGE_ON_READ compaction off the write path (runtime/compactor.py, sinks/compaction.py): which mode a table's
[sink.options] choose, the write options each mode needs, and the backlog bound of a background compaction."""

from __future__ import annotations

import io
import threading

import pytest

from cdcsync.reporting import PlainReporter
from cdcsync.runtime import compactor as compactor_module
from cdcsync.runtime.compactor import BACKLOG_FACTOR, Compactor
from cdcsync.sinks import compaction as C


@pytest.mark.parametrize("options, mode", [
    ({}, C.ASYNC),
    ({"hoodie.compact.inline": "true"}, C.INLINE),
    ({"hoodie.datasource.compaction.async.enable": "false"}, C.INLINE),  # Hudi's own default when async is off
    ({"hoodie.datasource.compaction.async.enable": "false", "hoodie.compact.inline": "false"}, C.EXTERNAL),
    ({"hoodie.compact.inline": "false"}, C.ASYNC),
])
def test_sink_options_choose_the_mode_in_hudis_words(options, mode):
    assert C.compaction_mode("MERGE_ON_READ", options) == mode
    assert C.compaction_mode("COPY_ON_WRITE", options) is None


def test_async_only_schedules_in_the_write_and_shares_a_lock_with_the_compactor():
    from cdcsync.sinks.hudi import TableSpec, write_options

    def spec(options):
        return TableSpec("/t", "t", "MERGE_ON_READ", ["id"], [], ["_cdc_order"], options)

    opts = write_options(spec({}))
    assert opts["hoodie.compact.inline"] == "false" and opts["hoodie.compact.schedule.inline"] == "true"
    assert opts[C.LOCK_PROVIDER] == C.IN_PROCESS_LOCK == C.lock_provider({})
    mine = "org.example.ZookeeperLock"  # a multi-writer setup names its own provider: both use it
    assert write_options(spec({C.LOCK_PROVIDER: mine}))[C.LOCK_PROVIDER] == mine == C.lock_provider(
        {C.LOCK_PROVIDER: mine})
    assert "hoodie.compact.schedule.inline" not in C.write_options(C.INLINE)  # Hudi refuses both at once
    assert C.write_options(None) == {}


class _Gate:
    """A compaction that runs until the test opens the gate."""

    def __init__(self):
        self.open, self.started = threading.Event(), threading.Event()

    def run(self):
        self.started.set()
        self.open.wait(10)


def _compactor(monkeypatch, gate: _Gate, every: int = 2) -> Compactor:
    monkeypatch.setattr(compactor_module, "pending_compactions", lambda spark, path: ["20260101000000000"])
    monkeypatch.setattr(Compactor, "_execute", lambda self: gate.run())
    options = {C.MAX_DELTA_COMMITS: str(every), "hoodie.metadata.enable": "false", "hoodie.x": "a,b",
               "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4", "hoodie.table.name": "t",
               "hoodie.datasource.write.recordkey.field": "id"}
    return Compactor(None, "/t", options, PlainReporter(io.StringIO()))


def test_writes_go_on_while_a_compaction_runs_until_it_falls_behind_the_bound(monkeypatch):
    gate = _Gate()
    c = _compactor(monkeypatch, gate)
    c.poke()  # a commit that scheduled a plan: the compaction starts in the background
    assert gate.started.wait(5) and c.running
    for _ in range(BACKLOG_FACTOR * 2):  # writes that do not wait: fewer than 2 × N commits behind
        c.before_write()
        c.poke()
    assert c.running
    waited = threading.Thread(target=c.before_write)
    waited.start()
    waited.join(0.5)
    assert waited.is_alive(), "the write that would fall 2 × N commits behind waits for the compaction"
    gate.open.set()
    waited.join(5)
    assert not waited.is_alive() and not c.running


def test_the_compactor_passes_the_lock_and_table_service_settings(monkeypatch):
    c = _compactor(monkeypatch, _Gate())
    assert c.options.split(",") == ["hoodie.compact.inline.max.delta.commits=2", "hoodie.metadata.enable=false",
                                    f"{C.LOCK_PROVIDER}={C.IN_PROCESS_LOCK}"]  # a value with a comma cannot pass
    # nor the writer's index: Hudi's bucket-index check would want the key fields (a NullPointerException)
