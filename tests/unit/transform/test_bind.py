"""Transform.bind (issue 45): a checked SELECT over one batch's view, rendered as Spark SQL over the struct STRUCT —
columns the view lacks named with the closest one, the key passed through, `*` expanded in its place, and under
ANSI mode each strict expression in its try_ form with a failure test wherever it runs for the row."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot.tokens import TokenType

from cdcsync.errors import ConfigError
from cdcsync.transform.sql import STRUCT, parse

VIEW = ["id", "ts", "name", "qty", "amount", "created_at", "tags", "addr", "_kafka_offset"]


def checked(sql: str, primary_key=("id",)):
    return parse(sql, key="transform.sql", path="config.toml", primary_key=list(primary_key), ordering_field=None,
                 partition_by=[])


def bound(sql: str, ansi: bool = False, view=VIEW, through=()):
    return checked(sql, primary_key=()).bind(list(view), ansi, list(through))


def column(sql: str, ansi: bool = False) -> str:
    """The Spark SQL of the SELECT's last column."""
    return bound(sql, ansi).columns[-1][1]


def strings(text: str) -> list[str]:
    """The string literals of Spark SQL `text`, unescaped."""
    return [t.text for t in sqlglot.tokenize(text, read="spark") if t.token_type == TokenType.STRING]


def plain(text: str) -> str:
    """Spark SQL over STRUCT read as over the view's own columns."""
    return text.replace(f"`{STRUCT}`.", "").replace("`", "")


# --- the view's columns --------------------------------------------------------------------------------------------

def test_a_column_the_view_lacks_names_the_closest_one():
    with pytest.raises(ConfigError) as err:
        bound("SELECT id, upper(nmae) AS name FROM source")
    e = err.value
    assert e.exit_code == 78 and e.facts["key"] == "transform.sql" and e.facts["column"] == "nmae"
    assert "reads column 'nmae', which the source does not have" in e.message and "did you mean 'name'?" in e.message


def test_the_closest_column_is_found_whatever_its_case():
    with pytest.raises(ConfigError) as err:
        bound("SELECT id, CreatedAt AS c FROM source", view=["id", "created_at", "createdat"])
    assert "did you mean 'createdat'?" in err.value.message


def test_a_column_read_only_by_the_where_is_checked_too():
    with pytest.raises(ConfigError) as err:
        bound("SELECT id FROM source WHERE tenant <> 'x'")
    assert err.value.facts["column"] == "tenant" and "did you mean" not in err.value.message


def test_a_struct_field_reads_its_struct_column():
    b = bound("SELECT id, addr.city AS city, source.addr.zip AS zip FROM source")
    assert b.columns[1:] == (("city", f"`{STRUCT}`.`addr`.`city`"), ("zip", f"`{STRUCT}`.`addr`.zip"))
    assert bound("SELECT id, s.`addr`.`zip code` AS z FROM source s").columns[-1][1] == f"`{STRUCT}`.`addr`.`zip code`"


def test_metadata_columns_are_part_of_the_view():
    assert bound("SELECT id, _kafka_offset AS off FROM source").columns[-1] == ("off", f"`{STRUCT}`.`_kafka_offset`")


def test_names_that_need_quoting_stay_quoted():
    b = bound("SELECT id, `order date` AS `day of order` FROM source", view=["id", "order date"])
    assert b.columns[-1] == ("day of order", f"`{STRUCT}`.`order date`")


# --- the key passes through ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("sql", ["SELECT name FROM source", "SELECT upper(id) AS id, name FROM source",
                                 "SELECT *, upper(id) AS id FROM source", "SELECT name AS id FROM source"])
def test_through_refuses_a_key_not_passed_through(sql):
    with pytest.raises(ConfigError) as err:
        bound(sql, through=["id"])
    assert "does not pass the key column 'id' through unchanged" in err.value.message
    assert err.value.facts["key"] == "transform.sql"


def test_through_takes_star_and_ignores_a_key_the_view_does_not_have():
    assert [n for n, _ in bound("SELECT * FROM source", through=["id", "not_in_view"]).columns] == VIEW


# --- `*` -----------------------------------------------------------------------------------------------------------

def test_star_expansion_keeps_explicit_columns_in_their_places():
    tf = checked("SELECT ts, *, upper(name) AS name FROM source", primary_key=())
    view = ["id", "ts", "name", "qty"]
    assert [(o.name, o.passes) for o in tf.columns(view)] == [("ts", "ts"), ("id", "id"), ("qty", "qty"),
                                                              ("name", None)]
    assert [n for n, _ in tf.bind(view, False).columns] == ["ts", "id", "qty", "name"]


