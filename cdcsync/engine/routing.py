"""[[route]]: whole-database sync. One Kafka read per batch, split in Spark SQL by the envelope's "db.table" (or
"db.schema.table") into one Hudi table per route (or per source table with a "<>" template), each with its own
commit.

Progress: every table's commit carries the batch's offsets, and [run] checkpoint_dir holds one run-level record
(model.progress): the batch, "writing" before its first table is written and "done" after the last, and where
the tables stand. A restart that finds "writing" re-applies exactly that range to the tables that did not commit
it (tables whose newest commit already carries that batch id are left alone).

Isolation ([run] on_table_failure = "isolate"): a table whose write fails after its retries is set aside at its
position before the batch while the others commit and advance; each table takes only the rows from its own
position on, and rows below `fresh` that no retried table needs are left out before anything is counted, so the
ledger and the dead letters see each message once.

Parallel commits: [run] table_parallelism routed tables of a batch are written at once, each by a thread of a pool
that lives for the batch (PySpark pins each Python thread to a JVM thread of its own, so each keeps its own job
description and tags). Nothing a table's write touches is shared with another's but the decoded batch (persisted,
read only), the reporter and the dead-letter table, which the pipeline calls one thread at a time
(pipeline.one_at_a_time); table states, compactors and first checkpoints are kept per table. Results merge in
table-name order, so a batch's result is the same whichever table finishes first.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync import jvm_errors
from cdcsync.config.model import routed_path
from cdcsync.engine import checkpoint
from cdcsync.engine.batch import sync_table
from cdcsync.engine.sync import with_write_retries
from cdcsync.errors import ConfigError, SinkError
from cdcsync.formats import vocabulary
from cdcsync.formats.vocabulary import CHANGE_OPS
from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import BatchInput, BatchResult, Route, table_failure
from cdcsync.model.progress import Isolation, Progress
from cdcsync.runtime.faults import maybe_crash
from cdcsync.schema.spark.columns import NAME
from cdcsync.schema.spark.evolution import ColumnChange
from cdcsync.sinks import hudi
from cdcsync.stages import drops, ledger, masking, truncate

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config, RouteConfig
    from cdcsync.model.context import PipelineContext

_T = TypeVar("_T")

DEFAULT = -1  # route index of the default route ([sink] unrouted = "default")
MOST_BY_DEFAULT = 8  # [run] table_parallelism unset: twice the driver's cores, at most this many


def _anchored(source_table: str) -> str:
    return "^(?:" + source_table + r")\z"  # the whole name; \z: Java's $ also matches before a final \n


def check_patterns(spark: SparkSession, cfg: Config) -> None:
    r"""source_table runs as a Java regex (rlike), a dialect Python's re does not share (\p{Lower} is Java only,
    (?P<name>…) Python only): compile each in the JVM before the first batch."""
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    pattern = jvm.java.util.regex.Pattern
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


def route_index(routes: list[RouteConfig]) -> Column:
    """The first route whose source_table matches "db.table" in full; NULL when none does."""
    out: Column | None = None
    for i, r in enumerate(routes):
        cond = F.col(C.TABLE).rlike(_anchored(r.source_table))
        out = F.when(cond, F.lit(i)) if out is None else out.when(cond, F.lit(i))
    return out if out is not None else F.lit(None).cast("int")  # no routes: none matches


def sink_name(routes: list[RouteConfig], default_name: str) -> Column:
    """The target table name per record: the template with "<>" replaced by the source table's name."""
    table_part = F.regexp_extract(F.col(C.TABLE), r"([^.]*)$", 1)
    out = F.when(F.col(C.ROUTE) == DEFAULT, F.lit(default_name))
    for i, r in enumerate(routes):
        head, sym, tail = r.sink_table.partition("<>")
        name = F.concat(F.lit(head), table_part, F.lit(tail)) if sym else F.lit(r.sink_table)
        out = out.when(F.col(C.ROUTE) == i, name)
    return out


def route_config(cfg: Config, index: int, name: str) -> Config:
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


def read_progress(spark: SparkSession, directory: str) -> Progress | None:
    data = checkpoint.read_json(spark, directory, checkpoint.ROUTES_PROGRESS_FILE)
    return Progress.from_json(data) if data is not None else None


def write_progress(spark: SparkSession, directory: str, batch: BatchInput, state: str, standing: Isolation) -> None:
    """`standing`: before the batch ("writing": a redo re-applies the same slices), after it ("done"); the gaps
    are run-wide: a batch may commit to no table."""
    record = Progress(batch.batch_id, state, batch.start, batch.end, standing, batch.data_loss)
    checkpoint.write_json(spark, directory, checkpoint.ROUTES_PROGRESS_FILE, record.to_json())


