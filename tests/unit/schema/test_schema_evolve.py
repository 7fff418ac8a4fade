"""evolve(): what a running table must do to hold a new batch's observed schema."""

from __future__ import annotations

import pytest

from cdcsync.errors import SchemaError
from cdcsync.formats import Change, Coord
from cdcsync.schema import SchemaInferrer, TableSchema, evolve
from cdcsync.schema.evolve import ADD_COLUMN, INCOMPATIBLE, MAKE_NULLABLE, WIDEN_TYPE
from cdcsync.schema.types import BIGINT, DOUBLE, STRING, TIMESTAMP, ColumnType

CURRENT = TableSchema.from_types("db.t", {"id": "bigint", "price": "decimal(10,2)", "day": "date", "name": "string"},
                                 nullable={"id": False, "price": True, "day": True, "name": False})


def observed(rows):
    inf = SchemaInferrer()
    for i, r in enumerate(rows):
        inf.observe(Change("upsert", "db.t", r, None, None, None), Coord("topic", 1, 100 + i))
    return inf.result()["db.t"]


def kinds(changes):
    return [(c.kind, c.column, str(c.old_type) if c.old_type else None, str(c.new_type)) for c in changes]


def test_nothing_to_do_when_the_data_fits():
    assert evolve(CURRENT, observed([{"id": 1, "price": 5, "day": "2024-01-01", "name": "x"}])) == []


def test_numbers_that_fit_a_decimal_column_digit_for_digit_need_no_change():
    # BIGINT and DOUBLE do not fit DECIMAL(10,2) as types, but 5, 12.5 and 99999999.99 do as values.
    obs = observed([{"id": 1, "name": "x", "price": 5}, {"id": 2, "name": "y", "price": 12.5},
                    {"id": 3, "name": "z", "price": 99999999.99}])
    assert str(obs.columns["price"].type) == "DOUBLE" and str(obs.columns["price"].exact) == "DECIMAL(10,2)"
    assert evolve(CURRENT, obs) == []


def test_new_column_is_added_nullable():
    [ch] = evolve(CURRENT, observed([{"id": 1, "name": "x", "color": "red"}]))
    assert (ch.kind, ch.column, ch.new_type, ch.nullable, ch.coord) == (ADD_COLUMN, "color", STRING, True,
                                                                       Coord("topic", 1, 100))


def test_a_new_column_seen_only_as_null_waits_for_a_value():
    assert evolve(CURRENT, observed([{"id": 1, "name": "x", "later": None}])) == []


def test_missing_columns_are_kept():
    assert evolve(CURRENT, observed([{"id": 1, "name": "x"}])) == []


def test_type_change_widens_along_the_lattice():
    changes = evolve(CURRENT, observed([{"id": 1, "name": "x", "price": 1.125, "day": "2024-01-01 10:00:00"}]))
    assert kinds(changes) == [(WIDEN_TYPE, "price", "DECIMAL(10,2)", "DOUBLE"),
                              (WIDEN_TYPE, "day", "DATE", "TIMESTAMP")]
    changes = evolve(CURRENT, observed([{"id": 2**70, "name": "x"}]))
    assert kinds(changes) == [(WIDEN_TYPE, "id", "BIGINT", "DECIMAL(38,0)")]


def test_a_null_in_a_not_null_column_makes_it_nullable():
    changes = evolve(CURRENT, observed([{"id": 1, "name": None}]))
    assert kinds(changes) == [(MAKE_NULLABLE, "name", "STRING", "STRING")]


def test_names_match_case_insensitively_by_default():
    assert evolve(CURRENT, observed([{"ID": 1, "Name": "x"}])) == []
    changes = evolve(CURRENT, observed([{"ID": 1, "name": "x"}]), case_sensitive=True)
    assert kinds(changes) == [(ADD_COLUMN, "ID", None, "BIGINT")]


def test_more_digits_than_a_decimal_column_has_widen_it_by_the_datas_type():
    changes = evolve(CURRENT, observed([{"id": 1, "name": "x", "price": 123456789}]))
    assert kinds(changes) == [(WIDEN_TYPE, "price", "DECIMAL(10,2)", "DECIMAL(21,2)")]


def test_declared_columns_never_change_type_fail_raises_with_the_facts():
    current = TableSchema.from_types("db.t", {"id": "bigint", "price": "decimal(10,2)"}, declared={"price"})
    with pytest.raises(SchemaError) as e:
        evolve(current, observed([{"id": 1, "price": 1.25}, {"id": 2, "price": "n/a"}]), "fail")
    err = e.value
    assert err.exit_code == 79
    assert (err.facts["column"], err.facts["declared"], err.facts["seen"]) == ("price", "DECIMAL(10,2)", "STRING")
    assert (err.facts["topic"], err.facts["partition"], err.facts["offset"]) == ("topic", 1, 100)


def test_dead_letter_returns_the_incompatible_change_instead_of_raising():
    current = TableSchema.from_types("db.t", {"id": "bigint", "price": "decimal(10,2)"})
    changes = evolve(current, observed([{"id": 1, "price": "n/a", "extra": 1}]), "dead-letter", pinned=["PRICE"])
    assert kinds(changes) == [(INCOMPATIBLE, "price", "DECIMAL(10,2)", "STRING"), (ADD_COLUMN, "extra", None, "BIGINT")]
    assert "declared" in changes[0].reason and "price" in changes[0].describe()


def test_allow_narrows_the_lattice_to_what_the_sink_supports():
    def no_to_string(old, new):
        return new != STRING or old == STRING

    current = TableSchema.from_types("db.t", {"a": "bigint", "b": "bigint"})
    changes = evolve(current, observed([{"a": "text", "b": 0.5}]), "dead-letter", allow=no_to_string)
    assert kinds(changes) == [(INCOMPATIBLE, "a", "BIGINT", "STRING"), (WIDEN_TYPE, "b", "BIGINT", "DOUBLE")]
    assert "not supported" in changes[0].reason


def test_on_incompatible_must_be_a_known_policy():
    with pytest.raises(ValueError):
        evolve(CURRENT, CURRENT, "ignore")


def test_from_types_reads_spark_simple_strings():
    t = TableSchema.from_types("x", {"a": "int", "b": "decimal(38,18)", "c": "timestamp", "d": "double"})
    assert [c.type for c in t.columns.values()] == [BIGINT, ColumnType.decimal(38, 18), TIMESTAMP, DOUBLE]
