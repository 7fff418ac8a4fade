"""`run`'s Prometheus metrics and health check: `[run] metrics_port` (or `--metrics-port`) serves `/metrics` (text
format) and `/healthz` from a thread of the run's process; `run --once --metrics-textfile` writes the run's metrics to
a file for node_exporter's textfile collector at its end. The run loop tells this module what happened; nothing
here touches Spark."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families

from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.offsets import Gap, Offsets, split_tp, tp_key
from cdcsync.model.batch import CLASSES, BatchResult
from cdcsync.model.progress import Isolation

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric

_BATCH_BUCKETS = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)
LAST_SUCCESS = "cdcsync_last_success_timestamp_seconds"  # the textfile's own series (a batch job's key metric)
# why a routed table's write is set aside (model.table_failure): at 0 from a table's first sight, so an alert's
# increase() sees its first failure
FAILURE_REASONS = ("sink_write", "schema_incompatible", "internal")
_EXIT_NAMES = frozenset(c.name.lower() for c in ExitCode)


class RunMetrics:
    """The metrics of one run of one config ("table" label: the config's table, or a routed table)."""

    def __init__(self, table: str, stuck_after_s: float, routed: bool = False) -> None:
        """`table`: [sink] table_name; `routed`: the config has [[route]]s, whose tables get series of their own."""
        self.table, self.stuck_after_s, self.routed = table, stuck_after_s, routed
        self.registry = r = CollectorRegistry()
        self.records = Counter("cdcsync_records", "Records (rows) by the class they ended in",
                               ["table", "topic", "partition", "class"], registry=r)
        self.messages = Counter("cdcsync_messages", "Kafka messages read and committed",
                                ["table", "topic", "partition"], registry=r)
        self.batches = Counter("cdcsync_batches", "Batches committed", ["table"], registry=r)
        self.batch_seconds = Histogram("cdcsync_batch_duration_seconds", "Time from planning a batch to its commit",
                                       ["table"], buckets=_BATCH_BUCKETS, registry=r)
        self.stage_seconds = Histogram("cdcsync_batch_stage_duration_seconds", "Time a batch spent in each stage "
                                       "(read_decode: Kafka read and decoding; dead_letter; write: the Hudi commit)",
                                       ["table", "stage"], buckets=_BATCH_BUCKETS, registry=r)
        self.commits = Counter("cdcsync_hudi_commits", "Hudi commits written by cdcsync (one per batch and table)",
                               ["table"], registry=r)
        self.compactions_scheduled = Counter("cdcsync_hudi_compactions_scheduled", "Hudi compaction plans "
                                             "scheduled on the table", ["table"], registry=r)
        self.compactions = Counter("cdcsync_hudi_compactions", "Hudi compactions completed on the table",
                                   ["table"], registry=r)
        self.compaction_seconds = Histogram("cdcsync_hudi_compaction_duration_seconds",
                                            "Hudi compactions, scheduled to completed", ["table"],
                                            buckets=_BATCH_BUCKETS, registry=r)
        self.dead_letters = Counter("cdcsync_dead_letter_records", "Records written to the dead-letter table",
                                    ["table"], registry=r)
        self.lost_records = Counter("cdcsync_data_loss_records", "Messages gone from Kafka before they were read, "
                                    'gone past with on_data_loss = "skip"', ["topic", "partition"], registry=r)
        self.lost_gaps = Counter("cdcsync_data_loss_gaps", 'Offset gaps gone past with on_data_loss = "skip" (a '
                                 "re-created topic's counts one, its lost messages unknown)", ["topic", "partition"],
                                 registry=r)
        self.table_rows = Counter("cdcsync_table_rows", "Rows by class in each table the run writes (routed: "
                                  "each target table)", ["table", "class"], registry=r)
        self.table_lag = Gauge("cdcsync_table_lag_messages", "Messages past the table's position: the run's, or a "
                               "routed table's own while it is set aside after a failed write", ["table"], registry=r)
        self.table_failures = Counter("cdcsync_table_write_failures", "Writes of a routed table that failed and "
                                      "were set aside, by the exit code's name the run would have stopped with",
                                      ["table", "reason"], registry=r)
        self.schema_changes = Counter("cdcsync_schema_changes", "Column changes applied to the table",
                                      ["table"], registry=r)
        self.lag = Gauge("cdcsync_consumer_lag_messages", "Messages behind the partition's end offset",
                         ["topic", "partition"], registry=r)
        self.lag_seconds = Gauge("cdcsync_consumer_lag_seconds", "Age of the newest committed message while the "
                                 "partition is behind (0 when it is not): an upper bound of the oldest pending "
                                 "message's wait", ["topic", "partition"], registry=r)
        self.last_commit = Gauge("cdcsync_last_commit_timestamp_seconds", "When the last batch committed",
                                 ["table"], registry=r)
        self.freshness = Gauge("cdcsync_freshness_seconds", "Now minus the newest committed message's Kafka "
                               "timestamp", ["table"], registry=r)
        self.source_up = Gauge("cdcsync_source_available", "1 while the brokers answer, 0 during an outage",
                               registry=r)
        self.source_up.set(1)
        self._source_up = True
        self.outages = Counter("cdcsync_source_outages", "Times the brokers stopped answering mid-run", registry=r)
        self.loop_beat = Gauge("cdcsync_loop_heartbeat_timestamp_seconds", "The loop's last sign of life",
                               registry=r)
        self.started = Gauge("cdcsync_start_time_seconds", "When this run started (a restart resets it)",
                             registry=r)
        self.started.set_to_current_time()
        self._newest_ms: dict[str, int] = {}  # "topic/partition" -> newest committed Kafka timestamp
        self._latest: Offsets | None = None  # the end offsets last seen
        self._standing: Isolation | None = None  # a routed run's: where its tables stand after the last batch
        self._tables: set[str] = set() if routed else {table}  # those with a lag series
        self.freshness.labels(table).set_function(self._freshness)
        self._last_beat = time.monotonic()
        self._last_commit_wall: float | None = None
        self._server: ThreadingHTTPServer | None = None
        self.textfile: Path | None = None  # run --once --metrics-textfile
        self.beat()

    # --- what the loop reports ----------------------------------------------------------------------------
    def beat(self) -> None:
        self._last_beat = time.monotonic()
        self.loop_beat.set_to_current_time()

    def batch_committed(self, r: BatchResult, seconds: float) -> None:
        for tp, c in r.ledger.items():
            topic, part = split_tp(tp)
            self.messages.labels(self.table, topic, str(part)).inc(c.get("messages", 0))
            for k in CLASSES:
                if c.get(k):
                    self.records.labels(self.table, topic, str(part), k).inc(c[k])
            if c.get("newest_ms"):
                self._newest_ms[tp] = max(self._newest_ms.get(tp, 0), c["newest_ms"])
        written = {n: c for n, c in r.tables.items() if n not in r.failed} if self.routed else {self.table: r.totals()}
        for name, c in written.items():
            self._seen(name)
            self.commits.labels(name).inc()
            for k in CLASSES:
                if c.get(k):
                    self.table_rows.labels(name, k).inc(c[k])
        for name, error in r.failed.items():
            self._seen(name)
            self.table_failures.labels(name, failure_reason(error)).inc()
        if r.standing is not None:
            self._standing = r.standing
            for name in r.standing.tables:
                self._seen(name)
        self.batches.labels(self.table).inc()
        self.batch_seconds.labels(self.table).observe(seconds)
        for stage, took in r.stages.items():
            self.stage_seconds.labels(self.table, stage).observe(took)
        if r.changes:
            self.schema_changes.labels(self.table).inc(len(r.changes))
        self.last_commit.labels(self.table).set_to_current_time()
        self._last_commit_wall = time.time()
        if self._latest is not None:  # what is left past the batch (a --once run's last batch plans no other)
            self.lag_seen(r.end, self._latest)
        self.beat()

    def _seen(self, name: str) -> None:
        if name not in self._tables:
            self._tables.add(name)
            for reason in FAILURE_REASONS:
                self.table_failures.labels(name, reason)

    def _freshness(self) -> float:
        newest = max(self._newest_ms.values(), default=0)
        return max(0.0, time.time() - newest / 1000) if newest else float("nan")

    def dead_lettered(self, n: int) -> None:
        if n:
            self.dead_letters.labels(self.table).inc(n)

    def data_lost(self, gaps: list[Gap]) -> None:
        for g in gaps:
            self.lost_gaps.labels(g.topic, str(g.partition)).inc()
            self.lost_records.labels(g.topic, str(g.partition)).inc(g.records)

    def lag_seen(self, committed: Offsets, latest: Offsets) -> None:
        now = time.time()
        self._latest = latest
        for t, p, end in latest.entries():
            behind = max(0, end - committed.get_offset(t, p, end))
            self.lag.labels(t, str(p)).set(behind)
            newest = self._newest_ms.get(tp_key(t, p))
            self.lag_seconds.labels(t, str(p)).set(max(0.0, now - newest / 1000) if behind and newest else 0.0)
        fresh = self._standing.fresh if self._standing else committed
        held = self._standing.tables if self._standing else {}
        for name in self._tables:
            self.table_lag.labels(name).set(table_lag(held[name].offsets if name in held else fresh, committed,
                                                      latest))

    def source_available(self, up: bool) -> None:
        if not up and self._source_up:
            self.outages.inc()
        self._source_up = up
        self.source_up.set(1 if up else 0)

    @property
    def observed(self) -> bool:
        """Will anyone read what the loop reports: /metrics served, or a textfile to write at the end?"""
        return self._server is not None or self.textfile is not None

    def compaction_scheduled(self, table: str) -> None:
        self.compactions_scheduled.labels(table).inc()

    def compaction_done(self, table: str, seconds: float) -> None:
        self.compactions.labels(table).inc()
        self.compaction_seconds.labels(table).observe(seconds)

    # --- /healthz ---------------------------------------------------------------------------------------------
    def health(self) -> tuple[bool, dict[str, Any]]:
        idle = time.monotonic() - self._last_beat
        ok = idle <= self.stuck_after_s
        return ok, {"status": "ok" if ok else "stuck", "loop_idle_seconds": round(idle, 1),
                    "stuck_after_seconds": self.stuck_after_s, "last_commit": self._last_commit_wall}

    # --- the HTTP endpoint -------------------------------------------------------------------------------------
    def serve(self, host: str, port: int) -> int:
        """Serve /metrics and /healthz on a daemon thread; returns the port (an ephemeral one when `port` is 0)."""
        metrics = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
                if self.path.split("?")[0] == "/metrics":
                    self._send(200, CONTENT_TYPE_LATEST, generate_latest(metrics.registry))
                elif self.path.split("?")[0] == "/healthz":
                    ok, body = metrics.health()
                    self._send(200 if ok else 503, "application/json", json.dumps(body).encode())
                else:
                    self._send(404, "text/plain", b"/metrics or /healthz\n")

            def _send(self, code: int, ctype: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:  # scrapes are not news on stderr
                pass

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="cdcsync-metrics", daemon=True).start()
        return self._server.server_address[1]

    def close(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    # --- the textfile of a run --once (a cron job) ------------------------------------------------------------
    def write_textfile(self, succeeded: bool) -> None:
        """This run's series in `self.textfile`, replaced atomically, plus cdcsync_last_success_timestamp_seconds: now
        when the run succeeded, else carried from the file's previous version (0: no run has succeeded), as
        Prometheus' guidance for batch jobs has it. Every series carries a table label: node_exporter merges the
        files of every config in its folder, and the series /metrics gives no table label would collide there.
        Nothing without a textfile to write."""
        if self.textfile is None:
            return
        last = time.time() if succeeded else _last_success(self.textfile, self.table)
        write_atomically(self.textfile, generate_latest(_Textfile(self.registry, self.table, last)))


def table_lag(position: Offsets, committed: Offsets, latest: Offsets) -> int:
    """Messages from a table's `position` to `latest`, over every partition; one `position` lacks (it appeared
    since) counts from `committed`."""
    return sum(max(0, end - position.get_offset(t, p, committed.get_offset(t, p, end)))
               for t, p, end in latest.entries())


def failure_reason(error: str) -> str:
    """The reason of a BatchResult.failed entry (model.table_failure's "<reason>: …"); "unknown" for other text."""
    head = error.partition(": ")[0]
    return head if head in _EXIT_NAMES else "unknown"


class _Textfile:
    """A collector: the run's registry with the config's table label added where a series has none, and the last
    success."""

    def __init__(self, registry: CollectorRegistry, table: str, last_success: float) -> None:
        self.registry, self.table, self.last_success = registry, table, last_success

    def collect(self) -> Iterator[Metric]:
        for family in self.registry.collect():
            family.samples = [s._replace(labels={"table": self.table, **s.labels}) for s in family.samples]
            yield family
        last = GaugeMetricFamily(LAST_SUCCESS, "When a run --once of this table last succeeded (0: none has)",
                                 labels=["table"])
        last.add_metric([self.table], self.last_success)
        yield last


def _last_success(path: Path, table: str) -> float:
    """The last success an earlier run wrote to `path`; 0 when there is none."""
    try:
        text = path.read_text()
        return next((s.value for f in text_string_to_metric_families(text) for s in f.samples
                     if s.name == LAST_SUCCESS and s.labels.get("table") == table), 0.0)
    except (OSError, UnicodeDecodeError, ValueError):  # no earlier file, or not one cdcsync wrote: no success known
        return 0.0


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` by `data` so that a reader sees the old file or the new one, whole, even after a crash or a
    power cut: a temporary file in the same folder (a dot file not named *.prom, which the collector skips),
    fsynced, renamed over `path`, then the folder fsynced so the rename itself is on disk (prometheus_client's
    write_to_textfile renames without an fsync)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        # 0o666 under the umask, as open() creates: node_exporter's user must be able to read it
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
