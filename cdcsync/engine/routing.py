"""[[route]]: whole-database sync. One Kafka read per batch, split in Spark SQL by the envelope's "db.table" (or
"db.schema.table") into one Hudi table per route (or per source table with a "<>" template), each with its own
commit.

Progress: every table's commit carries the batch's offsets, and [run] checkpoint_dir holds one run-level record
{batch_id, start, end, state}. It says "writing" before the first table of a batch is written and "done" after
the last; a restart that finds "writing" re-applies exactly that range to the tables that did not commit it
(tables whose newest commit already carries that batch id are left alone).
"""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import jvm_errors
from cdcsync.config.model import routed_path
from cdcsync.engine import checkpoint, ledger, masking, truncate
from cdcsync.engine.batch import Route, sync_table
from cdcsync.engine.faults import maybe_crash
from cdcsync.engine.model import BatchInput, BatchResult
from cdcsync.errors import ConfigError
from cdcsync.formats import vocabulary
from cdcsync.kafka.offsets import Gap, Offsets
from cdcsync.schema.spark.columns import NAME
from cdcsync.schema.spark.evolution import ColumnChange
from cdcsync.sinks import hudi

DEFAULT = -1  # route index of the default route ([sink] unrouted = "default")


def _anchored(source_table: str) -> str:
    return "^(?:" + source_table + r")\z"  # the whole name; \z: Java's $ also matches before a final \n


def check_patterns(spark, cfg) -> None:
    r"""source_table runs as a Java regex (rlike), a dialect Python's re does not share (\p{Lower} is Java only,
    (?P<name>…) Python only): compile each in the JVM before the first batch."""
    pattern = spark._jvm.java.util.regex.Pattern
    for i, r in enumerate(cfg.routes):
        try:
            pattern.compile(_anchored(r.source_table))
        except Exception as e:  # py4j wraps java.util.regex.PatternSyntaxException
            cause = jvm_errors.caused_by(e, "java.util.regex.PatternSyntaxException")
            if cause is None:
                raise
            first = cause.message[:200]
            raise ConfigError(f"{cfg.path}: route[{i}].source_table = {r.source_table!r} is not a Java regular "
                              f"expression: {first}", file=str(cfg.path), key=f"route[{i}].source_table",
                              hint="routes match in Spark SQL, with Java regex syntax (java.util.regex.Pattern): "
                              "no (?#…) comments, named groups as (?<name>…)") from None


def route_index(routes) -> Column:
    """The first route whose source_table matches "db.table" in full; NULL when none does."""
    out = None
    for i, r in enumerate(routes):
        cond = F.col("_table").rlike(_anchored(r.source_table))
        out = F.when(cond, F.lit(i)) if out is None else out.when(cond, F.lit(i))
    return out


def sink_name(routes, default_name: str) -> Column:
    """The target table name per record: the template with "<>" replaced by the source table's name."""
    table_part = F.regexp_extract(F.col("_table"), r"([^.]*)$", 1)
    out = F.when(F.col("_route") == DEFAULT, F.lit(default_name))
    for i, r in enumerate(routes):
        head, sym, tail = r.sink_table.partition("<>")
        name = F.concat(F.lit(head), table_part, F.lit(tail)) if sym else F.lit(r.sink_table)
        out = out.when(F.col("_route") == i, name)
    return out


def route_config(cfg, index: int, name: str):
    """The config one routed table is processed with: the route's key, partitioning and type over [sink]'s."""
    if not NAME.fullmatch(name):  # fullmatch: a trailing newline is no name
        raise ConfigError(f"route[{index}] gives table name {name!r}, which is not a valid Hudi table name",
                          hint="sink_table must give letters, digits and '_' only", key=f"route[{index}].sink_table")
    base = cfg.sink
    path = routed_path(base.path, name)
    if index == DEFAULT:
        return replace(cfg, sink=replace(base, path=path, table_name=name))
    r = cfg.routes[index]
    sink = replace(base, path=path, table_name=name, primary_key=r.primary_key, partition_by=list(r.partition_by),
                   table_type=r.table_type or base.table_type, options={**base.options, **r.options},
                   deletes=r.deletes or base.deletes)
    return replace(cfg, sink=sink, transform=r.transform)


# --- the run-level progress record -------------------------------------------------------------------------


def read_progress(spark, directory: str) -> dict | None:
    data = checkpoint.read_json(spark, directory, checkpoint.ROUTES_PROGRESS_FILE)
    if data is not None:
        data["start"], data["end"] = Offsets.from_json(data["start"]), Offsets.from_json(data["end"])
        data["data_loss"] = tuple(Gap.from_json(g) for g in data.get("data_loss", ()))
    return data


