"""One micro-batch into one table: Kafka read (or given rows) → decoded (formats/spark/) → typed (typed.py) →
classified and counted (classified.py) → one Hudi commit holding the rows, the batch's offsets, ledger and schema
(write_set.py).

Every record ends in exactly one class (upserted, deleted, skipped, bad); the counts per partition form the
batch's ledger, which travels in the Hudi commit with the offsets.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats import vocabulary
from cdcsync.formats.spark.envelope import decode_envelope
from cdcsync.formats.spark.upserts import with_upserts
from cdcsync.formats.upserts import Upserts
from cdcsync.formats.vocabulary import OP_SKIP
from cdcsync.kafka.header_filter import parse as parse_header_filter
from cdcsync.model.batch import (
    BatchInput,
    BatchResult,
    Route,
    TableBatch,
    TableContext,
    TableState,
)
from cdcsync.schema.spark import fit
from cdcsync.schema.spark.infer import BatchColumns
from cdcsync.sinks import hudi
from cdcsync.stages import classify, masking
from cdcsync.stages.classified import Misfit, classify_batch
from cdcsync.stages.typed import DecodedBatch, typed_batch
from cdcsync.stages.write_set import commit

if TYPE_CHECKING:
    from cdcsync.config.model import Config, SourceConfig
    from cdcsync.formats.spark.avro import WriterSchemas
    from cdcsync.model.context import PipelineContext

def decode(pipe: PipelineContext, batch: BatchInput) -> DataFrame:
    """Kafka read (or the given rows) → envelope, with the oversized and header-filter verdicts applied."""
    schemas = pipe.writer_schemas(batch)
    build = partial(_decoded, pipe.cfg.source, schemas, Upserts.of(pipe.cfg.source, pipe.cfg.sink.primary_key))
    if batch.rows is not None:
        return build(batch.rows)
    return pipe.kafka_reads.read(batch.start, batch.end, build, key=schemas)


def _decoded(source: SourceConfig, schemas: WriterSchemas | None, upserts: Upserts, raw: DataFrame) -> DataFrame:
    env = decode_envelope(raw, source.format, source.csv_columns, source.csv_field_delimiter, schemas,
                          source.key_fields)
    env = with_upserts(env, upserts, source.key_fields)  # tombstones and deleted_field of keyed rows
    if source.max_message_bytes:
        too_big = F.octet_length(C.RAW_VALUE) > source.max_message_bytes
        env = env.withColumns({  # one projection: each plan step is analysed again over the whole plan
            C.BAD: F.when(too_big, vocabulary.OVERSIZED).otherwise(F.col(C.BAD)),
            C.BAD_DETAIL: F.when(too_big, F.format_string(
                f"value is %d bytes, more than source.max_message_bytes = {source.max_message_bytes}",
                F.octet_length(C.RAW_VALUE))).otherwise(F.col(C.BAD_DETAIL)),
            C.OP: F.when(too_big, None).otherwise(F.col(C.OP))})
    if source.header_filter:  # a record for other consumers is skipped (counted), never dead-lettered
        keep = parse_header_filter(source.header_filter).spark_condition(F.col(C.HEADERS))
        env = env.withColumns({C.SKIP: F.when(~keep, vocabulary.FILTERED).otherwise(F.col(C.SKIP)),
                               C.BAD: F.when(~keep, None).otherwise(F.col(C.BAD)),
                               C.OP: F.when(~keep, OP_SKIP).otherwise(F.col(C.OP))})
    return env


def sync_table(pipe: PipelineContext, cfg: Config, state: TableState, batch: BatchInput, env: DataFrame,
               route: Route | None = None) -> BatchResult:
    """`env` (decoded; persisted by the caller when routed) classified, counted and committed to `cfg`'s table.
    A batch whose rows all fit the columns already known is typed with them while Kafka is read, the one pass;
    any other is cached as decoded and its columns inferred from all its records (schema/spark/fit.py)."""
    masks = masking.for_table(cfg.masks, state.spec.table_name)
    ctx, job = _context(pipe), TableBatch(cfg, state, batch, route, masks)
    ctx.describe(batch, "key and columns")
    try:
        _settle_key(job, env)
        # a table whose last batch carried its schema is not tried: its rows would not fit
        kept = None if route or masks or not state.schemaless else fit.kept_columns(env, cfg, state.columns or [])
        if kept is not None:
            result = _stages(ctx, job, DecodedBatch(env, BatchColumns(kept)))
            if isinstance(result, BatchResult):
                return result
            ctx.reporter.event("columns_inferred", batch=batch.batch_id, table=state.spec.table_name,
                               why="rows that do not fit the known columns", misfits=result.rows)
        if route is None:
            env = env.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            result = _stages(ctx, job, DecodedBatch(env))
            assert isinstance(result, BatchResult)  # only rows typed with known columns can misfit
            return result
        finally:
            if route is None:
                env.unpersist()
    finally:  # a batch that failed names no later job either
        ctx.describe(batch, None)


def _stages(ctx: TableContext, job: TableBatch, decoded: DecodedBatch) -> BatchResult | Misfit:
    """The batch through its stages, or the Misfit of rows that do not fit the columns it was typed with."""
    classified = classify_batch(ctx, job, typed_batch(ctx, job, decoded))
    if isinstance(classified, Misfit):
        return classified
    try:
        if job.route and not job.route.write:  # committed before a crash: counted, not written again
            return BatchResult(job.batch.batch_id, job.batch.start, job.batch.end,
                               hudi.latest_instant(ctx.spark, job.state.spec.path), classified.counts)
        return commit(ctx, job, classified)
    finally:
        classified.df.unpersist()


def _settle_key(job: TableBatch, env: DataFrame) -> None:
    state = job.state
    if not state.key_known:
        pk = classify.resolve_primary_key(job.cfg, env, state)
        state.spec = replace(state.spec, primary_key=pk)
        state.key_known = True
        masking.check_key(job.masks, pk, state.spec.table_name)


def _context(pipe: PipelineContext) -> TableContext:
    return TableContext(pipe.spark, pipe.reporter, pipe.on_bad, pipe.compactor, pipe.mode)
