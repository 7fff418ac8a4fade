"""Acceptance (issue 6, points 1-3): 100,000 good Debezium events mixed with 10,000 malformed messages of eight
kinds on a real 2-partition topic. The good rows land exactly (read with hudi-rs), every bad message is in the
dead-letter table with its coordinates and reason, the ledger balances per partition; "fail" stops at the first
bad record with nothing committed; after a config fix a replay lands the fixable records and balances."""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
import time
from dataclasses import dataclass, field
from decimal import Decimal

import pytest

from tests.integration.engine.helpers import by_key, completed_commits, hudi_rs_rows, run_once, write_config

pytestmark = pytest.mark.integration

DECLARED = {"id": "BIGINT", "name": "STRING", "amount": "DECIMAL(10,2)", "born": "DATE", "qty": "INT"}
MAX_BYTES = 4096
KINDS = ("truncated_json", "binary_garbage", "wrong_envelope", "missing_key", "bad_decimal", "wrong_type",
         "oversized", "invalid_utf8")


@dataclass
class Mixed:
    """Messages in production order, with what each one must become."""

    messages: list[tuple[int, bytes | None, bytes | None]] = field(default_factory=list)  # (partition, key, value)
    expect: list[tuple[str, str | None]] = field(default_factory=list)  # (class, reason)
    kind: list[str | None] = field(default_factory=list)
    rows: dict[int, dict | None] = field(default_factory=dict)  # final state of good events: id -> row or None
    oversized_rows: dict[int, dict] = field(default_factory=dict)  # what the oversized events carry


def _event(op: str, before: dict | None, after: dict | None, ts: int) -> dict:
    return {"before": before, "after": after, "op": op, "ts_ms": ts,
            "source": {"db": "shop", "table": "orders", "ts_ms": ts}}


def _row(rng: random.Random, i: int, ident: int | None) -> dict:
    born = dt.date(1950, 1, 1) + dt.timedelta(days=rng.randrange(25000))
    return {"id": ident, "name": f"n{ident}-{i}", "amount": f"{rng.randrange(10**9) / 100:.2f}",
            "born": born.isoformat(), "qty": rng.randrange(-1000, 1000)}


def _bad(kind: str, rng: random.Random, i: int, ident: int, ts: int) -> tuple[bytes | None, bytes, str, dict]:
    """(key, value, expected reason, the row it carries) for one malformed message of `kind`."""
    row = _row(rng, i, ident)
    key = json.dumps({"id": ident}).encode()
    good = json.dumps(_event("c", None, row, ts)).encode()
    if kind == "truncated_json":
        cut = good[: rng.randrange(10, len(good) - 2)].rstrip(b"}")
        return key, cut, "invalid_json", row
    if kind == "binary_garbage":
        value = rng.randbytes(rng.randrange(8, 120))
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return key, value, "invalid_utf8", row
        return key, value, "invalid_json", row
    if kind == "wrong_envelope":
        ev = _event("c", None, row, ts)
        del ev["op"]
        return key, json.dumps(ev).encode(), "missing_field", row
    if kind == "missing_key":
        return None, json.dumps(_event("c", None, {**row, "id": None}, ts)).encode(), "missing_key", row
    if kind == "bad_decimal":
        row["amount"] = rng.choice(["12.3.4", "1e", "abc", "123456789012.50"])
        return key, json.dumps(_event("c", None, row, ts)).encode(), "bad_value", row
    if kind == "wrong_type":
        if rng.random() < 0.5:
            row["qty"] = rng.choice(["many", "1.5x", "[1]"])
        else:
            row["born"] = rng.choice(["2021-02-30", "not a date", "13/13/2013"])
        return key, json.dumps(_event("c", None, row, ts)).encode(), "bad_value", row
    if kind == "oversized":
        row["name"] = "x" * (MAX_BYTES + rng.randrange(1, 2000))
        return key, json.dumps(_event("c", None, row, ts)).encode(), "oversized", row
    if kind == "invalid_utf8":
        return key, good.replace(row["name"].encode(), row["name"].encode() + b"\xff\xfe\xc3"), "invalid_utf8", row
    raise AssertionError(kind)


