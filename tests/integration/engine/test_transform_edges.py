"""[transform] sql (issue 45) at its edges: ANSI mode's uncomputable rows as bad records (transform_failed) and
Spark's non-ANSI NULLs; a source column added later (in the table with `SELECT *`, left out and said once with an
explicit projection); partitions derived by the SELECT, as Hive-style folders and through [catalog]; and a SELECT
reading a column the source lacks, refused at run time with exit 78."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cdcsync.config import load_config
from cdcsync.exit_codes import ExitCode
from cdcsync.sinks import dead_letter, hudi
from tests import cli
from tests.integration.engine.helpers import Events, hudi_rs_rows, norm, run_once, spark_rows, write_config
from tests.integration.engine.test_transform import COLUMNS, SQL, Source, first_run, oracle
from tests.integration.engine.test_transform_paths import select, view

pytestmark = pytest.mark.integration


# --- ANSI mode ---------------------------------------------------------------------------------------------------

ANSI_SQL = "SELECT id, name, CAST(qty AS INT) AS qty_n FROM source"


def qty_changes(src: Source) -> list[str]:
    return [
        src.change("c", 1, name="a", qty="5"),
        src.change("c", 2, name="b", qty="7"),
        src.change("c", 3, name="c", qty="abc"),  # offset 2: cannot be cast
        src.change("u", 2, name="b2", qty="abc"),  # offset 3: an update that cannot be cast
        src.change("c", 4, name="d", qty="12"),
        src.change("c", 5, name="e", qty=None),  # NULL casts to NULL: no failure
        src.change("u", 1, name="a2", qty="6"),
    ]


def qty_config(tmp_path, bootstrap, topic, ansi: str):
    return write_config(tmp_path, bootstrap, topic, "debezium-json", "COPY_ON_WRITE", **{
        "sink.primary_key": ["id"], "transform.sql": ANSI_SQL, "run.on_bad_record": "dead-letter",
        "spark.spark.sql.ansi.enabled": ansi})  # [spark] "spark.sql.ansi.enabled" = "..."


def qty_table(rows: list[dict]) -> dict:
    return {r["id"]: (r["name"], r["qty_n"]) for r in rows}


def test_ansi_mode_dead_letters_a_row_the_select_cannot_compute(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, qty_changes(Source()))
    cfg = qty_config(tmp_path, bootstrap, topic, "true")
    assert "\"spark.sql.ansi.enabled\" = \"true\"" in cfg.read_text()
    p = cli.cdcsync("run", cfg, "--once", "--json")  # a process of its own: the session is built from [spark]
    assert p.returncode == 0, p.stderr[-3000:]
    totals = json.loads(p.stdout)["totals"]
    assert totals["messages"] == 7 and totals["bad"] == 2 and totals["upserted"] == 5, totals

    dead = {r["offset"]: r.asDict() for r in dead_letter.read(spark, load_config(cfg)).collect()}
    assert sorted(dead) == [2, 3]
    for d in dead.values():
        assert d["reason"] == "transform_failed", d
        assert "CAST(qty AS INT)" in d["error"] and "abc" in d["error"], d["error"]
    path = str(tmp_path / "table")
    want = {1: ("a2", 6), 2: ("b", 7), 4: ("d", 12), 5: ("e", None)}  # id 2 keeps the change before its bad one
    assert qty_table(spark_rows(spark, path)) == want
    assert qty_table(hudi_rs_rows(path)) == want


def test_without_ansi_mode_an_uncastable_value_is_null(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, qty_changes(Source()))
    cfg = qty_config(tmp_path, bootstrap, topic, "false")
    assert str(spark.conf.get("spark.sql.ansi.enabled")).lower() == "false"  # the session run_once hands in
    summary = run_once(cfg, spark)
    assert summary.totals["bad"] == 0 and summary.totals["upserted"] == 7
    path = str(tmp_path / "table")
    want = {1: ("a2", 6), 2: ("b2", None), 3: ("c", None), 4: ("d", 12), 5: ("e", None)}
    assert qty_table(spark_rows(spark, path)) == want
    assert qty_table(hudi_rs_rows(path)) == want
    assert not (tmp_path / "table_dead_letter").exists()


# --- a source column added later ---------------------------------------------------------------------------------

STAR_SQL = "SELECT *, upper(name) AS name_u FROM source"


def with_coupon(src: Source) -> list[str]:
    """Changes after the source's ALTER TABLE ADD COLUMN coupon: in two batches of two."""
    return [src.change("u", 1, coupon="HALF"),
            src.change("c", 11, name="n11", amount=11, status="ok", created_at="2024-01-05 10:00:00", coupon="FREE"),
            src.change("u", 4, amount=44, coupon=None),
            src.change("u", 5, coupon="TENOFF")]


