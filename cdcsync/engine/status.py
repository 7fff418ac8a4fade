"""`cdcsync status`: where a config's tables stand, read without a JVM: the Hudi timeline and commit metadata (what
was committed, up to which offsets, when), the brokers' end offsets (lag), pending compactions, dead letters by
reason, offset gaps a run went past (on_data_loss = "skip"), routed tables set aside (on_table_failure = "isolate")
and the writer lock. What a cron job or a monitoring probe calls."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import TYPE_CHECKING, Any, TypedDict

from cdcsync import storage
from cdcsync.config.model import dead_letter_path, routed_path
from cdcsync.engine.checkpoint import ROUTES_PROGRESS_FILE
from cdcsync.engine.resume import ResumePoint
from cdcsync.kafka.offsets import GapJson, Offsets, tp_key
from cdcsync.model.progress import Isolation, Progress
from cdcsync.runtime import lock
from cdcsync.sinks import hudi, timeline

if TYPE_CHECKING:
    from cdcsync.config.model import Config
    from cdcsync.kafka.view import KafkaView


class CommitStatus(TypedDict):
    instant: str
    action: str
    completed: str  # ISO 8601, UTC
    batch_id: int | None
    replay: bool
    records: dict[str, int] | None  # rows by class, summed over the partitions
    rows_written: int
    rows_deleted: int


class LastCommit(CommitStatus):
    offsets: dict[str, dict[str, int]]
    age_seconds: float


class TableStatus(TypedDict):
    path: str
    exists: bool
    last_commit: LastCommit | None
    data_loss: list[GapJson]
    recent_commits: list[CommitStatus]
    pending_compactions: list[str]
    inflight_writes: list[str]


def status(cfg: Config, view: KafkaView, recent: int = 5) -> dict[str, Any]:
    """The config's state: committed offsets and lag (run-wide), then each table's commits."""
    now = dt.datetime.now(dt.UTC)
    files = storage.Files(cfg.storage)
    standing: Isolation | None = None
    if cfg.routes:  # where the run stands, as `run` resumes (engine/resume.py), read without a JVM
        rec = _routed_progress(cfg, files)
        point, standing = ResumePoint.of_progress(rec), rec.standing if rec else None
        tables = [_table(p, files, now, recent) for p in _hudi_tables_under(cfg.sink.path, files)]
    else:
        tables = [_table(cfg.sink.path, files, now, recent)]
        last = tables[0]["last_commit"]
        point = ResumePoint(Offsets.from_json(last["offsets"]), last["batch_id"]) if last else ResumePoint(None, None)
    committed = point.offsets
    gaps: list[GapJson] = [g.to_json() for g in point.data_loss]  # the table's own commits carry theirs
    found = [*gaps, *(g for t in tables for g in t["data_loss"])]
    unique = {(g["topic"], g["partition"], g["from"], g["to"]): g for g in found}  # carried by many commits: once
    topics = view.resolve_topics(cfg.source.topics, cfg.source.topic_pattern)
    latest, earliest = view.latest(topics), view.earliest(topics)
    # nothing committed yet: all that the topic holds is behind; a table set aside is behind too
    base = standing.slowest() if standing else committed or Offsets()
    lag = {tp_key(t, p): max(0, end - base.get_offset(t, p, earliest[t][p])) for t, p, end in latest.entries()}
    return {
        "config": str(cfg.path), "table": cfg.sink.table_name, "table_type": cfg.sink.table_type,
        "committed_offsets": committed.to_json() if committed else None,
        "end_offsets": latest.to_json(),
        "lag": lag, "lag_total": sum(lag.values()),
        "data_loss": [unique[k] for k in sorted(unique)],
        "tables": tables,
        "isolated": _isolated(cfg, standing, latest) if standing else [],
        "dead_letters": _dead_letters(dead_letter_path(cfg), files),
        "writer": lock.read_holder(cfg.run.checkpoint_dir, files),
    }


def _table(path: str, files: storage.Files, now: dt.datetime, recent: int) -> TableStatus:
    tl = timeline.Timeline(path, files)
    last = tl.last_sync_commit()
    out: TableStatus = {
        "path": path, "exists": bool(tl.instants), "last_commit": None,
        "data_loss": [g.to_json() for g in last.data_loss] if last else [],  # the newest commit carries them all
        "recent_commits": [_commit(c) for c in tl.commits(newest=recent)],
        "pending_compactions": [i.requested for i in tl.pending("compaction")],
        "inflight_writes": [i.requested for i in tl.pending(*timeline.WRITE_ACTIONS)]}
    if last:
        done, offsets = last.instant.completed_at, last.offsets
        assert done is not None and offsets is not None  # last_sync_commit: a completed commit with offsets
        out["last_commit"] = {**_commit(last), "offsets": offsets.to_json(),
                              "age_seconds": round((now - done).total_seconds(), 1)}
    return out


def _commit(c: timeline.Commit) -> CommitStatus:
    ledger = c.meta_json(hudi.META_LEDGER) or {}
    done = c.instant.completed_at
    assert done is not None  # Timeline.commits and last_sync_commit give completed instants only
    classes: Counter[str] = Counter()
    for counts in ledger.values():
        classes.update({k: v for k, v in counts.items() if isinstance(v, int)})
    return {"instant": c.instant.requested, "action": c.instant.action,
            "completed": done.astimezone(dt.UTC).isoformat(timespec="seconds"),
            "batch_id": c.batch_id, "replay": hudi.META_REPLAY in c.extra,
            "records": dict(classes) or None, "rows_written": c.stats["written"], "rows_deleted": c.stats["deletes"]}


def _dead_letters(path: str, files: storage.Files) -> dict[str, Any] | None:
    """Dead-lettered records by reason (the newest commit of each batch: a re-read batch is counted once), and
    how many were replayed."""
    commits = timeline.Timeline(path, files).commits()
    if not commits:
        return None
    by_batch: dict[int | None, dict[str, int]] = {}
    replayed = 0
    for c in commits:  # newest first
        if hudi.META_DL_REPLAYED in c.extra:
            replayed += int(c.extra[hudi.META_DL_REPLAYED])
        elif hudi.META_DL_REASONS in c.extra and c.batch_id not in by_batch:
            by_batch[c.batch_id] = c.meta_json(hudi.META_DL_REASONS)
    reasons: Counter[str] = Counter()
    for r in by_batch.values():
        reasons.update(r)
    return {"path": path, "total": sum(reasons.values()), "by_reason": dict(reasons.most_common()),
            "replayed": replayed}


def _routed_progress(cfg: Config, files: storage.Files) -> Progress | None:
    """A routed config's offsets, offset gaps and tables set aside are run-wide: the progress record beside the
    tables (model.progress)."""
    import json

    path = f"{cfg.run.checkpoint_dir.rstrip('/')}/{ROUTES_PROGRESS_FILE}"
    for p in (path, path + ".tmp"):
        try:
            return Progress.from_json(json.loads(files.read(p) or b""))
        except (OSError, ValueError):
            continue
    return None


def _isolated(cfg: Config, standing: Isolation, latest: Offsets) -> list[dict[str, Any]]:
    """The routed tables set aside: each with its error, its position (where its last commit left it), the
    messages it is behind, since when, its failed attempts and its next try."""
    return [{"table": name, "path": routed_path(cfg.sink.path, name), **t.to_json(),
             "behind": sum(max(0, end - t.offsets.get_offset(tp, p, end)) for tp, p, end in latest.entries())}
            for name, t in sorted(standing.tables.items())]


def _hudi_tables_under(sink_path: str, files: storage.Files) -> list[str]:
    root = sink_path.rstrip("/")
    return sorted(f"{root}/{name}" for name, is_dir in files.entries(root).items()
                  if is_dir and ".hoodie" in files.entries(f"{root}/{name}"))
