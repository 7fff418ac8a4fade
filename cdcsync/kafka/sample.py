"""Read a sample from the start of every partition of some topics: no consumer group, no commits, no topic
creation. infer-schema's only contact with Kafka."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from cdcsync.errors import SourceError, TopicMissingError
from cdcsync.formats.base import Coord

if TYPE_CHECKING:
    from kafka import KafkaConsumer
    from kafka.structs import TopicPartition

DEFAULT_PER_PARTITION = 50
Sampled = tuple[Coord, bytes | None, bytes | None]  # (where, key, value)


@dataclass(frozen=True)
class TopicSet:
    """Which topics to sample, on which brokers, with which kafka-python client settings (security)."""

    bootstrap_servers: str
    topics: list[str] | None = None
    pattern: str | None = None
    client_kwargs: dict[str, Any] = field(default_factory=dict)


def sample(where: TopicSet, *, max_per_partition: int = DEFAULT_PER_PARTITION, timeout_s: float = 30.0,
           warn: Callable[[str], None] | None = None,
           keep: Callable[[list[tuple[str, bytes | None]]], bool] | None = None) -> Iterator[Sampled]:
    """(coord, key, value) for up to `max_per_partition` records from the beginning of each partition, those whose
    headers `keep` rejects left out (they count towards the share: a sample reads the same records either way).

    Stops early (with a warning) when `timeout_s` passes before every partition delivered its share.
    """
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError, NoBrokersAvailable
    from kafka.structs import TopicPartition

    bootstrap_servers = where.bootstrap_servers
    try:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap_servers.split(","), group_id=None, enable_auto_commit=False,
            allow_auto_create_topics=False, client_id="cdcsync-infer-schema", request_timeout_ms=15000,
            api_version_auto_timeout_ms=10000, **where.client_kwargs,
        )
    except NoBrokersAvailable:
        raise SourceError(f"no Kafka broker answers at {bootstrap_servers}",
                          hint=f"check source.bootstrap_servers; 'cdcsync probe --bootstrap-servers "
                               f"{bootstrap_servers}' names the failing hop") from None
    except KafkaError as e:
        raise SourceError(f"cannot connect to Kafka at {bootstrap_servers}: {e}",
                          hint="run 'cdcsync probe' to find the failing hop") from None
    try:
        names = _resolve(consumer, where)
        tps = [TopicPartition(t, p) for t in names for p in sorted(consumer.partitions_for_topic(t))]
        begin = consumer.beginning_offsets(tps)
        end = consumer.end_offsets(tps)
        stop = {tp: min(begin[tp] + max_per_partition, end[tp]) for tp in tps}
        todo = {tp for tp in tps if stop[tp] > begin[tp]}
        if not todo:
            return
        consumer.assign(list(todo))
        for tp in todo:
            consumer.seek(tp, begin[tp])
        yield from _drain(consumer, todo, stop, time.monotonic() + timeout_s, warn, keep)
    finally:
        consumer.close(autocommit=False)


def _resolve(consumer: KafkaConsumer, where: TopicSet) -> list[str]:
    servers, topics, pattern = where.bootstrap_servers, where.topics, where.pattern
    if topics:
        for t in topics:
            if not consumer.partitions_for_topic(t):  # looks metadata up for all topics: never auto-creates `t`
                raise TopicMissingError(f"topic {t!r} does not exist on {servers}",
                                        hint="create it, or fix source.topics / --topic (infer-schema never "
                                             "creates topics)", topic=t)
        return list(topics)
    if pattern:
        rx = re.compile(pattern)
        found = sorted(t for t in consumer.topics() if rx.fullmatch(t))  # Java's Pattern.matches: whole name
        if not found:
            raise TopicMissingError(f"no topic on {servers} matches the pattern {pattern!r}",
                                    hint="fix source.topic_pattern", pattern=pattern)
        return found
    raise ValueError("sample() needs topics or a pattern")


def _drain(consumer: KafkaConsumer, todo: set[TopicPartition], stop: dict[TopicPartition, int], deadline: float,
           warn: Callable[[str], None] | None,
           keep: Callable[[list[tuple[str, bytes | None]]], bool] | None) -> Iterator[Sampled]:
    while todo:
        left = deadline - time.monotonic()
        if left <= 0:
            if warn:
                parts = ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(todo))
                warn(f"sampling timed out before reading every partition's share: {parts}")
            return
        batches = consumer.poll(timeout_ms=int(min(left, 1.0) * 1000), max_records=500)
        for tp, records in batches.items():
            for r in records:
                if r.offset >= stop[tp]:
                    break
                if keep is None or keep(list(r.headers or [])):
                    yield Coord(tp.topic, tp.partition, r.offset), r.key, r.value
            # without a timeout, position() waits until it knows the offset: never None here
            if tp in todo and cast(int, consumer.position(tp)) >= stop[tp]:
                todo.discard(tp)
                consumer.pause(tp)
