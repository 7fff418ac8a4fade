"""`run`: resume from the table's last commit, plan bounded batches from Kafka, and feed them to the sync loop
until the input ends (--once) or a signal arrives.

Offsets live only in Hudi commit metadata (Hudi Streamer's model): the commit that holds a batch's rows holds
its end offsets, so a crash at any point re-reads exactly the uncommitted range.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from cdcsync.config.model import dead_letter_path, routed_path
from cdcsync.engine import checkpoint, routing
from cdcsync.engine.pipeline import Pipeline
from cdcsync.engine.planning import batch_budget, plan_end, seconds
from cdcsync.engine.resume import resume_point
from cdcsync.engine.sync import Summary, idle, sync
from cdcsync.errors import ConfigError, SourceError
from cdcsync.kafka.offsets import Gap, Offsets, lost_ranges, split_tp
from cdcsync.kafka.view import KafkaView, lost, resolve_start, retriable
from cdcsync.model.batch import BatchInput, BatchResult
from cdcsync.model.progress import Isolated, Isolation
from cdcsync.runtime.compactor import Compactions
from cdcsync.runtime.metrics import RunMetrics
from cdcsync.runtime.session import service_conf
from cdcsync.sinks import hudi
from cdcsync.sinks.compaction import ASYNC, INLINE, compaction_mode

if TYPE_CHECKING:
    from types import FrameType

    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config
    from cdcsync.reporting import Reporter

_T = TypeVar("_T")
# what signal.signal takes and gives back
_Handler: TypeAlias = "Callable[[int, FrameType | None], Any] | int | signal.Handlers | None"


class KafkaBatches:
    """Run's batch source: from the resume point, bounded batches of what Kafka holds, idle waits in between
    (continuous mode), the rate limit, and a stop flag set by SIGINT/SIGTERM."""

    topics: list[str]  # the topics read: set by Runner.run before `start`, again as a topic_pattern matches more

    def __init__(self, pipe: Pipeline, view: KafkaView, once: bool, metrics: RunMetrics):
        self.pipe, self.view, self.once, self.metrics = pipe, view, once, metrics
        self.stop = False
        self._compactions = Compactions()  # on the tables' timelines since the run started, for the metrics
        self.summary: Summary | None = None
        self.data_loss: tuple[Gap, ...] = ()  # the gaps known: carried by every commit (start() reads them back)
        self.isolated: dict[str, Isolated] = {}  # routed tables set aside ([run] on_table_failure), by name
        self.t0 = time.monotonic()

    def start(self) -> Summary:
        """Decide where the run starts and what the first batch id is; the run's summary, to count its batches."""
        cfg, spark = self.pipe.cfg, self.pipe.spark
        point = resume_point(spark, cfg, self.pipe.first_checkpoint)
        self.redo_end, self.data_loss, self.isolated = point.redo_end, point.data_loss, dict(point.isolated)
        recorded = point.decided[0] if point.decided else point.offsets
        self.next_start, how = resolve_start(cfg.source, self.view, self.topics, recorded)
        if point.decided:  # no commit yet: the start an earlier run decided (and read nothing from) still holds
            how = f"start decided earlier ({point.decided[1]})"
        elif point.batch_id is None:
            checkpoint.write_start(spark, cfg.run.checkpoint_dir, self.next_start, how)
        self.batch_id = point.next_batch_id
        if point.batch_id is not None:  # after a crash the group lags the table's commits until a batch lands
            self._commit_group(self.slowest(self.next_start))
        self.summary = summary = Summary(cfg.sink.table_name, cfg.sink.path, how)
        self.pipe.reporter.event("start", table=cfg.sink.table_name, topics=",".join(self.topics), from_=how,
                                 offsets=self.next_start.compact())
        for name, t in self.isolated.items():
            self.pipe.reporter.warn(f"table {name} was set aside by an earlier run at {t.offsets.compact()} "
                                    f"({t.attempts} failed attempt(s)): {t.error}; "
                                    + ("trying it again now" if self.once else "tried again with backoff"))
        self.stop_at = self.view.latest(self.topics) if self.once else None
        return summary

    def batches(self) -> Iterator[BatchInput]:
        cfg, view = self.pipe.cfg, self.view
        first = True
        while True:
            if self.stop:  # a signal during the wait before this batch: plan nothing more
                assert self.summary is not None  # start() made it: batches are planned after it
                self.summary.stopped_by = "signal"
                return
            fresh = self.next_start
            if cfg.source.topic_pattern and not self.once:  # a topic that appears mid-run: its partitions are new
                topics = self._through_outages(lambda: view.resolve_topics(None, cfg.source.topic_pattern))
                if topics is None:
                    return
                self.topics = topics
            self.latest = self.stop_at or self._through_outages(lambda: view.latest(self.topics))
            if self.latest is None:  # stopped while the brokers were away
                return
            earliest = self._through_outages(partial(view.earliest, self.topics))  # after latest: every partition
            if earliest is None:
                return
            for t, p, _ in self.latest.entries():  # partitions added mid-run start at their beginning
                fresh.setdefault(t, {}).setdefault(p, earliest[t][p])
            redo_end = self.redo_end
            redo, standing, start = redo_end is not None, None, fresh
            if cfg.routes:  # the read starts at the slowest of the tables this batch writes (model.progress)
                # a redo, and a --once run's first batch, try every table set aside again; a service, those due
                every = redo or (self.once and first) or cfg.run.on_table_failure == "stop"
                standing = Isolation(fresh, self.isolated).covering(fresh).due(time.time(), every)
                start = standing.read_from()
            self._past_lost(start, earliest)  # before Spark reads: its failOnDataLoss would only say "offset gone"
            if standing is not None:  # on_data_loss = "skip" moved the read start: each table's position too
                standing = standing.within(earliest, self.latest)
                fresh = standing.fresh
            self.metrics.lag_seen(start, self.latest)
            # the budget is the tables' that are not set aside: a table tried again catches up in one batch
            end = plan_end(fresh, self.latest, batch_budget(cfg.run))
            if redo_end is not None:  # a routed batch cut short by a crash: the same range again
                end = Offsets({t: {p: max(o, redo_end.get_offset(t, p, o)) for p, o in ps.items()}
                               for t, ps in start.items()})  # max: a start moved past lost offsets
                self.redo_end = None
            if end == start:
                if self.once:
                    return
                self._sleep(seconds(cfg.run.trigger_interval))
                continue
            self._t_batch, first = time.monotonic(), False
            yield BatchInput(self.batch_id, start.copy(), end, redo=redo, data_loss=self.data_loss, standing=standing)
            if not self.once:
                self._sleep(max(0.0, seconds(cfg.run.trigger_interval) - (time.monotonic() - self._t_batch)))

    def _past_lost(self, start: Offsets, earliest: Offsets) -> None:
        """[run] on_data_loss, for offsets `start` needs that the brokers no longer hold: "fail" stops the run before
        the batch is read; "skip" moves `start` to the earliest offset, and the gap is reported and carried by
        every commit from this batch on."""
        assert self.latest is not None  # batches() asked for it before planning the batch
        gaps = [replace(g, batch_id=self.batch_id) for g in lost_ranges(start, earliest, self.latest)]
        if not gaps:
            return
        cfg, reporter = self.pipe.cfg, self.pipe.reporter
        if cfg.run.on_data_loss == "fail":
            raise lost(gaps, cfg.path)
        for g in gaps:
            start[g.topic][g.partition] = g.to
            reporter.warn(f'{g.describe()}; on_data_loss = "skip": going on from offset {g.to}, the gap recorded')
            reporter.event("data_loss", batch=self.batch_id, topic=g.topic, partition=g.partition, lost_from=g.start,
                           lost_to=g.to, records=g.records, reason=g.reason)
        self.metrics.data_lost(gaps)
        self.data_loss += tuple(gaps)

    def committed(self, result: BatchResult, took: float) -> None:
        if result.standing is not None:
            self.isolated = dict(result.standing.tables)
        self._commit_group(self.slowest(result.end))
        self._report(result, took)
        self.metrics.batch_committed(result, took)
        if self.pipe.cfg.run.on_bad_record == "dead-letter":
            self.metrics.dead_lettered(result.totals()["bad"])
        self._count_compactions(result)
        self.next_start, self.batch_id = result.end.copy(), result.batch_id + 1

    def pause(self, seconds: float) -> None:
        self._sleep(seconds)

    def slowest(self, fresh: Offsets) -> Offsets:
        """Where the slowest table stands: `fresh`, or an isolated table's position below it."""
        return Isolation(fresh, self.isolated).slowest()

    def isolated_now(self) -> dict[str, dict[str, Any]]:
        """The tables set aside as the run ends, with their paths (summary, --json)."""
        return {n: {"path": routed_path(self.pipe.cfg.sink.path, n), **t.to_json()} for n, t in self.isolated.items()}

    def _commit_group(self, offsets: Offsets) -> None:
        try:
            self.view.commit_group(offsets)
        except Exception as e:  # monitoring only: the offsets are in the Hudi commit
            if not retriable(e):
                raise
            self.pipe.reporter.warn(f"the group's offsets were not committed (for lag monitoring only): {e}")

    def _through_outages(self, ask: Callable[[], _T]) -> _T | None:
        """`ask()` the brokers; while they are away (a retriable Kafka error), wait and ask again, with backoff, for
        at most [run] source_unavailable_timeout; None when a stop signal ends the wait."""
        bound = seconds(self.pipe.cfg.run.source_unavailable_timeout)
        since, pause = None, 1.0
        while True:
            try:
                answer = ask()
            except Exception as e:
                if not retriable(e):
                    raise
                now = time.monotonic()
                if since is None:
                    since = now
                    self.metrics.source_available(False)
                    self.pipe.reporter.warn(f"Kafka at {self.view.bootstrap_servers} is not answering ({e}); "
                                            f"waiting up to {self.pipe.cfg.run.source_unavailable_timeout}")
                if now - since >= bound:
                    raise SourceError(
                        f"Kafka at {self.view.bootstrap_servers} has not answered for {now - since:.0f} s "
                        f"(run.source_unavailable_timeout = {self.pipe.cfg.run.source_unavailable_timeout}): {e}",
                        hint="nothing was lost: restart once the brokers are back; 'cdcsync probe' names the "
                        "failing hop") from None
                self._sleep(pause)
                if self.stop:
                    return None
                pause = min(pause * 2, 30.0)
                continue
            if since is not None:
                self.metrics.source_available(True)
                self.pipe.reporter.info(f"Kafka is answering again after {time.monotonic() - since:.0f} s")
            return answer

    def _count_compactions(self, r: BatchResult) -> None:
        """Compactions scheduled and completed on the MERGE_ON_READ tables (each routed table its own), wherever
        they are stored; the timelines are listed only while the metrics have a reader (/metrics, a textfile)."""
        cfg = self.pipe.cfg
        if not self.metrics.observed:
            return
        if "MERGE_ON_READ" not in {cfg.sink.table_type, *(route.table_type for route in cfg.routes)}:
            return
        written = {n: routed_path(cfg.sink.path, n) for n in r.tables if n not in r.failed} if cfg.routes \
            else {cfg.sink.table_name: cfg.sink.path}
        scheduled, completed = self._compactions.look(written, self.pipe.spark)
        for name in scheduled:
            self.metrics.compaction_scheduled(name)
        for name, took in completed:
            self.metrics.compaction_done(name, took)

    def _sleep(self, secs: float) -> None:
        idle(secs, self._alive, lambda: self.stop)

    def _alive(self) -> None:
        self.metrics.beat()
        self.pipe.heartbeat()

    def _report(self, r: BatchResult, took: float) -> None:
        t = r.totals()
        assert self.latest is not None  # batches() asked for it before planning the batch
        lag = {tp: self.latest[t][p] - r.end[t][p] for tp in r.ledger for t, p in [split_tp(tp)]}
        routed = {"tables": {n: c["upserted"] + c["deleted"] for n, c in r.tables.items()},
                  "unrouted": r.unrouted} if self.pipe.cfg.routes else {}
        if r.failed:  # set aside: each one's warning and table_isolated event say why
            routed["failed"] = sorted(r.failed)
        self.pipe.reporter.event("batch", id=r.batch_id, instant=r.instant, read=t["messages"],
                                 upserted=t["upserted"], deleted=t["deleted"], skipped=t["skipped"], bad=t["bad"],
                                 lag=lag, seconds=round(took, 2), **routed)
        for c in r.changes:
            self.pipe.reporter.info(f"schema: {c.describe()}")


