"""`replay-from-offset --from/--to` specs: parsed without a JVM or a broker, resolved against a KafkaView."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from cdcsync.errors import CdcsyncError
from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.offsets import SPEC_ITEM, Offsets
from cdcsync.kafka.view import KafkaView

_TOPIC_ITEM = re.compile(r"^\s*topic\s*:\s*([A-Za-z0-9._-]+)\s*,(.*)$")
REPLAY_SPEC_HELP = ("earliest, latest, committed, timestamp:<epoch-ms>, an ISO-8601 time (UTC unless it has an "
                    "offset), or 'partition:0,offset:42;partition:1,offset:300' (prefix 'topic:<name>,' per item "
                    "when the config reads several topics)")


class ReplaySpecError(CdcsyncError):
    """A --from/--to spec that cannot be read or resolved: bad command-line usage."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class ReplaySpec:
    kind: str  # earliest | latest | committed | timestamp | offsets
    text: str
    ts_ms: int | None = None
    offsets: tuple[tuple[str | None, int, int], ...] = ()  # ((topic or None, partition, offset), ...) for "offsets"


def parse_replay_spec(text: str, flag: str = "--from") -> ReplaySpec:
    """Read one --from/--to spec; JVM- and broker-free so typos fail fast."""
    s = text.strip()
    low = s.lower()
    if low in ("earliest", "latest", "committed"):
        return ReplaySpec(low, s)
    if low.startswith("timestamp:"):
        return ReplaySpec("timestamp", s, ts_ms=_time_ms(s.split(":", 1)[1].strip(), flag, s))
    if "partition" in low:
        items = []
        for item in filter(str.strip, s.split(";")):
            m = _TOPIC_ITEM.match(item)
            topic, rest = (m.group(1), m.group(2)) if m else (None, item)
            parsed = SPEC_ITEM.match(rest)
            if not parsed:
                raise ReplaySpecError(f"{flag}: cannot read {item.strip()!r}",
                                      hint=f"write {flag} as {REPLAY_SPEC_HELP}")
            items.append((topic, int(parsed.group(1)), int(parsed.group(2))))
        if not items:
            raise ReplaySpecError(f"{flag} lists no partition", hint=f"write {flag} as {REPLAY_SPEC_HELP}")
        return ReplaySpec("offsets", s, offsets=tuple(items))
    return ReplaySpec("timestamp", s, ts_ms=_time_ms(s, flag, s))


def _time_ms(value: str, flag: str, whole: str) -> int:
    import datetime as dt

    if value.isdigit():
        return int(value)
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ReplaySpecError(f"{flag}: {whole!r} is not a spec", hint=f"write {flag} as {REPLAY_SPEC_HELP}") from None
    if t.tzinfo is None:  # a bare time is UTC: the broker's timestamps are epoch-based
        t = t.replace(tzinfo=dt.UTC)
    return int(t.timestamp() * 1000)


@dataclass(frozen=True)
class Extent:
    """The topics a config reads and each partition's [earliest, latest] offsets when the command started."""

    topics: list[str]
    earliest: Offsets
    latest: Offsets


def resolve_replay_spec(spec: ReplaySpec, view: KafkaView, extent: Extent,
                        committed: Callable[[], Offsets | None] | None = None,
                        flag: str = "--from") -> Offsets:
    """Offsets a spec names. For kind "offsets" only the listed partitions appear; `committed` is a callable
    returning the main table's recorded offsets (or None), called only when the spec needs it."""
    topics, earliest, latest = extent.topics, extent.earliest, extent.latest
    if spec.kind == "earliest":
        return Offsets({t: earliest[t] for t in topics})
    if spec.kind == "latest":
        return Offsets({t: latest[t] for t in topics})
    if spec.kind == "timestamp":
        assert spec.ts_ms is not None  # parse_replay_spec gives every "timestamp" spec its time
        return view.for_time(topics, spec.ts_ms)  # first offset at or after the time: the bound is half-open
    if spec.kind == "committed":
        recorded = committed() if committed else None
        if not recorded:
            raise ReplaySpecError(f"{flag} committed: the main table has no commit with recorded offsets yet",
                                  hint="'committed' needs a table written by 'cdcsync run'; use earliest or offsets")
        recorded = Offsets(recorded)
        return Offsets({t: {p: recorded.get_offset(t, p, earliest[t][p]) for p in earliest[t]} for t in topics})
    out = Offsets()
    for topic, part, off in spec.offsets:
        if topic is None and len(topics) > 1:
            raise ReplaySpecError(f"{flag}: the config reads {len(topics)} topics ({', '.join(topics)}); "
                                  "say which one each partition belongs to",
                                  hint=f"write e.g. 'topic:{topics[0]},partition:0,offset:42;...'")
        t = topic or topics[0]
        if t not in earliest:
            raise ReplaySpecError(f"{flag}: topic {t!r} is not one the config reads", hint=f"use one of {topics}")
        if part not in earliest[t]:
            raise ReplaySpecError(f"{flag}: {t} has no partition {part}",
                                  hint=f"its partitions are {sorted(earliest[t])}")
        out.setdefault(t, {})[part] = off
    return out


def replay_range(start: Offsets, end: Offsets, earliest: Offsets, latest: Offsets) -> None:
    """Both bounds inside [earliest, latest] per partition, and start <= end; else an error naming the range."""
    for what, offsets in (("--from", start), ("--to", end)):
        for t, parts in offsets.items():
            for p, off in parts.items():
                lo, hi = earliest[t][p], latest[t][p]
                if not lo <= off <= hi:
                    why = "past retention" if off < lo else "beyond the latest offset"
                    raise ReplaySpecError(
                        f"{what}: offset {off} for {t}/{p} is {why}; the partition's valid range is [{lo}, {hi}]",
                        hint=f"choose an offset in [{lo}, {hi}] for {t}/{p}", topic=t, partition=p, offset=off,
                        earliest=lo, latest=hi)
    for t, parts in start.items():
        for p, off in parts.items():
            if off > end[t][p]:
                raise ReplaySpecError(f"--from is after --to on {t}/{p}: {off} > {end[t][p]}",
                                      hint="swap the bounds, or pick a later --to", topic=t, partition=p)