def test_an_explicit_column_replaces_the_star_s_one_whatever_its_case():
    tf = checked("SELECT *, upper(name) AS NAME FROM source", primary_key=())
    assert [o.name for o in tf.columns(["id", "name"])] == ["id", "NAME"]


def test_star_picks_new_columns_up_and_an_explicit_projection_does_not():
    star, explicit = checked("SELECT *, 1 AS one FROM source"), checked("SELECT id, name FROM source")
    assert [o.name for o in star.columns(["id", "name", "coupon"])] == ["id", "name", "coupon", "one"]
    assert [o.name for o in explicit.columns(["id", "name", "coupon"])] == ["id", "name"]
    assert star.star and not explicit.star and explicit.referenced() == {"id", "name"}


def test_computed_from_counts_renamed_computed_and_filtered_columns_only():
    tf = checked("SELECT id, ts, name AS who, qty * 2 AS q, amount FROM source WHERE created_at > '2024'")
    assert tf.computed_from() == {"name", "qty", "created_at"}
    assert tf.referenced() == {"id", "ts", "name", "qty", "amount", "created_at"}


# --- ANSI mode -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("written, tried", [
    ("CAST(qty AS INT)", "TRY_CAST(qty AS INT)"),
    ("amount / qty", "TRY_DIVIDE(amount, qty)"),
    ("amount + qty", "TRY_ADD(amount, qty)"),
    ("amount - qty", "TRY_SUBTRACT(amount, qty)"),
    ("amount * qty", "TRY_MULTIPLY(amount, qty)"),
    ("amount % qty", "amount % NULLIF(qty, 0)"),
    ("amount div qty", "amount DIV NULLIF(qty, 0)"),
    ("to_date(created_at)", "TRY_CAST(created_at AS DATE)"),
    ("to_date(created_at, 'dd/MM/yyyy')", "CAST(TRY_TO_TIMESTAMP(created_at, 'dd/MM/yyyy') AS DATE)"),
    ("to_timestamp(created_at, 'dd/MM/yyyy HH:mm')", "TRY_TO_TIMESTAMP(created_at, 'dd/MM/yyyy HH:mm')"),
])
def test_ansi_renders_strict_expressions_in_their_try_forms_with_a_failure_test(written, tried):
    b = bound(f"SELECT id, {written} AS x FROM source", ansi=True)
    assert plain(b.columns[-1][1]) == tried
    (test, detail), = b.failures
    assert plain(test).startswith(f"{tried} IS NULL AND NOT ") and "IS NULL" in test
    assert plain(detail).startswith("CONCAT('") and " cannot be computed from " in detail


def test_a_failure_detail_names_the_expression_as_written_and_the_values():
    (test, detail), = bound("SELECT id, CAST(qty AS INT) AS q FROM source", ansi=True).failures
    assert plain(test) == "TRY_CAST(qty AS INT) IS NULL AND NOT qty IS NULL"
    assert plain(detail) == ("CONCAT('CAST(qty AS INT) cannot be computed from ', "
                             "CONCAT_WS(', ', COALESCE(CAST(qty AS STRING), 'NULL')))")


def test_without_ansi_expressions_stay_as_written_and_nothing_is_tested():
    b = bound("SELECT id, CAST(qty AS INT) AS q, amount / qty AS r FROM source WHERE amount + 1 > 2")
    assert [plain(c) for _, c in b.columns[1:]] == ["CAST(qty AS INT)", "amount / qty"]
    assert plain(b.keep) == "amount + 1 > 2" and b.failures == ()


def test_nested_strict_expressions_each_get_a_test_and_the_where_too():
    b = bound("SELECT id, amount + qty * 2 AS x FROM source WHERE amount - 1 > 0", ansi=True)
    assert plain(b.columns[-1][1]) == "TRY_ADD(amount, TRY_MULTIPLY(qty, 2))"
    assert plain(b.keep) == "TRY_SUBTRACT(amount, 1) > 0"
    assert [plain(t).split(" IS NULL")[0] for t, _ in b.failures] == [
        "TRY_MULTIPLY(qty, 2)", "TRY_ADD(amount, TRY_MULTIPLY(qty, 2))", "TRY_SUBTRACT(amount, 1)"]


