"""Acceptance (issue 3, points 5 and 6): every config in examples/ works as written. Each test keeps the example's
settings and changes only where it points (broker, topic, table and checkpoint paths). The Debezium example, the
one `make demo` runs, goes through the real CLI (`cdcsync run … --once --json`); the others share the session's
SparkSession."""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from decimal import Decimal
from pathlib import Path

import pytest

from tests import cli
from tests.cli import cdcsync
from tests.integration.engine.helpers import (
    _toml,
    by_key,
    expected_state,
    hudi_rs_rows,
    produce_fixture,
    run_once,
    spark_rows,
)

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def local_copy(name: str, tmp_path: Path, bootstrap: str, topic: str) -> Path:
    """examples/<name> with only its addresses changed: this test's broker, topic and folders."""
    cfg = tomllib.loads((EXAMPLES / name).read_text())
    cfg["source"]["bootstrap_servers"] = bootstrap
    cfg["source"]["topics"] = [topic]
    cfg["sink"]["path"] = str(tmp_path / "table")
    cfg.setdefault("run", {})["checkpoint_dir"] = str(tmp_path / "ckpt")
    cfg.pop("spark", None)  # the in-process tests share the session's SparkSession
    lines = []
    for section, values in cfg.items():
        lines.append(f"[{section}]")
        lines += [f"{json.dumps(k) if '.' in k else k} = {_toml(v)}" for k, v in values.items()]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_debezium_example_through_the_cli(bootstrap, make_topic, tmp_path):
    """The demo's path: produce the demo events, `cdcsync run examples/debezium.toml --once --json`, read back."""
    from devtools.demo_events import differences, events, produce

    topic = make_topic(partitions=1)
    n = produce(bootstrap, topic, partitions=2)  # recreates the topic with two partitions, as the demo does
    cfg = tomllib.loads((EXAMPLES / "debezium.toml").read_text())
    config = local_copy("debezium.toml", tmp_path, bootstrap, topic)
    config.write_text(config.read_text() + f"[spark]\nmaster = {_toml(cfg['spark']['master'])}\n")

    p = cdcsync("run", config, "--once", "--json", timeout=600)

    assert p.returncode == 0, p.stderr[-3000:]
    assert cli.noise(p.stderr) == [], "\n".join(cli.noise(p.stderr))  # a healthy run: cdcsync's own lines only
    summary = json.loads(p.stdout)  # stdout is exactly one JSON object
    msgs, final = events()
    deletes = sum(1 for _, v in msgs if v is not None and json.loads(v)["payload"]["op"] == "d")
    tombstones = sum(1 for _, v in msgs if v is None)
    assert summary["totals"] == {"messages": n, "rows": n, "upserted": n - deletes - tombstones,
                                 "deleted": deletes, "skipped": tombstones, "bad": 0}
    assert sum(sum(c.values()) - c["messages"] for c in summary["ledger"].values()) == n  # ledger balances
    assert sum(summary["end_offsets"][topic].values()) == n and set(summary["lag"].values()) == {0}
    rows = hudi_rs_rows(str(tmp_path / "table"))
    assert len(rows) == len(final) and differences(rows) == []
    assert {r["_hoodie_partition_path"] for r in rows} <= {f"MKTSEGMENT={s}" for s in
                                                           ("AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD",
                                                            "MACHINERY")} | {s for s in ("AUTOMOBILE", "BUILDING",
                                                                                         "FURNITURE", "HOUSEHOLD",
                                                                                         "MACHINERY")}

    again = cdcsync("run", config, "--once", "--json", "-q", timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["totals"]["messages"] == 0  # resumed from the offsets in the Hudi commit


@pytest.mark.parametrize("name,fixture", [("canal.toml", "canal-1.1-mysql.txt"),
                                          ("maxwell.toml", "maxwell-1.x-mysql.txt")])
def test_cdc_examples_land_the_fixture_state(spark, bootstrap, make_topic, produce, tmp_path, name, fixture):
    topic = make_topic()
    n = produce_fixture(produce, topic, fixture)

    summary = run_once(local_copy(name, tmp_path, bootstrap, topic), spark)

    assert summary.totals["messages"] == n and summary.totals["bad"] == 0
    want = expected_state(fixture, ["id"])

    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == want
    assert by_key(spark_rows(spark, str(tmp_path / "table")), ["id"]) == want


def test_json_example_upserts_with_declared_types(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    orders = [{"order_id": i, "country": "DE" if i % 2 else "FR", "amount": f"{i}.{i:02d}",
               "placed_at": f"2026-11-0{1 + i % 9}T10:00:00", "status": "new"} for i in range(1, 11)]
    updates = [{**orders[i - 1], "status": "shipped", "amount": f"{i * 100}.50"} for i in (2, 4, 6)]
    produce(topic, orders + updates, keys=[str(o["order_id"]) for o in orders + updates])

    summary = run_once(local_copy("json.toml", tmp_path, bootstrap, topic), spark)

    assert summary.totals["messages"] == 13 and summary.totals["upserted"] == 13
    rows = {r["order_id"]: r for r in hudi_rs_rows(str(tmp_path / "table"))}
    assert sorted(rows) == list(range(1, 11))
    assert rows[4]["status"] == "shipped" and rows[4]["amount"] == Decimal("400.50")
    assert rows[3]["status"] == "new" and rows[3]["amount"] == Decimal("3.03")
    placed = rows[5]["placed_at"]
    assert (placed.astimezone(dt.UTC).replace(tzinfo=None) if placed.tzinfo else placed) == dt.datetime(2026, 11, 6,
                                                                                                         10)
    assert rows[4]["_kafka_key"] is not None and bytes(rows[4]["_kafka_key"]) == b"4"  # metadata_columns has key
    assert {r["_hoodie_partition_path"].split("=")[-1] for r in rows.values()} == {"DE", "FR"}


def test_csv_example_keeps_the_latest_reading_per_sensor(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    lines = [f"{s},2026-11-23 10:0{m}:00,{20 + s + m / 10:.2f},ok" for m in range(3) for s in (1, 2, 3)]
    lines.append("2,2026-11-23 10:09:00,-4.50,alarm")
    produce(topic, lines)

    summary = run_once(local_copy("csv.toml", tmp_path, bootstrap, topic), spark)

    assert summary.totals["messages"] == 10 and summary.totals["bad"] == 0
    rows = {r["sensor_id"]: r for r in hudi_rs_rows(str(tmp_path / "table"))}
    assert sorted(rows) == [1, 2, 3]
    assert rows[2]["celsius"] == Decimal("-4.50") and rows[2]["status"] == "alarm"
    assert rows[3]["celsius"] == Decimal("23.20") and rows[3]["status"] == "ok"


def test_raw_example_appends_every_message(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    lines = [f"GET /item/{i} 200" for i in range(7)] + ["GET /item/0 200"]  # a repeat is a new row: insert-only
    produce(topic, lines, keys=[f"host-{i % 2}" for i in range(8)])

    summary = run_once(local_copy("raw.toml", tmp_path, bootstrap, topic), spark)

    assert summary.totals["messages"] == 8 and summary.totals["upserted"] == 8
    rows = hudi_rs_rows(str(tmp_path / "table"))
    assert sorted(r["value"] for r in rows) == sorted(lines)  # the value as UTF-8 text, as Flink's raw STRING
    assert sorted(r["_kafka_offset"] for r in rows) == list(range(8))
