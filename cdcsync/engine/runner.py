"""The commit loop: resume from the table's last commit, plan a bounded batch, run it, commit, repeat.

Offsets live only in Hudi commit metadata (Hudi Streamer's model): the commit that holds a batch's rows holds
its end offsets, so a crash at any point re-reads exactly the uncommitted range.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field

from cdcsync.engine import checkpoint, routing
from cdcsync.engine.batch import BatchResult, TableState, bad_error, run_batch, run_routed_batch
from cdcsync.engine.columns import schema_from_json
from cdcsync.engine.faults import maybe_crash
from cdcsync.engine.lock import WriterLock, multi_writer_configured
from cdcsync.kafka.offsets import KafkaView, Offsets, resolve_start
from cdcsync.sinks import dead_letter, hudi

_COUNTS = ("messages", "upserted", "deleted", "skipped", "bad")  # per partition and per table in the summary


@dataclass
class Summary:
    table: str
    path: str
    started_from: str
    batches: int = 0
    totals: dict[str, int] = field(default_factory=lambda: {k: 0 for k in
                                                            ("messages", "rows", "upserted", "deleted",
                                                             "skipped", "bad")})
    instants: list[str] = field(default_factory=list)
    schema_changes: list[str] = field(default_factory=list)
    end_offsets: dict = field(default_factory=dict)
    lag: dict = field(default_factory=dict)
    ledger: dict = field(default_factory=dict)
    dead_letter_path: str | None = None
    seconds: float = 0.0
    stopped_by: str = "end of input"
    tables: dict = field(default_factory=dict)  # [[route]] runs: per target table, the counts of this run
    unrouted: int = 0

    def add(self, r: BatchResult) -> None:
        self.batches += 1
        for k, v in r.totals().items():
            self.totals[k] += v
        if r.instant:
            self.instants.append(r.instant)
        self.schema_changes += [c.describe() for c in r.changes]
        self.unrouted += r.unrouted
        for into, counts in ((self.tables, r.tables), (self.ledger, r.ledger)):
            for name, c in counts.items():
                acc = into.setdefault(name, dict.fromkeys(_COUNTS, 0))
                for k in acc:
                    acc[k] += c[k]

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


def table_spec(cfg) -> hudi.TableSpec:
    ordering = [cfg.sink.ordering_field] if cfg.sink.ordering_field else [hudi.ORDER]
    return hudi.TableSpec(
        path=cfg.sink.path, table_name=cfg.sink.table_name, table_type=cfg.sink.table_type,
        primary_key=list(cfg.sink.primary_key or []), partition_by=list(cfg.sink.partition_by),
        ordering_fields=ordering, options=dict(cfg.sink.options),
    )


def batch_budget(run_cfg) -> int | None:
    """Records per batch: max_records_per_batch, and at most one trigger interval's worth at the rate limit."""
    caps = [run_cfg.max_records_per_batch]
    if run_cfg.max_records_per_second:
        caps.append(max(1, int(run_cfg.max_records_per_second * max(_seconds(run_cfg.trigger_interval), 1.0))))
    caps = [c for c in caps if c]
    return min(caps) if caps else None


def plan_end(start: Offsets, latest: Offsets, max_records: int | None) -> Offsets:
    """End offsets of the next batch: everything available, or at most `max_records` shared by lag."""
    lags = {(t, p): max(0, latest[t][p] - o) for t, parts in start.items() for p, o in parts.items()}
    total = sum(lags.values())
    end = {t: dict(parts) for t, parts in start.items()}
    if total == 0:
        return end
    budget = total if not max_records or max_records >= total else max_records
    given = 0
    for (t, p), lag in sorted(lags.items()):
        share = lag if budget == total else (lag * budget) // total
        end[t][p] = start[t][p] + share
        given += share
    for (t, p), lag in sorted(lags.items(), key=lambda kv: -kv[1]):  # hand out rounding leftovers
        if given >= budget:
            break
        if end[t][p] < start[t][p] + lag:
            end[t][p] += 1
            given += 1
    return end


