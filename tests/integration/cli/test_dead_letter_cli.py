"""`cdcsync dead-letter list|show|replay` and `run` under "fail", as a user runs them: real processes, a real
broker, a small topic with every kind of malformed message among good Debezium events."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.cli import cdcsync as cli
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once
from tests.integration.engine.test_dead_letter import KINDS, _event, config, expected_table, mixed, produce_mixed

pytestmark = [pytest.mark.integration, pytest.mark.slow]




@pytest.fixture
def small(bootstrap, make_topic):
    topic = make_topic(partitions=2)
    data = mixed(n_good=400, n_bad=80, n_ids=60, n_tombstones=5, seed=61)
    coords = produce_mixed(bootstrap, topic, data)
    return topic, data, coords


def test_run_with_fail_exits_65_naming_the_first_bad_offset(small, bootstrap, tmp_path):
    topic, data, coords = small
    cfg = config(tmp_path, bootstrap, topic, **{"run.on_bad_record": "fail"})
    p = cli("run", str(cfg), "--once", "--json")
    assert p.returncode == 65, p.stderr[-2000:]
    first = min((po for po, (klass, _) in zip(coords, data.expect, strict=True) if klass == "bad"))
    reason = data.expect[coords.index(first)][1]
    assert f"{topic}/{first[0]} offset {first[1]}: {reason}" in p.stderr and "value (first 200 bytes)" in p.stderr
    assert p.stdout == ""
    assert not (tmp_path / "table" / ".hoodie" / "hoodie.properties").exists()
    assert not (tmp_path / "table_dead_letter").exists()


def test_list_show_replay(small, spark, bootstrap, produce, tmp_path):
    from cdcsync.config import load_config
    from cdcsync.engine.dead_letter_replay import selected
    from cdcsync.runtime.lock import WriterLock
    from cdcsync.sinks.dead_letter_view import Selection, records

    topic, data, coords = small
    cfg = config(tmp_path, bootstrap, topic)
    summary = run_once(cfg, spark)
    assert summary.totals["bad"] == 80 and summary.dead_letter_path == str(tmp_path / "table_dead_letter")
    bad = [(p, o, reason) for (p, o), (klass, reason) in zip(coords, data.expect, strict=True) if klass == "bad"]

    # list: reasons and counts per topic/partition
    p = cli("dead-letter", "list", str(cfg), "--json", jvm_free=True)
    assert p.returncode == 0, p.stderr[-2000:]
    listed = json.loads(p.stdout)
    assert listed["total"] == 80
    assert {(r["topic"], r["partition"], r["reason"]): r["count"] for r in listed["reasons"]} == {
        (topic, part, reason): n for (part, reason), n in Counter((p_, r) for p_, _, r in bad).items()}
    p = cli("dead-letter", "list", str(cfg), jvm_free=True)
    assert p.returncode == 0 and "80 record(s) not yet replayed" in p.stdout and "oversized" in p.stdout

    # show: coordinates, reason, message, a preview of at most 200 bytes
    p = cli("dead-letter", "show", str(cfg), "--reason", "oversized", "--limit", "0", "--json", jvm_free=True)
    assert p.returncode == 0, p.stderr[-2000:]
    shown = json.loads(p.stdout)
    assert [(r["partition"], r["offset"]) for r in shown] == sorted((p_, o) for p_, o, r in bad if r == "oversized")
    assert all(r["topic"] == topic and r["reason"] == "oversized" and "max_message_bytes" in r["error"]
               and len(r["value_preview"]) == 200 and r["value_bytes"] > 4096 for r in shown)
    p = cli("dead-letter", "show", str(cfg), "--reason", "invalid_utf8", "--limit", "1", jvm_free=True)
    assert p.returncode == 0 and "invalid_utf8: value is not valid UTF-8" in p.stdout and "1 record(s)" in p.stdout

    # replay needs a choice, and refuses while a run holds the writer lock
    assert cli("dead-letter", "replay", str(cfg)).returncode == 2
    fixed = config(tmp_path, bootstrap, topic, **{"source.max_message_bytes": 1_000_000})
    lock = WriterLock(spark, load_config(fixed).run.checkpoint_dir, "cdcsync run")
    lock.acquire("t")
    try:
        p = cli("dead-letter", "replay", str(fixed), "--all")
        assert p.returncode == 81 and "being written by cdcsync run" in p.stderr, p.stderr[-2000:]
    finally:
        lock.release()

    p = cli("dead-letter", "replay", str(fixed), "--reason", "oversized", "--reason", "missing_key", "--json")
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    n_over = sum(1 for *_, r in bad if r == "oversized")
    n_key = sum(1 for *_, r in bad if r == "missing_key")
    assert out["selected"] == n_over + n_key and out["replayed"] == n_over
    assert {r["reason"] for r in out["still_bad"]} == {"missing_key"} and len(out["still_bad"]) == n_key
    assert all(c["messages"] == c["upserted"] + c["deleted"] + c["skipped"] + c["bad"] for c in out["ledger"].values())
    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == expected_table({**data.rows,
                                                                                     **data.oversized_rows})

    p = cli("dead-letter", "list", str(fixed), "--json", jvm_free=True)
    left: Counter = Counter()
    for r in json.loads(p.stdout)["reasons"]:  # one entry per (topic, partition, reason)
        left[r["reason"]] += r["count"]
    assert "oversized" not in left and left["missing_key"] == n_key and sum(left.values()) == 80 - n_over
    assert set(left) == {r for *_, r in bad} - {"oversized"} and len(KINDS) == 8

    # a choice reads the same in Spark (replay) as without a JVM (list, show)
    fixed_cfg = load_config(fixed)
    part, lo = bad[len(bad) // 2][:2]
    for sel in (Selection(), Selection(include_replayed=True), Selection(("missing_key", "oversized")),
                Selection(topic=topic, partition=part, from_offset=lo, include_replayed=True),
                Selection(to_offset=lo), Selection(topic="elsewhere")):
        spark_rows = sorted((r["partition"], r["offset"], r["row_index"]) for r in
                            selected(spark, fixed_cfg, sel).select("partition", "offset", "row_index").collect())
        assert sorted((r["partition"], r["offset"], r["row_index"]) for r in records(fixed_cfg, sel, None)) == \
            spark_rows, sel
    assert len(records(fixed_cfg, Selection(include_replayed=True), None)) == 80

    # the replay moved no resume offsets: the next run reads only what arrived since, and balances
    late = {5000 + i: {"id": 5000 + i, "name": f"late{i}", "amount": "1.50", "born": "2000-01-01", "qty": i}
            for i in range(20)}
    produce(topic, [_event("c", None, r, 1_800_000_000_000 + r["id"]) for r in late.values()],
            keys=[json.dumps({"id": i}) for i in late])
    again = run_once(fixed, spark)
    assert again.totals["messages"] == again.totals["upserted"] == 20 and again.totals["bad"] == 0
    assert all(c["messages"] == c["upserted"] + c["deleted"] + c["skipped"] + c["bad"] for c in again.ledger.values())
    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == expected_table(
        {**data.rows, **data.oversized_rows, **late})
