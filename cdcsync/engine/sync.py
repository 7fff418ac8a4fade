"""The one sync loop. A batch source (run's Kafka planner, a replay's fixed range, the dead-letter records)
yields batch inputs; each lands through `Pipeline.sync_once`, then the source hears it committed
(Hudi Streamer's `Source.fetchNext → InputBatch → syncOnce`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from cdcsync.errors import SinkError
from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import TALLIES, BatchInput, BatchResult
from cdcsync.runtime.faults import maybe_crash
from cdcsync.sinks import timeline
from cdcsync.stages import bad_records

if TYPE_CHECKING:
    from cdcsync.model.context import PipelineContext

_COUNTS = ("messages", "upserted", "deleted", "skipped", "bad")  # per partition and per table in the summary


class BatchSource(Protocol):
    def batches(self) -> Iterator[BatchInput]:
        """The next batch each time the previous one committed; stops when the source has no more."""

    def committed(self, result: BatchResult, seconds: float) -> None:
        """The batch landed: report it, move on (raising stops the loop)."""

    def pause(self, seconds: float) -> None:
        """Wait up to `seconds` ([run] max_records_per_second), keeping alive what the source keeps alive."""


@dataclass
class Summary:
    table: str
    path: str
    started_from: str
    batches: int = 0
    totals: dict[str, int] = field(default_factory=lambda: {k: 0 for k in
                                                            ("messages", "rows", "upserted", "deleted",
                                                             "skipped", "bad")})
    instants: list[str] = field(default_factory=list)
    schema_changes: list[str] = field(default_factory=list)
    end_offsets: Offsets = field(default_factory=Offsets)
    lag: dict[str, int] = field(default_factory=dict)  # "topic/partition" -> messages behind
    ledger: dict[str, dict[str, int]] = field(default_factory=dict)  # "topic/partition" -> counts
    dead_letter_path: str | None = None
    seconds: float = 0.0
    stopped_by: str = "end of input"
    # [[route]] runs: per target table, the counts of this run
    tables: dict[str, dict[str, int]] = field(default_factory=dict)
    unrouted: int = 0
    # [[route]] runs: the tables set aside at the end ([run] on_table_failure), each {path, error, offsets, since, …}
    isolated: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, r: BatchResult) -> None:
        self.batches += 1
        for k, v in r.totals().items():
            self.totals[k] = self.totals.get(k, 0) + v  # a tally (model.TALLIES) appears once a batch had one
        if r.instant:
            self.instants.append(r.instant)
        self.schema_changes += [c.describe() for c in r.changes]
        self.unrouted += r.unrouted
        for into, counts in ((self.tables, r.tables), (self.ledger, r.ledger)):
            for name, c in counts.items():
                acc = into.setdefault(name, dict.fromkeys(_COUNTS, 0))
                for k in _COUNTS:  # not `acc`: it also holds the tallies earlier batches had
                    acc[k] += c[k]
                for k in TALLIES:
                    if c.get(k):
                        acc[k] = acc.get(k, 0) + c[k]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def sync(pipe: PipelineContext, source: BatchSource, summary: Summary) -> Summary:
    """Land every batch `source` yields; the summary counts them. [run]'s budgets hold for run and the replays alike
    (a dead-letter replay turns max_bad_records off, and its one batch needs no pacing): past max_bad_records the loop
    stops after the batch that crossed it, and it waits so that the records read stay under max_records_per_second
    on average."""
    t0 = time.monotonic()
    rate = pipe.cfg.run.max_records_per_second
    for batch in source.batches():
        t = time.monotonic()
        result = _landed(pipe, batch)
        maybe_crash("after_write", batch.batch_id)
        pipe.register_tables(result)
        summary.add(result)
        pipe.heartbeat(every_s=0)
        source.committed(result, time.monotonic() - t)
        bad_records.check_budget(pipe.cfg, summary.totals["bad"], pipe.dead_letters)
        if rate:
            source.pause(summary.totals["messages"] / rate - (time.monotonic() - t0))
    summary.seconds = round(time.monotonic() - t0, 3)
    return summary


def idle(seconds: float, keep_alive: Callable[[], None], stopped: Callable[[], bool] = lambda: False) -> None:
    """Sleep `seconds` in short steps, calling `keep_alive` (heartbeats) between them; return early once stopped."""
    deadline = time.monotonic() + seconds
    while not stopped() and time.monotonic() < deadline:
        keep_alive()
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))


def _landed(pipe: PipelineContext, batch: BatchInput) -> BatchResult:
    return with_write_retries(pipe, f"batch {batch.batch_id}", partial(pipe.sync_once, batch))


def with_write_retries(pipe: PipelineContext, what: str, write: Callable[[], BatchResult],
                       again: str = "the batch") -> BatchResult:
    """`write()` (a batch's `sync_once`, or one routed table's share of it), again after a transient Hudi write
    failure ([run] write_retries): nothing of the failed attempt was committed, so writing it again is what a
    restart would do, without the restart."""
    retries, attempt = pipe.cfg.run.write_retries, 0
    while True:
        try:
            return write()
        except SinkError as e:
            read_only = timeline.read_only_mount(e.facts.get("path"))
            if read_only is not None:
                e.message += f" ({read_only} is on a read-only file system)"
                e.hint = "mount it read-write, or point sink.path at a writable place"
            if not e.facts.get("transient") or attempt >= retries:
                raise
            attempt += 1
            wait = min(30.0, 2.0 ** attempt)
            pipe.reporter.warn(f"{what}: {e.message}; a transient failure: writing {again} again in {wait:g} s "
                               f"(retry {attempt} of {retries})")
            time.sleep(wait)
