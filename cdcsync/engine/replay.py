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
from dataclasses import dataclass, replace

from cdcsync.engine import checkpoint
from cdcsync.engine.lock import ConcurrentWriterError, WriterLock, multi_writer_configured
from cdcsync.kafka.offsets import (
    KafkaView,
    Offsets,
    ReplaySpecError,
    parse_replay_spec,
    replay_range,
    resolve_replay_spec,
)

PROGRESS_FILE = "progress.json"
WHAT = "cdcsync replay-from-offset"
_KEYED_FORMATS = ("debezium-json", "canal-json", "maxwell-json")  # the key comes from the messages


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

    @property
    def messages(self) -> int:
        return sum(self.end[t][p] - o for t, parts in self.start.items() for p, o in parts.items())

    @property
    def batches(self) -> int:
        n = self.messages
        return 0 if not n else (math.ceil(n / self.batch_size) if self.batch_size else 1)

    def partitions(self) -> list[dict]:
        return [{"topic": t, "partition": p, "from": o, "to": self.end[t][p], "messages": self.end[t][p] - o,
                 "earliest": self.earliest[t][p], "latest": self.latest[t][p]}
                for t, parts in sorted(self.start.items()) for p, o in sorted(parts.items())]

    def to_dict(self) -> dict:
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
    summary: object  # runner.Summary
    seconds: float = 0.0

    def to_dict(self) -> dict:
        s = self.summary.to_dict()
        return {"plan": self.plan.to_dict(), "dry_run": False,
                "summary": {k: s[k] for k in ("batches", "totals", "instants", "schema_changes", "ledger")}
                | ({"tables": s["tables"], "unrouted": s["unrouted"]} if self.plan.routes else {})
                | {"seconds": self.seconds}}