def mixed(n_good: int, n_bad: int, n_ids: int, n_tombstones: int = 0, seed: int = 6) -> Mixed:
    """Good creates/updates/deletes over n_ids keys (partition = id % 2, so each key's events keep their order),
    with n_bad malformed messages (ids from 10**6 up, each kind equally often) and tombstones spread among them."""
    rng = random.Random(seed)
    out = Mixed()
    slots = ["good"] * n_good + [KINDS[j % len(KINDS)] for j in range(n_bad)] + ["tomb"] * n_tombstones
    rng.shuffle(slots)
    live: dict[int, dict] = {}
    for i, slot in enumerate(slots):
        ts = 1_700_000_000_000 + i
        if slot == "good":
            ident = rng.randrange(n_ids)
            before = live.get(ident)
            if before is None:
                op, after = rng.choice("cr"), _row(rng, i, ident)
            elif rng.random() < 0.15:
                op, after = "d", None
            else:
                op, after = "u", _row(rng, i, ident)
            value = json.dumps(_event(op, before, after, ts)).encode()
            out.messages.append((ident % 2, json.dumps({"id": ident}).encode(), value))
            out.expect.append(("deleted" if op == "d" else "upserted", None))
            out.kind.append(None)
            if after is None:
                live.pop(ident, None)
            else:
                live[ident] = after
            out.rows[ident] = after
        elif slot == "tomb":
            ident = rng.randrange(n_ids)
            out.messages.append((ident % 2, json.dumps({"id": ident}).encode(), None))
            out.expect.append(("skipped", None))
            out.kind.append(None)
        else:
            ident = 10**6 + i
            key, value, reason, row = _bad(slot, rng, i, ident, ts)
            out.messages.append((ident % 2, key, value))
            out.expect.append(("bad", reason))
            out.kind.append(slot)
            if slot == "oversized":
                out.oversized_rows[ident] = row
    return out


def produce_mixed(bootstrap: str, topic: str, data: Mixed) -> list[tuple[int, int]]:
    """Batched, asynchronous sends (no per-message flush); returns each message's (partition, offset)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=50, batch_size=512 * 1024,
                             max_request_size=4 * 1024 * 1024)
    try:
        futures = [producer.send(topic, key=k, value=v, partition=p) for p, k, v in data.messages]
        producer.flush()
        return [(md.partition, md.offset) for md in (f.get(timeout=60) for f in futures)]
    finally:
        producer.close()


def expected_table(rows: dict[int, dict | None]) -> dict:
    typed = []
    for r in rows.values():
        if r is not None:
            typed.append({"id": r["id"], "name": r["name"], "amount": Decimal(r["amount"]),
                          "born": dt.date.fromisoformat(r["born"]), "qty": r["qty"]})
    return by_key(typed, ["id"])


def commit_metadata(spark, path: str) -> list[dict]:
    """Every completed commit's cdcsync metadata (JSON values decoded), oldest first."""
    from cdcsync.sinks import hudi

    out = []
    for instant, md in completed_commits(spark, path):
        extra = md.getExtraMetadata()
        got = {"instant": instant}
        for k in extra.keySet().toArray():
            if str(k).startswith(hudi.META_PREFIX):
                v = extra.get(k)
                try:
                    got[str(k)[len(hudi.META_PREFIX):]] = json.loads(v)
                except ValueError:
                    got[str(k)[len(hudi.META_PREFIX):]] = v
        out.append(got)
    return out


def expected_ledger(topic: str, data: Mixed, coords: list[tuple[int, int]]) -> dict:
    ledger: dict[str, dict[str, int]] = {}
    for (p, _), (klass, _) in zip(coords, data.expect, strict=True):
        c = ledger.setdefault(f"{topic}/{p}", {"messages": 0, "upserted": 0, "deleted": 0, "skipped": 0, "bad": 0})
        c["messages"] += 1
        c[klass] += 1
    return ledger


def config(tmp_path, bootstrap, topic, **extra):
    return write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ", **{
        "sink.primary_key": ["id"], "schema.columns": DECLARED, "source.max_message_bytes": MAX_BYTES,
        "run.on_bad_record": "dead-letter", **extra})


