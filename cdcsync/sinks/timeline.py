"""A Hudi table's timeline read without a JVM (for `status` and the benchmarks): instant files in
`.hoodie/timeline/` (Hudi 1.x layout) and the Avro commit metadata of completed ones, on a local path or s3a://.

A completed instant is `<requested>_<completed>.<action>`; a pending one `<requested>.<action>.requested` or
`.inflight`. Instant times are the writer's local time, as Hudi writes them by default.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdcsync import storage
from cdcsync.kafka.offsets import Gap, Offsets
from cdcsync.sinks import hudi

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")  # what carries cdcsync's rows and offsets


@dataclass(frozen=True)
class Instant:
    requested: str
    action: str
    completed: str | None  # None while requested or inflight
    file: str  # the instant file's path

    @property
    def completed_at(self) -> dt.datetime | None:
        return _time(self.completed) if self.completed else None

    @property
    def requested_at(self) -> dt.datetime:
        return _time(self.requested)


@dataclass(frozen=True)
class Commit:
    """A completed write instant and what cdcsync recorded in it."""

    instant: Instant
    extra: dict[str, str]  # the commit's extra metadata
    stats: dict[str, int]  # summed write stats: inserts, updates, deletes, written

    @property
    def offsets(self) -> Offsets | None:
        raw = self.extra.get(hudi.META_OFFSETS)
        return Offsets.from_json(raw) if raw else None

    @property
    def batch_id(self) -> int | None:
        raw = self.extra.get(hudi.META_BATCH)
        return int(raw) if raw else None

    @property
    def data_loss(self) -> list[Gap]:
        """The offset gaps the run had gone past by this commit (each commit carries them all)."""
        return [Gap.from_json(g) for g in self.meta_json(hudi.META_DATA_LOSS) or []]

    def meta_json(self, key: str) -> Any:
        raw = self.extra.get(key)
        return json.loads(raw) if raw else None


def read_only_mount(path: str | None) -> Path | None:
    """The nearest existing directory of a local path when its mount is read-only (statvfs's flag, not a message)."""
    if not path or not storage.is_local(path):
        return None
    p = storage.local_path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return p if os.statvfs(p).f_flag & os.ST_RDONLY else None
    except OSError:
        return None


def instants(table_path: str, files: storage.Listing | None = None) -> list[Instant]:
    """Every instant on the active timeline, oldest requested first; empty when there is no table."""
    folder = table_path.rstrip("/") + "/.hoodie/timeline"
    out = []
    for name, is_dir in (files or storage.Files()).entries(folder).items():
        stem, _, rest = name.partition(".")
        if is_dir or not stem[:1].isdigit():
            continue
        requested, _, completed = stem.partition("_")
        action, _, state = rest.partition(".")
        if completed and not state:
            out.append(Instant(requested, action, completed, f"{folder}/{name}"))
        elif not completed and state in ("requested", "inflight"):
            out.append(Instant(requested, action, None, f"{folder}/{name}"))
    # one entry per instant: the completed file, else the furthest pending state
    best: dict[tuple[str, str], Instant] = {}
    for i in out:
        key = (i.requested, i.action)
        if key not in best or i.completed or (not best[key].completed and i.file.endswith(".inflight")):
            best[key] = i
    return sorted(best.values(), key=lambda i: i.requested)


class Timeline:
    """One listing of a table's timeline; each commit's metadata read at most once."""

    def __init__(self, table_path: str, files: storage.Files | None = None):
        self._files = files or storage.Files()
        self.instants = instants(table_path, self._files)
        self._read: dict[Instant, Commit] = {}

    def commits(self, newest: int | None = None) -> list[Commit]:
        """Completed write instants with their metadata, newest first (at most `newest` of them)."""
        done = [i for i in reversed(self.instants) if i.completed and i.action in WRITE_ACTIONS]
        return [self._commit(i) for i in done[:newest]]

    def last_sync_commit(self) -> Commit | None:
        """The newest completed commit that carries cdcsync's offsets (compactions and replays carry none)."""
        for i in reversed(self.instants):
            if i.completed and i.action in WRITE_ACTIONS and self._commit(i).offsets is not None:
                return self._commit(i)
        return None

    def pending(self, *actions: str) -> list[Instant]:
        """Instants of these actions not completed (a compaction scheduled but not run, a write that died). A
        compaction completes as a commit of its requested time, beside which its requested file stays."""
        done = {i.requested for i in self.instants if i.completed}
        return [i for i in self.instants if i.action in actions and not i.completed and i.requested not in done]

    def _commit(self, i: Instant) -> Commit:
        if i not in self._read:
            self._read[i] = _read(i, self._files.read(i.file) or b"")
        return self._read[i]


def _read(i: Instant, raw: bytes) -> Commit:
    from fastavro import reader

    if raw[:4] != b"Obj\x01":  # Hudi 0.x wrote JSON commit metadata
        md = json.loads(raw or b"{}")
    else:
        md = next(iter(reader(io.BytesIO(raw))), {}) or {}
    stats = {"inserts": 0, "updates": 0, "deletes": 0, "written": 0}
    for ws in (md.get("partitionToWriteStats") or {}).values():
        for s in ws or []:
            stats["inserts"] += s.get("numInserts") or 0
            stats["updates"] += s.get("numUpdateWrites") or 0
            stats["deletes"] += s.get("numDeletes") or 0
            stats["written"] += s.get("numWrites") or 0
    return Commit(i, dict(md.get("extraMetadata") or {}), stats)


def _time(instant: str) -> dt.datetime:
    """Hudi instant text (yyyyMMddHHmmssSSS, local time) as an aware datetime."""
    return dt.datetime.strptime(instant[:17].ljust(17, "0"), "%Y%m%d%H%M%S%f").astimezone()