# --- one batch split over the routed tables ----------------------------------------------------------------


def sync_routed(pipe: PipelineContext, batch: BatchInput, env: DataFrame) -> BatchResult:
    """[[route]]: the batch's decoded records (`env`, persisted by the caller) split by target table in Spark SQL,
    one Hudi commit per table that has rows. Records no route matches are counted as skipped (reason 'unrouted'),
    or go to [sink]'s table as the default route; a record whose table cannot be told (undecodable) is bad when no
    default route takes it."""
    cfg = pipe.cfg
    before = batch.standing or Isolation(batch.start)  # a replay: every table from the range's start
    needed = still_needed(before, batch.start)
    if needed is not None:  # before anything is counted: a message counted by an earlier batch is not again
        env = env.where(needed)
    dropped = drops.routed(pipe, batch, env)  # said, or refused, before any routed table is written
    # a table with only skipped records in this batch (DDL, filtered) gets no commit: its key may be unknown; one
    # with a truncate to apply does, once it has a commit (a table without one holds no rows to remove)
    changed = F.col(C.OP).isin(*CHANGE_OPS) | F.col(C.BAD).isNotNull()
    cut = truncate.flag() if truncate.applies(cfg) and cfg.source.on_truncate != "skip" else F.lit(False)
    found = (env.where(F.col(C.TARGET).isNotNull() & (changed | cut)).groupBy(C.ROUTE, C.TARGET)
             .agg(F.max(changed).alias("changed")).collect())
    targets = sorted((r[C.TARGET], r[C.ROUTE]) for r in found
                     if r["changed"] or _has_commit(pipe, route_config(cfg, r[C.ROUTE], r[C.TARGET])))
    names = [n for n, _ in targets]
    idle = env.where(F.col(C.TARGET).isNotNull() & ~F.col(C.TARGET).isin(names)).select(
        "*", F.lit("skipped").alias(C.CLASS), F.lit(None).cast("string").alias(C.REASON),
        F.col(C.SKIP).alias(C.REASON_DETAIL))
    unknown = F.col(C.BAD).isNotNull() & (F.coalesce(F.col(C.TABLE), F.lit("")) == "")
    rest = env.where(F.col(C.TARGET).isNull()).select(
        "*", F.when(unknown, "bad").otherwise("skipped").alias(C.CLASS),
        F.when(unknown, F.col(C.BAD)).alias(C.REASON),
        F.when(unknown, F.col(C.BAD_DETAIL)).otherwise(F.lit(vocabulary.UNROUTED)).alias(C.REASON_DETAIL))
    rest_ledger = ledger.count(rest)
    parts, changes, samples = [ledger.count(idle), rest_ledger, dropped], [], []
    tables: dict[str, dict[str, Any]] = {}
    stages: dict[str, float] = {}
    bad_rest = sum(c["bad"] for c in rest_ledger.values())
    if bad_rest and pipe.on_bad is not None:
        every_mask = {m.column: m for m in cfg.masks}
        samples += pipe.on_bad(masking.scrub_raw(rest.where(F.col(C.CLASS) == "bad"), every_mask, cfg.source.format),
                               batch.batch_id, bad_rest)
    results, failed = _set_aside(pipe, batch, before, targets, _write_tables(pipe, batch, env, targets))
    for name, r in results:  # in table-name order, whichever finished first
        parts.append(r.ledger)
        changes += [ColumnChange(c.kind, f"{name}.{c.column}", c.old, c.new) for c in r.changes]
        samples += r.bad_samples
        for stage, took in r.stages.items():  # summed over the tables: more than the batch's time when in parallel
            stages[stage] = stages.get(stage, 0.0) + took
        tables[name] = {"instant": r.instant, **r.totals()}
    counts = ledger.add(parts)
    ledger.check(counts, batch)
    unrouted = sum(c["skipped"] for c in rest_ledger.values())
    instant = ",".join(f"{n}@{t['instant']}" for n, t in tables.items()) or None
    return BatchResult(batch.batch_id, batch.start, batch.end, instant, counts, changes, samples, tables, unrouted,
                       stages, failed=failed, standing=before.after(batch.end, failed, time.time()))


