"""One micro-batch into one table: Kafka read (or given rows) → envelope → columns → typed rows → classify →
ledger → one Hudi commit holding the rows, the batch's offsets, ledger and schema.

Every record ends in exactly one class (upserted, deleted, skipped, bad); the counts per partition form the
batch's ledger, which travels in the Hudi commit with the offsets.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, replace
from functools import partial

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.engine import classify, deletes, drops, ledger, masking, newest, truncate, type_conflicts, unavailable
from cdcsync.engine.faults import maybe_crash
from cdcsync.engine.model import FILTERED, BatchInput, BatchResult, CommitMode, TableState
from cdcsync.errors import ConfigError, SchemaError
from cdcsync.formats import vocabulary
from cdcsync.formats.spark import position
from cdcsync.formats.spark.envelope import decode_envelope
from cdcsync.formats.spark.upserts import with_upserts
from cdcsync.formats.spec import format_spec
from cdcsync.formats.upserts import Upserts
from cdcsync.formats.vocabulary import OP_SKIP
from cdcsync.kafka.header_filter import parse as parse_header_filter
from cdcsync.schema.spark import fit, shape
from cdcsync.schema.spark.columns import Col, schema_to_json, typed_row
from cdcsync.schema.spark.evolution import merge
from cdcsync.schema.spark.infer import BatchColumns
from cdcsync.sinks import hudi
from cdcsync.transform import spark as transform
from cdcsync.transform.sql import STRUCT, Bound, Transform


@dataclass(frozen=True)
class Route:
    """How a routed table's share of a batch is written (None for a run without [[route]])."""

    source_column: str | None = None  # shards merged into one table: the column naming each row's source table
    write: bool = True  # False: this table committed the batch before a crash; classify and count only


def decode(pipe, batch: BatchInput) -> DataFrame:
    """Kafka read (or the given rows) → envelope, with the oversized and header-filter verdicts applied."""
    schemas = pipe.writer_schemas(batch)
    build = partial(_decoded, pipe.cfg.source, schemas, Upserts.of(pipe.cfg.source, pipe.cfg.sink.primary_key))
    if batch.rows is not None:
        return build(batch.rows)
    return pipe.kafka_reads.read(batch.start, batch.end, build, key=schemas)


def _decoded(source, schemas, upserts: Upserts, raw: DataFrame) -> DataFrame:
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


@dataclass(frozen=True)
class _Decoded:
    """A table's share of a decoded batch, and how its rows are typed."""

    env: DataFrame
    kept: BatchColumns | None = None  # the columns known before the batch, if every row fits them (else inferred)
    route: Route | None = None


def sync_table(pipe, cfg, state: TableState, batch: BatchInput, env: DataFrame,
               route: Route | None = None) -> BatchResult:
    """`env` (decoded; persisted by the caller when routed) classified, counted and committed to `cfg`'s table.
    A batch whose rows all fit the columns already known is typed with them while Kafka is read, the one pass;
    any other is cached as decoded and its columns inferred from all its records (schema/spark/fit.py)."""
    _describe(pipe.spark, batch, "key and columns")
    masks = masking.for_table(cfg.masks, state.spec.table_name)
    try:
        if not state.key_known:
            pk = classify.resolve_primary_key(cfg, env, state)
            state.spec = replace(state.spec, primary_key=pk)
            state.key_known = True
            masking.check_key(masks, pk, state.spec.table_name)
        # a table whose last batch carried its schema is not tried: its rows would not fit
        kept = None if route or masks or not state.schemaless else fit.kept_columns(env, cfg, state.columns or [])
        if kept is not None:
            result = _sync(pipe, cfg, state, batch, _Decoded(env, BatchColumns(kept)))
            if result is not None:
                return result
            pipe.reporter.event("columns_inferred", batch=batch.batch_id, table=state.spec.table_name,
                                why="rows that do not fit the known columns")
        if route is not None:
            return _sync_inferred(pipe, cfg, state, batch, _Decoded(env, route=route))
        env = env.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            return _sync_inferred(pipe, cfg, state, batch, _Decoded(env))
        finally:
            env.unpersist()
    finally:  # a batch that failed names no later job either
        _describe(pipe.spark, batch, None)


