"""A reproducible Debezium MySQL workload: N events over K keys (inserts, 75% updates, 5% deletes), keyed so each
key stays in one partition, with the final table state and a checksum to hold every contender's result against.

Event times increase strictly, so "newest by source.ts_ms" and "last in the log" agree: any correct upsert
pipeline ends in the same state.
"""

from __future__ import annotations

import json
import random
import time
import zlib
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
T0_MS = 1_763_856_000_000


@dataclass(frozen=True)
class Workload:
    events: int = 100_000
    keys: int = 20_000
    update_share: float = 0.75
    delete_share: float = 0.05
    partitions: int = 4
    seed: int = 42
    first_id: int = 1  # keys are first_id, first_id + 1, …: a second workload's keys can stay apart from the first's
    created_days: int = 0  # > 0: each row carries created_at, within this many days before T0_MS

    @classmethod
    def named(cls, size: str) -> Workload:
        sizes = {"smoke": cls(100_000, 20_000), "full": cls(1_000_000, 200_000), "tiny": cls(2_000, 400)}
        return sizes[size]


def json_message(key: dict, value: dict) -> tuple[bytes, bytes]:
    """Debezium's JSON converter without schemas: the key and the change event as compact JSON."""
    return json.dumps(key).encode(), json.dumps(value, separators=(",", ":")).encode()


class Events:
    """Iterate (key_bytes, value_bytes) in produce order; afterwards `final` is the table state they leave.
    `encode`: (key, change event) → bytes, JSON by default (bench.avro: the Confluent Avro wire format)."""

    def __init__(self, w: Workload, encode=json_message):
        self.w = w
        self.encode = encode
        self.final: dict[int, dict] = {}

    def __iter__(self):
        return (self.encode(k, v) for k, v in _generate(self.w, self.final))


def _generate(w: Workload, rows: dict[int, dict]):
    rng = random.Random(w.seed)
    live: list[int] = []
    where: dict[int, int] = {}  # id -> index in `live`, for O(1) removal
    gone: deque[int] = deque()  # deleted keys, in the order of their deletes
    next_id, ts, last_id = w.first_id, T0_MS, w.first_id + w.keys - 1
    for _ in range(w.events):
        ts += 1
        r = rng.random()
        if live and r < w.delete_share:
            op = "d"
        elif live and (r < w.delete_share + w.update_share or next_id > last_id):
            op = "u"
        else:  # a new key; with every key used and none live, the oldest deleted one comes back
            op = "c"
        if op == "c":
            if next_id <= last_id:
                cid, next_id = next_id, next_id + 1
            else:
                cid = gone.popleft()
            before = None
            after = {"id": cid, "name": f"customer-{cid:07d}", "segment": rng.choice(SEGMENTS),
                     "balance_cents": rng.randint(-10_000, 1_000_000), "updated_at": ts}
            if w.created_days:
                after["created_at"] = created_at(cid, w.created_days)
            where[cid] = len(live)
            live.append(cid)
        else:
            cid = live[rng.randrange(len(live))]
            before = rows[cid]
            if op == "u":
                after = {**before, "balance_cents": before["balance_cents"] + rng.randint(-5_000, 5_000),
                         "segment": rng.choice(SEGMENTS) if rng.random() < 0.1 else before["segment"],
                         "updated_at": ts}
            else:
                after = None
                i, last = where.pop(cid), live.pop()
                if last != cid:
                    live[i], where[last] = last, i
                gone.append(cid)
        if after is None:
            rows.pop(cid, None)
        else:
            rows[cid] = after
        value = {"before": before, "after": after, "op": op, "ts_ms": ts + 5,
                 "source": {"version": "2.7.3.Final", "connector": "mysql", "name": "bench", "ts_ms": ts,
                            "snapshot": "false", "db": "bench", "table": "customer"}}
        yield {"id": cid}, value


def created_at(cid: int, days: int) -> str:
    """Key `cid`'s creation time in the `days` days before T0_MS, as Debezium writes a MySQL TIMESTAMP
    (io.debezium.time.ZonedTimestamp, UTC): a function of the key alone, so the events' random draws, and every other
    value, stay those of the workload without it."""
    span = days * 86_400_000
    ms = T0_MS - span + (cid * 2_654_435_761) % span  # Knuth's multiplicative hash: keys spread over every day
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms // 1000))


def final_state(w: Workload) -> dict[int, dict]:
    events = Events(w)
    for _ in events:
        pass
    return events.final


def row_digest(row: dict) -> int:
    text = f"{int(row['id'])}|{row['name']}|{row['segment']}|{int(row['balance_cents'])}|{int(row['updated_at'])}"
    return zlib.crc32(text.encode())


def checksum(rows) -> tuple[int, int]:
    """(row count, order-independent checksum) of a table state."""
    n, total = 0, 0
    for r in rows:
        n += 1
        total = (total + row_digest(r)) % (1 << 61)
    return n, total


def produce_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, partitions, 1)])
    admin.close()


def partition_of(key: bytes, all_parts: list[int], available: list[int]) -> int:
    """A key's partition, the same in every producer of the bench (kafka-python's partitioner signature)."""
    return all_parts[zlib.crc32(key) % len(all_parts)]


def produce(bootstrap: str, topic: str, w: Workload, encode=json_message) -> dict:
    """Create `topic` with w.partitions and produce the workload; returns counts and the time it took."""
    from kafka import KafkaProducer

    produce_topic(bootstrap, topic, w.partitions)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, batch_size=512 * 1024,
                             compression_type=None, max_request_size=8 * 1024 * 1024,
                             partitioner=partition_of)
    t0 = time.monotonic()
    sent = 0
    for key, value in Events(w, encode):
        producer.send(topic, key=key, value=value)
        sent += 1
    producer.flush()
    producer.close()
    return {"messages": sent, "seconds": round(time.monotonic() - t0, 2)}


@contextmanager
def broker(work: Path, bootstrap: str | None) -> Iterator[str]:
    """The broker a bench runs on: `bootstrap` when given, else a local one started in `work` for the bench."""
    if bootstrap:
        yield bootstrap
        return
    from devtools.local_kafka import BrokerSpec, Listener, LocalBroker, free_port

    local = LocalBroker(BrokerSpec(work / "kafka", [Listener("PLAINTEXT", free_port())], heap="1g")).start()
    try:
        yield local.bootstrap
    finally:
        local.stop()
