"""Metadata and offset look-ups with kafka-python (no JVM), and where a run starts."""

from __future__ import annotations

import re
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from cdcsync.errors import CdcsyncError, ConfigError, SourceError, TopicMissingError
from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.offsets import Gap, Offsets, parse_specific_offsets
from cdcsync.kafka.security import Security

if TYPE_CHECKING:
    from pathlib import Path

    from kafka.structs import OffsetAndMetadata, TopicPartition

    from cdcsync.config.model import Config, SourceConfig


class _Client(Protocol):
    """What the view uses of kafka-python's KafkaClient, whose stubs leave `poll` untyped."""

    cluster: Any

    def poll(self, timeout_ms: int | None = None, future: Any = None) -> Any: ...


@dataclass
class KafkaView:
    """A short-lived kafka-python consumer for metadata and offset look-ups. It never subscribes or commits
    (except `commit_group`), and never creates topics."""

    bootstrap_servers: str
    security: Security  # for kafka-python, and for the probe that names the failing hop when nothing answers
    group_id: str | None = None

    def __post_init__(self) -> None:
        from kafka import KafkaConsumer
        from kafka.errors import KafkaError, NoBrokersAvailable

        try:
            self._c = KafkaConsumer(
                bootstrap_servers=self.bootstrap_servers.split(","), group_id=self.group_id,
                enable_auto_commit=False, request_timeout_ms=15000, api_version_auto_timeout_ms=10000,
                **self.security.kafka_python_kwargs(),
            )
        except NoBrokersAvailable:
            raise self._diagnosed(SourceError(
                f"no Kafka broker answers at {self.bootstrap_servers}",
                hint="check source.bootstrap_servers; 'cdcsync probe --bootstrap-servers "
                f"{self.bootstrap_servers}' names the failing hop",
            )) from None
        except (KafkaError, ssl.SSLError) as e:  # kafka-python lets a failed TLS handshake through unwrapped
            raise self._diagnosed(SourceError(f"cannot connect to Kafka at {self.bootstrap_servers}: {e}",
                                              hint="run 'cdcsync probe' to find the failing hop")) from None
        try:  # kafka-python connects lazily and would wait forever for metadata a broker refuses to send
            self._metadata(timeout_ms=10000)
        except (KafkaError, ssl.SSLError) as e:
            raise self._diagnosed(SourceError(f"no Kafka broker at {self.bootstrap_servers} answered Metadata: {e}",
                                              hint="run 'cdcsync probe' to find the failing hop")) from None

    def _diagnosed(self, fallback: CdcsyncError) -> CdcsyncError:
        """kafka-python only says no broker answered; the probe's walk names the hop, with probe's message and
        exit code (TLS 76, authentication 77, ...)."""
        from cdcsync.probe.net import parse_servers
        from cdcsync.probe.report import FAIL
        from cdcsync.probe.walk import probe

        try:
            report = probe(parse_servers(self.bootstrap_servers), self.security, timeout=5.0)
        except ValueError:
            return fallback
        failed = next((c for c in report.checks if c.status == FAIL), None)
        if failed is None:
            return fallback
        return SourceError(failed.finding or failed.detail, hint=failed.hint or None, exit_code=ExitCode(failed.code))

    def close(self) -> None:
        self._c.close()

    def _client(self) -> _Client:
        """kafka-python 2.x's client under the consumer, as the probe uses its protocol layer."""
        client: _Client = self._c._client  # type: ignore[attr-defined]  # private: types-kafka-python lacks it
        return client

    def _metadata(self, timeout_ms: int = 15000) -> None:
        """All topics' metadata, bounded: KafkaConsumer.topics() and partitions_for_topic() poll without a limit."""
        from kafka.errors import KafkaTimeoutError

        client = self._client()
        cluster = client.cluster
        stash, cluster.need_all_topic_metadata = cluster.need_all_topic_metadata, True
        try:
            future = cluster.request_update()
            client.poll(future=future, timeout_ms=timeout_ms)
        finally:
            cluster.need_all_topic_metadata = stash
        if not future.is_done:
            raise KafkaTimeoutError(f"no metadata from {self.bootstrap_servers} within {timeout_ms / 1000:g} s")
        if future.failed():
            raise future.exception

    def topics(self) -> set[str]:
        self._metadata()
        return set(self._client().cluster.topics())

    def partitions(self, topic: str) -> list[int]:
        parts = self._client().cluster.partitions_for_topic(topic)
        if parts is None:
            self._metadata()
            parts = self._client().cluster.partitions_for_topic(topic)
        if not parts:
            raise TopicMissingError(
                f"topic {topic!r} does not exist on {self.bootstrap_servers}",
                hint="create it, or fix source.topics / source.topic_pattern", topic=topic,
            )
        return sorted(parts)

    def resolve_topics(self, topics: list[str] | None, pattern: str | None) -> list[str]:
        if topics:
            for t in topics:
                self.partitions(t)
            return list(topics)
        rx = re.compile(pattern or "")
        found = sorted(t for t in self.topics() if rx.fullmatch(t))
        if not found:
            raise TopicMissingError(f"no topic matches source.topic_pattern {pattern!r}",
                                    hint="check the pattern (a full-match Java/Python regex)")
        return found

    def _tps(self, topics: list[str]) -> list[TopicPartition]:
        from kafka.structs import TopicPartition

        return [TopicPartition(t, p) for t in topics for p in self.partitions(t)]

    def earliest(self, topics: list[str]) -> Offsets:
        return _nest(self._c.beginning_offsets(self._tps(topics)))

    def latest(self, topics: list[str]) -> Offsets:
        return _nest(self._c.end_offsets(self._tps(topics)))

    def for_time(self, topics: list[str], ts_ms: int) -> Offsets:
        """First offset whose timestamp >= ts_ms per partition; the end offset where there is none."""
        tps = self._tps(topics)
        found = self._c.offsets_for_times({tp: ts_ms for tp in tps})
        ends = self._c.end_offsets(tps)
        return _nest({tp: (f.offset if (f := found.get(tp)) else ends[tp]) for tp in tps})

    def committed(self, topics: list[str]) -> Offsets:
        if not self.group_id:
            return Offsets()
        out = Offsets()
        for tp in self._tps(topics):
            off = self._c.committed(tp)
            if off is not None:
                out.setdefault(tp.topic, {})[tp.partition] = off
        return out

    def commit_group(self, offsets: Offsets) -> None:
        """Monitoring only: the group's offsets follow the Hudi commits, they are never read back by a run."""
        from kafka.structs import OffsetAndMetadata, TopicPartition

        if not self.group_id or not offsets:
            return
        self._c.commit({TopicPartition(t, p): _offset_and_metadata(OffsetAndMetadata, o)
                        for t, parts in offsets.items() for p, o in parts.items()})


