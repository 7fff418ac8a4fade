"""MERGE_ON_READ compaction off the write path (sinks/compaction.py decides when a table compacts so): a thread of
the same Spark application executes the pending plans, in a scheduler pool of its own, while the next batches keep
committing. And what the tables' compactions did, for the metrics (`Compactions`)."""

from __future__ import annotations

import datetime as dt
import threading
from typing import TYPE_CHECKING, Any

from cdcsync import storage
from cdcsync.sinks import timeline
from cdcsync.sinks.compaction import LOCK_PROVIDER, MAX_DELTA_COMMITS, lock_provider
from cdcsync.sinks.hudi import pending_compactions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.reporting import Reporter

POOL = "cdcsync-compaction"  # the FAIR scheduler pool of the compactor's jobs (runtime/fairscheduler.xml)
_INDEX = ("hoodie.index.", "hoodie.bucket.index.", "hoodie.simple.index.", "hoodie.global.simple.index.",
          "hoodie.bloom.index.", "hoodie.record.index.")  # the writer's look-up of keys: not the compactor's
BACKLOG_FACTOR = 2  # delta commits a running compaction may fall behind, in units of N, before writes wait for it


class Compactor:
    """The background compactor of one table: `before_write` before each write, `poke` after it (and at start),
    `drain` when the run ends."""

    def __init__(self, spark: SparkSession, path: str, options: dict[str, str], reporter: Reporter) -> None:
        """`options`: the table's write options (sinks/hudi.write_options)."""
        self.spark, self.path, self.reporter = spark, path, reporter
        self.every = int(options.get(MAX_DELTA_COMMITS, "5"))
        # the procedure builds its own write client: it gets the writer's lock provider, metadata table and table
        # services' settings; not its index (compaction looks up no key, and Hudi's bucket-index check wants the key
        # fields, which the procedure's comma-separated option string cannot carry for a composite key)
        passed = {k: v for k, v in options.items() if "," not in v and k.startswith("hoodie.")
                  and not k.startswith(("hoodie.datasource.write.", "hoodie.table.name", *_INDEX))}
        passed[LOCK_PROVIDER] = lock_provider(options)
        self.options = ",".join(f"{k}={v}" for k, v in sorted(passed.items()))
        self._thread: threading.Thread | None = None
        self._behind = 0  # delta commits since the running compaction started
        self._cancelled = False

    @property
    def running(self) -> bool:
        return self._alive() is not None

    def _alive(self) -> threading.Thread | None:
        """The thread of the running compaction; None when none runs."""
        thread = self._thread
        return thread if thread is not None and thread.is_alive() else None

    def before_write(self) -> None:
        """Writes wait for a compaction that fell BACKLOG_FACTOR × N delta commits behind: log files stay bounded."""
        thread = self._alive()
        if thread is not None and self._behind >= BACKLOG_FACTOR * self.every:
            self.reporter.info(f"waiting for the compaction of {self.path} ({self._behind} delta commits behind)")
            thread.join()

    def poke(self) -> None:
        """Start executing the pending plans when the compactor is idle (a plan a killed run left is one too)."""
        if self.running:
            self._behind += 1
            return
        if not pending_compactions(self.spark, self.path):
            return
        self._behind = 0
        self._thread = threading.Thread(target=self._execute, name=f"cdcsync-compaction-{self.path}", daemon=True)
        self._thread.start()

    def drain(self, cancel: bool = False) -> None:
        """Wait for the running compaction; `cancel`: stop it instead (a stop signal), leaving its plan to the next
        run, which executes it again."""
        thread = self._alive()
        if thread is None:
            return
        if cancel:
            self._cancelled = True
            self.spark.sparkContext.cancelJobGroup(self._group)
        thread.join()

    @property
    def _group(self) -> str:
        return f"{POOL}:{self.path}"

    def _execute(self) -> None:
        sc = self.spark.sparkContext
        sc.setLocalProperty("spark.scheduler.pool", POOL)
        sc.setJobGroup(self._group, f"compaction of {self.path}", interruptOnCancel=True)
        try:
            self.spark.sql(f"CALL run_compaction(op => 'execute', path => '{self.path}', "
                           f"options => '{self.options}')").collect()
        except Exception as e:  # the plan stays pending: the next commit (or run) starts it again
            from cdcsync import jvm_errors

            if self._cancelled:
                return
            self.reporter.warn(f"compaction of {self.path} failed, will retry after the next commit: "
                               f"{jvm_errors.summary(e)}")


class Compactions:
    """Compactions scheduled and completed on MERGE_ON_READ tables since the run started, read from each table's
    timeline after a batch, whoever ran them (inline, the background compactor, another process): a plan is a
    `compaction` instant, its completion a `commit` of the same requested time."""

    def __init__(self, since: dt.datetime | None = None) -> None:
        self.since = since or dt.datetime.now().astimezone()
        self._files = storage.Files()
        self._hadoop: HadoopFiles | None = None
        self._pending: dict[str, str] = {}  # table -> path: a plan not completed at the last look
        self._counted: dict[str, set[tuple[str, str]]] = {}  # table -> ("scheduled" | "completed", requested)

    def look(self, tables: dict[str, str], spark: SparkSession) -> tuple[list[str], list[tuple[str, float]]]:
        """What happened since the last look on `tables` (name: path; those a batch wrote) and on the tables with a
        plan pending (a background compaction completes after its batch): the tables of each plan scheduled, and of
        each compaction completed with its seconds from scheduled to completed."""
        scheduled, completed = [], []
        for name, path in sorted((self._pending | tables).items()):
            # instants only lists (entries), yet its parameter is typed storage.Files: to be storage.Listing
            listed = timeline.instants(path, self._reader(path, spark))
            plans = {i.requested: i for i in listed if i.action == "compaction"}
            # requested: (scheduled, completed) of each completed compaction
            done = {i.requested: (i.requested_at, at) for i in listed
                    if i.action == "commit" and i.requested in plans and (at := i.completed_at) is not None}
            now = {("scheduled", k) for k, i in plans.items() if i.requested_at >= self.since}
            now |= {("completed", k) for k, (_, at) in done.items() if at >= self.since}
            for what, k in sorted(now - self._counted.get(name, set())):
                if what == "scheduled":
                    scheduled.append(name)
                else:
                    completed.append((name, (done[k][1] - done[k][0]).total_seconds()))
            self._counted[name] = now  # only what the timeline still lists: an archived instant never returns
            if plans.keys() - done.keys():
                self._pending[name] = path
            else:
                self._pending.pop(name, None)
        return scheduled, completed

    def _reader(self, path: str, spark: SparkSession) -> storage.Listing:
        """A local table's timeline is listed directly; any other Hadoop path (s3a://, hdfs://, …) as its writer
        reaches it, through the session's file systems."""
        if storage.is_local(path):
            return self._files
        if self._hadoop is None:
            self._hadoop = HadoopFiles(spark)
        return self._hadoop


class HadoopFiles:
    """`storage.Files.entries` through the Spark session's Hadoop file systems: any scheme the writer reaches."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def entries(self, directory: str) -> dict[str, bool]:
        """{name: is a directory} of what lies directly under `directory`; empty when it does not exist."""
        jvm: Any = self.spark._jvm  # py4j's view: set once a session exists
        folder = jvm.org.apache.hadoop.fs.Path(directory)
        fs = folder.getFileSystem(self.spark._jsc.hadoopConfiguration())
        if not fs.exists(folder):
            return {}
        return {s.getPath().getName(): s.isDirectory() for s in fs.listStatus(folder)}