@pytest.mark.parametrize("sql", [STAR_SQL, SQL], ids=["star", "explicit"])
def test_a_source_column_added_later(spark, bootstrap, make_topic, produce, tmp_path, sql):
    topic, src = make_topic(), Source()
    produce(topic, first_run(src))
    settings = {"sink.primary_key": ["id"], "transform.sql": sql}
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ", **settings)
    first = Events()
    run_once(cfg, spark, reporter=first)
    path = str(tmp_path / "table")
    assert view(spark_rows(spark, path)) == select(src.rows, sql)
    assert first.of("columns_left_out") == []  # both SELECTs read every column the source has so far

    produce(topic, with_coupon(src))
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ",
                       **settings, **{"run.max_records_per_batch": 2})
    second = Events()
    assert run_once(cfg, spark, reporter=second).batches == 2
    want = select(src.rows, sql, COLUMNS | {"coupon": "VARCHAR"})
    if sql == STAR_SQL:
        assert want[1]["coupon"] == "HALF" and want[2]["coupon"] is None
        assert second.of("columns_left_out") == []
    else:
        assert want == oracle(src.rows)  # the explicit projection has no coupon
        [said] = second.of("columns_left_out")  # once per run, not once per batch
        assert said["columns"] == "coupon" and said["table"] == "t" and "transform.sql" in said["why"], said
    assert view(spark_rows(spark, path)) == want
    assert view(hudi_rs_rows(path)) == want


# --- partitions the SELECT derives, and the catalog --------------------------------------------------------------

PART_SQL = ("SELECT id, name, amount, date_format(created_at, 'yyyy-MM') AS month, pmod(id, 4) AS bucket "
            "FROM source WHERE amount >= 0")

QUERY = """
import json, sys
from cdcsync.config import load_config
from cdcsync.runtime.session import build_session
cfg = load_config(sys.argv[1])
spark = build_session("catalog-query", "local[1]", cfg.catalog.spark_settings())
print(json.dumps({"tables": sorted(t.name for t in spark.catalog.listTables("lake")),
                  "rows": [r.asDict() for r in spark.sql(sys.argv[2]).collect()]}), flush=True)
"""


def month_changes(src: Source) -> list[str]:
    created = ["2024-01-05", "2024-01-20", "2024-02-03", "2024-02-14", "2024-01-31", "2024-03-01", "2024-02-29",
               "2024-01-01"]
    out = [src.change("c", i, name=f"n{i}", amount=i, status="ok", created_at=f"{c} 08:00:00")
           for i, c in enumerate(created, start=1)]
    return out + [
        src.change("u", 2, created_at="2024-03-09 08:00:00"),  # moves to month=2024-03/bucket=2
        src.change("u", 3, amount=-3),  # leaves the WHERE: its row leaves the table
        src.change("d", 4),
        src.change("u", 5, created_at="2024-02-01 00:00:00", name="moved"),  # 2024-01 → 2024-02, bucket 1 stays
        src.change("u", 7, amount=70),
    ]


@pytest.mark.soak  # runs through the CLI and a catalog query process, each a JVM
def test_derived_partitions_are_hive_folders_and_the_catalog_serves_them(spark, bootstrap, make_topic, produce,
                                                                         tmp_path):
    topic, src = make_topic(), Source()
    produce(topic, month_changes(src))
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ", **{
        "sink.primary_key": ["id"], "sink.partition_by": ["month", "bucket"], "transform.sql": PART_SQL,
        "catalog.database": "lake", "catalog.metastore_dir": str(tmp_path / "metastore")})
    p = cli.cdcsync("run", cfg, "--once", "--json")  # an embedded metastore: a process of its own (test_catalog)
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout)["totals"]["filtered"] == 1  # id 3

    want = select(src.rows, PART_SQL)
    assert sorted(want) == [1, 2, 5, 6, 7, 8]
    assert want[2]["month"] == "2024-03" and want[5]["month"] == "2024-02" and want[5]["bucket"] == norm(1)
    path = tmp_path / "table"
    assert view(spark_rows(spark, str(path)), ("month", "bucket")) == want
    assert view(hudi_rs_rows(str(path)), ("month", "bucket")) == want
    folders = {str(f.relative_to(path)) for f in path.glob("*/*") if f.is_dir() and not f.parent.name.startswith(".")}
    assert {f"month={r['month']}/bucket={r['bucket'][1]}" for r in want.values()} <= folders
    assert all(f.startswith("month=") and "/bucket=" in f for f in folders), folders
    assert "month=2024-01/bucket=1" in folders and "month=2024-03/bucket=2" in folders

    q = subprocess.run([sys.executable, "-c", QUERY, str(cfg), "SELECT id, name, amount, month, bucket FROM lake.t"],
                       capture_output=True, text=True, timeout=300, env=cli._env(None))
    assert q.returncode == 0, q.stderr[-3000:]
    seen = json.loads(q.stdout.strip().splitlines()[-1])
    assert "t" in seen["tables"]
    assert {r["id"]: {c: norm(v) for c, v in r.items()} for r in seen["rows"]} == want


# --- refused at run time -----------------------------------------------------------------------------------------


def test_a_column_the_source_lacks_stops_the_run(spark, bootstrap, make_topic, produce, tmp_path):
    topic, src = make_topic(), Source()
    produce(topic, first_run(src))
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ", **{
        "sink.primary_key": ["id"], "transform.sql": "SELECT id, nmae, amount FROM source WHERE status <> 'test'"})
    p = cli.cdcsync("run", cfg, "--once")
    assert p.returncode == ExitCode.CONFIG == 78, p.stderr[-3000:]
    assert "transform.sql" in p.stderr and "'nmae'" in p.stderr and "did you mean 'name'" in p.stderr, p.stderr
    assert hudi.latest_instant(spark, str(tmp_path / "table")) is None  # nothing was committed