def still_needed(standing: Isolation, start: Offsets) -> Column | None:
    """The rows some table still needs: a table not isolated needs its rows from `fresh` on, as do records of no
    table (unrouted, undecodable); an isolated table retried in this batch, its own from its position on; one not
    retried, none now. None when every row of the batch is needed."""
    held = sorted(standing.tables)
    if not held and all(o <= start.get_offset(t, p, o) for t, p, o in standing.fresh.entries()):
        return None
    offset = F.col(C.OFFSET)
    keep = offset >= _position(standing.fresh, start)
    if held:
        keep = keep & (F.col(C.TARGET).isNull() | ~F.col(C.TARGET).isin(held))
    for name in sorted(standing.retry):
        keep = keep | ((F.col(C.TARGET) == name) & (offset >= _position(standing.tables[name].offsets, start)))
    return keep


def _position(offsets: Offsets, start: Offsets) -> Column:
    """Per row, the first offset of its partition a table needs (a partition `offsets` lacks: all of it)."""
    out = F.lit(0)
    for t, p, o in start.entries():
        here = (F.col(C.TOPIC) == t) & (F.col(C.PARTITION) == p)
        out = F.when(here, F.lit(offsets.get_offset(t, p, o))).otherwise(out)
    return out


def _has_commit(pipe: PipelineContext, rcfg: Config) -> bool:
    try:
        return pipe.table_state(rcfg).committed
    except Exception:  # unreadable: a target, so that its own write fails, and fails only it (on_table_failure)
        return True


def _set_aside(pipe: PipelineContext, batch: BatchInput, before: Isolation, targets: list[tuple[str, int]],
               outcomes: list[BatchResult | Exception]) -> tuple[list[tuple[str, BatchResult]], dict[str, str]]:
    """The tables that committed, and those set aside ([run] on_table_failure = "isolate"), name: error. Every
    table of the batch failing when none was set aside before is no one table's failure: the first is raised."""
    paired = [(name, o) for (name, _), o in zip(targets, outcomes, strict=True)]
    done = [(name, o) for name, o in paired if not isinstance(o, Exception)]
    failures = [(name, o) for name, o in paired if isinstance(o, Exception)]
    if failures and not done and not before.tables:
        raise failures[0][1]
    failed: dict[str, str] = {}
    for name, e in failures:
        failed[name] = table_failure(e)
        at = (before.tables[name].offsets if name in before.tables else before.fresh).compact()
        pipe.reporter.warn(f"batch {batch.batch_id}: table {name} is set aside (run.on_table_failure = \"isolate\"): "
                           f"{failed[name]}; it stays at {at} and is tried again, the other tables go on")
        pipe.reporter.event("table_isolated", batch=batch.batch_id, table=name, error=failed[name], offsets=at)
    for name in sorted(before.retry - failed.keys()):
        pipe.reporter.info(f"batch {batch.batch_id}: table {name} caught up after "
                           f"{before.tables[name].attempts} failed attempt(s); no longer set aside")
    return done, failed


def _write_table(pipe: PipelineContext, batch: BatchInput, env: DataFrame, name: str, index: int) -> BatchResult:
    """One routed table's share of the batch, committed (a table that committed it before a crash: counted only)."""
    cfg = pipe.cfg
    rcfg = route_config(cfg, index, name)
    state = pipe.table_state(rcfg)  # first sight of a table: its own entry, so tables written at once never share one
    last = hudi.last_checkpoint(pipe.spark, rcfg.sink.path) if batch.redo else None
    done = last is not None and last["batch_id"] == batch.batch_id and last["offsets"] == batch.end
    route = Route(cfg.routes[index].source_column if index != DEFAULT else None, write=not done)
    r = sync_table(pipe, rcfg, state, batch, env.where(F.col(C.TARGET) == name), route)
    maybe_crash("routed_between_tables", batch.batch_id)
    return r


def _write_tables(pipe: PipelineContext, batch: BatchInput, env: DataFrame,
                  targets: list[tuple[str, int]]) -> list[BatchResult | Exception]:
    """Every target table's commit, [run] table_parallelism at a time; each table's jobs tagged with the batch and
    the table (the Spark UI's job tags), so an abort cancels the batch's running jobs. With on_table_failure =
    "isolate" (a run's batch), a table's failure after its retries is its outcome, in place of its result."""
    writes = [partial(_write_table, pipe, batch, env, name, index) for name, index in targets]
    jobs: list[Callable[[], BatchResult | Exception]] = [*writes]
    if batch.standing is not None and pipe.cfg.run.on_table_failure == "isolate":
        jobs = [partial(_failure_kept, pipe, f"batch {batch.batch_id}, table {name}", job)
                for (name, _), job in zip(targets, writes, strict=True)]
    width = min(table_parallelism(pipe.cfg.run.table_parallelism), len(targets))
    if width <= 1 or not _pinned(pipe):  # one after another, in this thread: as before table_parallelism
        return [job() for job in jobs]
    sc, tag = pipe.spark.sparkContext, f"cdcsync-batch-{batch.batch_id}"
    return bounded([partial(_tagged, sc, (tag, f"cdcsync-table-{name}"), job)
                    for (name, _), job in zip(targets, jobs, strict=True)],
                   width, on_abort=lambda: sc.cancelJobsWithTag(tag))


