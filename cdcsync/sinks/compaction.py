"""How a MERGE_ON_READ table compacts, and the Hudi write options that make it so. Async: each write only schedules
a compaction plan (Hudi schedules one after N delta commits, and none while one is pending) and runtime/compactor.py
executes it in the background. One lock provider shared by the writer and the compactor (Hudi's
InProcessLockProvider unless [sink.options] name one) serializes their commits.

Mode, from [sink.options] in Hudi's vocabulary (`compaction_mode`):
- async (default): as above;
- inline: `hoodie.compact.inline = true`, or `hoodie.datasource.compaction.async.enable = false` — a write that
  reaches N delta commits compacts before it returns;
- external: `hoodie.datasource.compaction.async.enable = false` and `hoodie.compact.inline = false` — another
  process compacts; cdcsync neither schedules nor executes.
"""

from __future__ import annotations

ASYNC, INLINE, EXTERNAL = "async", "inline", "external"
ASYNC_ENABLE = "hoodie.datasource.compaction.async.enable"
INLINE_KEY = "hoodie.compact.inline"
MAX_DELTA_COMMITS = "hoodie.compact.inline.max.delta.commits"
LOCK_PROVIDER = "hoodie.write.lock.provider"
IN_PROCESS_LOCK = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"


def compaction_mode(table_type: str, options: dict[str, str]) -> str | None:
    """How a table of `table_type` with [sink.options] `options` compacts (None: it does not, COPY_ON_WRITE)."""
    if table_type != "MERGE_ON_READ":
        return None
    inline = options.get(INLINE_KEY, "").lower()
    if inline == "true":
        return INLINE
    if options.get(ASYNC_ENABLE, "").lower() == "false":
        return EXTERNAL if inline == "false" else INLINE
    return ASYNC


def lock_provider(options: dict[str, str]) -> str:
    """The lock provider the writer and the compactor share: [sink.options]' own (multi-writer), else in-process."""
    return options.get(LOCK_PROVIDER, IN_PROCESS_LOCK)


def write_options(mode: str | None) -> dict[str, str]:
    """The Hudi write options that make `mode` happen; [sink.options] are applied after them (a lock provider
    named there wins, and the compactor takes the same one: `lock_provider`)."""
    if mode is None:
        return {}
    # planning from the partitions written since the last compaction takes a first load's bulk_insert (a commit on
    # a MERGE_ON_READ table) for a compaction and fails reading its plan (a warning each time); plan from all
    base = {"hoodie.table.services.incremental.enabled": "false"}
    if mode == ASYNC:
        return base | {INLINE_KEY: "false", "hoodie.compact.schedule.inline": "true",
                       LOCK_PROVIDER: IN_PROCESS_LOCK}
    return base | {INLINE_KEY: "true" if mode == INLINE else "false"}
