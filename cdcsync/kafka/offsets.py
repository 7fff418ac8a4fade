"""Kafka offsets as one value type: {topic: {partition: offset}}, `offset` the next one to read (Kafka's
convention, and Spark's startingOffsets). Every conversion to and from text (JSON keys, commit metadata, logs)
lives here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, overload

from cdcsync.errors import ConfigError

SPEC_ITEM = re.compile(r"^\s*partition\s*:\s*(\d+)\s*,\s*offset\s*:\s*(\d+)\s*$")


def tp_key(topic: str, partition: int) -> str:
    """A partition as the ledger, lag and metrics key it: "topic/partition" (a topic name holds no "/")."""
    return f"{topic}/{partition}"


def split_tp(key: str) -> tuple[str, int]:
    """tp_key's text back to (topic, partition)."""
    topic, _, partition = key.rpartition("/")
    return topic, int(partition)


class Offsets(dict[str, dict[int, int]]):
    """{topic: {partition: offset}}. A dict, so lookups and equality read naturally; built and rendered only here."""

    def __init__(self, data: Mapping[str, Mapping[int, int] | Mapping[str, int]] | None = None):
        super().__init__({t: {int(p): int(o) for p, o in parts.items()} for t, parts in (data or {}).items()})

    @classmethod
    def from_entries(cls, entries: Iterable[tuple[str, int, int]]) -> Offsets:
        """From (topic, partition, offset) triples."""
        out = cls()
        for t, p, o in entries:
            out.setdefault(t, {})[int(p)] = int(o)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping[int, int] | Mapping[str, int]] | str | None) -> Offsets:
        """From JSON text or its parsed form (partition keys are strings there)."""
        return cls(json.loads(data) if isinstance(data, str) else data)

    def to_json(self) -> dict[str, dict[str, int]]:
        """The JSON form: partition keys as strings (commit metadata, checkpoints, Spark's offset options)."""
        return {t: {str(p): o for p, o in sorted(parts.items())} for t, parts in self.items()}

    def copy(self) -> Offsets:
        return Offsets(self)

    def entries(self) -> Iterator[tuple[str, int, int]]:
        """(topic, partition, offset) in topic, partition order."""
        for t in sorted(self):
            for p in sorted(self[t]):
                yield t, p, self[t][p]

    @overload
    def get_offset(self, topic: str, partition: int) -> int | None: ...
    @overload
    def get_offset(self, topic: str, partition: int, default: int) -> int: ...
    def get_offset(self, topic: str, partition: int, default: int | None = None) -> int | None:
        return self.get(topic, {}).get(partition, default)

    def lowest(self, *others: Offsets) -> Offsets:
        """Per partition of self, the lowest of its offset and those of `others` that hold the partition."""
        return Offsets.from_entries((t, p, min([o, *(x.get_offset(t, p, o) for x in others)]))
                                    for t, p, o in self.entries())

    def raised_to(self, floor: Offsets) -> Offsets:
        """Per partition of self, at least `floor`'s offset (where `floor` holds the partition)."""
        return Offsets.from_entries((t, p, max(o, floor.get_offset(t, p, o))) for t, p, o in self.entries())

    def covering(self, base: Offsets) -> Offsets:
        """Self, and `base`'s offsets for the partitions self does not hold (a partition nobody had read yet)."""
        out = Offsets(base)
        for t, p, o in self.entries():
            out.setdefault(t, {})[p] = o
        return out

    def count_to(self, end: Offsets) -> int:
        """Messages in [self, end) over every partition of self."""
        return sum(end[t][p] - o for t, p, o in self.entries())

    def lag_to(self, latest: Offsets) -> dict[str, int]:
        """{"topic/partition": messages behind latest}."""
        return {tp_key(t, p): latest[t][p] - o for t, p, o in self.entries()}

    def compact(self) -> str:
        """One line for logs: "topic/0:42;topic/1:300"."""
        return ";".join(f"{t}/{p}:{o}" for t, p, o in self.entries())

    def range_text(self, end: Offsets) -> str:
        """[self, end) for messages: "topic/0: 10..13; topic/1: 0..4"."""
        return "; ".join(f"{t}/{p}: {self.get_offset(t, p)}..{o}" for t, p, o in end.entries())


BELOW_EARLIEST = "below_earliest"  # retention or kafka-delete-records removed offsets the table had not read
ABOVE_END = "above_end"  # the table's next offset is past the partition's end: the topic was re-created

# Gap.to_json's shape ("from" is a keyword: the functional form)
GapJson = TypedDict("GapJson", {"topic": str, "partition": int, "from": int, "to": int, "reason": str,
                                "batch_id": int | None})


@dataclass(frozen=True)
class Gap:
    """Offsets a run went past without reading ([run] on_data_loss = "skip"): reading jumped from `start` (the
    table's next offset) to `to` (the partition's earliest offset), in the batch `batch_id`."""

    topic: str
    partition: int
    start: int
    to: int
    reason: str  # BELOW_EARLIEST | ABOVE_END
    batch_id: int | None = None

    @property
    def records(self) -> int:
        """Messages known lost: those below the earliest offset; past the end of a re-created topic, none known."""
        return max(0, self.to - self.start)

    def describe(self) -> str:
        if self.reason == ABOVE_END:
            return (f"{self.topic}/{self.partition}: the table's next offset {self.start} is past the partition's "
                    f"end (the topic was re-created or truncated); its earliest offset is {self.to}")
        return (f"{self.topic}/{self.partition}: offsets {self.start}..{self.to - 1} ({self.records} message(s)) "
                f"are gone; the earliest offset is now {self.to}")

    def to_json(self) -> GapJson:
        return {"topic": self.topic, "partition": self.partition, "from": self.start, "to": self.to,
                "reason": self.reason, "batch_id": self.batch_id}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Gap:
        return cls(d["topic"], int(d["partition"]), int(d["from"]), int(d["to"]), d.get("reason", BELOW_EARLIEST),
                   None if d.get("batch_id") is None else int(d["batch_id"]))


def lost_ranges(start: Offsets, earliest: Offsets, latest: Offsets) -> list[Gap]:
    """The partitions whose next offset in `start` the brokers no longer hold: below the earliest offset, or past
    the end; partitions the brokers do not list are not judged here."""
    out = []
    for t, p, off in Offsets(start).entries():
        lo, hi = earliest.get_offset(t, p), latest.get_offset(t, p)
        if lo is None or hi is None:
            continue
        if off < lo:
            out.append(Gap(t, p, off, lo, BELOW_EARLIEST))
        elif off > hi:
            out.append(Gap(t, p, off, lo, ABOVE_END))
    return out


def parse_specific_offsets(spec: str, where: str = "source.specific_offsets") -> dict[int, int]:
    """'partition:0,offset:42;partition:1,offset:300' -> {0: 42, 1: 300} (the Flink connector's syntax)."""
    out: dict[int, int] = {}
    for item in filter(str.strip, spec.split(";")):
        m = SPEC_ITEM.match(item)
        if not m:
            raise ConfigError(
                f"{where}: cannot read {item.strip()!r}",
                hint='write it as "partition:0,offset:42;partition:1,offset:300"', key=where,
            )
        out[int(m.group(1))] = int(m.group(2))
    if not out:
        raise ConfigError(f"{where} is empty", hint='write it as "partition:0,offset:42"', key=where)
    return out
