"""Acceptance (issue 44, points 1 and 4): what production Debezium topics carry beyond the textbook stream.
TOAST placeholders (PostgreSQL REPLICA IDENTITY DEFAULT) never land as data: a cell keeps the value its key held,
from the same batch or from the table. A truncate removes the rows of its source table older than it, in the
same batch and across batches, and no later replay of an older range brings them back. Each case runs `run` twice
against the real broker (the same batch, then against the table), read back by Spark and by hudi-rs."""

from __future__ import annotations

import json

import pytest

from cdcsync.config import load_config
from cdcsync.engine.replay import Replayer
from cdcsync.reporting import PlainReporter
from tests.integration.engine.helpers import TABLE_TYPES, both, by_key, completed_commits, run_once, write_config

pytestmark = pytest.mark.integration

P = "__debezium_unavailable_value"  # Debezium's default unavailable.value.placeholder


def pg(op: str, key: int | None, row: dict | None, lsn: int, table: str = "t") -> tuple[str | None, str]:
    """One Debezium PostgreSQL change as (Kafka key, value): ordered by `source.lsn`; a truncate has no key."""
    image = {"before": None, "after": None} if op == "t" else \
        {"before": row, "after": None} if op == "d" else {"before": None, "after": row}
    source = {"connector": "postgresql", "ts_ms": 1_700_000_000_000 + lsn, "lsn": lsn, "db": "shop",
              "schema": "public", "table": table}
    return (None if key is None else json.dumps({"id": key})), json.dumps({"op": op, **image, "source": source})


def send(produce, topic, changes):
    produce(topic, [v for _, v in changes], keys=[k for k, _ in changes])


