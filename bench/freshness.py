"""Freshness: produce at a fixed rate while a job with a 1 s trigger runs (`cdcsync run`, or the peer's streaming
query), then read when each record became visible.

cdcsync: each completed Hudi instant is named `<requested>_<completion>.<action>` and its commit metadata holds the
end offsets cdcsync wrote with it; a record is visible to snapshot queries from the completion of the first commit
whose end offset for its partition is past it. The peer: Spark's checkpoint holds each batch's end offsets
(`offsets/<n>`), and `commits/<n>` is written once Hudi's sink committed the batch (its time is an upper bound, by
milliseconds, of when the rows became visible). Latency = that time - the time the record was sent.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.workload import Events, Workload


def completed_commits(table: str) -> list[tuple[float, dict[int, int]]]:
    """[(completion epoch seconds, {partition: end offset})] of cdcsync's commits, oldest first."""
    from cdcsync.sinks import timeline

    out = [(c.instant.completed_at.timestamp(), next(iter(c.offsets.values())))
           for c in timeline.Timeline(table).commits() if c.offsets]  # compactions carry none
    return sorted(out, key=lambda c: c[0])


def peer_commits(checkpoint: Path) -> list[tuple[float, dict[int, int]]]:
    """[(time the batch was committed, {partition: end offset})] of the peer's streaming query, oldest first."""
    out = []
    for done in (checkpoint / "commits").glob("[0-9]*"):
        ends = json.loads((checkpoint / "offsets" / done.name).read_text().splitlines()[-1])
        out.append((done.stat().st_mtime, {int(p): o for p, o in next(iter(ends.values())).items()}))
    return sorted(out, key=lambda c: c[0])


@dataclass(frozen=True)
class Job:
    """What the freshness run measures: the command that runs it, its table, and its commits as far as they go."""

    name: str
    command: list[str]
    table: str
    commits: Callable[[], list[tuple[float, dict[int, int]]]]

    @classmethod
    def cdcsync(cls, config: Path) -> Job:
        table = _table_path(config)
        return cls("cdcsync", [sys.executable, "-m", "cdcsync", "run", str(config)], table,
                   lambda: completed_commits(table))

    @classmethod
    def peer(cls, bootstrap: str, topic: str, path: Path, options: dict[str, str] | None = None,
             name: str = "peer", spark: dict[str, str] | None = None) -> Job:
        """The peer's streaming query as a service (its session as cdcsync's service's: bench/peer.py), with these
        Hudi write options over its own and these Spark settings over the service's."""
        return cls(name, [sys.executable, "-m", "bench.peer", bootstrap, topic, str(path), "MERGE_ON_READ",
                          "--processing-time", "1 second", "--options", json.dumps(options or {}),
                          "--spark-conf", json.dumps(spark or {})], str(path),
                   lambda: peer_commits(Path(f"{path}_checkpoint")))


def measure(bootstrap: str, topic: str, job: Job, rate: int, seconds: int, partitions: int = 4,
            check=None) -> dict:
    """`check(table path)` → (rows, checksum) of the table as hudi-rs reads it, held against the produced state."""
    import threading

    from kafka import KafkaProducer

    from bench.measure import compactions, tree_rss
    from bench.workload import checksum, produce_topic

    produce_topic(bootstrap, topic, partitions)
    table = job.table
    # per-batch timings, for diagnosis
    log = Path(__file__).resolve().parent / "results" / f"freshness-{job.name}.log"
    log.parent.mkdir(exist_ok=True)
    run = subprocess.Popen(job.command, stdout=subprocess.DEVNULL, stderr=log.open("w"))
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=0)
    sent: dict[tuple[int, int], float] = {}
    source = Events(Workload(events=rate * seconds + 1000, keys=max(1000, rate * seconds // 4),
                             partitions=partitions))
    events = iter(source)
    rss: list[tuple[float, int]] = []  # (seconds since the measured produce began, the run's memory)
    seen: dict[float, dict[int, int]] = {}  # every commit seen while it was on the active timeline
    done = threading.Event()

    def sample():  # Hudi archives older instants: a long run's early commits leave the active timeline
        while not done.wait(1.0):
            rss.append((time.time() - t0, tree_rss(run.pid)))
            try:
                seen.update(job.commits())
            except OSError:  # an instant archived while it was read: the next look has the rest
                pass

    t0 = time.time()
    try:
        for key, value in _take(events, 200):  # warm-up: the first commit also starts the JVM's JIT
            producer.send(topic, key=key, value=value)
        producer.flush()
        _wait(job.commits, 300, "the first commit")
        t0 = time.time()
        threading.Thread(target=sample, daemon=True).start()
        for i, (key, value) in enumerate(_take(events, rate * seconds)):
            time.sleep(max(0.0, t0 + i / rate - time.time()))
            t_send = time.time()
            producer.send(topic, key=key, value=value).add_callback(
                lambda md, t=t_send: sent.__setitem__((md.partition, md.offset), t))
        producer.flush()
        produced_s = time.time() - t0
        last = {p: 0 for p in range(partitions)}
        for p, o in sent:
            last[p] = max(last[p], o + 1)
        _wait(lambda: (c := job.commits()) and all(c[-1][1].get(p, 0) >= o for p, o in last.items()),
              120, f"{job.name} to catch up")
    finally:
        done.set()
        producer.close()
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=120)
    seen.update(job.commits())
    commits = sorted(seen.items())
    state = check(table) if check else None
    lat = sorted(next(when for when, ends in commits if ends.get(p, 0) > o) - t for (p, o), t in sent.items())
    q = statistics.quantiles(lat, n=100)
    return {"rate_target": rate, "rate_achieved": round(len(sent) / produced_s), "seconds": seconds,
            "records": len(lat), "commits": len(commits), "p50_s": round(q[49], 3), "p95_s": round(q[94], 3),
            "p99_s": round(q[98], 3), "max_s": round(lat[-1], 3), "compactions": compactions(Path(table)),
            "rss_mb": _rss_trend(rss, seconds),
            "state_matches": None if state is None else state == checksum(source.final.values())}


def _rss_trend(samples: list[tuple[float, int]], seconds: int) -> dict:
    """Mean memory of the run in its second minute and its last minute, and their ratio (flat: near 1)."""
    def mean_mb(lo: float, hi: float) -> float | None:
        got = [b for t, b in samples if lo <= t < hi]
        return round(sum(got) / len(got) / 2**20, 1) if got else None

    second, last = mean_mb(60, 120), mean_mb(seconds - 60, seconds)
    return {"second_minute": second, "last_minute": last,
            "last_over_second": round(last / second, 3) if second and last else None}


def _take(it, n):
    for _ in range(n):
        yield next(it)


def _wait(ready, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {timeout:.0f}s")
        time.sleep(0.2)


def _table_path(config: Path) -> str:
    import tomllib

    return tomllib.loads(config.read_text())["sink"]["path"]