def _sync_inferred(pipe, cfg, state: TableState, batch: BatchInput, given: _Decoded) -> BatchResult:
    """_sync with the columns inferred from the batch (`given.kept` None), which every row fits."""
    result = _sync(pipe, cfg, state, batch, given)
    assert result is not None  # only rows typed with given.kept can misfit
    return result


def _sync(pipe, cfg, state: TableState, batch: BatchInput, given: _Decoded) -> BatchResult | None:
    """The batch typed with `given.kept` (None if a row does not fit them), or with the columns inferred."""
    masks = masking.for_table(cfg.masks, state.spec.table_name)
    kept, route = given.kept, given.route
    _describe(pipe.spark, batch, "columns")  # a batch typed again the full way infers them here
    # schema versions (and routed shards) widen to one type
    env, found = shape.batch_columns(given.env, cfg) if kept is None else (given.env, kept)
    batch_cols, env = classify.unnamable_columns_are_bad(found.columns, env, [c.name for c in state.columns or []])
    batch_cols, pins = type_conflicts.pin(env, state.columns, batch_cols, cfg, state.spec.primary_key)
    for p in pins:  # its outliers are counted bad (incompatible_type); say which column held its type and why
        pipe.reporter.event("type_kept", batch=batch.batch_id, table=state.spec.table_name, pin=p.describe())
    cols, changes = merge(state.columns, batch_cols, cfg.schema.columns)
    cols = masking.retype(cols, masks)
    incompatible = [c for c in changes if c.kind == "incompatible"]
    if incompatible:
        first = incompatible[0]
        raise SchemaError(
            f"batch {batch.batch_id}: {first.describe()} (topic offsets {batch.start.range_text(batch.end)})",
            hint="declare the column's type in [schema.columns], or widen it in the table by hand",
            column=first.column, old=first.old, new=first.new,
        )
    if kept:  # the known columns are the table's (merge changed none): one typed parse types and checks the rows
        env = fit.with_typed_parse(env, cols)
        typed, cast_bad = fit.typed(cols), F.array().cast("array<string>")  # a value that cannot convert misfits
    else:
        typed, cast_bad = typed_row(F.coalesce(C.ROW, C.KEY_ROW), cols, found.versions)
    pk, ordering = state.spec.primary_key, _ordering_field(cfg, state, cols)
    # a key (or ordering) column no row image has shown is NULL (missing_key), and Spark rejects a struct of no fields
    typed += [F.lit(None).cast("string").alias(k) for k in dict.fromkeys([*pk, *filter(None, [ordering])])
              if k not in {c.name for c in cols}]
    typed = typed or [F.lit(None).cast("string").alias(C.NO_COLUMNS)]
    df = env.select("*", F.struct(*typed).alias(C.TYPED), cast_bad.alias(C.CAST_BAD),
                    (fit.misfit(cols) if kept else F.lit(False)).alias(C.MISFIT)).drop(fit.PARSED)
    toast = unavailable.cells(cols, pk) if unavailable.applies(cfg) else []
    tf = _Transform.of(pipe, cfg, state, cols, [*pk, *filter(None, [ordering])], batch)
    if tf:  # the WHERE's verdict, and what the SELECT cannot compute, in the one pass
        toast, computed = tf.split(toast)
        df = transform.verdicts(df, tf.sql, tf.bound, _view(cols, masks, cfg), [
            (unavailable.is_placeholder(F.col(f"{STRUCT}.`{c.name}`"), cfg.source.unavailable_value_placeholder),
             f"column {c.name!r} carried the unavailable-value placeholder, and [transform] sql computes from it: "
             "only a column the SELECT passes through is filled from its earlier value") for c in computed])
    df = _lean(type_conflicts.relabel(classify.classified(df, pk, classify.schema_check(cfg), ordering,
                                                          F.col(transform.FAILED) if tf else None), pins))
    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    clock = _Stages()
    tallies = {unavailable.SEEN: unavailable.flag(C.TYPED, toast, cfg.source.unavailable_value_placeholder)} \
        if toast else {}
    if tf and tf.bound.keep:  # upserts the WHERE turns into deletes of their keys
        tallies[FILTERED] = (F.col(C.CLASS) == "upserted") & ~F.col(transform.KEEP)
    if truncate.applies(cfg) and cfg.source.on_truncate != "skip":
        tallies[truncate.APPLIED] = truncate.flag()
    if route is None:  # a routed batch's drops are said before any of its tables is written (drops.routed)
        tallies |= drops.tally(cfg)
    try:
        _describe(pipe.spark, batch, "read, decode, type, classify and count (the one pass)")
        # Spark is lazy: Kafka is read, decoded, typed here
        counts, misfits = ledger.count_flagged(df, C.MISFIT, tallies)
        if misfits:
            return None
        clock.lap("read_decode")
        ledger.check(counts, batch)
        if any(c.get(drops.DROPPED) for c in counts.values()):  # said, or refused before anything is committed
            drops.said(pipe, batch, df, F.lit(state.spec.table_name))
        if state.ordering == hudi.ORDERING and format_spec(cfg.source.format).binlog_positions:
            state.servers, state.runs = position.merge_runs(state.servers, position.server_switches(df))
        new_truncates = {}
        if any(c.get(truncate.APPLIED) for c in counts.values()):
            if cfg.source.on_truncate == "fail":
                truncate.refuse(df, batch.batch_id, cfg)
            new_truncates = truncate.found(df, _order(state))
        truncated = truncate.merged(state.truncated, new_truncates)
        if route and not route.write:
            return BatchResult(batch.batch_id, batch.start, batch.end, hudi.latest_instant(pipe.spark, state.spec.path),
                               counts)
        samples = []
        bad_total = sum(c["bad"] for c in counts.values())
        if bad_total and pipe.on_bad is not None:
            _describe(pipe.spark, batch, "dead letters")
            bad = masking.scrub_raw(df.where(F.col(C.CLASS) == "bad"), masks, cfg.source.format)
            samples = pipe.on_bad(bad, batch.batch_id, bad_total)
            clock.lap("dead_letter")
        good = masking.scrub_metadata(df.where(F.col(C.CLASS).isin("upserted", "deleted")), masks, cfg.source.format)
        if truncated:  # changes a truncate of their source table came after are gone (counted as applied)
            good = truncate.drop_older(good, truncated, _order(state))
        placeholders = any(c.get(unavailable.SEEN) for c in counts.values())
        if placeholders:
            good = good.withColumn(unavailable.PARTITION, unavailable.partition_of())
        good = _table_rows(good, cfg, cols, masks, route, state)
        if placeholders:
            _describe(pipe.spark, batch, "values the changes did not carry (TOAST)")
            good, lost = unavailable.fill(good, toast, state.spec, state.committed,
                                          cfg.source.unavailable_value_placeholder)
            for tp, n in lost.items():
                counts[tp][unavailable.UNAVAILABLE] = n
        if tf:
            good = transform.rows(good, tf.sql, tf.bound, tf.view, [hudi.ORDER, hudi.DELETED, *(
                [route.source_column] if route and route.source_column else [])])
        if new_truncates and state.committed:
            _describe(pipe.spark, batch, "rows a truncate removes")
            good = good.unionByName(truncate.table_deletes(good, state.spec, new_truncates,
                                                           route.source_column if route else None))
        to_write = sum(c["upserted"] + c["deleted"] for c in counts.values())
        pipe.reporter.event("writing", batch=batch.batch_id, table=state.spec.table_name, rows=to_write)
        maybe_crash("before_write", batch.batch_id)
        replayed_from = batch.start if pipe.mode is CommitMode.REPLAY else None
        meta = hudi.commit_metadata(batch.batch_id, batch.end, replayed_from, counts, schema_to_json(cols),
                                    [c.describe() for c in changes]) | hudi.data_loss_metadata(batch.data_loss) | {
            hudi.META_ORDERING: state.ordering, hudi.META_TYPED_FROM: "rows" if found.from_rows else "schema",
            hudi.META_INDEX: hudi.index_of(state.spec)} | ({hudi.META_SERVERS: state.servers} if state.servers else {})
        if truncated:
            meta[hudi.META_TRUNCATED] = truncate.to_json(truncated)
        written = _as_written(counts)
        if ordering and any(c["deleted"] for c in written.values()):
            _describe(pipe.spark, batch, "deletes without an ordering value placed")
            good = newest.place_valueless(good, state.spec, state.committed)
        _describe(pipe.spark, batch, "delete markers")
        rows, spec = newest.settle(deletes.settle(good, state, cfg.sink.deletes, written, replayed_from is None),
                                   state.spec, state.committed, to_write)
        compactor = pipe.compactor(state.spec)
        if compactor:
            compactor.before_write()
        _describe(pipe.spark, batch, "Hudi write")  # Hudi names most of its jobs itself
        instant = hudi.write_batch(rows, spec, meta, to_write)
        clock.lap("write")
        if compactor:
            compactor.poke()
        state.columns, state.committed, state.schemaless = cols, True, found.from_rows
        state.truncated = truncated
        return BatchResult(batch.batch_id, batch.start, batch.end, instant, counts, changes, samples,
                           stages=clock.seconds)
    finally:
        df.unpersist()


