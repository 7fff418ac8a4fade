"""Stage 4 of a table's batch: the rows one Hudi commit writes (`WriteSet`), and the commit.

The upserted and deleted records become the table's rows: masked, a truncate's older changes dropped, TOAST
placeholders filled, [transform] sql's SELECT applied; deletes settled (markers, newest change per key: deletes.py,
newest.py, which also decide the write operation); the commit carries the batch's end offsets, ledger and schema.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.model.batch import FILTERED, BatchResult, CommitMode, TableBatch
from cdcsync.runtime.faults import maybe_crash
from cdcsync.schema.spark.columns import schema_to_json
from cdcsync.sinks import hudi
from cdcsync.stages import deletes, masking, newest, truncate, unavailable
from cdcsync.stages.classified import ClassifiedBatch, Ledger
from cdcsync.stages.typed import masked, meta_names, ordering_value
from cdcsync.transform import spark as transform

if TYPE_CHECKING:
    from cdcsync.model.batch import TableContext


@dataclass(frozen=True)
class WriteSet:
    """One commit: its rows (with ORDER and DELETED), the table spec the write uses (its operation decided), and
    the commit's metadata."""

    rows: DataFrame
    spec: hudi.TableSpec
    metadata: dict[str, Any]
    count: int  # the changes among `rows` (upserted + deleted)


def write_set(ctx: TableContext, job: TableBatch, classified: ClassifiedBatch) -> WriteSet:
    cfg, state, batch, typed = job.cfg, job.state, job.batch, classified.typed
    counts = classified.counts
    good = masking.scrub_metadata(classified.df.where(F.col(C.CLASS).isin("upserted", "deleted")), job.masks,
                                  cfg.source.format)
    if classified.truncated:  # changes a truncate of their source table came after are gone (counted as applied)
        good = truncate.drop_older(good, classified.truncated, ordering_value(state))
    if classified.placeholders:
        good = good.withColumn(unavailable.PARTITION, unavailable.partition_of())
    good = _table_rows(good, job, classified)
    if classified.placeholders:
        ctx.describe(batch, "values the changes did not carry (TOAST)")
        good, lost = unavailable.fill(good, classified.toast, state.spec, state.committed,
                                      cfg.source.unavailable_value_placeholder)
        for tp, n in lost.items():
            counts[tp][unavailable.UNAVAILABLE] = n
    route_column = job.route.source_column if job.route else None
    if classified.transform:
        tf = classified.transform
        good = transform.rows(good, tf.sql, tf.bound, tf.view, [hudi.ORDER, hudi.DELETED, *filter(None, [
            route_column])])
    if classified.new_truncates and state.committed:
        ctx.describe(batch, "rows a truncate removes")
        good = good.unionByName(truncate.table_deletes(good, state.spec, classified.new_truncates, route_column))
    to_write = sum(c["upserted"] + c["deleted"] for c in counts.values())
    ctx.reporter.event("writing", batch=batch.batch_id, table=state.spec.table_name, rows=to_write)
    maybe_crash("before_write", batch.batch_id)
    replayed_from = batch.start if ctx.mode is CommitMode.REPLAY else None
    written = _as_written(counts)
    if typed.ordering and any(c["deleted"] for c in written.values()):
        ctx.describe(batch, "deletes without an ordering value placed")
        good = newest.place_valueless(good, state.spec, state.committed)
    ctx.describe(batch, "delete markers")
    rows, spec = newest.settle(deletes.settle(good, state, cfg.sink.deletes, written, replayed_from is None),
                               state.spec, state.committed, to_write)
    return WriteSet(rows, spec, _metadata(job, classified, replayed_from is not None), to_write)


def commit(ctx: TableContext, job: TableBatch, classified: ClassifiedBatch) -> BatchResult:
    """The batch's one Hudi commit to the table, the table's state moved on with it."""
    state, batch, typed = job.state, job.batch, classified.typed
    started = time.monotonic()
    ws = write_set(ctx, job, classified)
    compactor = ctx.compactor(state.spec)
    if compactor:
        compactor.before_write()
    ctx.describe(batch, "Hudi write")  # Hudi names most of its jobs itself
    instant = hudi.write_batch(ws.rows, ws.spec, ws.metadata, ws.count)
    stages = classified.stages | {"write": time.monotonic() - started}
    if compactor:
        compactor.poke()
    state.columns, state.committed, state.schemaless = typed.columns, True, typed.from_rows
    state.truncated = classified.truncated
    return BatchResult(batch.batch_id, batch.start, batch.end, instant, classified.counts, typed.changes,
                       classified.samples, stages=stages)


def _metadata(job: TableBatch, classified: ClassifiedBatch, replay: bool) -> dict[str, Any]:
    state, batch, typed = job.state, job.batch, classified.typed
    meta = hudi.commit_metadata(batch.batch_id, batch.end, batch.start if replay else None, classified.counts,
                                schema_to_json(typed.columns), [c.describe() for c in typed.changes]
                                ) | hudi.data_loss_metadata(batch.data_loss) | {
        hudi.META_ORDERING: state.ordering, hudi.META_TYPED_FROM: "rows" if typed.from_rows else "schema",
        hudi.META_INDEX: hudi.index_of(state.spec)} | ({hudi.META_SERVERS: state.servers} if state.servers else {})
    if classified.truncated:
        meta[hudi.META_TRUNCATED] = truncate.to_json(classified.truncated)
    return meta


def _table_rows(df: DataFrame, job: TableBatch, classified: ClassifiedBatch) -> DataFrame:
    """The table's columns of each row. Rows that carry Debezium's unavailable value (their partition with them,
    unavailable.PARTITION) keep it unmasked, to be filled (stages/unavailable.py)."""
    cfg, typed = job.cfg, classified.typed
    carried = [unavailable.PARTITION] if unavailable.PARTITION in df.columns else []
    kept = F.coalesce(F.col(transform.KEEP), F.lit(True)) if transform.KEEP in df.columns else F.lit(True)
    placeholder = cfg.source.unavailable_value_placeholder if carried else None
    data = [masked(F.col(f"{C.TYPED}.`{c.name}`"), job.masks.get(c.name), placeholder).cast(c.type).alias(c.name)
            for c in typed.columns]
    if job.route and job.route.source_column:  # shards merged into one table: which source table each row came from
        data.append(F.col(C.TABLE).alias(job.route.source_column))
    return df.select(
        *data, *meta_names(cfg),
        ordering_value(job.state).alias(hudi.ORDER),
        ((F.col(C.CLASS) == "deleted") | ~kept).alias(hudi.DELETED),  # an upsert the WHERE rejects deletes its key
        *carried,
    )


def _as_written(counts: Ledger) -> Ledger:
    """The ledger as the write sees it: upserts the transform's WHERE rejected are deletes."""
    return {tp: c | {"upserted": c["upserted"] - c.get(FILTERED, 0), "deleted": c["deleted"] + c.get(FILTERED, 0)}
            for tp, c in counts.items()}
