"""A routed run's progress record in [run] checkpoint_dir (engine.routing): the batch in flight or done, and where
the tables stand. Every table not isolated stands at `fresh`; an isolated one ([run] on_table_failure = "isolate":
its write failed after its retries) at its own position, where its last commit left it. A batch's one Kafka read
starts at the lowest of `fresh` and the positions of the isolated tables it tries again, and each table takes its
rows from its own position on. The record says "writing" with the standing before the batch (a redo after a crash
re-applies the same slices) and "done" with the standing after it. Read by run, replay and status: no Spark here."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from cdcsync.kafka.offsets import Gap, Offsets

WRITING, DONE = "writing", "done"
FIRST_RETRY_S, MOST_RETRY_S = 30.0, 600.0  # a service tries an isolated table again after 30 s, doubling to 10 min
_ERROR_CHARS = 300
_USER_INFO = re.compile(r"(//)[^/@\s]+@")  # user:password@ in a URL


def backoff(attempts: int) -> float:
    """Seconds from a table's `attempts`-th failure in a row to its next try."""
    return float(min(MOST_RETRY_S, FIRST_RETRY_S * 2 ** max(0, attempts - 1)))  # int ** int is Any to mypy


def error_line(text: str) -> str:
    """A failure as one line for the record, the log and status: its first line, no URL credentials, bounded."""
    first = (text.strip().splitlines() or [""])[0]
    return _USER_INFO.sub(r"\1***@", first)[:_ERROR_CHARS]


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="seconds")


def _epoch(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


@dataclass(frozen=True)
class Isolated:
    """A routed table set aside: `offsets`, where its last commit left it (per partition, the next offset it
    needs); its newest failure; when the first of this run of failures was; how many so far; its next try."""

    offsets: Offsets
    error: str
    since: float  # epoch seconds
    attempts: int = 1
    retry_at: float = 0.0  # epoch seconds

    def failed_again(self, error: str, now: float) -> Isolated:
        n = self.attempts + 1
        return replace(self, error=error, attempts=n, retry_at=now + backoff(n))

    def to_json(self) -> dict[str, Any]:
        return {"offsets": self.offsets.to_json(), "error": self.error, "since": _iso(self.since),
                "attempts": self.attempts, "retry_at": _iso(self.retry_at)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Isolated:
        return cls(Offsets.from_json(d["offsets"]), d["error"], _epoch(d["since"]), int(d["attempts"]),
                   _epoch(d["retry_at"]))


@dataclass(frozen=True)
class Isolation:
    """Where a routed run's tables stand: `fresh` for every table not in `tables` (the isolated ones, by name);
    `retry`, the isolated tables a batch tries again (decided per batch, not recorded)."""

    fresh: Offsets
    tables: Mapping[str, Isolated] = field(default_factory=dict)
    retry: frozenset[str] = frozenset()

    def due(self, now: float, every: bool = False) -> Isolation:
        """With the isolated tables whose next try has come (`every`: all of them) to be tried again."""
        return replace(self, retry=frozenset(n for n, t in self.tables.items() if every or t.retry_at <= now))

    def read_from(self) -> Offsets:
        """Where a batch's one Kafka read starts: the lowest of `fresh` and the retried tables' positions."""
        return self.fresh.lowest(*(self.tables[n].offsets for n in sorted(self.retry)))

    def slowest(self) -> Offsets:
        """The lowest position of any table."""
        return self.fresh.lowest(*(t.offsets for t in self.tables.values()))

    def covering(self, offsets: Offsets) -> Isolation:
        """Every position completed with `offsets` where it lacks a partition (one that appeared since: nobody has
        read it yet)."""
        return replace(self, fresh=self.fresh.covering(offsets),
                       tables={n: replace(t, offsets=t.offsets.covering(offsets)) for n, t in self.tables.items()})

    def within(self, earliest: Offsets, latest: Offsets) -> Isolation:
        """`fresh` and the retried tables' positions the brokers no longer hold (below the earliest offset, past the
        end: on_data_loss = "skip" went past them) moved to the earliest; the tables not retried keep theirs,
        judged when they are."""
        def held(offsets: Offsets) -> Offsets:
            return Offsets.from_entries((t, p, o if earliest.get_offset(t, p, o) <= o <= latest.get_offset(t, p, o)
                                         else earliest[t][p]) for t, p, o in offsets.entries())

        return replace(self, fresh=held(self.fresh), tables={
            n: replace(t, offsets=held(t.offsets)) if n in self.retry else t for n, t in self.tables.items()})

    def after(self, end: Offsets, failed: Mapping[str, str], now: float) -> Isolation:
        """The standing after a batch that ended at `end`: the tables tried again that did not fail caught up, those
        that failed (name: error) are isolated at their position before the batch, the rest keep theirs."""
        tables = {n: t for n, t in self.tables.items() if n not in self.retry or n in failed}
        for name, error in failed.items():
            old = tables.get(name)
            tables[name] = old.failed_again(error, now) if old else Isolated(self.fresh, error, now, 1,
                                                                              now + backoff(1))
        return Isolation(end, dict(sorted(tables.items())))

    def to_json(self) -> dict[str, Any]:
        return {"fresh": self.fresh.to_json(), "isolated": {n: t.to_json() for n, t in sorted(self.tables.items())}}


@dataclass(frozen=True)
class Progress:
    """The record: the batch (`start`, `end`: its one Kafka read), WRITING or DONE, every gap the run went past
    ([run] on_data_loss = "skip"), and where the tables stand (WRITING: before the batch; DONE: after it)."""

    batch_id: int
    state: str
    start: Offsets
    end: Offsets
    standing: Isolation
    data_loss: tuple[Gap, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"batch_id": self.batch_id, "state": self.state, "start": self.start.to_json(),
                "end": self.end.to_json(), "data_loss": [g.to_json() for g in self.data_loss],
                **self.standing.to_json()}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Progress:
        start, end = Offsets.from_json(d["start"]), Offsets.from_json(d["end"])
        # a record without "fresh" is older than isolation: every table stood at the end (done) or the start
        fresh = Offsets.from_json(d["fresh"]) if "fresh" in d else end if d["state"] == DONE else start
        standing = Isolation(fresh, {n: Isolated.from_json(t) for n, t in d.get("isolated", {}).items()})
        return cls(int(d["batch_id"]), d["state"], start, end, standing,
                   tuple(Gap.from_json(g) for g in d.get("data_loss", ())))
