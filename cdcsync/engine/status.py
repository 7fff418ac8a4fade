"""`cdcsync status`: where a config's tables stand, read without a JVM: the Hudi timeline and commit metadata (what
was committed, up to which offsets, when), the brokers' end offsets (lag), pending compactions, dead letters by
reason, and the writer lock. What a cron job or a monitoring probe calls."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from cdcsync.config.model import dead_letter_path
from cdcsync.engine import lock
from cdcsync.engine.checkpoint import ROUTES_PROGRESS_FILE
from cdcsync.kafka.offsets import Offsets
from cdcsync.sinks import hudi, timeline


def status(cfg, view, recent: int = 5) -> dict:
    """The config's state: committed offsets and lag (run-wide), then each table's commits."""
    now = dt.datetime.now(dt.UTC)
    if cfg.routes:
        committed = _routed_offsets(cfg)
        tables = [_table(str(p), now, recent) for p in _hudi_tables_under(cfg.sink.path)]
    else:
        tables = [_table(cfg.sink.path, now, recent)]
        last = tables[0]["last_commit"]
        committed = Offsets.from_json(last["offsets"]) if last else None
    topics = view.resolve_topics(cfg.source.topics, cfg.source.topic_pattern)
    latest, earliest = view.latest(topics), view.earliest(topics)
    base = committed or Offsets()  # nothing committed yet: all that the topic holds is behind
    lag = {f"{t}/{p}": max(0, end - base.get_offset(t, p, earliest[t][p])) for t, p, end in latest.entries()}
    return {
        "config": str(cfg.path), "table": cfg.sink.table_name, "table_type": cfg.sink.table_type,
        "committed_offsets": committed.to_json() if committed else None,
        "end_offsets": latest.to_json(),
        "lag": lag, "lag_total": sum(lag.values()),
        "tables": tables,
        "dead_letters": _dead_letters(dead_letter_path(cfg)),
        "writer": lock.read_local(cfg.run.checkpoint_dir),
    }


def _table(path: str, now: dt.datetime, recent: int) -> dict:
    tl = timeline.Timeline(path)
    last = tl.last_sync_commit()
    out = {"path": path, "exists": bool(tl.instants), "last_commit": None,
           "recent_commits": [_commit(c) for c in tl.commits(newest=recent)],
           "pending_compactions": [i.requested for i in tl.pending("compaction")],
           "inflight_writes": [i.requested for i in tl.pending(*timeline.WRITE_ACTIONS)]}
    if last:
        done = last.instant.completed_at
        out["last_commit"] = {**_commit(last), "offsets": last.offsets.to_json(),
                              "age_seconds": round((now - done).total_seconds(), 1)}
    return out


def _commit(c: timeline.Commit) -> dict:
    ledger = c.meta_json(hudi.META_LEDGER) or {}
    classes = Counter()
    for counts in ledger.values():
        classes.update({k: v for k, v in counts.items() if isinstance(v, int)})
    return {"instant": c.instant.requested, "action": c.instant.action,
            "completed": c.instant.completed_at.astimezone(dt.UTC).isoformat(timespec="seconds"),
            "batch_id": c.batch_id, "replay": hudi.META_REPLAY in c.extra,
            "records": dict(classes) or None, "rows_written": c.stats["written"], "rows_deleted": c.stats["deletes"]}


def _dead_letters(path: str) -> dict | None:
    """Dead-lettered records by reason (the newest commit of each batch: a re-read batch is counted once), and
    how many were replayed."""
    commits = timeline.Timeline(path).commits()
    if not commits:
        return None
    by_batch: dict[int | None, dict] = {}
    replayed = 0
    for c in commits:  # newest first
        if hudi.META_DL_REPLAYED in c.extra:
            replayed += int(c.extra[hudi.META_DL_REPLAYED])
        elif hudi.META_DL_REASONS in c.extra and c.batch_id not in by_batch:
            by_batch[c.batch_id] = c.meta_json(hudi.META_DL_REASONS)
    reasons = Counter()
    for r in by_batch.values():
        reasons.update(r)
    return {"path": path, "total": sum(reasons.values()), "by_reason": dict(reasons.most_common()),
            "replayed": replayed}


def _routed_offsets(cfg) -> Offsets | None:
    """A routed config's offsets are run-wide: the progress record beside the tables (engine.routing)."""
    import json

    path = timeline.local_path(cfg.run.checkpoint_dir) / ROUTES_PROGRESS_FILE
    for p in (path, path.with_name(path.name + ".tmp")):
        try:
            rec = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        return Offsets.from_json(rec["end"] if rec["state"] == "done" else rec["start"])
    return None


def _hudi_tables_under(sink_path: str) -> list[Path]:
    root = timeline.local_path(sink_path)
    return sorted(d for d in root.iterdir() if (d / ".hoodie").is_dir()) if root.is_dir() else []
