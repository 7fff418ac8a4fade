"""[transform] sql (issue 45) checked without a JVM: each refusal of `parse`, with the config key it names (exit 78),
and what it accepts (Hudi Streamer's <SRC>, the view's alias, `*`)."""

from __future__ import annotations

import pytest

from cdcsync.errors import ConfigError
from cdcsync.exit_codes import ExitCode
from cdcsync.transform.sql import parse

KEY = "transform.sql"


def checked(sql: str, primary_key=("id",), ordering: str | None = "ts", partition_by=(), key: str = KEY):
    return parse(sql, key=key, path="config.toml", primary_key=list(primary_key), ordering_field=ordering,
                 partition_by=list(partition_by))


def refused(sql: str, primary_key=("id",), ordering: str | None = "ts", partition_by=(), key: str = KEY) -> str:
    """The message `parse` refuses `sql` with, having checked it names the file and the key and exits 78."""
    with pytest.raises(ConfigError) as err:
        checked(sql, primary_key, ordering, partition_by, key)
    e = err.value
    assert e.exit_code == ExitCode.CONFIG == 78 and e.facts["key"] == key and e.facts["file"] == "config.toml"
    assert e.message.startswith("config.toml: ") and key in e.message and e.hint, e.render()
    return e.message


# --- one SELECT ---------------------------------------------------------------------------------------------------

def test_a_union_is_refused():
    assert "must be one SELECT (no UNION" in refused("SELECT id, ts FROM source UNION SELECT id, ts FROM source")


def test_two_statements_are_refused():
    assert "must be one SELECT" in refused("SELECT id, ts FROM source; SELECT id, ts FROM source")


@pytest.mark.parametrize("sql", ["SELEC id, ts FROM source", "SELECT id, ts FROM source WHERE",
                                 "SELECT (id FROM source"])
def test_text_that_is_not_spark_sql_is_refused_with_its_position(sql):
    message = refused(sql)
    assert "is not Spark SQL" in message and "(line 1, column" in message


@pytest.mark.parametrize("sql", ["INSERT INTO t SELECT * FROM source", "DELETE FROM source WHERE id = 1",
                                 "WITH x AS (SELECT * FROM source) SELECT * FROM x", "(SELECT * FROM source)"])
def test_anything_but_a_plain_select_is_refused(sql):
    message = refused(sql)
    assert "must be one SELECT" in message or "WITH has no meaning" in message


# --- FROM source ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sql", ["SELECT id, ts FROM orders", "SELECT id, ts FROM shop.source",
                                 "SELECT 1 AS id, 2 AS ts",
                                 "SELECT id, ts FROM (SELECT * FROM source)", "SELECT id, ts FROM range(10)"])
def test_another_table_is_refused(sql):
    assert "must read FROM source (or Hudi Streamer's <SRC>)" in refused(sql)


@pytest.mark.parametrize("sql", ["SELECT s.id, s.ts FROM source s JOIN users u ON s.id = u.id",
                                 "SELECT s.id, s.ts FROM source s, users u",
                                 "SELECT a.id, a.ts FROM source a LEFT JOIN source b ON a.id = b.id"])
def test_a_join_is_refused(sql):
    assert "must read FROM source alone, without a JOIN" in refused(sql)


@pytest.mark.parametrize("sql", ["SELECT id, ts FROM source TABLESAMPLE (10 PERCENT)",
                                 "SELECT id, ts FROM source AS s(a, b)",
                                 "SELECT id, ts FROM source PIVOT (sum(x) FOR y IN (1))"])
def test_the_view_is_read_as_it_is(sql):
    assert "the view is read as it is" in refused(sql)


# --- one row in, at most one out -----------------------------------------------------------------------------------

@pytest.mark.parametrize("clause, sql", [
    ("GROUP BY", "SELECT id, ts FROM source GROUP BY id, ts"),
    ("ORDER BY", "SELECT id, ts FROM source ORDER BY ts"),
    ("LIMIT", "SELECT id, ts FROM source LIMIT 10"),
    ("DISTINCT", "SELECT DISTINCT id, ts FROM source"),
    ("HAVING", "SELECT id, ts FROM source HAVING id > 1"),
    ("SORT BY", "SELECT id, ts FROM source SORT BY id"),
    ("DISTRIBUTE BY", "SELECT id, ts FROM source DISTRIBUTE BY id"),
    ("CLUSTER BY", "SELECT id, ts FROM source CLUSTER BY id"),
    ("LATERAL VIEW", "SELECT id, ts FROM source LATERAL VIEW explode(tags) t AS tag"),
    ("QUALIFY", "SELECT id, ts FROM source QUALIFY ts > 0"),
])
def test_a_clause_relating_rows_is_refused_by_its_name(clause, sql):
    assert f"so {clause} has no meaning here" in refused(sql)


