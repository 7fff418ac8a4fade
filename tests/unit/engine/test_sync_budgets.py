"""[run]'s budgets in the one sync loop (engine/sync.py), so that run, replay-from-offset and dead-letter replay all
keep them: past max_bad_records the loop stops after the batch that crossed it, and after each batch it pauses the
source until the records read fit max_records_per_second. The JVM side: tests/integration/engine/
test_dead_letter_policies.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cdcsync.config.model import RunConfig
from cdcsync.engine import sync
from cdcsync.errors import DecodeError
from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import BatchInput, BatchResult


class _Pipe:
    """Lands each batch as `per_batch` messages, `bad` of them bad; `dead_letters`: its handler's, a replay's skips."""

    def __init__(self, run: RunConfig, bad: int = 0, per_batch: int = 100, dead_letters: bool = True):
        self.cfg = SimpleNamespace(run=run)
        self.bad, self.per_batch, self.dead_letters = bad, per_batch, dead_letters

    def sync_once(self, batch):
        counts = {"messages": self.per_batch, "upserted": self.per_batch - self.bad, "deleted": 0, "skipped": 0,
                  "bad": self.bad}
        return BatchResult(batch.batch_id, batch.start, batch.end, "i", {"t/0": counts})

    def register_tables(self, result):
        pass

    def heartbeat(self, every_s=10.0):
        pass


class _Source:
    """A replay-like source of `n` batches that records what it was told."""

    def __init__(self, n: int):
        self.n, self.landed, self.pauses = n, [], []

    def batches(self):
        for i in range(self.n):
            yield BatchInput(i, Offsets({"t": {0: i * 100}}), Offsets({"t": {0: (i + 1) * 100}}))

    def committed(self, result, seconds):
        self.landed.append(result.batch_id)

    def pause(self, seconds):
        self.pauses.append(seconds)


def _run(pipe, source):
    return sync.sync(pipe, source, sync.Summary("t", "/t", "test"))


def test_past_max_bad_records_the_loop_stops_after_the_batch_that_crossed_it():
    source = _Source(5)
    with pytest.raises(DecodeError) as err:
        _run(_Pipe(RunConfig(checkpoint_dir="/c", max_bad_records=5), bad=2), source)
    assert source.landed == [0, 1, 2] and err.value.exit_code == ExitCode.BAD_RECORD
    assert "6 bad records so far, more than run.max_bad_records = 5" in err.value.message
    assert "dead-letter list" in err.value.hint
    with pytest.raises(DecodeError) as err:  # a replay's skipped records are in no dead-letter table
        _run(_Pipe(RunConfig(checkpoint_dir="/c", max_bad_records=5), bad=2, dead_letters=False), _Source(5))
    assert "dead-letter" not in err.value.hint and "warnings above" in err.value.hint


def test_without_a_budget_every_batch_lands_and_nothing_pauses():
    source = _Source(3)
    summary = _run(_Pipe(RunConfig(checkpoint_dir="/c"), bad=50), source)
    assert source.landed == [0, 1, 2] and summary.totals["bad"] == 150 and source.pauses == []


def test_each_batch_is_followed_by_the_wait_that_keeps_the_rate(monkeypatch):
    clock = iter(range(1000))
    monkeypatch.setattr(sync.time, "monotonic", lambda: float(next(clock)))
    source = _Source(3)
    _run(_Pipe(RunConfig(checkpoint_dir="/c", max_records_per_second=10)), source)
    # 100, 200, 300 messages at 10/s want 10, 20, 30 s since the loop's start; the fake clock gains 1 s a reading
    assert source.landed == [0, 1, 2] and source.pauses == [10 - 3, 20 - 6, 30 - 9]


def test_idle_keeps_alive_and_ends_when_stopped(monkeypatch):
    beats, stop_after = [], 3
    monkeypatch.setattr(sync.time, "sleep", lambda s: None)
    sync.idle(60.0, lambda: beats.append(1), lambda: len(beats) >= stop_after)
    assert len(beats) == stop_after