def _no_placeholder(rows: dict) -> None:
    text = json.dumps(list(rows.values()), default=str)
    assert P not in text and "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ" not in text, text


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_toast_placeholders_keep_the_value_the_key_held(table_type, spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    send(produce, topic, [
        pg("c", 1, {"id": 1, "small": "a", "big": "B1", "tags": ["x", "y"]}, 100),
        pg("u", 1, {"id": 1, "small": "b", "big": P, "tags": [P]}, 110),  # the same batch holds its value
        pg("c", 2, {"id": 2, "small": "c", "big": "B2", "tags": ["z"]}, 120),
    ])
    config = write_config(tmp_path, bootstrap, topic, "debezium-json", table_type, **{"sink.primary_key": ["id"]})
    first = run_once(config, spark)
    assert first.totals["placeholders"] == 1 and "unavailable" not in first.totals
    table = tmp_path / "table"
    want = by_key([{"id": 1, "small": "b", "big": "B1", "tags": '["x","y"]'},
                   {"id": 2, "small": "c", "big": "B2", "tags": '["z"]'}], ["id"])
    got = both(spark, table)
    assert got == (want, want)

    send(produce, topic, [
        pg("u", 2, {"id": 2, "small": "d", "big": P, "tags": [P]}, 130),  # the table holds its value
        pg("u", 1, {"id": 1, "small": "e", "big": P, "tags": [P]}, 140),
        pg("u", 1, {"id": 1, "small": "f", "big": "B1new", "tags": [P]}, 150),  # a new value, then the table's
        pg("u", 9, {"id": 9, "small": "g", "big": P, "tags": [P]}, 160),  # no earlier value anywhere: NULL
    ])
    second = run_once(config, spark)
    assert second.totals["placeholders"] == 4 and second.totals["unavailable"] == 1
    want = by_key([{"id": 1, "small": "f", "big": "B1new", "tags": '["x","y"]'},
                   {"id": 2, "small": "d", "big": "B2", "tags": '["z"]'},
                   {"id": 9, "small": "g", "big": None, "tags": None}], ["id"])
    got = both(spark, table)
    assert got == (want, want)
    _no_placeholder(got[0])
    _, md = completed_commits(spark, table)[-1]
    ledger = json.loads(md.getMetadata("_cdcsync.ledger"))
    assert sum(c.get("unavailable", 0) for c in ledger.values()) == 1


def test_a_binary_placeholder_under_the_schema_envelope_keeps_the_bytes(spark, bootstrap, make_topic, produce,
                                                                       tmp_path):
    schema = {"type": "struct", "name": "shop.public.t.Envelope", "fields": [
        {"field": "before", "type": "struct", "optional": True, "fields": [
            {"field": "id", "type": "int32", "optional": False},
            {"field": "blob", "type": "bytes", "optional": True}]},
        {"field": "after", "type": "struct", "optional": True, "fields": [
            {"field": "id", "type": "int32", "optional": False},
            {"field": "blob", "type": "bytes", "optional": True}]},
        {"field": "op", "type": "string", "optional": False}]}

    def change(op, key, blob, lsn):
        _, value = pg(op, key, {"id": key, "blob": blob}, lsn)
        return json.dumps({"id": key}), json.dumps({"schema": schema, "payload": json.loads(value)})

    import base64

    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    topic = make_topic()
    send(produce, topic, [change("c", 1, b64(b"\x00\x01big"), 100), change("u", 1, b64(P.encode()), 110)])
    config = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"]})
    run_once(config, spark)
    send(produce, topic, [change("u", 1, b64(P.encode()), 120)])
    run_once(config, spark)
    spark_view, rs_view = both(spark, tmp_path / "table")
    assert spark_view == rs_view == by_key([{"id": 1, "blob": b"\x00\x01big"}], ["id"])


def _truncate_history():
    return [pg("c", 1, {"id": 1, "v": "a"}, 100), pg("c", 2, {"id": 2, "v": "b"}, 110),
            pg("t", None, None, 120),  # inside the batch: 1 and 2 go, 3 stays
            pg("c", 3, {"id": 3, "v": "c"}, 130)]


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_truncate_removes_older_rows_in_the_batch_and_in_the_table(table_type, spark, bootstrap, make_topic,
                                                                     produce, tmp_path):
    topic = make_topic()
    send(produce, topic, _truncate_history())
    config = write_config(tmp_path, bootstrap, topic, "debezium-json", table_type, **{"sink.primary_key": ["id"]})
    first = run_once(config, spark)
    assert first.totals["truncated"] == 1
    table = tmp_path / "table"
    want = by_key([{"id": 3, "v": "c"}], ["id"])
    assert both(spark, table) == (want, want)

    send(produce, topic, [pg("u", 3, {"id": 3, "v": "c2"}, 140), pg("c", 4, {"id": 4, "v": "d"}, 150),
                          pg("t", None, None, 160),  # across batches: the table's 3 goes, and the batch's 3 and 4
                          pg("c", 5, {"id": 5, "v": "e"}, 170), pg("u", 5, {"id": 5, "v": "e2"}, 180)])
    second = run_once(config, spark)
    assert second.totals["truncated"] == 1
    want = by_key([{"id": 5, "v": "e2"}], ["id"])
    assert both(spark, table) == (want, want)

    # a replay of ranges before the truncates, and a late event older than the last one, bring nothing back
    cfg = load_config(config)
    for lo, hi in ((0, 2), (0, 4), (4, 6), (0, 7)):
        rp = Replayer(cfg, PlainReporter(quiet=True), f"partition:0,offset:{lo}", f"partition:0,offset:{hi}",
                      spark=spark)
        rp.run(rp.plan())
        assert both(spark, table) == (want, want), f"replay of [{lo}, {hi})"
    send(produce, topic, [pg("c", 7, {"id": 7, "v": "late"}, 155), pg("c", 8, {"id": 8, "v": "new"}, 200)])
    run_once(config, spark)
    want = by_key([{"id": 5, "v": "e2"}, {"id": 8, "v": "new"}], ["id"])
    assert both(spark, table) == (want, want)


def test_a_truncate_touches_only_its_own_routed_table(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    send(produce, topic, [pg("c", 1, {"id": 1, "v": "a"}, 100, "a"), pg("c", 1, {"id": 1, "v": "b"}, 110, "b")])
    config = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ")
    with config.open("a") as f:
        f.write('[[route]]\nsource_table = "shop\\\\.public\\\\..*"\nsink_table = "ods_<>"\nprimary_key = ["id"]\n')
    run_once(config, spark)
    send(produce, topic, [pg("t", None, None, 120, "a")])  # a batch holding nothing but the truncate
    assert run_once(config, spark).totals["truncated"] == 1
    base = tmp_path / "table"
    assert both(spark, base / "ods_a") == ({}, {})
    kept = by_key([{"id": 1, "v": "b"}], ["id"])
    assert both(spark, base / "ods_b") == (kept, kept)


@pytest.mark.parametrize("mode", ["skip", "fail"])
def test_on_truncate_skip_keeps_rows_and_fail_stops_before_committing(mode, spark, bootstrap, make_topic, produce,
                                                                      tmp_path):
    from cdcsync.errors import DecodeError

    topic = make_topic()
    send(produce, topic, _truncate_history())
    config = write_config(tmp_path, bootstrap, topic, "debezium-json", "COPY_ON_WRITE",
                          **{"sink.primary_key": ["id"], "source.on_truncate": mode})
    if mode == "fail":
        with pytest.raises(DecodeError, match=r"truncate of shop\.public\.t .*offset 2.*on_truncate") as e:
            run_once(config, spark)
        assert e.value.exit_code == 65
        assert not (tmp_path / "table").exists() or completed_commits(spark, tmp_path / "table") == []
        return
    summary = run_once(config, spark)
    assert summary.totals["skipped"] == 1 and "truncated" not in summary.totals
    want = by_key([{"id": i, "v": v} for i, v in ((1, "a"), (2, "b"), (3, "c"))], ["id"])
    assert both(spark, tmp_path / "table") == (want, want)