@pytest.fixture(scope="module")
def big(bootstrap, tmp_path_factory, spark):
    """The 110,000-message topic, landed once with on_bad_record = "dead-letter"."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    topic = f"dead_letter_big_{int(time.time())}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 2, 1)])
    admin.close()
    data = mixed(n_good=100_000, n_bad=10_000, n_ids=30_000, n_tombstones=500)
    t0 = time.monotonic()
    coords = produce_mixed(bootstrap, topic, data)
    produced_s = time.monotonic() - t0
    tmp = tmp_path_factory.mktemp("dead_letter_big")
    cfg = config(tmp, bootstrap, topic)
    t0 = time.monotonic()
    summary = run_once(cfg, spark)
    run_s = time.monotonic() - t0
    print(f"\nbig: produced {len(coords)} messages in {produced_s:.1f}s; run --once in {run_s:.1f}s, "
          f"{summary.batches} batch(es), totals {summary.totals}")
    return {"topic": topic, "data": data, "coords": coords, "tmp": tmp, "cfg": cfg, "summary": summary}


@pytest.mark.slow
def test_good_rows_exact_bad_ones_dead_lettered_ledger_balanced(big, spark):
    data, coords, tmp, topic, summary = big["data"], big["coords"], big["tmp"], big["topic"], big["summary"]
    kinds = {k for k in data.kind if k}
    assert kinds == set(KINDS) and sum(1 for k in data.kind if k) == 10_000
    assert sum(1 for c, _ in data.expect if c in ("upserted", "deleted")) == 100_000
    assert summary.totals["messages"] == len(coords) == 110_500
    assert summary.totals["bad"] == 10_000

    # the good rows, read with hudi-rs (no JVM), equal the final state computed here
    got = by_key(hudi_rs_rows(str(tmp / "table")), ["id"])
    want = expected_table(data.rows)
    assert len(want) > 10_000 and got == want

    # every bad message: its coordinates and reason
    dl = spark.read.format("hudi").load(str(tmp / "table_dead_letter"))
    bad_rows = dl.select("topic", "partition", "offset", "reason", "value").collect()
    got_bad = {(r.topic, r.partition, r.offset): r.reason for r in bad_rows}
    want_bad = {(topic, p, o): reason for (p, o), (klass, reason) in zip(coords, data.expect, strict=True)
                if klass == "bad"}
    assert got_bad == want_bad
    # byte for byte as produced: random bytes and invalid UTF-8 included (the decode carries a text value only)
    produced = {(topic, p, o): value for (p, o), (_, _, value) in zip(coords, data.messages, strict=True)}
    assert all(bytes(r.value) == produced[(r.topic, r.partition, r.offset)] for r in bad_rows)
    sample = dl.where("reason = 'oversized'").select("value", "value_text", "key", "error", "batch_id",
                                                      "cdcsync_version", "first_seen", "kafka_timestamp",
                                                      "replayed").first()
    assert sample.value_text is not None and bytes(sample.value) == sample.value_text.encode()
    assert str(MAX_BYTES) in sample.error and sample.first_seen and sample.kafka_timestamp and not sample.replayed
    p, o = coords[data.kind.index("invalid_utf8")]  # not a binary_garbage one, which has the same reason
    utf8 = dl.where(f"partition = {p} AND offset = {o}").select("reason", "value", "value_text").first()
    assert utf8.reason == "invalid_utf8"
    assert utf8.value_text is None and b"\xff\xfe" in bytes(utf8.value)

    # the ledger: per partition, consumed = upserted + deleted + dead-lettered + skipped, in the commit metadata
    want_ledger = expected_ledger(topic, data, coords)
    commits = [m for m in commit_metadata(spark, str(tmp / "table")) if "ledger" in m]
    got_ledger: dict[str, dict[str, int]] = {}
    for m in commits:
        for tp, c in m["ledger"].items():
            assert c["messages"] == c["upserted"] + c["deleted"] + c["skipped"] + c["bad"], (tp, c)
            acc = got_ledger.setdefault(tp, {k: 0 for k in ("messages", "upserted", "deleted", "skipped", "bad")})
            for k in acc:
                acc[k] += c[k]
    assert got_ledger == want_ledger
    assert {tp: {k: c[k] for k in want_ledger[tp]} for tp, c in summary.ledger.items()} == want_ledger


@pytest.mark.slow
def test_fail_policy_stops_at_the_first_bad_record_with_nothing_committed(big, spark, bootstrap, tmp_path):
    from cdcsync.errors import DecodeError
    from cdcsync.exit_codes import ExitCode

    topic, data, coords = big["topic"], big["data"], big["coords"]
    cfg = config(tmp_path, bootstrap, topic, **{"run.on_bad_record": "fail"})
    with pytest.raises(DecodeError) as err:
        run_once(cfg, spark)
    first = min((p, o) for (p, o), (klass, _) in zip(coords, data.expect, strict=True) if klass == "bad")
    reason = data.expect[coords.index(first)][1]
    assert err.value.exit_code == ExitCode.BAD_RECORD == 65
    assert f"{topic}/{first[0]} offset {first[1]}: {reason}" in str(err.value)
    assert "value (first 200 bytes)" in str(err.value)
    assert not (tmp_path / "table" / ".hoodie" / "hoodie.properties").exists()
    assert not (tmp_path / "table_dead_letter").exists()


@pytest.mark.slow
def test_replay_after_fixing_the_config_lands_the_records_and_balances(big, spark, bootstrap, tmp_path):
    from cdcsync.config import load_config
    from cdcsync.engine.dead_letter_replay import replay
    from cdcsync.reporting import PlainReporter
    from cdcsync.sinks import hudi
    from cdcsync.sinks.dead_letter_view import Selection, reason_counts

    topic, data = big["topic"], big["data"]
    for name in ("table", "table_dead_letter"):  # a copy: the landed tables stay as the other tests saw them
        shutil.copytree(big["tmp"] / name, tmp_path / name)
    before = hudi.last_checkpoint(spark, str(tmp_path / "table"))
    # the fix: values up to 1 MB are fine after all
    cfg = load_config(config(tmp_path, bootstrap, topic, **{"source.max_message_bytes": 1_000_000}))

    result = replay(spark, cfg, Selection(reasons=("oversized",)), PlainReporter())

    n = len(data.oversized_rows)
    assert result.selected == result.messages == result.replayed == n == 1250 and not result.still_bad
    assert sum(c["messages"] for c in result.ledger.values()) == n
    for tp, c in result.ledger.items():
        assert c["messages"] == c["upserted"] + c["deleted"] + c["skipped"] + c["bad"] and c["bad"] == 0, (tp, c)
    got = by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"])
    want = expected_table({**data.rows, **data.oversized_rows})
    assert got == want
    # the replay commit never moves the pipeline's resume offsets
    replay_commit = commit_metadata(spark, str(tmp_path / "table"))[-1]
    assert "replay" in replay_commit and "offsets" not in replay_commit
    assert hudi.last_checkpoint(spark, str(tmp_path / "table"))["offsets"] == before["offsets"]
    counts: dict[str, list[int]] = {}  # reason -> [count, replayed], summed over the partitions
    for c in reason_counts(cfg, Selection(include_replayed=True)):
        acc = counts.setdefault(c["reason"], [0, 0])
        acc[0], acc[1] = acc[0] + c["count"], acc[1] + c["replayed"]
    assert counts.pop("oversized") == [n, n]
    assert sum(c for c, _ in counts.values()) == 10_000 - n and all(r == 0 for _, r in counts.values())

    # everything else is still bad: reported, left un-replayed, nothing written twice
    again = replay(spark, cfg, Selection(), PlainReporter())
    assert again.selected == 10_000 - n and again.replayed == 0 and len(again.still_bad) == 10_000 - n
    assert {r["reason"] for r in again.still_bad} == {r for _, r in data.expect if r} - {"oversized"}
    for tp, c in again.ledger.items():
        assert c["messages"] == c["bad"] == c["upserted"] + c["deleted"] + c["skipped"] + c["bad"], (tp, c)
    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == want
    assert hudi.last_checkpoint(spark, str(tmp_path / "table"))["offsets"] == before["offsets"]
