"""Issue 8, points 1, 2 and 6: [[route]] whole-database sync. One run, one Kafka read per batch, several Hudi
tables: a Canal multi-table topic, Debezium topics matched by topic_pattern, and eight shards with slightly
different schemas merged into one table with widened types."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests.integration.engine.helpers import hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration


def canal(db, table, kind, rows, types, es, pk=("id",)):
    return {"data": rows, "database": db, "table": table, "type": kind, "isDdl": False, "es": es, "ts": es,
            "pkNames": list(pk), "mysqlType": types}


def routed_config(tmp_path, bootstrap, topic, fmt, routes, **extra):
    cfg = write_config(tmp_path, bootstrap, topic, fmt, "MERGE_ON_READ",
                       **{"sink.path": str(tmp_path / "db"), "sink.table_name": "unrouted_rows", **extra})
    text = cfg.read_text()
    for r in routes:
        text += "\n[[route]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in r.items())
    cfg.write_text(text)
    return cfg


def test_canal_multi_table_topic_lands_three_tables(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    t_user = {"id": "int", "name": "varchar(20)"}
    t_order = {"id": "int", "user_id": "int", "amount": "decimal(10,2)"}
    t_item = {"sku": "varchar(10)", "stock": "int"}
    msgs = [
        canal("shop", "users", "INSERT", [{"id": "1", "name": "ann"}, {"id": "2", "name": "bob"}], t_user, 1000),
        canal("shop", "orders", "INSERT", [{"id": "10", "user_id": "1", "amount": "9.90"}], t_order, 1001),
        canal("shop", "items", "INSERT", [{"sku": "A1", "stock": "5"}], t_item, 1002, pk=("sku",)),
        canal("shop", "audit", "INSERT", [{"id": "7"}], {"id": "int"}, 1003),  # no route: counted, not written
        canal("shop", "users", "UPDATE", [{"id": "2", "name": "bobby"}], t_user, 1004),
        canal("shop", "orders", "INSERT", [{"id": "11", "user_id": "2", "amount": "1.50"}], t_order, 1005),
        canal("shop", "orders", "DELETE", [{"id": "10", "user_id": "1", "amount": "9.90"}], t_order, 1006),
        canal("shop", "items", "UPDATE", [{"sku": "A1", "stock": "4"}], t_item, 1007, pk=("sku",)),
        # DDL of a routed table in a batch with no rows for it: counted as skipped, no commit needed
        {"data": None, "database": "shop", "table": "users", "type": "ALTER", "isDdl": True, "es": 1008,
         "sql": "ALTER TABLE users ADD COLUMN age INT"},
    ]
    produce(topic, msgs, keys=["k"] * len(msgs))  # one key: one partition, so the order holds
    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json", [
        {"source_table": r"shop\.(users|orders)", "sink_table": "ods_<>"},
        {"source_table": r"shop\.items", "sink_table": "ods_items", "table_type": "COPY_ON_WRITE",
         "primary_key": ["sku"]},
    ], **{"run.max_records_per_batch": 5})
    summary = run_once(cfg, spark)

    assert summary.totals["messages"] == 9 and summary.totals["bad"] == 0
    assert summary.unrouted == 1 and summary.totals["skipped"] == 2  # shop.audit (unrouted) and the DDL
    assert summary.batches == 2  # one Kafka read per batch for all three tables
    assert set(summary.tables) == {"ods_users", "ods_orders", "ods_items"}
    db = tmp_path / "db"
    # the deleted order left a delete marker beside its table (README "Deletes")
    assert sorted(p.name for p in db.iterdir()) == ["ods_items", "ods_orders", "ods_orders_cdcsync_delete_markers",
                                                    "ods_users"]
    for read in (lambda p: spark_rows(spark, p), hudi_rs_rows):
        users = {r["id"]: r["name"] for r in read(str(db / "ods_users"))}
        orders = {r["id"]: (r["user_id"], r["amount"]) for r in read(str(db / "ods_orders"))}
        items = {r["sku"]: r["stock"] for r in read(str(db / "ods_items"))}
        assert users == {1: "ann", 2: "bobby"}
        assert orders == {11: (2, Decimal("1.50"))}
        assert items == {"A1": 4}
    # the COW route kept its own table type; the MOR default came from [sink]
    props = (db / "ods_items" / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.type=COPY_ON_WRITE" in props
    assert "hoodie.table.type=MERGE_ON_READ" in (db / "ods_users" / ".hoodie" / "hoodie.properties").read_text()

    # a second run resumes after the last batch: nothing new, nothing re-applied
    again = run_once(cfg, spark)
    assert again.batches == 0 and "recorded" in again.started_from


def dbz(db, table, op, before, after, ts):
    return {"payload": {"before": before, "after": after, "op": op, "ts_ms": ts,
                        "source": {"db": db, "table": table, "ts_ms": ts}}}


def test_debezium_topics_by_pattern_land_three_tables(spark, bootstrap, make_topic, produce, tmp_path):
    prefix = make_topic()  # a unique name used as the server prefix of three topics
    topics = {t: f"{prefix}.inv.{t}" for t in ("customers", "products", "orders")}
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(t, 1, 1) for t in topics.values()])
    admin.close()
    produce(topics["customers"], [dbz("inv", "customers", "c", None, {"id": 1, "email": "a@x"}, 1),
                                  dbz("inv", "customers", "u", {"id": 1, "email": "a@x"}, {"id": 1, "email": "b@x"},
                                      2)],
            keys=['{"id":1}'] * 2)
    produce(topics["products"], [dbz("inv", "products", "r", None, {"id": 5, "price": 2.5}, 0),
                                 dbz("inv", "products", "c", None, {"id": 6, "price": 3}, 3)],
            keys=['{"id":5}', '{"id":6}'])
    produce(topics["orders"], [dbz("inv", "orders", "c", None, {"id": 9, "qty": 1}, 4),
                               dbz("inv", "orders", "d", {"id": 9, "qty": 1}, None, 5),
                               dbz("inv", "orders", "c", None, {"id": 8, "qty": 2}, 6)],
            keys=['{"id":9}', '{"id":9}', '{"id":8}'])
    cfg = routed_config(tmp_path, bootstrap, "unused", "debezium-json",
                        [{"source_table": r"inv\..*", "sink_table": "<>", "primary_key": ["id"]}],
                        **{"source.topics": None, "source.topic_pattern": prefix.replace(".", r"\.") + r"\.inv\..*"})
    summary = run_once(cfg, spark)
    assert summary.totals["messages"] == 7 and summary.totals["bad"] == 0 and summary.unrouted == 0
    assert summary.batches == 1
    db = tmp_path / "db"
    for read in (lambda p: spark_rows(spark, p), hudi_rs_rows):
        assert {r["id"]: r["email"] for r in read(str(db / "customers"))} == {1: "b@x"}
        assert {r["id"]: r["price"] for r in read(str(db / "products"))} == {5: 2.5, 6: 3.0}
        assert {r["id"]: r["qty"] for r in read(str(db / "orders"))} == {8: 2}


def test_eight_shards_merge_with_widened_types(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    msgs, expected = [], {}
    for shard in range(8):
        types = {"id": "int", "amount": "decimal(10,2)", "qty": "int", "note": "varchar(20)"}
        if shard == 3:
            types["amount"] = "decimal(14,4)"  # wider on both sides of the point
        if shard == 5:
            types["qty"] = "double"
            types["id"] = "bigint unsigned"
        if shard == 6:
            types["coupon"] = "varchar(8)"  # a column only one shard has
        rows = []
        for i in range(2):
            key = shard * 100 + i
            row = {"id": str(key), "amount": "12345678.12" if shard != 3 else "1234567890.1234",
                   "qty": "2.5" if shard == 5 else "3", "note": f"s{shard}"}
            if shard == 6:
                row["coupon"] = "HALF"
            rows.append(row)
            expected[key] = row
        msgs.append(canal("app", f"order_{shard}", "INSERT", rows, types, 1000 + shard))
    msgs.append(canal("app", "order_2", "UPDATE", [{**expected[200], "note": "changed"}],
                      {"id": "int", "amount": "decimal(10,2)", "qty": "int", "note": "varchar(20)"}, 2000))
    expected[200] = {**expected[200], "note": "changed"}
    # keyed by source table like canal.mq.partitionHash: Canal carries no log position, so Kafka order decides
    produce(topic, msgs, keys=[f"app.{m['table']}" for m in msgs])
    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json", [
        {"source_table": r"app\.order_\d+", "sink_table": "orders", "source_column": "source_table"}])
    summary = run_once(cfg, spark)
    assert summary.totals["upserted"] == 17 and summary.totals["bad"] == 0
    path = str(tmp_path / "db" / "orders")
    types = dict(spark.read.format("hudi").load(path).dtypes)
    assert types["id"] == "decimal(20,0)"  # bigint unsigned in one shard
    assert types["amount"] == "decimal(14,4)"  # 10 integer digits (14,4) and scale 4 (from 10,2)
    assert types["qty"] == "double" and types["note"] == "string" and types["coupon"] == "string"
    rows = {int(r["id"]): r for r in spark_rows(spark, path)}
    assert sorted(rows) == sorted(expected)
    for key, want in expected.items():
        got = rows[key]
        assert got["amount"] == Decimal(want["amount"])
        assert got["qty"] == float(want["qty"])
        assert got["note"] == want["note"]
        assert got["coupon"] == want.get("coupon")
        assert got["source_table"] == f"app.order_{key // 100}"
    assert len(hudi_rs_rows(path)) == 16  # the update replaced a row


def test_replay_of_a_routed_config_lands_every_table_and_moves_no_offsets(spark, bootstrap, make_topic, produce,
                                                                            tmp_path):
    """replay-from-offset with [[route]]: the same split as run, into the main tables or --into a directory."""
    from cdcsync.config import load_config
    from cdcsync.engine import routing
    from cdcsync.engine.replay import Replayer
    from cdcsync.reporting import PlainReporter

    topic = make_topic(partitions=1)
    t_user, t_order = {"id": "int", "name": "varchar(20)"}, {"id": "int", "amount": "decimal(10,2)"}
    msgs = [
        canal("shop", "users", "INSERT", [{"id": "1", "name": "ann"}, {"id": "2", "name": "bob"}], t_user, 1000),
        canal("shop", "orders", "INSERT", [{"id": "10", "amount": "9.90"}], t_order, 1001),
        canal("shop", "users", "UPDATE", [{"id": "2", "name": "bobby"}], t_user, 1002),
        canal("shop", "orders", "DELETE", [{"id": "10", "amount": "9.90"}], t_order, 1003),
        canal("shop", "orders", "INSERT", [{"id": "11", "amount": "1.50"}], t_order, 1004),
        canal("shop", "audit", "INSERT", [{"id": "7"}], {"id": "int"}, 1005),  # no route
    ]
    produce(topic, msgs)
    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json",
                        [{"source_table": r"shop\.(users|orders)", "sink_table": "ods_<>"}],
                        **{"run.max_records_per_batch": 4})
    run_once(cfg, spark)
    db = tmp_path / "db"
    before = {n: sorted(spark_rows(spark, str(db / n)), key=lambda r: r["id"]) for n in ("ods_users", "ods_orders")}
    assert {r["id"]: r["name"] for r in before["ods_users"]} == {1: "ann", 2: "bobby"}
    assert [r["id"] for r in before["ods_orders"]] == [11]
    progress = routing.read_progress(spark, str(tmp_path / "ckpt"))

    def replay(into=None):
        r = Replayer(load_config(cfg), PlainReporter(), "earliest", None, str(into) if into else None, spark=spark)
        plan = r.plan()
        assert plan.routes == 1 and plan.messages == 6 and "route(s) under" in plan.render()
        return r.run(plan)

    # 1. into the main tables: an applied range leaves every table's content equal
    res = replay()
    assert res.summary.totals["messages"] == 6 and res.summary.unrouted == 1
    assert len(res.summary.instants) == 2  # two batches of 4 + 2, each committed to the tables it touched
    assert set(res.to_dict()["summary"]["tables"]) == {"ods_users", "ods_orders"}
    for name, rows in before.items():
        strip = lambda rs: [{k: v for k, v in r.items() if not k.startswith("_hoodie")} for r in rs]  # noqa: E731
        assert strip(sorted(spark_rows(spark, str(db / name)), key=lambda r: r["id"])) == strip(rows)
    assert routing.read_progress(spark, str(tmp_path / "ckpt")) == progress  # the run's resume point held

    # 2. --into a directory: one side table per routed name, equal to run's tables (read without a JVM)
    side = tmp_path / "side"
    replay(side)
    assert sorted(p.name for p in side.iterdir()) == ["ods_orders", "ods_orders_cdcsync_delete_markers", "ods_users"]
    for name, rows in before.items():
        got = {r["id"]: {k: v for k, v in r.items() if not k.startswith("_")} for r in hudi_rs_rows(str(side / name))}
        want = {r["id"]: {k: v for k, v in r.items() if not k.startswith("_")} for r in rows}
        assert got == want
    assert routing.read_progress(spark, str(tmp_path / "ckpt")) == progress
    assert run_once(cfg, spark).batches == 0  # the main pipeline resumes where it was: nothing re-applied


@pytest.mark.parametrize("pattern", [r"shop\.users(?#inline comment)", r"shop\.(?P<t>users)", r"shop\.(users"])
def test_a_route_pattern_java_cannot_compile_stops_before_any_batch(spark, bootstrap, make_topic, produce,
                                                                     tmp_path, pattern):
    """Python-only syntax (the first two, which Python's re accepts) and a plain syntax error."""
    from cdcsync.errors import ConfigError

    topic = make_topic()
    produce(topic, [canal("shop", "users", "INSERT", [{"id": "1"}], {"id": "int"}, 1000)])
    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json", [{"source_table": pattern, "sink_table": "ods_u"}])
    with pytest.raises(ConfigError) as err:
        run_once(cfg, spark)
    assert err.value.facts["key"] == "route[0].source_table" and "not a Java regular expression" in err.value.message
    assert str(cfg) in str(err.value)
    assert not (tmp_path / "db").exists()  # nothing was written


def test_routed_bad_records_are_dead_lettered_under_their_own_table(spark, bootstrap, make_topic, produce,
                                                                      tmp_path):
    from cdcsync.config import load_config
    from cdcsync.sinks import dead_letter

    topic = make_topic()
    t_user, t_order = {"id": "int", "name": "varchar(20)"}, {"id": "int", "amount": "decimal(10,2)"}
    produce(topic, [
        canal("shop", "users", "INSERT", [{"id": "1", "name": "ann"}], t_user, 1000),
        canal("shop", "orders", "INSERT", [{"id": "10", "amount": "9.90"}], t_order, 1001),
        canal("shop", "orders", "INSERT", [{"id": "11", "amount": "not-a-number"}], t_order, 1002),  # bad_value
        canal("shop", "users", "INSERT", [{"id": "x", "name": "eve"}], t_user, 1003),  # bad_value in the key
        '{"database": "shop", "table": "users", "data": [',  # undecodable: its table cannot be told
    ])
    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json",
                        [{"source_table": r"shop\.(users|orders)", "sink_table": "ods_<>"}],
                        **{"run.on_bad_record": "dead-letter"})
    summary = run_once(cfg, spark)
    assert summary.totals["upserted"] == 2 and summary.totals["bad"] == 3
    dl = {r["offset"]: (r["target_table"], r["reason"])
          for r in dead_letter.read(spark, load_config(cfg)).collect()}
    assert dl == {2: ("ods_orders", "bad_value"), 3: ("ods_users", "bad_value"), 4: (None, "invalid_json")}


def test_java_only_route_syntax_works(spark, bootstrap, make_topic, produce, tmp_path):
    """Patterns Python's re refuses but Spark's Java regex takes: the loader leaves them to the JVM."""
    topic = make_topic()
    produce(topic, [canal("shop", "users", "INSERT", [{"id": "1", "name": "ann"}], {"id": "int", "name": "text"},
                          1000),
                    canal("shop", "Orders", "INSERT", [{"id": "2"}], {"id": "int"}, 1001)])
    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json",
                        [{"source_table": r"\Qshop.\E\p{Lower}+", "sink_table": "ods_<>"}])
    summary = run_once(cfg, spark)
    assert set(summary.tables) == {"ods_users"} and summary.unrouted == 1  # "Orders" is not all lower case
    assert [r["name"] for r in hudi_rs_rows(str(tmp_path / "db" / "ods_users"))] == ["ann"]