class Runner:
    """`cdcsync run`: the pipeline, run's batch source, the sync loop; a summary at the end."""

    def __init__(self, cfg: Config, reporter: Reporter, once: bool = False, spark: SparkSession | None = None,
                 metrics_textfile: Path | None = None) -> None:
        if not once:
            cfg = replace(cfg, spark=service_conf(cfg.spark))
        self.pipe = Pipeline(cfg, reporter, spark=spark)
        self.once, self.metrics_textfile = once, metrics_textfile

    def run(self) -> Summary:
        pipe, cfg = self.pipe, self.pipe.cfg
        view = pipe.kafka_view()
        metrics = RunMetrics(cfg.sink.table_name, seconds(cfg.run.stuck_after), routed=bool(cfg.routes))
        metrics.textfile = self.metrics_textfile
        source = KafkaBatches(pipe, view, self.once, metrics)
        saved = self._signals(source)  # first: a stop during start-up ends the run before its first batch
        succeeded = False
        try:
            if cfg.run.metrics_port is not None:
                self._serve(metrics)
            source.topics = view.resolve_topics(cfg.source.topics, cfg.source.topic_pattern)  # before any JVM
            pipe.spark  # noqa: B018 - Spark starts here
            self._signals(source)  # again: starting a SparkContext puts PySpark's own SIGINT handler in place
            pipe.lock_table("cdcsync run")
            if cfg.routes:
                routing.check_patterns(pipe.spark, cfg)
            else:
                # first sight of the table: one that cannot be written with this config stops the run before it reads
                self._compact_left_pending(pipe.table_state().spec)
            summary = sync(pipe, source, source.start())
            summary.end_offsets, summary.isolated = source.next_start, source.isolated_now()
            try:  # the slowest table's lag: a table set aside is behind too
                slowest = source.slowest(source.next_start)
                summary.lag = slowest.lag_to(view.latest(list(slowest)))
            except Exception as e:  # the brokers went away as the run ended: the lag is unknown, nothing else
                if not retriable(e):
                    raise
                summary.lag = {}
            summary.dead_letter_path = dead_letter_path(cfg) if summary.totals["bad"] and \
                cfg.run.on_bad_record == "dead-letter" else None
            pipe.drain(cancel=summary.stopped_by == "signal")  # a stopped service does not wait for a compaction
            summary.seconds = round(time.monotonic() - source.t0, 3)
            # a --once run stopped early did not read what it had to; one with a table set aside did not write it
            succeeded = summary.stopped_by != "signal" and not summary.isolated
            return summary
        finally:
            metrics.close()
            pipe.close()
            for sig, old in saved.items():
                signal.signal(sig, old)
            view.close()
            if metrics.textfile:
                self._write_textfile(metrics, succeeded)

    def _compact_left_pending(self, spec: hudi.TableSpec) -> None:
        """Compactions a killed run left requested or inflight: inline, completed now (inline compaction only runs
        on a write, so a run with nothing to read would leave them); async, started in the background."""
        pipe = self.pipe
        mode = compaction_mode(spec.table_type, spec.options)
        if mode == INLINE:
            for instant in hudi.complete_pending_compactions(pipe.spark, spec.path):
                pipe.reporter.info(f"completed compaction {instant}, left pending by an earlier run")
        elif mode == ASYNC and (compactor := pipe.compactor(spec)) is not None:  # None only when not ASYNC
            compactor.poke()

    def _serve(self, metrics: RunMetrics) -> None:
        run = self.pipe.cfg.run
        assert run.metrics_port is not None  # run() serves only when it is set
        try:
            port = metrics.serve(run.metrics_host, run.metrics_port)
        except OSError as e:
            raise ConfigError(f"{self.pipe.cfg.path}: run.metrics_port = {run.metrics_port} cannot be served on "
                              f"{run.metrics_host}: {e.strerror or e}", hint="choose a free port (or 0 for any)",
                              key="run.metrics_port") from None
        self.pipe.reporter.info(f"metrics on http://{run.metrics_host}:{port}/metrics and /healthz")

    def _write_textfile(self, metrics: RunMetrics, succeeded: bool) -> None:
        """The run's metrics for node_exporter, whatever its end; a file that cannot be written is a warning, not
        a failed run: its rows are committed, and the last success the file keeps ages until an alert sees it."""
        try:
            metrics.write_textfile(succeeded)
        except OSError as e:
            self.pipe.reporter.warn(f"the metrics textfile {metrics.textfile} was not written: {e.strerror or e}; "
                                    "check the folder's space and permissions")

    def _signals(self, source: KafkaBatches) -> dict[signal.Signals, _Handler]:
        def handler(signum: int, frame: FrameType | None) -> None:
            if source.stop:
                raise KeyboardInterrupt
            source.stop = True
            self.pipe.reporter.info(f"{signal.Signals(signum).name}: finishing the batch in flight, then stopping "
                                    "(again to abort)")

        return {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
