"""[transform] sql (issue 45) along the engine's other paths: replay-from-offset over applied ranges, kill -9 before,
after and during a batch's Hudi write followed by a clean restart, and per-route transform_sql on one topic carrying
several source tables. Each table is checked against DuckDB running the same SELECT over the source's final state
(test_transform's `Source` model and oracle), read back by Spark and by hudi-rs."""

from __future__ import annotations

import datetime as dt
import json
import signal

import duckdb
import pytest
import sqlglot

from cdcsync.config import load_config
from cdcsync.engine.replay import Replayer
from cdcsync.reporting import PlainReporter
from tests import cli
from tests.integration.engine.helpers import HUDI_META, hudi_rs_rows, norm, run_once, spark_rows, write_config
from tests.integration.engine.test_routing import routed_config
from tests.integration.engine.test_transform import COLUMNS, SQL, Source, first_run, oracle, second_run, table

pytestmark = pytest.mark.integration


def select(rows: dict[int, dict], sql: str, columns: dict[str, str] = COLUMNS) -> dict:
    """test_transform.oracle over any source columns (a row that never carried one holds NULL), with Spark's pmod
    as a DuckDB macro: {id: {column: value}}."""
    con = duckdb.connect()
    con.execute("CREATE MACRO pmod(a, b) AS ((a % b) + b) % b")
    con.execute(f"CREATE TABLE source ({', '.join(f'{c} {t}' for c, t in columns.items())})")
    con.executemany(f"INSERT INTO source VALUES ({', '.join('?' * len(columns))})",
                    [[r.get(c) for c in columns] for r in rows.values()])
    cur = con.execute(sqlglot.transpile(sql, read="spark", write="duckdb")[0])
    names = [d[0] for d in cur.description]
    return {r[0]: {n: norm(v) for n, v in zip(names, r, strict=True)} for r in cur.fetchall()}


def view(rows: list[dict], partition_by: tuple[str, ...] = ()) -> dict:
    """The table's rows by id with every column but Hudi's and cdcsync's own (so the column set is checked too);
    each id once, in the Hive-style partition its own values name."""
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), f"a key in two partitions: {sorted(ids)}"
    for r in rows:
        if partition_by and "_hoodie_partition_path" in r:
            assert r["_hoodie_partition_path"] == "/".join(f"{p}={folder(r[p])}" for p in partition_by), r
    return {r["id"]: {c: norm(v) for c, v in r.items() if c not in HUDI_META and not c.startswith("_kafka_")}
            for r in rows}


def folder(v) -> str:
    return v.isoformat() if isinstance(v, dt.date) else str(v)


def main_config(tmp_path, bootstrap, topic, batch: int):
    """test_transform's table: SQL over the Source, partitioned by its derived day, `batch` records per batch."""
    return write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ",
                        **{"sink.primary_key": ["id"], "sink.partition_by": ["day"], "transform.sql": SQL,
                           "run.max_records_per_batch": batch})