def _describe(spark, batch: BatchInput, stage: str | None) -> None:
    """Name the Spark jobs that follow, in the Spark UI and event log, by the batch and `stage` (None: no name),
    rather than leave them the last description Hudi set on this thread."""
    spark.sparkContext.setJobDescription(None if stage is None else f"cdcsync batch {batch.batch_id}: {stage}")


def _ordering_field(cfg, state: TableState, cols: list[Col]) -> str | None:
    """The table's custom ordering field, which must be one of its columns once row images have shown any."""
    field, names = state.spec.custom_ordering, [c.name for c in cols]
    if field is None or not names or field in names:
        return field
    close = difflib.get_close_matches(field, names, n=1, cutoff=0.6)
    raise ConfigError(
        f"{cfg.path}: sink.ordering_field = {field!r} is not a column of table '{state.spec.table_name}' "
        f"(its columns: {', '.join(names)})" + (f"; did you mean {close[0]!r}?" if close else ""),
        hint="name one of the table's columns, or declare the field's type in [schema.columns] when no change so "
             "far carried it", key="sink.ordering_field", column=field)


# what only a bad record still needs once its row is typed: the message as it came, for the dead letters
_AS_RECEIVED = (C.RAW_VALUE, C.VALUE, C.ROW, C.ROW_NESTED, C.KEY_ROW, C.KEY_TEXT, C.SCHEMA, C.TYPES)