def write_progress(spark, directory: str, batch: BatchInput, state: str) -> None:
    record = {"batch_id": batch.batch_id, "state": state, "start": batch.start.to_json(), "end": batch.end.to_json(),
              "data_loss": [g.to_json() for g in batch.data_loss]}  # run-wide: a batch may commit to no table
    checkpoint.write_json(spark, directory, checkpoint.ROUTES_PROGRESS_FILE, record)


# --- one batch split over the routed tables ----------------------------------------------------------------


def sync_routed(pipe, batch: BatchInput, env: DataFrame) -> BatchResult:
    """[[route]]: the batch's decoded records (`env`, persisted by the caller) split by target table in Spark SQL,
    one Hudi commit per table that has rows. Records no route matches are counted as skipped (reason 'unrouted'),
    or go to [sink]'s table as the default route; a record whose table cannot be told (undecodable) is bad when no
    default route takes it."""
    cfg = pipe.cfg
    # a table with only skipped records in this batch (DDL, filtered) gets no commit: its key may be unknown; one
    # with a truncate to apply does, once it has a commit (a table without one holds no rows to remove)
    changed = F.col("_op").isin("u", "d") | F.col("_bad").isNotNull()
    cut = truncate.flag() if truncate.applies(cfg) and cfg.source.on_truncate != "skip" else F.lit(False)
    found = (env.where(F.col("_target").isNotNull() & (changed | cut)).groupBy("_route", "_target")
             .agg(F.max(changed).alias("changed")).collect())
    targets = sorted((r["_target"], r["_route"]) for r in found
                     if r["changed"] or pipe.table_state(route_config(cfg, r["_route"], r["_target"])).committed)
    names = [n for n, _ in targets]
    idle = env.where(F.col("_target").isNotNull() & ~F.col("_target").isin(names)).select(
        "*", F.lit("skipped").alias("_class"), F.lit(None).cast("string").alias("_reason"),
        F.col("_skip").alias("_reason_detail"))
    unknown = F.col("_bad").isNotNull() & (F.coalesce(F.col("_table"), F.lit("")) == "")
    rest = env.where(F.col("_target").isNull()).select(
        "*", F.when(unknown, "bad").otherwise("skipped").alias("_class"),
        F.when(unknown, F.col("_bad")).alias("_reason"),
        F.when(unknown, F.col("_bad_detail")).otherwise(F.lit(vocabulary.UNROUTED)).alias("_reason_detail"))
    rest_ledger = ledger.count(rest)
    parts, changes, samples, tables, stages = [ledger.count(idle), rest_ledger], [], [], {}, {}
    bad_rest = sum(c["bad"] for c in rest_ledger.values())
    if bad_rest and pipe.on_bad is not None:
        every_mask = {m.column: m for m in cfg.masks}
        samples += pipe.on_bad(masking.scrub_raw(rest.where(F.col("_class") == "bad"), every_mask, cfg.source.format),
                               batch.batch_id, bad_rest)
    for name, index in targets:
        rcfg = route_config(cfg, index, name)
        state = pipe.table_state(rcfg)
        last = hudi.last_checkpoint(pipe.spark, rcfg.sink.path) if batch.redo else None
        done = bool(last) and last["batch_id"] == batch.batch_id and last["offsets"] == batch.end
        route = Route(cfg.routes[index].source_column if index != DEFAULT else None, write=not done)
        r = sync_table(pipe, rcfg, state, batch, env.where(F.col("_target") == name), route)
        parts.append(r.ledger)
        changes += [ColumnChange(c.kind, f"{name}.{c.column}", c.old, c.new) for c in r.changes]
        samples += r.bad_samples
        for stage, took in r.stages.items():
            stages[stage] = stages.get(stage, 0.0) + took
        tables[name] = {"instant": r.instant, **r.totals()}
        maybe_crash("routed_between_tables", batch.batch_id)
    counts = ledger.add(parts)
    ledger.check(counts, batch)
    unrouted = sum(c["skipped"] for c in rest_ledger.values())
    instant = ",".join(f"{n}@{t['instant']}" for n, t in tables.items()) or None
    return BatchResult(batch.batch_id, batch.start, batch.end, instant, counts, changes, samples, tables, unrouted,
                       stages)


def with_targets(env: DataFrame, cfg) -> DataFrame:
    """The decoded batch with each record's route (`_route`) and target table name (`_target`)."""
    idx = route_index(cfg.routes)
    if cfg.sink.unrouted == "default":
        idx = F.coalesce(idx, F.lit(DEFAULT))
    env = env.withColumn("_route", idx)
    return env.withColumn("_target", sink_name(cfg.routes, cfg.sink.table_name))