@pytest.mark.soak  # two runs, four replays: some twenty Hudi commits
def test_replays_leave_the_table_equal_to_the_select(spark, bootstrap, make_topic, produce, tmp_path):
    topic, src = make_topic(), Source()
    produce(topic, first_run(src))
    cfg = main_config(tmp_path, bootstrap, topic, 5)
    run_once(cfg, spark)
    produce(topic, second_run(src))
    run_once(cfg, spark)
    path, want = str(tmp_path / "table"), oracle(src.rows)
    assert sorted(want) == [1, 3, 4, 8, 10]
    assert table(spark_rows(spark, path)) == want
    n = src.pos  # 23 events, offsets 0..22 in binlog order
    # from earliest; a middle range whose changes are all older than the rows' current versions (id 8's first insert
    # and its delete, id 3 out of the WHERE and back, id 4's first move, id 5 filtered); the last four (a filtered
    # upsert and a delete of a key already gone, id 8 re-inserted)
    ranges = [("earliest", None, n, 6), ("partition:0,offset:5", "partition:0,offset:16", 11, 4),
              (f"partition:0,offset:{n - 4}", None, 4, 1)]
    for frm, to, messages, filtered in ranges:
        r = Replayer(load_config(cfg), PlainReporter(), frm, to, spark=spark)
        result = r.run(r.plan())
        assert result.summary.totals["messages"] == messages, (frm, to)
        assert result.summary.totals.get("filtered", 0) == filtered, (frm, to, result.summary.totals)
        assert table(spark_rows(spark, path)) == want, f"after replaying {frm} .. {to}"
        assert table(hudi_rs_rows(path)) == want, f"after replaying {frm} .. {to} (hudi-rs)"
    assert run_once(cfg, spark).totals["messages"] == 0  # the replays moved no offsets

    # the whole history replayed into an empty side table builds the same table
    side = tmp_path / "side"
    r = Replayer(load_config(cfg), PlainReporter(), "earliest", None, str(side), spark=spark)
    r.run(r.plan())
    assert table(spark_rows(spark, str(side))) == want
    assert table(hudi_rs_rows(str(side))) == want


@pytest.mark.soak  # four processes, each starting a JVM, three of them killed (minutes, as test_routing_crash)
def test_kill_minus_nine_mid_batch_then_restart(spark, bootstrap, make_topic, produce, tmp_path):
    topic, src = make_topic(), Source()
    produce(topic, first_run(src) + second_run(src))
    # 23 events: batches 0..5 of 4
    cfg = main_config(tmp_path, bootstrap, topic, 4)
    # batch 0 committed, killed before batch 1's write; batch 1 redone, batch 2 committed, killed after its commit;
    # batch 3 committed, killed while Hudi writes batch 4 (id 4 moved to another day, id 6 deleted, id 9 filtered)
    for kill in ({"fault": "before_write:1"}, {"fault": "after_write:2"},
                 {"kill_on": "writing batch=4", "delay": 2.0}):
        code, err = cli.run_killed("run", cfg, "--once", **kill)
        assert code == -signal.SIGKILL, (kill, err[-2000:])
    code, err = cli.run_killed("run", cfg, "--once")  # the restart finishes the topic
    assert code == 0, err[-3000:]
    assert "writing batch=5" in err  # it went on to the last batch

    path, want = str(tmp_path / "table"), oracle(src.rows)
    assert sorted(want) == [1, 3, 4, 8, 10]
    assert table(spark_rows(spark, path)) == want
    assert table(hudi_rs_rows(path)) == want


# --- per-route transform_sql ---------------------------------------------------------------------------------

ORDERS_SQL = ("SELECT id, name, status, to_date(created_at) AS day FROM source "
              "WHERE status = 'ok' AND amount < 100")  # filters, derives the partition column
USERS_SQL = "SELECT id, name AS full_name, amount * 2 AS doubled FROM source"  # renames, drops, computes
INHERITED_SQL = "SELECT id, lower(name) AS name, amount FROM source WHERE amount % 2 = 0"  # [transform] sql


class Table(Source):
    """One table of a MySQL database whose tables write one binlog (`binlog`: its shared position counter)."""

    def __init__(self, name: str, binlog: list[int]):
        super().__init__()
        self.name, self.binlog = name, binlog

    def change(self, op: str, id_: int, **values) -> str:
        event = json.loads(super().change(op, id_, **values))
        self.binlog[0] += 1
        event["ts_ms"] = self.binlog[0]
        event["source"].update(table=self.name, ts_ms=self.binlog[0], pos=self.binlog[0])
        return json.dumps(event)


