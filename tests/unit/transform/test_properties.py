"""Properties of [transform] sql's checks and rendering (issue 45) over open-ended inputs: random projections over
random column names, and random WHERE clauses under ANSI mode judged by an independent pair — a Python model of
which rows Spark cannot compute, and DuckDB evaluating the rendered try_ forms and failure tests."""

from __future__ import annotations

import math
import string

import duckdb
import pytest
import sqlglot
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cdcsync.errors import ConfigError
from cdcsync.transform.sql import STRUCT, parse

RESERVED = ("_hoodie", "_cdc_order", "_cdcsync", "_unavailable_tp")
NAMES = st.text(string.ascii_letters + string.digits + "_ ", min_size=1, max_size=8).filter(
    lambda s: s.strip() == s and not s.lower().startswith(RESERVED))
KINDS = ["pass", "rename", "upper", "arith", "cast", "star"]


def q(name: str) -> str:
    return f"`{name}`"


@st.composite
def projections(draw):
    """(view columns, items): each item (kind, source column, alias); aliases may collide with anything."""
    view = draw(st.lists(NAMES, min_size=1, max_size=6, unique_by=str.lower))
    items = draw(st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(view), NAMES), min_size=1, max_size=6))
    return view, items


def item_sql(kind: str, col: str, alias: str) -> str:
    return {"pass": q(col), "rename": f"{q(col)} AS {q(alias)}", "upper": f"upper({q(col)}) AS {q(alias)}",
            "arith": f"{q(col)} * 2 + 1 AS {q(alias)}", "cast": f"CAST({q(col)} AS INT) AS {q(alias)}",
            "star": "*"}[kind]


def name_of(kind: str, col: str, alias: str) -> str:
    return col if kind == "pass" else alias


def check(sql: str, primary_key=(), ordering=None):
    return parse(sql, key="transform.sql", path="config.toml", primary_key=list(primary_key),
                 ordering_field=ordering, partition_by=[])


@given(projections())
def test_outputs_are_unique_and_say_what_passes_through(projection):
    view, items = projection
    sql = f"SELECT {', '.join(item_sql(*i) for i in items)} FROM source"
    explicit = [i for i in items if i[0] != "star"]
    names = [name_of(*i).lower() for i in explicit]
    clash = len(names) != len(set(names)) or sum(i[0] == "star" for i in items) > 1
    try:
        tf = check(sql)
    except ConfigError as e:
        assert clash and "twice" in e.message, e.message
        return
    assert not clash
    want = [("*", None) if k == "star" else (name_of(k, c, a), c if k in ("pass", "rename") else None)
            for k, c, a in items]
    assert [(o.name, o.passes) for o in tf.outputs] == want
    assert tf.referenced() == {c for k, c, _ in explicit}
    assert tf.computed_from() == {c for k, c, _ in explicit if k != "pass"}
    columns = tf.columns(view)
    assert len({o.name.lower() for o in columns}) == len(columns)
    if any(k == "star" for k, _, _ in items):  # every view column the projection does not name, in `*`'s place
        assert {o.name.lower() for o in columns} == set(names) | {c.lower() for c in view}
    for ansi in (False, True):
        b = tf.bind(view, ansi)
        assert [n for n, _ in b.columns] == [o.name for o in columns]
        for (name, text), o in zip(b.columns, columns, strict=True):
            parsed = sqlglot.parse_one(f"SELECT {text}", read="spark")  # every rendering is Spark SQL
            assert parsed is not None
            if o.passes is not None:
                assert text == f"`{STRUCT}`.{q(o.passes)}", (name, text)
        for test, detail in b.failures:
            sqlglot.parse_one(f"SELECT {test}, {detail}", read="spark")
        assert bool(b.failures) == (ansi and any(k in ("arith", "cast") for k, _, _ in explicit))


@given(projections(), st.data())
def test_a_key_or_ordering_column_must_pass_through_unchanged(projection, data):
    view, items = projection
    explicit = [i for i in items if i[0] != "star"]
    names = [name_of(*i) for i in explicit]
    assume(len({n.lower() for n in names}) == len(names) and sum(i[0] == "star" for i in items) <= 1)
    key = data.draw(st.lists(st.sampled_from(view), max_size=2, unique=True))
    ordering = data.draw(st.none() | st.sampled_from(view))
    outputs = {name_of(*i): i for i in explicit}
    star = any(i[0] == "star" for i in items)
    bad = [k for k in [*key, *filter(None, [ordering])]
           if (k not in outputs and not star) or (k in outputs and outputs[k][:2] != ("pass", k))]
    sql = f"SELECT {', '.join(item_sql(*i) for i in items)} FROM source"
    try:
        check(sql, key, ordering)
    except ConfigError as e:
        assert bad and e.facts["column"] == bad[0], (e.message, bad)
        assert ("drops" if bad[0] not in outputs else "computes") in e.message
        return
    assert not bad


