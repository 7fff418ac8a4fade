"""`replay-from-offset`: re-read a bounded Kafka range through run's decode → upsert path.

Replay commits carry `_cdcsync.replay`, never `_cdcsync.offsets`, so the pipeline's resume point does not move.
Its own checkpoint is `checkpoint_dir/replay-<id>/` (id = target + specs): a lock and `progress.json` with the
range fixed at the start and the offsets done so far, so a crashed replay rerun with the same arguments finishes
that range. Re-writing a batch after a crash is safe: the upsert keeps the newest change per key.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cdcsync.engine import checkpoint
from cdcsync.engine.pipeline import Pipeline
from cdcsync.engine.planning import batch_budget, plan_end
from cdcsync.engine.sync import Summary, idle, sync
from cdcsync.formats.spec import format_spec
from cdcsync.kafka.offsets import Offsets
from cdcsync.kafka.replay_spec import (
    Extent,
    ReplaySpecError,
    parse_replay_spec,
    replay_range,
    resolve_replay_spec,
)
from cdcsync.model.batch import BatchInput, BatchResult, CommitMode
from cdcsync.runtime.lock import ConcurrentWriterError, WriterLock, multi_writer_configured
from cdcsync.stages.bad_records import BadRecords

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config
    from cdcsync.reporting import Reporter

PROGRESS_FILE = "progress.json"
WHAT = "cdcsync replay-from-offset"


@dataclass
class Plan:
    table: str
    target: str
    into: bool
    from_spec: str
    to_spec: str
    replay_id: str
    replay_dir: str
    start: Offsets
    end: Offsets
    earliest: Offsets
    latest: Offsets
    batch_size: int | None
    resumed: bool = False
    routes: int = 0  # [[route]] configs: target is the directory holding one table per routed name

    def __post_init__(self) -> None:
        self.start, self.end = Offsets(self.start), Offsets(self.end)
        self.earliest, self.latest = Offsets(self.earliest), Offsets(self.latest)

    @property
    def messages(self) -> int:
        return self.start.count_to(self.end)

    @property
    def batches(self) -> int:
        n = self.messages
        return 0 if not n else (math.ceil(n / self.batch_size) if self.batch_size else 1)

    def partitions(self) -> list[dict[str, Any]]:
        return [{"topic": t, "partition": p, "from": o, "to": self.end[t][p], "messages": self.end[t][p] - o,
                 "earliest": self.earliest[t][p], "latest": self.latest[t][p]}
                for t, p, o in self.start.entries()]

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "target": self.target, "into": self.into, "from": self.from_spec,
                "to": self.to_spec, "replay_id": self.replay_id, "replay_dir": self.replay_dir,
                "resumed": self.resumed, "routes": self.routes, "max_records_per_batch": self.batch_size,
                "batches": self.batches, "messages": self.messages, "partitions": self.partitions()}

    def render(self) -> str:
        what = (f"the tables of {self.routes} route(s) under {self.target}" if self.routes
                else f"table {self.table} into {self.target}")
        side = (" (side tables)" if self.routes else " (side table)") if self.into else ""
        lines = [f"replay plan for {what}{side}: from {self.from_spec} to {self.to_spec}"
                 f"{' (resuming an interrupted replay)' if self.resumed else ''}",
                 f"  {'topic/partition':<40} {'from':>12} {'to':>12} {'messages':>10}"]
        for r in self.partitions():
            lines.append(f"  {r['topic'] + '/' + str(r['partition']):<40} {r['from']:>12} {r['to']:>12} "
                         f"{r['messages']:>10}")
        lines.append(f"  total {self.messages} message(s) in {self.batches} batch(es); "
                     f"checkpoint {self.replay_dir}")
        return "\n".join(lines)


@dataclass
class ReplayResult:
    plan: Plan
    summary: Summary
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        s = self.summary.to_dict()
        return {"plan": self.plan.to_dict(), "dry_run": False,
                "summary": {k: s[k] for k in ("batches", "totals", "instants", "schema_changes", "ledger")}
                | ({"tables": s["tables"], "unrouted": s["unrouted"]} if self.plan.routes else {})
                | {"seconds": self.seconds}}


class ReplayBatches:
    """A replay's batch source: its fixed range in batches of max_records_per_batch, progress saved after each."""

    def __init__(self, replayer: Replayer, plan: Plan) -> None:
        self.replayer, self.plan = replayer, plan
        self.done = plan.start.copy()

    def batches(self) -> Iterator[BatchInput]:
        batch_id = 0
        while (end := plan_end(self.done, self.plan.end, self.plan.batch_size)) != self.done:
            yield BatchInput(batch_id, self.done.copy(), end)
            batch_id += 1

    def committed(self, result: BatchResult, seconds: float) -> None:
        t = result.totals()
        self.replayer.reporter.event("replayed", batch=result.batch_id, instant=result.instant, read=t["messages"],
                                     upserted=t["upserted"], deleted=t["deleted"], skipped=t["skipped"],
                                     bad=t["bad"])
        self.done = result.end.copy()
        self.replayer.save(self.plan, self.done, "running")

    def pause(self, seconds: float) -> None:
        idle(seconds, self.replayer.pipe.heartbeat)