@pytest.mark.parametrize("sql", ["SELECT id, ts, count(*) AS n FROM source",
                                 "SELECT id, ts, sum(amount) AS n FROM source",
                                 "SELECT id, ts, max(amount) AS n FROM source",
                                 "SELECT id, ts FROM source WHERE avg(amount) > 1",
                                 "SELECT id, ts, collect_list(name) AS n FROM source"])
def test_aggregates_are_refused(sql):
    assert "an aggregate" in refused(sql)


@pytest.mark.parametrize("sql", ["SELECT id, ts, row_number() OVER (ORDER BY ts) AS n FROM source",
                                 "SELECT id, ts, lag(amount) OVER (PARTITION BY id ORDER BY ts) AS prev FROM source"])
def test_window_functions_are_refused(sql):
    assert "a window function" in refused(sql)


@pytest.mark.parametrize("sql", ["SELECT id, ts, explode(tags) AS tag FROM source",
                                 "SELECT id, ts, explode_outer(tags) AS tag FROM source",
                                 "SELECT id, ts, posexplode(tags) FROM source",
                                 "SELECT id, ts, inline(items) FROM source",
                                 "SELECT id, ts, inline_outer(items) FROM source",
                                 "SELECT id, ts, stack(2, a, b) AS v FROM source",
                                 "SELECT id, ts, json_tuple(doc, 'a', 'b') FROM source"])
def test_generators_are_refused(sql):
    assert "a generator" in refused(sql)


@pytest.mark.parametrize("sql", ["SELECT id, ts, (SELECT max(x) FROM other) AS m FROM source",
                                 "SELECT id, ts FROM source WHERE id IN (SELECT id FROM allowed)",
                                 "SELECT id, ts FROM source WHERE EXISTS (SELECT 1 FROM source)"])
def test_subqueries_are_refused(sql):
    assert "a subquery" in refused(sql)


# --- the key and the ordering column -------------------------------------------------------------------------------

def test_a_projection_dropping_a_primary_key_column_is_refused():
    message = refused("SELECT tenant, ts, name FROM source", primary_key=("tenant", "id"))
    assert "drops the primary-key column 'id'" in message


def test_a_projection_computing_a_primary_key_column_is_refused():
    message = refused("SELECT CAST(id AS STRING) AS id, ts FROM source")
    assert "computes the primary-key column 'id' (CAST(id AS STRING))" in message


def test_a_renamed_column_named_as_the_key_is_a_computed_key():
    assert "computes the primary-key column 'id' (order_id)" in refused("SELECT order_id AS id, ts FROM source")


def test_a_projection_dropping_the_ordering_column_is_refused():
    assert "drops the ordering column 'ts'" in refused("SELECT id, name FROM source")


def test_a_projection_computing_the_ordering_column_is_refused():
    assert "computes the ordering column 'ts' (ts + 1)" in refused("SELECT id, ts + 1 AS ts FROM source")


def test_star_cannot_carry_a_computed_key_either():
    assert "computes the primary-key column 'id'" in refused("SELECT *, upper(id) AS id FROM source")


def test_primary_key_naming_a_column_the_projection_does_not_produce_names_the_close_one():
    message = refused("SELECT order_id, ts FROM source", primary_key=("order_idd",))
    assert "drops the primary-key column 'order_idd'" in message and "did you mean 'order_id'?" in message


def test_partition_by_naming_a_column_the_projection_does_not_produce_names_the_close_one():
    message = refused("SELECT id, ts, to_date(created_at) AS day FROM source", partition_by=("dya",))
    assert "partition_by names 'dya', which transform.sql does not produce (its columns: id, ts, day)" in message
    assert "did you mean 'day'?" in message


def test_partition_by_with_nothing_close_names_no_match():
    message = refused("SELECT id, ts FROM source", partition_by=("region",))
    assert "partition_by names 'region'" in message and "did you mean" not in message


def test_a_route_s_refusal_names_the_route_s_key():
    key = "route[2].transform_sql"
    assert refused("SELECT name FROM source", key=key).startswith(f"config.toml: {key}: drops the primary-key column")


# --- deterministic -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", ["rand()", "rand(42)", "randn()", "random()", "current_timestamp()",
                                  "current_timestamp", "current_date()", "now()", "uuid()", "unix_timestamp()",
                                  "localtimestamp()",
                                  "monotonically_increasing_id()", "spark_partition_id()", "input_file_name()",
                                  "shuffle(tags)", "reflect('java.util.UUID', 'randomUUID')"])