# --- WHERE under ANSI mode: which rows fail -------------------------------------------------------------------------

COLS = ("a", "b", "c")
NUM = st.recursive(
    st.one_of(st.sampled_from(COLS).map(lambda c: ("col", c)), st.integers(-2, 2).map(lambda v: ("lit", v))),
    lambda inner: st.tuples(st.just("op"), st.sampled_from(["+", "-", "*", "/", "%"]), inner, inner),
    max_leaves=4)
BOOL = st.recursive(
    st.one_of(st.tuples(st.just("cmp"), st.sampled_from(["=", "<>", "<", ">"]), NUM, NUM),
              st.tuples(st.just("isnull"), NUM)),
    lambda inner: st.one_of(st.tuples(st.sampled_from(["AND", "OR"]), inner, inner), st.tuples(st.just("NOT"), inner)),
    max_leaves=4)
ROWS = st.lists(st.tuples(*[st.none() | st.integers(-3, 3)] * 3), min_size=1, max_size=8)


class Fails(Exception):
    """Spark, in ANSI mode, cannot compute the row."""


def sql_of(e) -> str:
    kind = e[0]
    if kind == "col":
        return e[1]
    if kind == "lit":
        return f"({e[1]})"
    if kind in ("op", "cmp"):
        return f"({sql_of(e[2])} {e[1]} {sql_of(e[3])})"
    if kind == "isnull":
        return f"({sql_of(e[1])} IS NULL)"
    if kind == "NOT":
        return f"(NOT {sql_of(e[1])})"
    return f"({sql_of(e[1])} {kind} {sql_of(e[2])})"


def value(e, row: dict):
    """The model: Spark SQL's three-valued logic; AND and OR evaluate their right side only when the left does not
    decide; every other operand is evaluated; / and % by zero fail."""
    kind = e[0]
    if kind == "col":
        return row[e[1]]
    if kind == "lit":
        return e[1]
    if kind == "isnull":
        return value(e[1], row) is None
    if kind == "NOT":
        v = value(e[1], row)
        return None if v is None else not v
    if kind in ("AND", "OR"):
        left = value(e[1], row)
        if left is (kind == "OR"):  # FALSE AND …, TRUE OR …
            return left
        right = value(e[2], row)
        if right is (kind == "OR"):
            return right
        return None if left is None or right is None else kind == "AND"
    x, y = value(e[2], row), value(e[3], row)
    if x is None or y is None:
        return None
    op = e[1]
    if op in "/%" and y == 0:
        raise Fails
    return {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y,
            "%": lambda: math.fmod(x, y), "=": lambda: x == y, "<>": lambda: x != y, "<": lambda: x < y,
            ">": lambda: x > y}[op]()


def duck(text: str) -> str:
    """Rendered Spark SQL over STRUCT as DuckDB SQL over the columns a, b, c."""
    return sqlglot.transpile(f"SELECT {text.replace(f'`{STRUCT}`.', '')}", read="spark", write="duckdb")[0][7:]


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    for name, op in [("safe_add", "+"), ("safe_subtract", "-"), ("safe_multiply", "*")]:  # no overflow at these sizes
        c.execute(f"CREATE MACRO {name}(x, y) AS x {op} y")
    yield c
    c.close()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(where=BOOL, rows=ROWS)
def test_a_row_is_bad_exactly_where_spark_cannot_compute_the_where(con, where, rows):
    b = check(f"SELECT id FROM source WHERE {sql_of(where)}", primary_key=["id"]).bind(["id", *COLS], True, ["id"])
    tests = " OR ".join(f"COALESCE({duck(t)}, FALSE)" for t, _ in b.failures) or "FALSE"
    values = ", ".join(f"({i}, {', '.join('NULL' if v is None else str(v) for v in r)})" for i, r in enumerate(rows))
    t = f"(SELECT i, a::BIGINT AS a, b::BIGINT AS b, c::BIGINT AS c FROM (VALUES {values}) v(i, a, b, c)) t"
    got = {i: (k, f) for i, k, f in con.execute(f"SELECT i, {duck(b.keep)}, {tests} FROM {t}").fetchall()}
    for i, r in enumerate(rows):
        keep, failed = got[i]
        try:
            want = value(where, dict(zip(COLS, r, strict=True)))
        except Fails:
            assert failed, (b.keep, b.failures, r)
            continue
        assert not failed and keep == want, (b.keep, b.failures, r, keep, want)
