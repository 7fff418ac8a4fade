"""Issue 8, point 5: with max_records_per_second a backlog is read in bounded batches at no more than the rate;
a 200k-record backlog takes at least the implied time while the JVM heap and both processes' memory stay flat."""

from __future__ import annotations

import os
import time

import pytest

from cdcsync.reporting import PlainReporter
from tests.integration.engine.helpers import run_once, spark_rows, write_config

pytestmark = pytest.mark.integration


def test_backlog_is_paced_in_bounded_batches(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    produce(topic, [{"id": i} for i in range(400)])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.max_records_per_second": 100,
                          "run.trigger_interval": "1s"})
    t0 = time.monotonic()
    summary = run_once(cfg, spark)
    elapsed = time.monotonic() - t0
    assert summary.batches == 4, summary.ledger
    assert summary.totals["messages"] == 400
    assert elapsed >= 400 / 100  # never faster than the rate
    assert len(spark_rows(spark, str(tmp_path / "table"))) == 400


N_BACKLOG = 200_000
RATE = 2_000
TRIGGER_S = 10


def _rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


class MemoryProbe(PlainReporter):
    """After every batch: the JVM heap in use after a full GC, and the resident size of both processes."""

    def __init__(self, spark):
        super().__init__(quiet=True)
        self.jvm = spark._jvm
        self.jvm_pid = int(self.jvm.java.lang.ProcessHandle.current().pid())
        self.samples: list[tuple[float, float, float]] = []
        self.reads: list[tuple[float, int]] = []  # (seconds since start when the batch ended, records so far)
        self.t0 = time.monotonic()

    def event(self, kind, **fields):
        if kind == "batch":
            self.reads.append((time.monotonic() - self.t0, (self.reads[-1][1] if self.reads else 0) + fields["read"]))
            rt = self.jvm.java.lang.Runtime.getRuntime()
            self.jvm.java.lang.System.gc()
            heap = (rt.totalMemory() - rt.freeMemory()) / 2**20
            self.samples.append((heap, _rss_mb(self.jvm_pid), _rss_mb(os.getpid())))


@pytest.mark.soak  # 200k records paced over minutes
def test_200k_backlog_takes_the_implied_time_with_flat_memory(spark, bootstrap, make_topic, tmp_path):
    from kafka import KafkaProducer

    topic = make_topic(partitions=4)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=50, batch_size=256 * 1024)
    for i in range(N_BACKLOG):
        producer.send(topic, value=b'{"id": %d, "v": "value-%d"}' % (i, i))
    producer.flush()
    producer.close()
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.max_records_per_second": RATE,
                          "run.trigger_interval": f"{TRIGGER_S}s"})
    t0 = time.monotonic()
    probe = MemoryProbe(spark)
    summary = run_once(cfg, spark, reporter=probe)
    elapsed = time.monotonic() - t0
    assert summary.totals["messages"] == N_BACKLOG and summary.totals["upserted"] == N_BACKLOG
    assert summary.batches == N_BACKLOG // (RATE * TRIGGER_S)  # each batch is one trigger interval's worth
    assert elapsed >= N_BACKLOG / RATE, f"{elapsed:.1f}s for {N_BACKLOG} records at {RATE}/s"
    for (_, before), (t, _) in zip(probe.reads, probe.reads[1:], strict=False):  # batch k read after the pause
        assert t >= before / RATE, probe.reads
    print(f"\n200k backlog at {RATE}/s: {elapsed:.1f}s (implied {N_BACKLOG / RATE:.0f}s); per batch "
          "(heap after GC MB, JVM RSS MB, Python RSS MB): "
          + "; ".join(f"{h:.0f}/{j:.0f}/{p:.0f}" for h, j, p in probe.samples)
          + "; batch ends (s, records): " + "; ".join(f"{t:.0f}/{n}" for t, n in probe.reads))
    heaps = [h for h, _, _ in probe.samples]
    rss = [j for _, j, _ in probe.samples]
    py = [p for _, _, p in probe.samples]
    # flat: the heap still in use after a full GC levels off (Spark's bounded UI/listener history is the slow
    # rise; a 30-batch run levels at ~120-140 MB), nothing scales with the backlog, Python's driver stays put
    assert max(heaps) <= heaps[0] + 128, heaps
    assert sum(heaps[-3:]) <= sum(heaps[-6:-3]) * 1.15, heaps
    assert max(rss) <= 2048 + 1024, rss  # spark.driver.memory = 2g plus off-heap: bounded, not growing with data
    assert max(py) <= py[0] + 32, py
    assert spark.read.format("hudi").load(str(tmp_path / "table")).count() == N_BACKLOG
