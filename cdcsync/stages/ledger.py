"""The batch ledger: per partition, messages and rows read and the class each row ended in. It must balance
(every row in one class, every message inside the planned range) before anything is committed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.errors import LedgerError
from cdcsync.kafka.offsets import split_tp, tp_key
from cdcsync.model.batch import CLASSES, BatchInput

# newest_ms: the newest Kafka timestamp read (epoch ms), for the lag in seconds and freshness metrics
_COUNTS = ("messages", "rows", "min_offset", "max_offset", "newest_ms", *CLASSES)


@dataclass(frozen=True)
class Counted:
    """What the one aggregation over a batch found: its ledger, the rows flagged, and per partition the values of
    the `facts` asked for (not part of the ledger, which the commit keeps)."""

    counts: dict[str, dict[str, int]]
    flagged: int
    facts: dict[str, dict[str, Any]]


def count(df: DataFrame) -> dict[str, dict[str, int]]:
    """One aggregation over classified rows (`_class`): {"topic/partition": counts}."""
    return count_flagged(df, None).counts


def count_flagged(df: DataFrame, flag: str | None, tallies: dict[str, Column] | None = None,
                  facts: dict[str, Column] | None = None) -> Counted:
    """`count`, and in the same aggregation the rows whose boolean column `flag` is true; `tallies`: more counts
    per partition (name: a boolean condition), kept in the ledger where non-zero (model.TALLIES); `facts`: more
    aggregates per partition (name: an aggregate column), returned beside the ledger."""
    aggs = [F.count(F.when(F.col(C.POS) == 0, 1)).alias("messages"), F.count(F.lit(1)).alias("rows"),
            F.min(C.OFFSET).alias("min_offset"), F.max(C.OFFSET).alias("max_offset"),
            F.coalesce(F.max(F.unix_millis(C.TIMESTAMP)), F.lit(0)).alias("newest_ms")]
    aggs += [F.count(F.when(F.col(C.CLASS) == k, 1)).alias(k) for k in CLASSES]
    aggs += [F.count(F.when(cond, 1)).alias(name) for name, cond in (tallies or {}).items()]
    aggs += [agg.alias(name) for name, agg in (facts or {}).items()]
    aggs.append(F.count(F.when(F.col(flag), 1)) if flag else F.lit(0))
    rows = df.groupBy(C.TOPIC, C.PARTITION).agg(*aggs).collect()
    counts = {tp_key(r[C.TOPIC], r[C.PARTITION]): {k: int(r[k]) for k in _COUNTS} | {
        k: int(r[k]) for k in tallies or {} if r[k]} for r in rows}
    found = {tp_key(r[C.TOPIC], r[C.PARTITION]): {k: r[k] for k in facts or {}} for r in rows}
    return Counted(counts, sum(int(r[-1]) for r in rows), found)


def add(parts: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """Ledgers of disjoint row sets of one batch (routed tables) summed into one."""
    out: dict[str, dict[str, int]] = {}
    for ledger in parts:
        for tp, c in ledger.items():
            acc = out.get(tp)
            if acc is None:
                out[tp] = dict(c)
                continue
            for k, v in c.items():
                if k not in acc:  # a tally another part did not have
                    acc[k] = v
                    continue
                acc[k] = min(acc[k], v) if k == "min_offset" else max(acc[k], v) if k in ("max_offset", "newest_ms") \
                    else acc[k] + v
    return out


def check(ledger: dict[str, dict[str, int]], batch: BatchInput) -> None:
    """Every row lands in one class, and every message read lies inside the planned range (given rows: inside
    their own span) and, when the caller said how many, the counts are exactly those."""
    for tp, c in ledger.items():
        topic, part = split_tp(tp)
        classified = sum(c[k] for k in CLASSES)
        if batch.rows is not None:
            lo, hi = c["min_offset"], c["max_offset"] + 1
        else:
            lo, hi = batch.start[topic][part], batch.end[topic][part]
        if classified != c["rows"] or c["messages"] > hi - lo or c["min_offset"] < lo or c["max_offset"] >= hi:
            raise LedgerError(
                f"ledger mismatch on {tp}: read {c['messages']} messages ({c['rows']} rows) in offsets "
                f"[{c['min_offset']}, {c['max_offset']}] for planned range [{lo}, {hi}); classified {classified}",
                hint="nothing was committed; please report this with the log",
            )
    if batch.expect_messages is not None:
        got = {tp: c["messages"] for tp, c in ledger.items()}
        if got != batch.expect_messages:
            raise LedgerError(f"ledger mismatch: messages classified per partition {got}, expected "
                              f"{batch.expect_messages}", hint="nothing was committed; please report this with the log")
