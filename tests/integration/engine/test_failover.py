"""Acceptance (issue 44, point 6): ordering that survives a MySQL failover.

The connector moves to the new primary, whose binlog file and positions are lower than the old one's: its changes
must win over the older ones (Kafka order per key), not lose to them by binlog position. Binlog positions still
decide within one server's run, and a replay of the pre-failover range leaves the table as it is."""

from __future__ import annotations

import json

import pytest

from tests.integration.engine.helpers import TABLE_TYPES, both, by_key, run_once, write_config

pytestmark = pytest.mark.integration

KEYS = (1, 2, 3)


def _change(op: str, key: int, name: str | None, server_id: int, file_no: int, pos: int) -> tuple[str, str]:
    row = {"id": key, "name": name}
    src = {"connector": "mysql", "name": "app", "db": "shop", "table": "items", "ts_ms": 1_700_000_000_000 + pos,
           "snapshot": "true" if op == "r" else "false", "server_id": server_id, "file": f"mysql-bin.{file_no:06d}",
           "pos": pos, "row": 0}
    event = {"op": op, "before": row if op == "d" else None, "after": None if op == "d" else row,
             "ts_ms": src["ts_ms"], "source": src}
    return json.dumps({"id": key}), json.dumps(event)


def _old_primary() -> list[tuple[str, str]]:
    """A snapshot (server id 0) then streamed changes of server 1 at mysql-bin.000007, one re-sent late: its older
    position, not its Kafka place, decides within the server's run."""
    out = [_change("r", k, f"snap-{k}", 0, 7, 100) for k in KEYS]
    out += [_change("u", k, f"old-{k}", 1, 7, 5_000 + k) for k in KEYS]
    out.append(_change("u", 1, "resent-1", 1, 7, 200))  # a connector restart re-sent an older change
    return out


def _new_primary() -> list[tuple[str, str]]:
    """Server 2 at a lower binlog file and position: key 1 and 2 updated, key 3 deleted."""
    return [_change("u", 1, "new-1", 2, 2, 4), _change("u", 2, "new-2", 2, 2, 300), _change("d", 3, None, 2, 2, 400),
            _change("u", 2, "resent-2", 2, 2, 200)]  # an older change of the new server, re-sent: it loses


WANT = by_key([{"id": 1, "name": "new-1"}, {"id": 2, "name": "new-2"}], ["id"])
BEFORE = by_key([{"id": k, "name": f"old-{k}"} for k in KEYS], ["id"])


def _produce(produce, topic, changes) -> None:
    produce(topic, [v for _, v in changes], keys=[k for k, _ in changes])


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_the_new_primary_wins_after_a_failover_and_a_replay_changes_nothing(
        spark, bootstrap, make_topic, produce, tmp_path, table_type):
    from cdcsync.config import load_config
    from cdcsync.engine.replay import Replayer
    from cdcsync.reporting import PlainReporter
    from cdcsync.sinks import hudi

    topic = make_topic()
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", table_type, **{"sink.primary_key": ["id"]})
    path = tmp_path / "table"
    _produce(produce, topic, _old_primary())
    assert run_once(cfg, spark).totals["bad"] == 0
    assert both(spark, path) == (BEFORE, BEFORE)
    _produce(produce, topic, _new_primary())
    assert run_once(cfg, spark).totals["bad"] == 0
    assert both(spark, path) == (WANT, WANT)
    last = hudi.last_checkpoint(spark, str(path))
    assert last["ordering"] == hudi.ORDERING
    assert last["servers"] == {f"{topic}/0/app": [[3, 1], [len(_old_primary()), 2]]}

    failover = len(_old_primary())
    for start, end in ((0, failover), (3, failover), (0, failover + 2)):
        rp = Replayer(load_config(cfg), PlainReporter(quiet=True), f"partition:0,offset:{start}",
                      f"partition:0,offset:{end}", spark=spark)
        rp.run(rp.plan())
        assert both(spark, path) == (WANT, WANT), f"a replay of [{start}, {end}) changed the table"


def test_both_servers_in_one_batch(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ", **{"sink.primary_key": ["id"]})
    _produce(produce, topic, _old_primary() + _new_primary())
    assert run_once(cfg, spark).totals["bad"] == 0
    assert both(spark, tmp_path / "table") == (WANT, WANT)


def test_maxwell_with_its_server_id(spark, bootstrap, make_topic, produce, tmp_path):
    def change(key, name, server_id, position):
        return json.dumps({"database": "shop", "table": "items", "type": "update", "ts": 5, "xoffset": 0,
                           "data": {"id": key, "name": name}, "primary_key_columns": ["id"],
                           "server_id": server_id, "position": position})

    topic = make_topic()
    cfg = write_config(tmp_path, bootstrap, topic, "maxwell-json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"]})
    produce(topic, [change(1, "old", 1, "mysql-bin.000007:900"), change(1, "new", 2, "mysql-bin.000002:4")],
            keys=['{"id": 1}'] * 2)
    run_once(cfg, spark)
    want = by_key([{"id": 1, "name": "new"}], ["id"])
    assert both(spark, tmp_path / "table") == (want, want)