def retriable(error: BaseException) -> bool:
    """A kafka-python error the brokers can recover from (unreachable, timed out, leader moving): its class says so."""
    from kafka.errors import KafkaError

    return isinstance(error, KafkaError) and bool(getattr(error, "retriable", False))


def for_source(cfg: Config, group: bool = True) -> KafkaView:
    """The view of a config's [source], with its security settings; `group=False` for commands that commit nothing."""
    from cdcsync.kafka.security import for_clients

    src = cfg.source
    sec, _ = for_clients(src.properties, f"{cfg.path} [source.properties]")
    return KafkaView(src.bootstrap_servers, sec, src.group_id if group else None)


def _offset_and_metadata(cls: Callable[..., OffsetAndMetadata], offset: int) -> OffsetAndMetadata:
    try:
        return cls(offset, "", -1)  # kafka-python >= 2.0.3 has leader_epoch
    except TypeError:
        return cls(offset, "")


def _nest(flat: Mapping[TopicPartition, int]) -> Offsets:
    out = Offsets()
    for tp, off in flat.items():
        out.setdefault(tp.topic, {})[tp.partition] = off
    return out


def resolve_start(source: SourceConfig, view: KafkaView, topics: list[str],
                  recorded: Offsets | None) -> tuple[Offsets, str]:
    """Where a run starts, with the reference connector's precedence. Returns (offsets, how it was decided).

    1. offsets recorded in the table's Hudi commits win; partitions new since then start at earliest; recorded
       offsets the brokers no longer hold are judged before each batch by [run] on_data_loss (`lost`);
    2. else startup_mode; group-offsets falls back to auto.offset.reset, and stops when that is unset;
       specific-offsets falls back to group offsets for partitions it does not list.
    """
    earliest = view.earliest(topics)
    latest = view.latest(topics)
    if recorded:
        out = Offsets({t: {p: recorded.get(t, {}).get(p, earliest[t][p]) for p in earliest[t]} for t in topics})
        return out, "offsets recorded in the table's last commit"
    mode = source.startup_mode
    if mode == "earliest-offset":
        return earliest, mode
    if mode == "latest-offset":
        return latest, mode
    if mode == "timestamp":
        ts_ms = cast(int, source.startup_timestamp_ms)  # the loader requires it with startup_mode timestamp
        return view.for_time(topics, ts_ms), f"timestamp {source.startup_timestamp_ms}"
    committed = view.committed(topics)
    # the loader requires specific_offsets with startup_mode specific-offsets
    specific = parse_specific_offsets(cast(str, source.specific_offsets)) if mode == "specific-offsets" else {}
    reset = (source.properties.get("auto.offset.reset") or "").lower()
    out = Offsets()
    for t in topics:
        for p in earliest[t]:
            if p in specific:
                off = specific[p]
            elif p in committed.get(t, {}):
                off = committed[t][p]
            elif reset in ("earliest", "smallest"):
                off = earliest[t][p]
            elif reset in ("latest", "largest"):
                off = latest[t][p]
            else:
                raise ConfigError(
                    f"group {source.group_id!r} has no committed offset for {t}/{p} and "
                    "source.properties.\"auto.offset.reset\" is not set",
                    hint='set source.properties."auto.offset.reset" = "earliest" (or "latest"), '
                    "or choose another source.startup_mode", key="source.startup_mode",
                )
            out.setdefault(t, {})[p] = off
    _check_range(out, earliest, latest, mode)
    return out, mode


