"""Acceptance (issue 45, point 3): a [transform] sql that cannot keep the table equal to the SELECT over the source —
not one SELECT from source, a projection dropping a primary-key or ordering column, partition_by or primary_key
naming a column it does not produce, a non-deterministic function — makes `cdcsync validate` exit 78 naming the key,
and `cdcsync run --once` exit 78 before any JVM (the commands run as real processes that never import pyspark)."""

from __future__ import annotations

import json

import pytest

from tests.cli import cdcsync
from tests.configs import minimal, write

TABLE = minimal() + 'primary_key = ["id"]\nordering_field = "updated_at"\npartition_by = ["day"]\n'
DAY = "to_date(created_at) AS day"


def transform(sql: str) -> str:
    return TABLE + "\n[transform]\nsql = " + json.dumps(sql) + "\n"  # a TOML basic string is a JSON string


REFUSALS = {
    "a UNION": (f"SELECT id, updated_at, {DAY} FROM source UNION SELECT id, updated_at, {DAY} FROM source",
                "must be one SELECT"),
    "another table": (f"SELECT id, updated_at, {DAY} FROM orders", "must read FROM source"),
    "a join": (f"SELECT s.id, s.updated_at, {DAY} FROM source s JOIN users u ON s.id = u.id",
               "must read FROM source alone, without a JOIN"),
    "GROUP BY": (f"SELECT id, updated_at, {DAY} FROM source GROUP BY id, updated_at, created_at",
                 "GROUP BY has no meaning here"),
    "dropped key": (f"SELECT updated_at, name, {DAY} FROM source", "drops the primary-key column 'id'"),
    "computed key": (f"SELECT id + 1 AS id, updated_at, {DAY} FROM source", "computes the primary-key column 'id'"),
    "dropped ordering": (f"SELECT id, name, {DAY} FROM source", "drops the ordering column 'updated_at'"),
    "partition_by not produced": ("SELECT id, updated_at, to_date(created_at) AS dya FROM source",
                                  "partition_by names 'day', which transform.sql does not produce"),
    "rand()": (f"SELECT id, updated_at, {DAY}, rand() AS r FROM source", "RAND() is not deterministic"),
    "current_timestamp()": (f"SELECT id, updated_at, current_timestamp() AS seen, {DAY} FROM source",
                            "CURRENT_TIMESTAMP() is not deterministic"),
    "uuid()": (f"SELECT id, updated_at, {DAY}, uuid() AS u FROM source", "UUID() is not deterministic"),
    "unix_timestamp()": (f"SELECT id, updated_at, {DAY} FROM source WHERE unix_timestamp() > 0",
                         "unix_timestamp() is not deterministic"),
}


@pytest.mark.parametrize("sql, fragment", REFUSALS.values(), ids=REFUSALS.keys())
def test_validate_exits_78_naming_transform_sql(tmp_path, sql, fragment):
    path = write(tmp_path, transform(sql))
    p = cdcsync("validate", path, "--json", timeout=60, jvm_free=True)
    data = json.loads(p.stdout)
    assert p.returncode == 78 and data["valid"] is False and data["key"] == "transform.sql", data
    assert data["message"].startswith(f"{path}: ") and fragment in data["message"], data["message"]
    assert data["hint"], data


@pytest.mark.parametrize("sql, fragment", REFUSALS.values(), ids=REFUSALS.keys())
def test_run_exits_78_before_spark_starts(tmp_path, sql, fragment):
    path = write(tmp_path, transform(sql))
    p = cdcsync("run", path, "--once", timeout=60, jvm_free=True)
    assert p.returncode == 78 and p.stdout == "", p.stderr
    assert f"error: {path}" in p.stderr and "transform.sql" in p.stderr and fragment in p.stderr, p.stderr


def test_primary_key_naming_a_column_the_select_does_not_produce_names_the_close_one(tmp_path):
    text = transform(f"SELECT order_id, updated_at, {DAY} FROM source").replace('["id"]', '["order_idd"]')
    p = cdcsync("validate", write(tmp_path, text), "--json", timeout=60, jvm_free=True)
    data = json.loads(p.stdout)
    assert p.returncode == 78 and data["key"] == "transform.sql" and data["column"] == "order_idd", data
    assert "drops the primary-key column 'order_idd'" in data["message"] and "did you mean 'order_id'?" in \
        data["message"]


def test_a_route_s_transform_sql_is_named_by_its_route(tmp_path):
    text = TABLE + ('\n[[route]]\nsource_table = "shop\\\\.orders"\nsink_table = "orders"\nprimary_key = ["id"]\n'
                    'transform_sql = "SELECT order_no, updated_at FROM source"\n')
    path = write(tmp_path, text)
    p = cdcsync("validate", path, "--json", timeout=60, jvm_free=True)
    data = json.loads(p.stdout)
    assert p.returncode == 78 and data["key"] == "route[0].transform_sql", data
    assert "drops the primary-key column 'id'" in data["message"], data["message"]
    p = cdcsync("run", path, "--once", timeout=60, jvm_free=True)
    assert p.returncode == 78 and "route[0].transform_sql" in p.stderr, p.stderr


def test_the_same_config_with_a_sound_select_validates(tmp_path):
    path = write(tmp_path, transform(f"SELECT id, updated_at, upper(name) AS name, {DAY} FROM source "
                                     "WHERE tenant <> 'test'"))
    p = cdcsync("validate", path, "--json", timeout=60, jvm_free=True)
    assert p.returncode == 0 and json.loads(p.stdout)["valid"] is True, p.stdout + p.stderr
