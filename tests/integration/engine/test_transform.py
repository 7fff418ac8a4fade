"""[transform] sql (issue 45): the table equals the SELECT applied to the source table's state, checked against an
independent engine — DuckDB running the same SELECT (transpiled by sqlglot) over the source's final state — and read
back by Spark and by hudi-rs. Rows flip out of and back into the WHERE, rows move to another day's partition, MOR
and COW, over two runs."""

from __future__ import annotations

import json

import duckdb
import pytest
import sqlglot

from tests.integration.engine.helpers import hudi_rs_rows, norm, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

SQL = ("SELECT id, upper(name) AS name, amount * 100 AS cents, status, to_date(created_at) AS day "
       "FROM source WHERE status <> 'test'")
COLUMNS = {"id": "BIGINT", "name": "VARCHAR", "amount": "BIGINT", "status": "VARCHAR", "created_at": "VARCHAR"}


class Source:
    """A MySQL table and its Debezium change events, in binlog order."""

    def __init__(self):
        self.rows: dict[int, dict] = {}
        self.pos = 0

    def change(self, op: str, id_: int, **values) -> str:
        self.pos += 1
        before = self.rows.get(id_)
        if op == "d":
            after = None
            del self.rows[id_]
        else:
            after = {**(before or {}), "id": id_, **values}
            self.rows[id_] = after
        return json.dumps({"op": op, "before": before, "after": after, "ts_ms": self.pos,
                           "source": {"db": "shop", "table": "orders", "ts_ms": self.pos,
                                      "file": "mysql-bin.000001", "pos": self.pos, "row": 0}})


def _day(d: int) -> str:
    return f"2024-01-{d:02d} 10:00:00"


def first_run(src: Source) -> list[str]:
    events = [src.change("c", i, name=f"n{i}", amount=i, status="test" if i == 7 else "ok", created_at=_day(1 + i % 3))
              for i in range(1, 9)]
    return events + [
        src.change("u", 1, name="renamed"),
        src.change("u", 2, amount=20),
        src.change("d", 8),
        src.change("u", 3, status="test"),  # leaves the filter: its row leaves the table
        src.change("u", 4, created_at=_day(9)),  # moves to another day's partition
        src.change("u", 7, amount=70),  # stays out
    ]


def second_run(src: Source) -> list[str]:
    return [
        src.change("u", 3, status="ok"),  # comes back
        src.change("u", 5, status="test"),
        src.change("u", 4, created_at=_day(10)),  # moves again
        src.change("d", 6),
        src.change("c", 9, name="n9", amount=9, status="test", created_at=_day(2)),
        src.change("c", 10, name="n10", amount=10, status="ok", created_at=_day(3)),
        src.change("u", 2, status="test"),
        src.change("d", 2),  # a delete of a row the filter had already removed
        src.change("c", 8, name="again", amount=8, status="ok", created_at=_day(1)),  # re-inserted after its delete
    ]


def oracle(rows: dict[int, dict], sql: str = SQL) -> dict:
    """The SELECT run by DuckDB over the source's state: {id: {column: value}}."""
    con = duckdb.connect()
    con.execute(f"CREATE TABLE source ({', '.join(f'{c} {t}' for c, t in COLUMNS.items())})")
    con.executemany(f"INSERT INTO source VALUES ({', '.join('?' * len(COLUMNS))})",
                    [[r[c] for c in COLUMNS] for r in rows.values()])
    cur = con.execute(sqlglot.transpile(sql, read="spark", write="duckdb")[0])
    names = [d[0] for d in cur.description]
    return {r[0]: {n: norm(v) for n, v in zip(names, r, strict=True)} for r in cur.fetchall()}


def table(rows: list[dict]) -> dict:
    """The table's rows by id: the SELECT's columns; each id once, in its own day's partition."""
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), f"a key in two partitions: {sorted(ids)}"
    for r in rows:
        if "_hoodie_partition_path" in r:
            assert r["_hoodie_partition_path"] == f"day={r['day'].isoformat()}", r
    return {r["id"]: {c: norm(r[c]) for c in ("id", "name", "cents", "status", "day")} for r in rows}


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_table_equals_the_select_over_the_source(spark, bootstrap, make_topic, produce, tmp_path, table_type):
    topic, src = make_topic(), Source()
    events = first_run(src)
    produce(topic, events)
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", table_type,
                       **{"sink.primary_key": ["id"], "sink.partition_by": ["day"], "transform.sql": SQL})
    summary = run_once(cfg, spark)
    # upserts whose image the WHERE rejects: id 7's insert and update, id 3's flip out
    assert summary.totals["filtered"] == 3
    assert summary.totals["upserted"] == 13 and summary.totals["deleted"] == 1
    path = str(tmp_path / "table")
    want = oracle(src.rows)
    assert sorted(want) == [1, 2, 4, 5, 6]
    assert table(spark_rows(spark, path)) == want

    produce(topic, second_run(src))
    summary = run_once(cfg, spark)
    assert summary.totals["filtered"] == 3  # id 5, 9, and 2 before its delete
    want = oracle(src.rows)
    assert sorted(want) == [1, 3, 4, 8, 10] and want[4]["day"] == ("date", "2024-01-10")
    assert table(spark_rows(spark, path)) == want
    folders = {p.name for p in (tmp_path / "table").iterdir() if p.name.startswith("day=")}
    assert {f"day={d[1]}" for d in (r["day"] for r in want.values())} <= folders
    assert table(hudi_rs_rows(path)) == want
