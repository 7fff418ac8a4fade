"""MERGE_ON_READ compaction off the write path (sinks/compaction.py decides when a table compacts so): a thread of
the same Spark application executes the pending plans, in a scheduler pool of its own, while the next batches keep
committing."""

from __future__ import annotations

import threading

from cdcsync.sinks.compaction import LOCK_PROVIDER, MAX_DELTA_COMMITS, lock_provider
from cdcsync.sinks.hudi import pending_compactions

POOL = "cdcsync-compaction"  # the FAIR scheduler pool of the compactor's jobs (engine/fairscheduler.xml)
_INDEX = ("hoodie.index.", "hoodie.bucket.index.", "hoodie.simple.index.", "hoodie.global.simple.index.",
          "hoodie.bloom.index.", "hoodie.record.index.")  # the writer's look-up of keys: not the compactor's
BACKLOG_FACTOR = 2  # delta commits a running compaction may fall behind, in units of N, before writes wait for it


class Compactor:
    """The background compactor of one table: `before_write` before each write, `poke` after it (and at start),
    `drain` when the run ends."""

    def __init__(self, spark, path: str, options: dict[str, str], reporter):
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
        return self._thread is not None and self._thread.is_alive()

    def before_write(self) -> None:
        """Writes wait for a compaction that fell BACKLOG_FACTOR × N delta commits behind: log files stay bounded."""
        if self.running and self._behind >= BACKLOG_FACTOR * self.every:
            self.reporter.info(f"waiting for the compaction of {self.path} ({self._behind} delta commits behind)")
            self._thread.join()

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
        if not self.running:
            return
        if cancel:
            self._cancelled = True
            self.spark.sparkContext.cancelJobGroup(self._group)
        self._thread.join()

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
