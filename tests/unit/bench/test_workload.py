"""The bench workload is what issue 9 asks for and what its checksum assumes: reproducible, the right mix, and a
final state that replaying the events by hand confirms."""

from __future__ import annotations

import json
from collections import Counter

from bench.workload import Events, Workload, checksum, final_state


def test_mix_keys_and_partitions_follow_the_spec():
    w = Workload(events=20_000, keys=4_000)
    ops, keys = Counter(), set()
    for key, value in Events(w):
        e = json.loads(value)
        ops[e["op"]] += 1
        keys.add(json.loads(key)["id"])
    assert sum(ops.values()) == 20_000 and len(keys) == 4_000
    assert abs(ops["u"] / 20_000 - 0.75) < 0.02 and abs(ops["d"] / 20_000 - 0.05) < 0.01
    assert ops["c"] == 4_000  # every key is inserted once, before any change to it


def test_same_seed_same_bytes_and_state():
    w = Workload.named("tiny")
    assert list(Events(w)) == list(Events(w))
    assert checksum(final_state(w).values()) == checksum(final_state(w).values())
    assert checksum(final_state(w).values()) != checksum(final_state(Workload(2_000, 400, seed=1)).values())


def replayed(w: Workload) -> tuple[dict, Counter]:
    """The table the events leave when applied by hand, and their operations; every insert is of a key not live,
    every event newer than the one before."""
    table, ops, last_ts = {}, Counter(), 0
    for _, value in Events(w):
        e = json.loads(value)
        assert e["source"]["ts_ms"] > last_ts  # strictly increasing: newest-by-time equals last-in-log
        last_ts = e["source"]["ts_ms"]
        ops[e["op"]] += 1
        if e["op"] == "d":
            del table[e["before"]["id"]]
        else:
            assert (e["op"] == "c") == (e["after"]["id"] not in table)
            table[e["after"]["id"]] = e["after"]
    return table, ops


def test_final_state_is_the_replay_of_the_events():
    w = Workload.named("tiny")
    assert replayed(w)[0] == final_state(w)


def test_checksum_ignores_order_but_not_values():
    rows = list(final_state(Workload.named("tiny")).values())
    assert checksum(rows) == checksum(reversed(rows))
    changed = [{**rows[0], "balance_cents": rows[0]["balance_cents"] + 1}] + rows[1:]
    assert checksum(changed) != checksum(rows) and checksum(rows[1:])[0] == len(rows) - 1


def test_a_grown_tables_seed_is_inserts_of_keys_apart_from_the_workloads():
    seed = Workload(events=3_000, keys=3_000, update_share=0.0, delete_share=0.0, seed=43, first_id=1_000_000)
    ops = Counter(json.loads(v)["op"] for _, v in Events(seed))
    assert ops == {"c": 3_000}
    assert set(final_state(seed)) == set(range(1_000_000, 1_003_000))
    assert not set(final_state(seed)) & set(final_state(Workload.named("tiny")))  # the two states simply add up


def test_the_freshness_memory_trend_compares_the_second_and_the_last_minute():
    from bench.freshness import _rss_trend

    samples = [(t, (100 if t < 120 else 105) * 2**20) for t in range(0, 600)]
    assert _rss_trend(samples, 600) == {"second_minute": 100.0, "last_minute": 105.0, "last_over_second": 1.05}
    assert _rss_trend(samples[:30], 600)["last_over_second"] is None  # too short a run to say


def test_the_peers_commits_are_its_checkpoints_committed_batches_with_their_end_offsets(tmp_path):
    from bench.freshness import peer_commits

    (tmp_path / "offsets").mkdir()
    (tmp_path / "commits").mkdir()
    for n, ends in enumerate([{"0": 10, "1": 4}, {"0": 25, "1": 9}]):  # Spark's offset log: version, metadata, offsets
        (tmp_path / "offsets" / str(n)).write_text(f'v1\n{{"batchWatermarkMs":0}}\n{{"fresh":{json.dumps(ends)}}}')
    (tmp_path / "commits" / "0").write_text('v1\n{"nextBatchWatermarkMs":0}')
    (tmp_path / "commits" / ".0.crc").write_text("")
    got = peer_commits(tmp_path)
    assert [ends for _, ends in got] == [{0: 10, 1: 4}], "batch 1 is planned, not committed: not visible yet"
    assert got[0][0] == (tmp_path / "commits" / "0").stat().st_mtime


def test_a_workload_whose_deletes_use_every_key_up_brings_deleted_keys_back():
    w = Workload(events=400, keys=10, update_share=0.0, delete_share=0.5)  # more deletes than keys to insert
    table, ops = replayed(w)
    assert ops["c"] > 10 and ops["d"] > 10  # keys deleted and inserted again
    assert table == final_state(w) and set(table) <= set(range(1, 11))
