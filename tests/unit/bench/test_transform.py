"""The transform pair's expected state (bench/transform.py) is the SELECT over the workload's final state: DuckDB's
reading of the transpiled SQL agrees with the plain-Python reading of it, and the workload with `created_at` differs
from the plain one in that column alone."""

from __future__ import annotations

import datetime
import json
import tomllib
from dataclasses import replace

from bench import run
from bench import transform as tf
from bench.workload import Events, Workload, final_state


def _created() -> Workload:
    return replace(Workload.named("tiny"), created_days=tf.DAYS)


def test_the_expected_table_is_the_select_over_the_final_state_read_by_hand():
    source = list(final_state(_created()).values())
    by_hand = [{**r, "day": datetime.date.fromisoformat(r["created_at"][:10])} for r in source
               if r["balance_cents"] % 10 != 0]  # Python's % differs from SQL's for negatives, but not at 0
    got = tf.expected(source)
    assert tf.checksum(got) == tf.checksum(by_hand)
    assert sorted(got, key=lambda r: r["id"]) == sorted(by_hand, key=lambda r: r["id"])
    assert 0 < len(source) - len(got) < 0.2 * len(source)  # about 10 % of the rows rejected, not none, not most
    assert tf.days(got) == {f"day={d:%Y-%m-%d}" for d in (r["day"] for r in by_hand)}
    assert len(tf.days(got)) == tf.DAYS  # every day of the span holds rows


def test_the_checksum_sees_the_day_and_created_at():
    rows = tf.expected(final_state(_created()).values())
    moved = [{**rows[0], "day": rows[0]["day"] + datetime.timedelta(days=1)}, *rows[1:]]
    recreated = [{**rows[0], "created_at": "2000-01-01T00:00:00Z"}, *rows[1:]]
    assert tf.checksum(moved) != tf.checksum(rows) != tf.checksum(recreated)
    assert tf.checksum(reversed(rows)) == tf.checksum(rows)


def test_created_at_is_the_only_difference_from_the_plain_workload():
    plain, created = list(Events(Workload.named("tiny"))), list(Events(_created()))
    assert len(plain) == len(created)
    for (k1, v1), (k2, v2) in zip(plain, created, strict=True):
        a, b = json.loads(v1), json.loads(v2)
        for image in ("before", "after"):
            if b[image] is not None:
                assert b[image].pop("created_at").endswith("Z")
        assert (k1, a) == (k2, b)


def test_a_keys_created_at_never_changes_and_lies_within_the_span():
    seen = {}
    for _, v in Events(_created()):
        after = json.loads(v)["after"]
        if after:
            assert seen.setdefault(after["id"], after["created_at"]) == after["created_at"]
    t0 = datetime.datetime.fromtimestamp(1_763_856_000, datetime.UTC)
    for text in seen.values():
        at = datetime.datetime.fromisoformat(text)
        assert t0 - datetime.timedelta(days=tf.DAYS) <= at < t0


def test_a_table_is_right_only_with_its_rows_in_exactly_their_partitions():
    want, folders = (3, 99), {"day=2025-11-01", "day=2025-11-02"}
    assert tf.verdict({"state": want, "placed": True, "folders": folders}, want, folders)
    assert not tf.verdict({"state": want, "placed": False, "folders": folders}, want, folders)
    assert not tf.verdict({"state": want, "placed": True, "folders": {"day=2025-11-01"}}, want, folders)
    assert not tf.verdict({"state": (3, 98), "placed": True, "folders": folders}, want, folders)
    assert tf.verdict({"state": want, "placed": None, "folders": set()}, want, set())  # unpartitioned


def test_the_summary_gives_medians_spread_and_the_ratio_of_medians():
    runs = [{"table": "MOR", "variant": v, "round": i, "seconds": s, "ok": True}
            for i, (p, t) in enumerate([(40.0, 44.0), (42.0, 50.0), (41.0, 45.0)]) for v, s in (("plain", p),
                                                                                                  ("transform", t))]
    runs.append({"table": "MOR", "variant": "transform", "round": 4, "seconds": 1.0, "ok": False})  # WRONG: no figure
    got = tf.summary(runs)["MOR"]
    assert got["plain"] == {"runs": 3, "median_s": 41.0, "min_s": 40.0, "max_s": 42.0, "spread": 0.049}
    assert got["transform"]["median_s"] == 45.0 and got["transform"]["runs"] == 3
    assert got["transform_over_plain"] == round(41 / 45, 3)


def test_the_config_of_the_transform_variant_partitions_and_transforms(tmp_path):
    cfg = run.cdcsync_config(tmp_path, "b:9092", "t", "MERGE_ON_READ", name="x", partition_by=tf.PARTITION_BY,
                             transform_sql=tf.SQL)
    got = tomllib.loads(cfg.read_text())
    assert got["sink"]["partition_by"] == ["day"] and got["transform"] == {"sql": tf.SQL}
    plain = tomllib.loads(run.cdcsync_config(tmp_path, "b:9092", "t", "MERGE_ON_READ", name="y").read_text())
    assert "partition_by" not in plain["sink"] and "transform" not in plain


def test_the_operations_are_read_from_the_completed_commits_only(tmp_path):
    from fastavro import writer

    timeline = tmp_path / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    schema = {"type": "record", "name": "HoodieCommitMetadata", "fields": [{"name": "operationType", "type": "string"}]}
    with open(timeline / "20261128100000000_20261128100001000.deltacommit", "wb") as f:
        writer(f, schema, [{"operationType": "BULK_INSERT"}])
    (timeline / "20261128100002000_20261128100003000.commit").write_text('{"operationType": "UPSERT"}')  # Hudi 0.x
    (timeline / "20261128100004000.deltacommit.requested").write_bytes(b"")  # not completed: no operation yet
    (timeline / "20261128100004000.deltacommit.inflight").write_bytes(b"")
    assert tf.operations(tmp_path) == ["BULK_INSERT", "UPSERT"]