def _lean(df: DataFrame) -> DataFrame:
    """The classified batch without the message text of the records that are not bad, so the copy kept for the
    ledger, the dead letters and the write holds little more than the typed rows."""
    bad = F.col(C.CLASS) == "bad"
    return df.withColumns({c: F.when(bad, F.col(c)) for c in _AS_RECEIVED if c in df.columns})


class _Stages:
    """Seconds spent in each stage of a batch, for the metrics."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._t = time.monotonic()

    def lap(self, stage: str) -> None:
        now = time.monotonic()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self._t
        self._t = now


def _table_rows(df: DataFrame, cfg, cols: list[Col], masks: dict, route: Route | None,
                state: TableState) -> DataFrame:
    """The table's columns of each row. Rows that carry Debezium's unavailable value (their partition with them,
    unavailable.PARTITION) keep it unmasked, to be filled (engine/unavailable.py)."""
    carried = [unavailable.PARTITION] if unavailable.PARTITION in df.columns else []
    kept = F.coalesce(F.col(transform.KEEP), F.lit(True)) if transform.KEEP in df.columns else F.lit(True)
    placeholder = cfg.source.unavailable_value_placeholder if carried else None
    data = [_masked(F.col(f"{C.TYPED}.`{c.name}`"), masks.get(c.name), placeholder).cast(c.type).alias(c.name)
            for c in cols]
    if route and route.source_column:  # shards merged into one table: which source table each row came from
        data.append(F.col(C.TABLE).alias(route.source_column))
    return df.select(
        *data, *_meta_names(cfg),
        _order(state).alias(hudi.ORDER),
        ((F.col(C.CLASS) == "deleted") | ~kept).alias(hudi.DELETED),  # an upsert the WHERE rejects deletes its key
        *carried,
    )


def _meta_names(cfg) -> list[str]:
    """The configured metadata columns, as the table names them (the offset last)."""
    metadata = cfg.source.metadata_columns
    return [C.METADATA[m] for m in metadata if m != "offset"] + ([C.OFFSET] if "offset" in metadata else [])


def _view(cols: list[Col], masks: dict, cfg) -> list:
    """The view `source` of [transform] sql over the classified batch: each column masked and typed as the table
    would hold it, then the metadata columns."""
    return [_masked(F.col(f"{C.TYPED}.`{c.name}`"), masks.get(c.name), None).cast(c.type).alias(c.name)
            for c in cols] + [F.col(n) for n in _meta_names(cfg)]


@dataclass(frozen=True)
class _Transform:
    """A table's [transform] sql bound to this batch's columns."""

    sql: Transform
    bound: Bound
    view: list[str]

    @classmethod
    def of(cls, pipe, cfg, state: TableState, cols: list[Col], through: list[str], batch: BatchInput):
        if cfg.transform is None:
            return None
        view = [c.name for c in cols] + _meta_names(cfg)
        out = cls(cfg.transform, cfg.transform.bind(view, transform.ansi(pipe.spark), through), view)
        left_out = sorted({c.name for c in cols} - cfg.transform.referenced() - state.left_out) \
            if not cfg.transform.star else []
        if left_out:  # an explicit projection: new source columns stay out of the table; said once per run
            state.left_out |= set(left_out)
            pipe.reporter.event("columns_left_out", batch=batch.batch_id, table=state.spec.table_name,
                                columns=", ".join(left_out), why=f"{cfg.transform.key} does not select them")
        return out

    def split(self, toast: list[Col]) -> tuple[list[Col], list[Col]]:
        """TOAST candidates: (those the SELECT passes through, filled from earlier values; those it computes from)."""
        through = {o.name for o in self.sql.columns(self.view) if o.passes == o.name}
        computed = self.sql.computed_from()
        return [c for c in toast if c.name in through], [c for c in toast if c.name in computed]


def _as_written(counts: dict) -> dict:
    """The ledger as the write sees it: upserts the transform's WHERE rejected are deletes."""
    return {tp: c | {"upserted": c["upserted"] - c.get(FILTERED, 0), "deleted": c["deleted"] + c.get(FILTERED, 0)}
            for tp, c in counts.items()}


def _masked(value, mask, placeholder: str | None):
    if mask is None:
        return value
    if placeholder is None:
        return masking.apply(value, mask)
    return F.when(unavailable.is_placeholder(value, placeholder), value.cast("string")).otherwise(
        masking.apply(value, mask))


def _order(state: TableState):
    if state.ordering == hudi.ORDERING_LEGACY:
        return position.legacy_order(F.col(C.TS_MS), F.col(C.OFFSET), F.col(C.POS))
    runs = state.runs if state.ordering == hudi.ORDERING else None  # ORDERING_LOG tables compare binlogs as before
    return position.order(F.col(C.POSITION), F.col(C.PARTITION), F.col(C.OFFSET), F.col(C.POS), runs)