@pytest.mark.parametrize("written", [
    "CASE WHEN qty > 0 THEN amount / qty ELSE 0 END",
    "IF(qty > 0, amount / qty, 0)",
    "COALESCE(CAST(name AS INT), 0)",
    "nvl(CAST(name AS INT), 0)",
    "nvl2(qty, amount / qty, 0)",
    "decode(qty, 0, 0, amount / qty)",
    "transform(tags, t -> CAST(t AS INT))",
    "filter(tags, t -> t / qty > 1)",
])
def test_no_failure_test_inside_case_if_coalesce_or_lambdas(written):
    b = bound(f"SELECT id, {written} AS x FROM source", ansi=True)
    assert b.failures == () and ("TRY_" in b.columns[-1][1] or "NULLIF" in b.columns[-1][1])


@pytest.mark.parametrize("where, guard", [
    ("qty <> 0 AND amount / qty > 1", "COALESCE(qty <> 0, TRUE)"),
    ("qty = 0 OR amount / qty > 1", "NOT COALESCE(qty = 0, FALSE)"),
])
def test_the_right_side_of_and_or_is_tested_only_where_spark_evaluates_it(where, guard):
    (test, _), = bound(f"SELECT id FROM source WHERE {where}", ansi=True).failures
    assert plain(test) == f"{guard} AND TRY_DIVIDE(amount, qty) IS NULL AND NOT amount IS NULL AND NOT qty IS NULL"


def test_the_left_side_of_and_is_tested_for_every_row():
    tests = [plain(t) for t, _ in bound("SELECT id FROM source WHERE amount / qty > 1 AND ts > 0", ansi=True).failures]
    assert tests == ["TRY_DIVIDE(amount, qty) IS NULL AND NOT amount IS NULL AND NOT qty IS NULL"]


@pytest.mark.parametrize("ansi", [False, True])
def test_a_written_try_cast_stays_try_cast_and_is_not_tested(ansi):
    b = bound("SELECT id, try_cast(qty AS INT) AS q FROM source", ansi=ansi)
    assert plain(b.columns[-1][1]) == "TRY_CAST(qty AS INT)" and b.failures == ()


@pytest.mark.parametrize("ansi", [False, True])
@pytest.mark.parametrize("pattern", ["dd/MM/yyyy", "yyyy-MM-dd", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss",
                                     "'Day' D", "EEE, d MMM yyyy", "%Y", "yyyyMMdd", "hh:mm a"])
def test_to_date_keeps_its_format_as_written(pattern, ansi):
    text = column(f'SELECT id, to_date(created_at, "{pattern}") AS day FROM source', ansi)
    assert strings(text) == [pattern], text


@pytest.mark.parametrize("call", ["to_timestamp(created_at, \"{p}\")", "date_format(created_at, \"{p}\")",
                                  "from_unixtime(qty, \"{p}\")", "unix_timestamp(created_at, \"{p}\")"])
def test_datetime_patterns_keep_quoted_text_and_every_letter(call):
    pattern = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX 'Q'Q E"
    assert strings(column(f"SELECT id, {call.format(p=pattern)} AS x FROM source")) == [pattern]


@pytest.mark.parametrize("written, rendered", [
    ("unix_date(to_date(created_at))", "UNIX_DATE(TO_DATE(created_at))"),
    ("regexp_extract(name, '(a+)(b)', 2)", "REGEXP_EXTRACT(name, '(a+)(b)', 2)"),
    ("substr(name, 2, 3)", "SUBSTRING(name, 2, 3)"),
    ("date_sub(created_at, 1)", "DATE_ADD(created_at, 1 * -1)"),
    ("name RLIKE '^a'", "name RLIKE '^a'"),
    ("upper(name) || '-' || lower(name)", "UPPER(name) || '-' || LOWER(name)"),
])
def test_spark_functions_reach_spark_with_their_meaning(written, rendered):
    assert plain(column(f"SELECT id, {written} AS x FROM source")) == rendered


@pytest.mark.parametrize("ansi", [False, True])
def test_every_rendering_parses_back_as_spark_sql(ansi):
    b = bound("SELECT *, to_date(created_at, 'dd/MM/yyyy') AS day, CASE WHEN qty > 0 THEN amount / qty END AS r, "
              "transform(tags, t -> upper(t)) AS up, addr.city AS city FROM source WHERE qty <> 0 AND amount % qty = 1",
              ansi=ansi)
    for text in [c for _, c in b.columns] + [b.keep] + [x for f in b.failures for x in f]:
        sqlglot.parse_one(f"SELECT {text}", read="spark")