class Runner:
    def __init__(self, cfg, reporter, once: bool = False, spark=None):
        self.cfg = cfg
        self.reporter = reporter
        self.once = once
        self.spark = spark
        self._stop = False

    def _kafka_view(self) -> KafkaView:
        from cdcsync.kafka.security import from_properties

        kwargs = from_properties(self.cfg.source.properties).kafka_python_kwargs()
        return KafkaView(self.cfg.source.bootstrap_servers, kwargs, self.cfg.source.group_id)

    def _signals(self) -> None:
        def handler(signum, frame):
            if self._stop:
                raise KeyboardInterrupt
            self._stop = True
            self.reporter.info(f"{signal.Signals(signum).name}: finishing the batch in flight, then stopping "
                               "(again to abort)")

        self._saved_handlers = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}

    def run(self) -> Summary:
        t0 = time.monotonic()
        cfg = self.cfg
        view = self._kafka_view()
        try:
            topics = view.resolve_topics(cfg.source.topics, cfg.source.topic_pattern)
            if self.spark is None:
                from cdcsync.engine.session import build_session

                conf = {k: v for k, v in cfg.spark.items() if k != "master"}
                self.spark = build_session(f"cdcsync-{cfg.sink.table_name}", cfg.spark.get("master", "local[*]"), conf)
            self._signals()
            if cfg.masks:
                from cdcsync.engine.masking import protect_plans

                protect_plans(self.spark, cfg.masks)
            state = TableState(spec=table_spec(cfg))
            self.lock = WriterLock(self.spark, cfg.run.checkpoint_dir, "cdcsync run")
            if not multi_writer_configured(cfg.sink.options):
                self.lock.acquire(cfg.sink.table_name)
            routed = bool(cfg.routes)
            if routed:
                routing.check_patterns(self.spark, cfg)
            states: dict[str, TableState] = {}
            redo_end = None
            if routed:  # many tables: the run-level progress record (see engine.routing)
                last = routing.read_progress(self.spark, cfg.run.checkpoint_dir)
                if last:
                    done = last["state"] == "done"
                    last = {"offsets": last["end"] if done else last["start"],
                            "batch_id": last["batch_id"] - (0 if done else 1), "redo": None if done else last["end"]}
                    redo_end = last["redo"]
            else:
                last = hudi.last_checkpoint(self.spark, cfg.sink.path)
            if last and not routed:
                state.columns = schema_from_json(last["schema"])
            recorded = last["offsets"] if last else None
            how_recorded = None
            if not recorded:  # no commit yet: a start decided by an earlier run that read nothing still holds
                pending = checkpoint.read_start(self.spark, cfg.run.checkpoint_dir)
                if pending:
                    recorded, how_recorded = pending[0], f"start decided earlier ({pending[1]})"
            start, how = resolve_start(cfg.source, view, topics, recorded)
            how = how_recorded or how
            if not last and not how_recorded:
                checkpoint.write_start(self.spark, cfg.run.checkpoint_dir, start, how)
            batch_id = (last["batch_id"] + 1) if last else 0
            summary = Summary(cfg.sink.table_name, cfg.sink.path, how)
            self.reporter.event("start", table=cfg.sink.table_name, topics=",".join(topics), from_=how,
                                offsets=_compact(start))
            stop_at = view.latest(topics) if self.once else None
            while True:
                if cfg.source.topic_pattern and not self.once:
                    topics = view.resolve_topics(None, cfg.source.topic_pattern)
                    for t in topics:  # a topic that appeared mid-run starts at its beginning
                        start.setdefault(t, view.earliest([t])[t])
                latest = stop_at or view.latest(topics)
                for t, parts in latest.items():  # partitions added mid-run start at their beginning
                    for p in parts:
                        start.setdefault(t, {}).setdefault(p, view.earliest([t])[t][p])
                end = plan_end(start, latest, batch_budget(cfg.run))
                redo = redo_end is not None
                if redo:  # a routed batch cut short by a crash: the same range again
                    end = {t: {p: redo_end.get(t, {}).get(p, o) for p, o in ps.items()} for t, ps in start.items()}
                    redo_end = None
                if end == start:
                    if self.once or self._stop:
                        break
                    self._sleep(_seconds(cfg.run.trigger_interval))
                    if self._stop:
                        break
                    continue
                t_batch = time.monotonic()
                if routed:
                    routing.write_progress(self.spark, cfg.run.checkpoint_dir, batch_id, start, end, "writing")
                    result = run_routed_batch(self.spark, cfg, states, batch_id, start, end, self.reporter,
                                              self._on_bad, redo=redo)
                    maybe_crash("routed_before_done", batch_id)
                    routing.write_progress(self.spark, cfg.run.checkpoint_dir, batch_id, start, end, "done")
                else:
                    result = run_batch(self.spark, cfg, state, batch_id, start, end, self.reporter, self._on_bad)
                maybe_crash("after_write", batch_id)
                view.commit_group(end)
                self.lock.heartbeat(every_s=0)
                summary.add(result)
                self._report(result, latest, time.monotonic() - t_batch)
                start, batch_id = end, batch_id + 1
                self._check_bad_budget(summary)
                self._pace(summary.totals["messages"], t0)
                if self._stop:
                    summary.stopped_by = "signal"
                    break
                if not self.once:
                    self._sleep(max(0.0, _seconds(cfg.run.trigger_interval) - (time.monotonic() - t_batch)))
            summary.end_offsets = {t: dict(p) for t, p in start.items()}
            latest_now = view.latest(list(start))
            summary.lag = {f"{t}/{p}": latest_now[t][p] - o for t, parts in start.items() for p, o in parts.items()}
            summary.dead_letter_path = dead_letter.path_for(cfg) if summary.totals["bad"] and \
                cfg.run.on_bad_record == "dead-letter" else None
            summary.seconds = round(time.monotonic() - t0, 3)
            return summary
        finally:
            if getattr(self, "lock", None):
                self.lock.release()
            for sig, old in getattr(self, "_saved_handlers", {}).items():
                signal.signal(sig, old)
            view.close()

    def _pace(self, records: int, t0: float) -> None:
        """With max_records_per_second, wait until the records read so far fit the rate since the start."""
        rate = self.cfg.run.max_records_per_second
        if rate:
            self._sleep(records / rate - (time.monotonic() - t0))

    def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._stop and time.monotonic() < deadline:
            self.lock.heartbeat()
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))

    def _on_bad(self, bad_df, batch_id: int, count: int) -> list[dict]:
        from pyspark.sql import functions as F

        policy = self.cfg.run.on_bad_record
        first = (bad_df.orderBy("_kafka_partition", "_kafka_offset", "_pos").limit(5)
                 .select("_kafka_topic", "_kafka_partition", "_kafka_offset", "_reason", "_reason_detail",
                         F.substring(F.col("_raw_value"), 1, 200).alias("head")).collect())
        samples = [{"topic": r[0], "partition": r[1], "offset": r[2], "reason": r[3], "detail": r[4],
                    "value_preview": bytes(r[5] or b"").decode("utf-8", "backslashreplace")} for r in first]
        if policy == "fail":
            raise bad_error(samples[0])
        if policy == "dead-letter":
            dead_letter.write(self.cfg, bad_df, batch_id)
        for s in samples[:3]:
            self.reporter.warn(f"{'dead-lettered' if policy == 'dead-letter' else 'skipped'} bad record "
                               f"{s['topic']}/{s['partition']}@{s['offset']}: {s['reason']}: {s['detail']}")
        return samples

    def _check_bad_budget(self, summary: Summary) -> None:
        limit = self.cfg.run.max_bad_records
        if limit is not None and summary.totals["bad"] > limit:
            from cdcsync.errors import DecodeError

            raise DecodeError(
                f"{summary.totals['bad']} bad records so far, more than run.max_bad_records = {limit}; "
                "stopped after committing the batch that crossed it",
                hint="inspect them with 'cdcsync dead-letter list', fix the source, then run again",
            )

    def _report(self, r: BatchResult, latest: Offsets, seconds: float) -> None:
        t = r.totals()
        lag = {f"{tp}": latest[tp.rsplit('/', 1)[0]][int(tp.rsplit('/', 1)[1])] - r.end[tp.rsplit('/', 1)[0]][
            int(tp.rsplit('/', 1)[1])] for tp in r.ledger}
        self.reporter.event("batch", id=r.batch_id, instant=r.instant, read=t["messages"], upserted=t["upserted"],
                            deleted=t["deleted"], skipped=t["skipped"], bad=t["bad"], lag=lag,
                            seconds=round(seconds, 2),
                            **({"tables": {n: c["upserted"] + c["deleted"] for n, c in r.tables.items()},
                                "unrouted": r.unrouted} if self.cfg.routes else {}))
        for c in r.changes:
            self.reporter.info(f"schema: {c.describe()}")


def _compact(offsets: Offsets) -> str:
    return ";".join(f"{t}/{p}:{o}" for t, parts in offsets.items() for p, o in sorted(parts.items()))


def _seconds(text: str) -> float:
    import re

    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)\s*$", text)
    if not m:
        return 10.0
    n, unit = float(m.group(1)), m.group(2)
    return n * {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600}[unit]
