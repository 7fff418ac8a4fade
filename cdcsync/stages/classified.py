"""Stage 3 of a table's batch: every typed record classified and counted (`ClassifiedBatch`).

In the one pass over the batch (Spark is lazy: Kafka is read, decoded and typed here), each record gets its class
and reason (classify.py), [transform] sql's WHERE its verdict, and the per-partition ledger is counted and checked;
the batch's truncates and server switches are found, and its bad records handed to the handler (dead letters).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats.spark import position
from cdcsync.formats.spec import format_spec
from cdcsync.model.batch import FILTERED, TableBatch
from cdcsync.schema.spark.columns import Col
from cdcsync.sinks import hudi
from cdcsync.stages import classify, drops, ledger, masking, truncate, type_conflicts, unavailable
from cdcsync.stages.typed import TypedBatch, meta_names, ordering_value, view
from cdcsync.transform import spark as transform
from cdcsync.transform.sql import Bound, Transform

if TYPE_CHECKING:
    from cdcsync.model.batch import TableContext

Ledger = dict[str, dict[str, int]]  # "topic/partition" -> counts


@dataclass(frozen=True)
class BoundTransform:
    """A table's [transform] sql bound to this batch's columns."""

    sql: Transform
    bound: Bound
    view: list[str]

    def split(self, toast: list[Col]) -> tuple[list[Col], list[Col]]:
        """TOAST candidates: (those the SELECT passes through, filled from earlier values; those it computes from)."""
        through = {o.name for o in self.sql.columns(self.view) if o.passes == o.name}
        computed = self.sql.computed_from()
        return [c for c in toast if c.name in through], [c for c in toast if c.name in computed]


@dataclass(frozen=True)
class ClassifiedBatch:
    """The typed batch with CLASS, REASON and REASON_DETAIL (persisted: the caller unpersists `df`), its ledger, and
    what the write needs to know of it."""

    typed: TypedBatch
    df: DataFrame
    counts: Ledger
    transform: BoundTransform | None
    toast: list[Col]  # the placeholders' columns the write fills from earlier values
    truncated: dict[str, str]  # every truncate the table has seen: source table → its ordering value
    new_truncates: dict[str, str]  # those of this batch
    samples: list[dict[str, Any]]  # bad records to show
    stages: dict[str, float] = field(default_factory=dict)  # seconds: read_decode, dead_letter (the metrics')

    @property
    def placeholders(self) -> bool:
        return any(c.get(unavailable.SEEN) for c in self.counts.values())


@dataclass(frozen=True)
class Misfit:
    """A batch typed with the table's known columns in which `rows` rows do not fit them: typed again from all its
    records (schema/spark/fit.py), before anything of it is counted or written."""

    rows: int


def classify_batch(ctx: TableContext, job: TableBatch, typed: TypedBatch) -> ClassifiedBatch | Misfit:
    """`typed` classified and counted, or the Misfit of rows that do not fit the columns it was typed with."""
    cfg, state, batch = job.cfg, job.state, job.batch
    toast, tf = typed.toast, _bound(ctx, job, typed)
    df = typed.df
    if tf:  # the WHERE's verdict, and what the SELECT cannot compute, in the one pass
        toast, computed = tf.split(toast)
        df = transform.verdicts(df, tf.sql, tf.bound, view(typed.columns, job.masks, cfg), [
            (unavailable.is_placeholder(F.col(f"{C.VIEW}.`{c.name}`"),
                                        cfg.source.unavailable_value_placeholder),
             f"column {c.name!r} carried the unavailable-value placeholder, and [transform] sql computes from it: "
             "only a column the SELECT passes through is filled from its earlier value") for c in computed])
    df = classify.classified(df, typed.key, classify.schema_check(cfg), typed.ordering,
                             F.col(transform.FAILED) if tf else None)
    df = _lean(type_conflicts.relabel(df, typed.pins)).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        ctx.describe(batch, "read, decode, type, classify and count (the one pass)")
        started = time.monotonic()
        binlog = state.ordering == hudi.ORDERING and format_spec(cfg.source.format).binlog_positions
        counted = ledger.count_flagged(df, C.MISFIT, _tallies(job, toast, tf),
                                       position.switch_facts() if binlog else None)
        if counted.flagged:
            df.unpersist()
            return Misfit(counted.flagged)
        counts = counted.counts
        stages = {"read_decode": time.monotonic() - started}
        ledger.check(counts, batch)
        if any(c.get(drops.DROPPED) for c in counts.values()):  # said, or refused before anything is committed
            drops.said(ctx.reporter, cfg, batch, df, F.lit(state.spec.table_name))
        if binlog:  # where servers' runs begin: from the pass's facts, or a window job when a partition failed over
            found = position.switches_from(counted.facts)
            state.servers, state.runs = position.merge_runs(state.servers, position.server_switches(df)
                                                            if found is None else found)
        new_truncates = _truncates(job, df, counts)
        samples: list[dict[str, Any]] = []
        bad_total = sum(c["bad"] for c in counts.values())
        if bad_total and ctx.on_bad is not None and (job.route is None or job.route.write):
            started = time.monotonic()
            ctx.describe(batch, "dead letters")
            bad = masking.scrub_raw(df.where(F.col(C.CLASS) == "bad"), job.masks, cfg.source.format)
            samples = ctx.on_bad(bad, batch.batch_id, bad_total)
            stages["dead_letter"] = time.monotonic() - started
        return ClassifiedBatch(typed, df, counts, tf, toast, truncate.merged(state.truncated, new_truncates),
                               new_truncates, samples, stages)
    except BaseException:
        df.unpersist()
        raise


def _bound(ctx: TableContext, job: TableBatch, typed: TypedBatch) -> BoundTransform | None:
    cfg, state = job.cfg, job.state
    if cfg.transform is None:
        return None
    names = [c.name for c in typed.columns] + meta_names(cfg)
    out = BoundTransform(cfg.transform, cfg.transform.bind(names, transform.ansi(ctx.spark), typed.key_and_ordering),
                         names)
    left_out = sorted({c.name for c in typed.columns} - cfg.transform.referenced() - state.left_out) \
        if not cfg.transform.star else []
    if left_out:  # an explicit projection: new source columns stay out of the table; said once per run
        state.left_out |= set(left_out)
        ctx.reporter.event("columns_left_out", batch=job.batch.batch_id, table=state.spec.table_name,
                           columns=", ".join(left_out), why=f"{cfg.transform.key} does not select them")
    return out


def _tallies(job: TableBatch, toast: list[Col], tf: BoundTransform | None) -> dict[str, Column]:
    """The ledger's counts beside the classes, each a condition on the classified row."""
    cfg = job.cfg
    tallies = {unavailable.SEEN: unavailable.flag(C.TYPED, toast, cfg.source.unavailable_value_placeholder)} \
        if toast else {}
    if tf and tf.bound.keep:  # upserts the WHERE turns into deletes of their keys
        tallies[FILTERED] = (F.col(C.CLASS) == "upserted") & ~F.col(transform.KEEP)
    if truncate.applies(cfg) and cfg.source.on_truncate != "skip":
        tallies[truncate.APPLIED] = truncate.flag()
    if job.route is None:  # a routed batch's drops are said before any of its tables is written (drops.routed)
        tallies |= drops.tally(cfg)
    return tallies


def _truncates(job: TableBatch, df: DataFrame, counts: Ledger) -> dict[str, str]:
    """The batch's truncates: source table → the ordering value of its newest (refused under on_truncate = fail)."""
    if not any(c.get(truncate.APPLIED) for c in counts.values()):
        return {}
    if job.cfg.source.on_truncate == "fail":
        truncate.refuse(df, job.batch.batch_id, job.cfg)
    return truncate.found(df, ordering_value(job.state))


# what only a bad record still needs once its row is typed: the message as it came, for the dead letters
_AS_RECEIVED = (C.RAW_VALUE, C.VALUE, C.ROW, C.ROW_NESTED, C.KEY_ROW, C.KEY_TEXT, C.SCHEMA, C.TYPES)


def _lean(df: DataFrame) -> DataFrame:
    """The classified batch without the message text of the records that are not bad, so the copy kept for the
    ledger, the dead letters and the write holds little more than the typed rows."""
    bad = F.col(C.CLASS) == "bad"
    return df.withColumns({c: F.when(bad, F.col(c)) for c in _AS_RECEIVED if c in df.columns})