def history(tables: list[Table]) -> list[str]:
    """The same changes to each table, interleaved in binlog order."""
    out = [t.change("c", i, name=f"{t.name.title()}{i}", amount=i * 10, status="test" if i % 3 == 0 else "ok",
                    created_at=f"2024-01-{i:02d} 10:00:00") for i in range(1, 7) for t in tables]
    for op, i, values in [("u", 2, {"amount": 150}), ("u", 3, {"status": "ok"}),
                          ("u", 4, {"created_at": "2024-01-20 10:00:00"}), ("d", 5, {}),
                          ("u", 1, {"name": "Renamed", "amount": 11}), ("u", 6, {"status": "ok"}),
                          ("u", 6, {"status": "test"})]:
        out += [t.change(op, i, **values) for t in tables]
    return out


def test_each_route_applies_its_own_transform(spark, bootstrap, make_topic, produce, tmp_path):
    topic, binlog = make_topic(), [0]
    orders, users, items = Table("orders", binlog), Table("users", binlog), Table("items", binlog)
    produce(topic, history([orders, users, items]))
    cfg = routed_config(tmp_path, bootstrap, topic, "debezium-json", [
        {"source_table": r"shop\.orders", "sink_table": "orders", "primary_key": ["id"], "partition_by": ["day"],
         "transform_sql": ORDERS_SQL},
        {"source_table": r"shop\.users", "sink_table": "users", "primary_key": ["id"], "transform_sql": USERS_SQL},
        {"source_table": r"shop\.items", "sink_table": "items", "primary_key": ["id"]},  # inherits [transform] sql
    ], **{"sink.primary_key": ["id"], "transform.sql": INHERITED_SQL, "run.max_records_per_batch": 20})
    summary = run_once(cfg, spark)
    assert summary.totals["messages"] == 39 and summary.totals["bad"] == 0 and summary.unrouted == 0
    assert summary.totals["filtered"] == 5 and summary.batches == 2

    db = tmp_path / "db"
    cases = [("orders", orders, ORDERS_SQL, ("day",), [1, 3, 4]), ("users", users, USERS_SQL, (), [1, 2, 3, 4, 6]),
             ("items", items, INHERITED_SQL, (), [2, 3, 4, 6])]
    for name, src, sql, partition_by, ids in cases:
        want = select(src.rows, sql)
        assert sorted(want) == ids, name
        assert view(spark_rows(spark, str(db / name)), partition_by) == want, name
        assert view(hudi_rs_rows(str(db / name)), partition_by) == want, f"{name} (hudi-rs)"
    folders = {p.name for p in (db / "orders").iterdir() if p.name.startswith("day=")}
    assert {"day=2024-01-01", "day=2024-01-20"} <= folders  # Hive-style, the moved row in its new day
    # per table: ids 3 and 6 created as 'test', id 2 over 100, id 6 back to 'test' (3 in batch 0, 1 in batch 1) |
    # id 1's odd amount
    assert {n: c.get("filtered", 0) for n, c in summary.tables.items()} == {"orders": 4, "users": 0, "items": 1}


@pytest.mark.parametrize("second", ["ok", "test"])
def test_a_batch_without_filtered_rows_after_one_with_them(spark, bootstrap, make_topic, produce, tmp_path, second):
    """The run's ledger adds a tally one batch had to the next batch's counts: with none (second = "ok") it once
    failed with KeyError after that batch's commit, with one (second = "test") it counted it twice
    (engine/sync.py, Summary.add)."""
    topic, src = make_topic(), Source()
    produce(topic, [src.change("c", 1, name="a", amount=1, status="test", created_at="2024-01-01 10:00:00"),
                    src.change("c", 2, name="b", amount=2, status=second, created_at="2024-01-02 10:00:00")])
    cfg = main_config(tmp_path, bootstrap, topic, 1)  # batch 0 filters id 1, batch 1 id 2 when 'test'
    summary = run_once(cfg, spark)
    filtered = 1 + (second == "test")
    assert summary.batches == 2 and summary.totals["filtered"] == filtered
    assert summary.ledger[f"{topic}/0"]["filtered"] == filtered
    assert table(spark_rows(spark, str(tmp_path / "table"))) == oracle(src.rows)