class Replayer:
    def __init__(self, cfg, reporter, from_spec: str, to_spec: str | None = None, into: str | None = None,
                 spark=None):
        self.cfg = cfg
        self.reporter = reporter
        self.from_spec = parse_replay_spec(from_spec, "--from")  # typos fail before Kafka or Spark
        self.to_spec = parse_replay_spec(to_spec or "latest", "--to")
        self.into = into
        self.spark = spark
        self._started: str | None = None  # kept across a resume so progress.json shows the first start

    def _spark(self):
        if self.spark is None:
            from cdcsync.engine.session import build_session

            conf = {k: v for k, v in self.cfg.spark.items() if k != "master"}
            self.spark = build_session(f"cdcsync-replay-{self.cfg.sink.table_name}",
                                       self.cfg.spark.get("master", "local[*]"), conf)
        return self.spark

    def _view(self) -> KafkaView:
        from cdcsync.kafka.security import from_properties

        kwargs = from_properties(self.cfg.source.properties).kafka_python_kwargs()
        return KafkaView(self.cfg.source.bootstrap_servers, kwargs, None)  # no group: a replay commits nothing

    def _committed(self) -> Offsets | None:
        if self.cfg.routes:  # routed runs keep one run-level record: a "writing" batch did not finish
            from cdcsync.engine import routing

            rec = routing.read_progress(self._spark(), self.cfg.run.checkpoint_dir)
            return (rec["end"] if rec["state"] == "done" else rec["start"]) if rec else None
        from cdcsync.sinks import hudi

        last = hudi.last_checkpoint(self._spark(), self.cfg.sink.path)
        return last["offsets"] if last else None

    def plan(self) -> Plan:
        """Resolve both bounds against the brokers now (Spark starts only for `committed`)."""
        from cdcsync.engine.runner import batch_budget

        cfg = self.cfg
        view = self._view()
        try:
            topics = view.resolve_topics(cfg.source.topics, cfg.source.topic_pattern)
            earliest, latest = view.earliest(topics), view.latest(topics)  # --to defaults to these end offsets
            start = resolve_replay_spec(self.from_spec, view, topics, earliest, latest, self._committed, "--from")
            end = resolve_replay_spec(self.to_spec, view, topics, earliest, latest, self._committed, "--to")
        finally:
            view.close()
        # a partition list names what to replay: partitions it leaves out get an empty range
        if self.from_spec.kind == "offsets":
            end = {t: {p: o for p, o in end[t].items() if p in start.get(t, {})} for t in start}
        if self.to_spec.kind == "offsets":
            start = {t: {p: o for p, o in start[t].items() if p in end.get(t, {})} for t in end}
        end = {t: {p: end.get(t, {}).get(p, o) for p, o in parts.items()} for t, parts in start.items()}
        replay_range(start, end, earliest, latest)
        main = cfg.sink.path.rstrip("/")
        target = (self.into or main).rstrip("/")  # --into the main path is the main table, with its guards
        rid = hashlib.sha1(f"{target}\n{self.from_spec.text}\n{self.to_spec.text}".encode()).hexdigest()[:12]
        return Plan(cfg.sink.table_name, target, target != main, self.from_spec.text, self.to_spec.text, rid,
                    f"{cfg.run.checkpoint_dir.rstrip('/')}/replay-{rid}", start, end, earliest, latest,
                    batch_budget(cfg.run), routes=len(cfg.routes))

    def run(self, plan: Plan, show=None) -> ReplayResult:
        """Resume an interrupted replay of the same arguments, show the plan, check writers, run the batches."""
        from cdcsync.engine.batch import TableState, run_batch, run_routed_batch
        from cdcsync.engine.columns import schema_from_json
        from cdcsync.engine.faults import maybe_crash
        from cdcsync.engine.runner import Runner, Summary, plan_end, table_spec
        from cdcsync.sinks import hudi

        t0 = time.monotonic()
        cfg, spark = self.cfg, self._spark()
        locks: list[WriterLock] = []
        try:
            own = WriterLock(spark, plan.replay_dir, WHAT)
            holder = own.holder()
            if holder:
                raise ConcurrentWriterError(
                    f"the same replay ({plan.replay_id}) is already running: pid {holder.get('pid')} on "
                    f"{holder.get('host')}", hint="wait for it to finish, or stop it and run this again to resume",
                    holder=holder)
            own.acquire(f"replay {plan.replay_id}")
            locks.append(own)
            self._resume(spark, plan)
            if show:
                show(plan)
            if cfg.masks:  # salts and keys stay out of printed plans, as in run
                from cdcsync.engine.masking import protect_plans

                protect_plans(spark, cfg.masks)
            if not plan.into:
                self._guard_main_table(spark, locks)
            state = TableState(spec=replace(table_spec(cfg), path=plan.target))
            states: dict[str, TableState] = {}  # [[route]]: one per routed table, made on first sight
            if cfg.routes:
                from cdcsync.engine.routing import check_patterns

                check_patterns(spark, cfg)
            routed_cfg = replace(cfg, sink=replace(cfg.sink, path=plan.target))
            last = None if cfg.routes else hudi.last_checkpoint(spark, cfg.sink.path)
            if last:  # the main table's columns: a replay lands the same types as run
                state.columns = schema_from_json(last["schema"])
            summary = Summary(cfg.sink.table_name, plan.target, plan.from_spec)
            bad_cfg = replace(cfg, run=replace(cfg.run, on_bad_record="skip")) \
                if cfg.run.on_bad_record == "dead-letter" else cfg  # the run already set those records aside
            on_bad = Runner(bad_cfg, self.reporter)._on_bad
            done = {t: dict(p) for t, p in plan.start.items()}
            self._save(spark, plan, done, "running")
            batch_id = 0
            while True:
                end = plan_end(done, plan.end, plan.batch_size)
                if end == done:
                    break
                if cfg.routes:  # same split as run; each table's columns come from the main table of its name
                    result = run_routed_batch(spark, routed_cfg, states, batch_id, done, end, self.reporter, on_bad,
                                              record_offsets=False, schema_base=cfg.sink.path)
                else:
                    result = run_batch(spark, cfg, state, batch_id, done, end, self.reporter, on_bad,
                                       record_offsets=False)
                maybe_crash("after_write", batch_id)
                summary.add(result)
                t = result.totals()
                self.reporter.event("replayed", batch=batch_id, instant=result.instant, read=t["messages"],
                                    upserted=t["upserted"], deleted=t["deleted"], skipped=t["skipped"], bad=t["bad"])
                done, batch_id = end, batch_id + 1
                self._save(spark, plan, done, "running")
                for lock in locks:
                    lock.heartbeat(every_s=0)
            self._save(spark, plan, done, "finished")
            summary.end_offsets = done
            return ReplayResult(plan, summary, round(time.monotonic() - t0, 3))
        finally:
            for lock in locks:
                lock.release()

    def _guard_main_table(self, spark, locks: list) -> None:
        cfg = self.cfg
        if not cfg.sink.primary_key and cfg.source.format not in _KEYED_FORMATS:
            raise ReplaySpecError(
                f"table {cfg.sink.table_name} has no primary key (insert-only {cfg.source.format}): replaying into "
                "it would add every replayed record a second time",
                hint="replay into a side table with --into <path>, or set sink.primary_key")
        if multi_writer_configured(cfg.sink.options):
            self.reporter.info("Hudi multi-writer locking is configured: writing alongside any running 'run'")
            return
        main = WriterLock(spark, cfg.run.checkpoint_dir, WHAT)
        holder = main.holder()
        if holder:
            raise ConcurrentWriterError(
                f"refusing to replay into table {cfg.sink.table_name}: {holder.get('what')} (pid {holder.get('pid')} "
                f"on {holder.get('host')}) is writing it now and Hudi multi-writer locking is not configured",
                hint="stop that run first, replay into a side table with --into <path>, or configure "
                "[sink.options] hoodie.write.concurrency.mode = \"optimistic_concurrency_control\" and "
                "hoodie.write.lock.provider", holder=holder)
        main.acquire(cfg.sink.table_name)  # a run started meanwhile is refused until the replay ends
        locks.append(main)

    def _resume(self, spark, plan: Plan) -> None:
        """An unfinished record of this replay: continue its fixed range from where it got to."""
        rec = checkpoint.read_json(spark, plan.replay_dir, PROGRESS_FILE)
        if not rec or rec.get("status") != "running":
            return
        done = checkpoint.int_keys(rec["done"])
        end = checkpoint.int_keys(rec["to"])
        replay_range(done, end, plan.earliest, plan.latest)  # retention may have passed it since the crash
        plan.start, plan.end, plan.resumed = done, end, True
        self._started = rec.get("started")
        self.reporter.info(f"resuming replay {plan.replay_id} (started {self._started}): "
                           f"{plan.messages} message(s) left of its range")

    def _save(self, spark, plan: Plan, done: Offsets, status: str) -> None:
        if not self._started:
            self._started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        checkpoint.write_json(spark, plan.replay_dir, PROGRESS_FILE, {
            "replay_id": plan.replay_id, "target": plan.target, "from_spec": plan.from_spec, "to_spec": plan.to_spec,
            "status": status, "started": self._started,
            "from": checkpoint.text_keys(plan.start), "to": checkpoint.text_keys(plan.end),
            "done": checkpoint.text_keys(done)})