def _failure_kept(pipe: PipelineContext, what: str, job: Callable[[], BatchResult]) -> BatchResult | Exception:
    """`job()` with [run] write_retries; a failure after them returned when it is the table's own: a write, lock or
    storage failure (SinkError, an I/O error, a Java exception while the JVM lives). Anything else stops the batch
    as before: a ledger mismatch, a bad record or schema change with "fail", a bug, a dead JVM, an interrupt."""
    try:
        return with_write_retries(pipe, what, job, again="its share of the batch")
    except Exception as e:
        own = isinstance(e, SinkError | OSError) or jvm_errors.java_exception(e) is not None
        if not own or not _jvm_alive(pipe):
            raise
        return e


def _jvm_alive(pipe: PipelineContext) -> bool:
    try:
        return not pipe.spark.sparkContext._jsc.sc().isStopped()
    except Exception:  # the gateway does not answer: the JVM is gone
        return False


def table_parallelism(setting: int | None, cores: int | None = None) -> int:
    """[run] table_parallelism, else sized to the machine: a routed table's commit is a chain of small Spark jobs,
    each planned on the driver (most of its CPU), run as a task or two and waited for, which leaves cores idle
    between them; twice the cores this process may run on keeps them busy (2 cores: 4 beat 2 and 1), at most
    MOST_BY_DEFAULT."""
    if setting is not None:
        return setting
    return max(1, min(MOST_BY_DEFAULT, 2 * (cores or _cores())))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # a container's or taskset's share, not the host's
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def bounded(jobs: list[Callable[[], _T]], width: int, on_abort: Callable[[], object] = lambda: None) -> list[_T]:
    """Each of `jobs` (callables) run by a pool of `width` threads; their results in `jobs`' order. A job that
    fails stops those not started yet and lets the running ones end (a table's commit is never cut short: each is
    whole or absent), then the first failure in `jobs`' order is raised. An interrupt (a second stop signal)
    calls `on_abort` and is raised at once, the jobs not started dropped."""
    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="cdcsync-table")
    futures = [pool.submit(job) for job in jobs]
    try:
        wait(futures, return_when=FIRST_EXCEPTION)
        pool.shutdown(wait=True, cancel_futures=True)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        on_abort()
        raise
    failed = next((f.exception() for f in futures if not f.cancelled() and f.exception() is not None), None)
    if failed is not None:
        raise failed
    return [f.result() for f in futures]


def _tagged(sc: SparkContext, tags: tuple[str, ...], job: Callable[[], _T]) -> _T:
    """`job` run with its Spark jobs tagged (tags are this thread's, as job descriptions are)."""
    for t in tags:
        sc.addJobTag(t)
    try:
        return job()
    finally:
        for t in tags:
            sc.removeJobTag(t)


_UNPINNED_SAID: list[bool] = []


def _pinned(pipe: PipelineContext) -> bool:
    """PySpark's pinned thread mode (its default, PYSPARK_PIN_THREAD): each Python thread a JVM thread of its own.
    Without it threads would share job descriptions and tags: the tables are written one after another."""
    from py4j.clientserver import ClientServer
    from pyspark import SparkContext

    if isinstance(SparkContext._gateway, ClientServer):
        return True
    if not _UNPINNED_SAID:
        _UNPINNED_SAID.append(True)
        pipe.reporter.warn("PYSPARK_PIN_THREAD is off: the routed tables are written one after another "
                           "(run.table_parallelism needs PySpark's pinned thread mode)")
    return False


def with_targets(env: DataFrame, cfg: Config) -> DataFrame:
    """The decoded batch with each record's route (`_route`) and target table name (`_target`)."""
    idx = route_index(cfg.routes)
    if cfg.sink.unrouted == "default":
        idx = F.coalesce(idx, F.lit(DEFAULT))
    env = env.withColumn(C.ROUTE, idx)
    return env.withColumn(C.TARGET, sink_name(cfg.routes, cfg.sink.table_name))