def test_non_deterministic_functions_are_refused(call):
    message = refused(f"SELECT id, ts, {call} AS x FROM source")
    assert "is not deterministic: a replay of the same changes would write other values" in message


def test_unix_timestamp_without_arguments_is_named_as_written():
    assert "unix_timestamp() is not deterministic" in refused("SELECT id, ts, unix_timestamp() AS x FROM source")


def test_a_non_deterministic_where_is_refused():
    assert "RAND() is not deterministic" in refused("SELECT id, ts FROM source WHERE rand() < 0.5")


@pytest.mark.parametrize("call", ["unix_timestamp(created_at)", "unix_timestamp(created_at, 'yyyy-MM-dd')",
                                  "to_unix_timestamp(created_at, 'yyyy')", "current_timezone()"])
def test_deterministic_relatives_pass(call):
    assert checked(f"SELECT id, ts, {call} AS x FROM source").outputs[-1].name == "x"


# --- names ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("item", ["upper(name)", "amount * 2", "addr.city", "CAST(amount AS INT)"])
def test_an_unnamed_computed_column_is_refused(item):
    assert "needs a name: Spark would call the column by its text" in refused(f"SELECT id, ts, {item} FROM source")


@pytest.mark.parametrize("sql", ["SELECT id, ts, name, name FROM source",
                                 "SELECT id, ts, name, upper(x) AS name FROM source",
                                 "SELECT id, ts, name, Name FROM source", "SELECT id, ts, a AS b, c AS B FROM source"])
def test_duplicate_names_are_refused(sql):
    assert "twice" in refused(sql)


def test_star_twice_is_refused():
    assert "gives `*` twice" in refused("SELECT *, * FROM source", primary_key=(), ordering=None)


@pytest.mark.parametrize("name", ["_hoodie_commit_time", "_hoodie_is_deleted", "_HOODIE_x", "_cdc_order", "_cdcsync_x"])
def test_reserved_names_are_refused(name):
    assert f"column {name!r}: names starting _hoodie" in refused(f"SELECT id, ts, name AS {name} FROM source")


@pytest.mark.parametrize("sql", ["SELECT * EXCEPT (secret) FROM source", "SELECT * AS everything FROM source"])
def test_star_is_the_view_as_it_is(sql):
    assert "`*` stands for the view's columns as they are" in refused(sql)


def test_a_struct_s_star_is_refused():
    assert "addr.* expands a struct" in refused("SELECT id, ts, addr.* FROM source")


def test_what_sqlglot_cannot_hand_to_spark_unchanged_is_refused():
    message = refused("SELECT id, ts, to_char(amount, '999') AS a FROM source")
    assert "a: TO_CHAR cannot be handed to Spark as written" in message


# --- accepted ------------------------------------------------------------------------------------------------------

def test_hudi_streamer_s_src_names_the_view():
    tf = checked("SELECT id, ts, upper(name) AS name FROM <SRC> WHERE tenant <> 'test'")
    assert [(o.name, o.passes) for o in tf.outputs] == [("id", "id"), ("ts", "ts"), ("name", None)]
    assert tf.where.sql("spark") == "tenant <> 'test'" and tf.sql.endswith("FROM <SRC> WHERE tenant <> 'test'")


def test_the_view_s_alias_and_its_name_qualify_columns():
    tf = checked("SELECT s.id, source.ts, s.name AS who FROM source AS s WHERE s.tenant <> 'x'")
    assert [(o.name, o.passes) for o in tf.outputs] == [("id", "id"), ("ts", "ts"), ("who", "name")]
    assert tf.referenced() == {"id", "ts", "name", "tenant"}


def test_a_parenthesized_key_passes_through():
    assert checked("SELECT (id), ts FROM source").outputs[0].passes == "id"


def test_star_defers_the_key_and_partition_checks_to_the_run():
    tf = checked("SELECT *, to_date(created_at) AS day FROM source", partition_by=("day", "region"))
    assert tf.star and [o.name for o in tf.outputs] == ["*", "day"]


def test_a_trailing_semicolon_and_comments_are_fine():
    assert checked("SELECT id, ts -- the key\nFROM source; ").outputs[1].name == "ts"


def test_no_key_and_no_ordering_take_any_projection():
    assert checked("SELECT name FROM source", primary_key=(), ordering=None).outputs[0].passes == "name"


def test_a_bare_null_column_is_refused():
    # Spark types it VOID, which neither Parquet nor Hudi can store: the run would fail only at its first write
    assert "a bare NULL has no type" in refused("SELECT id, ts, NULL AS gone FROM source")
    checked("SELECT id, ts, CAST(NULL AS STRING) AS gone FROM source")
