"""ColumnType parsing and rendering, and the widening lattice."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdcsync.schema.types import (
    BIGINT,
    BINARY,
    BOOLEAN,
    DATE,
    DOUBLE,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    ColumnType,
    holds,
    is_widening,
    parse_type,
    widen,
)

D = ColumnType.decimal


@pytest.mark.parametrize("text, expected", [
    ("DECIMAL(18,2)", D(18, 2)), ("decimal( 18 , 2 )", D(18, 2)), ("numeric(5)", D(5, 0)), ("decimal", D(10, 0)),
    ("bigint", BIGINT), ("INT", BIGINT), ("long", BIGINT), ("double", DOUBLE), ("float", DOUBLE),
    ("double precision", DOUBLE), ("string", STRING), ("varchar(255)", STRING), ("boolean", BOOLEAN),
    ("date", DATE), ("timestamp", TIMESTAMP), ("timestamp(3)", TIMESTAMP), ("timestamp_ntz", TIMESTAMP),
    ("TIMESTAMP_LTZ", TIMESTAMP_LTZ), ("timestamp(3) with local time zone", TIMESTAMP_LTZ), ("time", TIME),
    ("binary", BINARY),
])
def test_parse(text, expected):
    assert parse_type(text) == expected


@pytest.mark.parametrize("text", ["", "DECIMAL(39,0)", "DECIMAL(5,6)", "DECIMAL(0,0)", "DECIMAL(1,2,3)",
                                  "money", "bigint(5,2)", "decimal(10", "struct<a:int>"])
def test_parse_rejects(text):
    with pytest.raises(ValueError):
        parse_type(text)


@pytest.mark.parametrize("ctype, spark", [
    (D(18, 2), "DECIMAL(18,2)"), (BIGINT, "BIGINT"), (TIMESTAMP, "TIMESTAMP"), (TIMESTAMP_LTZ, "TIMESTAMP"),
    (TIME, "STRING"), (DATE, "DATE"), (BINARY, "BINARY"), (BOOLEAN, "BOOLEAN"), (DOUBLE, "DOUBLE"),
])
def test_spark_ddl(ctype, spark):
    assert ctype.spark_ddl() == spark


def test_str_and_toml_round_trip_through_parse():
    for t in (D(38, 10), BIGINT, DOUBLE, STRING, DATE, TIMESTAMP, TIMESTAMP_LTZ, TIME, BINARY, BOOLEAN):
        assert parse_type(str(t)) == t
        assert parse_type(t.toml().strip('"')) == t


def test_decimal_beyond_38_digits_is_string():
    assert D(39, 0) == STRING and D(38, 38) == ColumnType.decimal(38, 38)


@pytest.mark.parametrize("a, b, expected", [
    (BIGINT, D(10, 2), D(21, 2)),  # 19 integer digits of BIGINT + 2 of scale
    (D(10, 2), D(5, 4), D(12, 4)),  # integer digits (8 vs 1) and scale (2 vs 4) merge separately
    (D(30, 0), D(20, 15), STRING),  # 30 integer digits + 15 of scale = 45 > 38
    (BIGINT, D(38, 20), STRING),
    (D(10, 2), DOUBLE, DOUBLE), (BIGINT, DOUBLE, DOUBLE),
    (DATE, TIMESTAMP, TIMESTAMP), (DATE, TIMESTAMP_LTZ, TIMESTAMP_LTZ),
    (TIMESTAMP, TIMESTAMP_LTZ, STRING),  # converting needs a zone nobody stated
    (BOOLEAN, BIGINT, STRING), (TIME, TIMESTAMP, STRING), (BINARY, STRING, STRING), (DATE, BIGINT, STRING),
    (None, DATE, DATE), (BIGINT, None, BIGINT), (None, None, None),  # nulls never decide a type
])
def test_widen(a, b, expected):
    assert widen(a, b) == expected
    assert widen(b, a) == expected


def test_is_widening_and_holds():
    assert is_widening(BIGINT, D(20, 0)) and is_widening(D(10, 2), D(12, 2)) and is_widening(DATE, TIMESTAMP)
    assert is_widening(BIGINT, STRING) and is_widening(D(10, 2), DOUBLE)
    assert not is_widening(BIGINT, BIGINT)  # strictly wider only
    assert not is_widening(D(10, 2), D(10, 3))  # loses an integer digit
    assert not is_widening(DOUBLE, D(38, 10)) and not is_widening(STRING, BIGINT)
    assert holds(BIGINT, BIGINT) and holds(D(18, 2), D(10, 2)) and holds(STRING, TIME) and holds(DATE, None)
    assert not holds(D(18, 2), D(18, 3))


simple = st.sampled_from([BIGINT, DOUBLE, STRING, DATE, TIMESTAMP, TIMESTAMP_LTZ, TIME, BINARY, BOOLEAN])
types = simple | st.builds(lambda p, s: D(p, min(s, p)), st.integers(1, 38), st.integers(0, 38))
# What JSON data can produce: decimals only from big integers (scale 0).
data_types = simple | st.builds(lambda p: D(p, 0), st.integers(19, 38))


@given(types, types)
def test_lattice_laws(a, b):
    w = widen(a, b)
    assert w == widen(b, a)  # commutative
    assert widen(a, a) == a  # idempotent
    assert holds(w, a) and holds(w, b)  # an upper bound of both
    assert holds(STRING, a)  # everything fits STRING


@given(data_types, data_types, data_types)
def test_associative_over_what_data_produces(a, b, c):
    # merge order (partitions, batches) does not change what JSON data infers to
    assert widen(widen(a, b), c) == widen(a, widen(b, c))


def test_decimal_overflow_to_string_is_not_absorbed_by_double():
    # The one order dependence, kept on purpose: a DECIMAL merge past 38 digits is STRING (exact text) even though
    # DOUBLE absorbs each DECIMAL on its own. Only declared/envelope decimals can meet this, never JSON numbers.
    assert widen(widen(BIGINT, D(20, 20)), DOUBLE) == STRING
    assert widen(BIGINT, widen(D(20, 20), DOUBLE)) == DOUBLE