class Replayer:
    def __init__(self, cfg: Config, reporter: Reporter, from_spec: str, to_spec: str | None = None,
                 into: str | None = None, spark: SparkSession | None = None) -> None:
        self.cfg = cfg
        self.reporter = reporter
        self.from_spec = parse_replay_spec(from_spec, "--from")  # typos fail before Kafka or Spark
        self.to_spec = parse_replay_spec(to_spec or "latest", "--to")
        self.into = into
        # the run already set bad records aside: a replay counts them without dead-lettering them twice
        policy = "skip" if cfg.run.on_bad_record == "dead-letter" else None
        self.pipe = Pipeline(cfg, reporter, mode=CommitMode.REPLAY, spark=spark, schema_from=cfg.sink.path,
                             on_bad=BadRecords(cfg, reporter, policy))
        self._started: str | None = None  # kept across a resume so progress.json shows the first start

    def _committed(self) -> Offsets | None:
        """Where the run stands (routed: every table not set aside), for --from/--to committed."""
        from cdcsync.engine.resume import resume_point

        return resume_point(self.pipe.spark, self.cfg).offsets

    def plan(self) -> Plan:
        """Resolve both bounds against the brokers now (Spark starts only for `committed`)."""
        cfg = self.cfg
        view = self.pipe.kafka_view(group=False)  # no group: a replay commits nothing
        try:
            topics = view.resolve_topics(cfg.source.topics, cfg.source.topic_pattern)
            extent = Extent(topics, view.earliest(topics), view.latest(topics))  # --to defaults to the end offsets
            start = resolve_replay_spec(self.from_spec, view, extent, self._committed, "--from")
            end = resolve_replay_spec(self.to_spec, view, extent, self._committed, "--to")
        finally:
            view.close()
        earliest, latest = extent.earliest, extent.latest
        # a partition list names what to replay: partitions it leaves out get an empty range
        if self.from_spec.kind == "offsets":
            end = Offsets({t: {p: o for p, o in end[t].items() if p in start.get(t, {})} for t in start})
        if self.to_spec.kind == "offsets":
            start = Offsets({t: {p: o for p, o in start[t].items() if p in end.get(t, {})} for t in end})
        end = Offsets({t: {p: end.get_offset(t, p, o) for p, o in parts.items()} for t, parts in start.items()})
        replay_range(start, end, earliest, latest)
        main = cfg.sink.path.rstrip("/")
        target = (self.into or main).rstrip("/")  # --into the main path is the main table, with its guards
        rid = hashlib.sha1(f"{target}\n{self.from_spec.text}\n{self.to_spec.text}".encode()).hexdigest()[:12]
        return Plan(cfg.sink.table_name, target, target != main, self.from_spec.text, self.to_spec.text, rid,
                    f"{cfg.run.checkpoint_dir.rstrip('/')}/replay-{rid}", start, end, earliest, latest,
                    batch_budget(cfg.run), routes=len(cfg.routes))

    def run(self, plan: Plan, show: Callable[[Plan], None] | None = None) -> ReplayResult:
        """Resume an interrupted replay of the same arguments, show the plan, check writers, run the batches."""
        t0 = time.monotonic()
        pipe = self.pipe
        try:
            own = WriterLock(pipe.spark, plan.replay_dir, WHAT, pipe.cfg.storage)
            holder = own.holder()
            if holder:
                raise ConcurrentWriterError(
                    f"the same replay ({plan.replay_id}) is already running: pid {holder.get('pid')} on "
                    f"{holder.get('host')}", hint="wait for it to finish, or stop it and run this again to resume",
                    holder=holder)
            pipe.hold_lock(plan.replay_dir, WHAT, f"replay {plan.replay_id}")
            self._resume(plan)
            if show:
                show(plan)
            if not plan.into:
                self._guard_main_table()
            if self.cfg.routes:
                from cdcsync.engine.routing import check_patterns

                check_patterns(pipe.spark, self.cfg)
            source = ReplayBatches(self, plan)
            self.save(plan, source.done, "running")
            summary = sync(pipe.writing_to(plan.target), source, Summary(self.cfg.sink.table_name, plan.target,
                                                                         plan.from_spec))
            self.save(plan, source.done, "finished")
            summary.end_offsets = source.done
            return ReplayResult(plan, summary, round(time.monotonic() - t0, 3))
        finally:
            pipe.close()

    def _guard_main_table(self) -> None:
        cfg = self.cfg
        if not cfg.sink.primary_key and not format_spec(cfg.source.format).changes:  # no key in the messages
            raise ReplaySpecError(
                f"table {cfg.sink.table_name} has no primary key (insert-only {cfg.source.format}): replaying into "
                "it would add every replayed record a second time",
                hint="replay into a side table with --into <path>, or set sink.primary_key")
        if multi_writer_configured(cfg.sink.options):
            self.reporter.info("Hudi multi-writer locking is configured: writing alongside any running 'run'")
            return
        holder = WriterLock(self.pipe.spark, cfg.run.checkpoint_dir, WHAT, cfg.storage).holder()
        if holder:
            raise ConcurrentWriterError(
                f"refusing to replay into table {cfg.sink.table_name}: {holder.get('what')} (pid {holder.get('pid')} "
                f"on {holder.get('host')}) is writing it now and Hudi multi-writer locking is not configured",
                hint="stop that run first, replay into a side table with --into <path>, or configure "
                "[sink.options] hoodie.write.concurrency.mode = \"optimistic_concurrency_control\" and "
                "hoodie.write.lock.provider", holder=holder)
        self.pipe.lock_table(WHAT)  # a run started meanwhile is refused until the replay ends

    def _resume(self, plan: Plan) -> None:
        """An unfinished record of this replay: continue its fixed range from where it got to."""
        rec = checkpoint.read_json(self.pipe.spark, plan.replay_dir, PROGRESS_FILE)
        if not rec or rec.get("status") != "running":
            return
        done, end = Offsets.from_json(rec["done"]), Offsets.from_json(rec["to"])
        replay_range(done, end, plan.earliest, plan.latest)  # retention may have passed it since the crash
        plan.start, plan.end, plan.resumed = done, end, True
        self._started = rec.get("started")
        self.reporter.info(f"resuming replay {plan.replay_id} (started {self._started}): "
                           f"{plan.messages} message(s) left of its range")

    def save(self, plan: Plan, done: Offsets, status: str) -> None:
        if not self._started:
            self._started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        checkpoint.write_json(self.pipe.spark, plan.replay_dir, PROGRESS_FILE, {
            "replay_id": plan.replay_id, "target": plan.target, "from_spec": plan.from_spec, "to_spec": plan.to_spec,
            "status": status, "started": self._started,
            "from": plan.start.to_json(), "to": plan.end.to_json(), "done": done.to_json()})
