"""bench/parse.py without a JVM: the messages it parses and the summary of its runs."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from bench import parse
from bench.workload import Events, Workload


def test_the_messages_are_the_workloads_in_produce_order_per_partition(tmp_path):
    path = tmp_path / "m.parquet"
    assert parse.write_messages(path, 40) == 40
    t = pq.read_table(path).to_pylist()
    want = list(Events(Workload(events=40, keys=8)))
    assert [(r["key"], r["value"]) for r in t] == want
    for p in range(4):
        assert [r["offset"] for r in t if r["partition"] == p] == list(range(10))
    assert {json.loads(r["value"])["op"] for r in t} <= {"c", "u", "d"}


def test_the_summary_gives_each_variants_median_and_its_share_over_reading():
    runs = [{"variant": v, "seconds": s, "round": i} for i, (v, s) in enumerate(
        [("read", 1.0), ("peer", 2.5), ("read", 1.2), ("peer", 2.0), ("read", 0.9), ("peer", 3.0)])]
    got = parse.summary(runs)
    assert got["read"] == {"runs": 3, "median_s": 1.0, "min_s": 0.9, "max_s": 1.2, "over_read_s": 0.0}
    assert got["peer"]["median_s"] == 2.5 and got["peer"]["over_read_s"] == 1.5


def test_the_flight_recording_gives_the_methods_most_on_the_cpu_by_their_own_time_and_with_their_callees():
    def sample(*frames):
        stack = "\n".join(f"    {f}(Object) line: 1" for f in frames)
        return f'jdk.ExecutionSample {{\n  state = "STATE_RUNNABLE"\n  stackTrace = [\n{stack}\n  ]\n}}\n'

    printed = (sample("a.Json.copy", "a.Json.parse", "b.Task.run") + sample("a.Json.parse", "b.Task.run")
               + sample("c.Row.write", "b.Task.run") + sample("a.Json.copy", "a.Json.copy", "a.Json.parse"))
    got = parse.jfr_top(printed)
    assert got["samples"] == 4
    assert got["self"] == {"a.Json.copy": 50.0, "a.Json.parse": 25.0, "c.Row.write": 25.0}
    assert got["total"]["a.Json.parse"] == 75.0 and got["total"]["b.Task.run"] == 75.0
    assert got["total"]["a.Json.copy"] == 50.0  # a recursive frame counts once per sample