def _check_range(offsets: Offsets, earliest: Offsets, latest: Offsets, what: str) -> None:
    for t, parts in offsets.items():
        for p, off in parts.items():
            lo, hi = earliest[t][p], latest[t][p]
            if not lo <= off <= hi:
                raise SourceError(
                    f"{what}: offset {off} for {t}/{p} is outside the partition's valid range [{lo}, {hi}]",
                    hint="the data may have passed retention; choose a start inside the range "
                    "(e.g. startup_mode = 'earliest-offset' with a new table)",
                    topic=t, partition=p, offset=off, earliest=lo, latest=hi,
                )


def lost(gaps: list[Gap], config_path: Path) -> SourceError:
    """[run] on_data_loss = "fail": the offsets the table still needs are gone; nothing of the batch was read."""
    first = gaps[0]
    return SourceError(
        "offsets the table still needs are gone from Kafka (retention, kafka-delete-records, or a re-created "
        "topic): " + "; ".join(g.describe() for g in gaps),
        hint=f'to go on from the earliest offsets and record the gap, set [run] on_data_loss = "skip" in '
        f"{config_path}; to keep the table whole, start a new table (a new sink.path and checkpoint_dir) and load "
        "it again from the source (a new snapshot), or replay-from-offset what is still in the topic",
        exit_code=ExitCode.DATA_LOSS, topic=first.topic, partition=first.partition, lost_from=first.start,
        lost_to=first.to, reason=first.reason, gaps=[g.to_json() for g in gaps],
    )
