"""The run's rules applied to a sample (schema/stored.py, schema/spark_json.py), without a JVM: what infer-schema's
table view and -o spark-ddl show. tests/integration/schema/test_infer_run_parity.py holds them against `run`'s
tables; these pin each rule on its own."""

from __future__ import annotations

import pytest

from cdcsync.formats.base import Change
from cdcsync.formats.vocabulary import DELETE, UPSERT
from cdcsync.schema import InferOptions, SchemaInferrer
from cdcsync.schema.spark_json import column_type, merge, value_type
from cdcsync.schema.stored import RunRules, stored
from cdcsync.schema.types import BIGINT, DATE, STRING, TIMESTAMP, ColumnType


@pytest.mark.parametrize("values, want", [
    (["2024-01-01", "2024-01-02"], STRING),  # Spark looks inside no string
    ([1, 2**70], ColumnType.decimal(22, 0)),  # past BIGINT: its digits
    ([1, 10**19], ColumnType.decimal(20, 0)),  # beside a BIGINT: DECIMAL(20,0) at least
    ([10**40], ColumnType.parse("DOUBLE")),  # past 38 digits
    ([10**30, 0.5], ColumnType.parse("DOUBLE")),
    ([1, True], STRING),
    (["", None, {}, {"a": None}], None),  # nothing Spark keeps: no column
    ([[], [None], [{}]], None),
    ([{}, []], STRING),  # an empty object beside an empty array: Spark's StringType
    ([{"a": 1}, None], STRING),  # an object: its JSON text
])
def test_the_column_spark_s_json_inference_gives(values, want):
    t = None
    for v in values:
        t = merge(t, value_type(v))
    assert column_type(t) == want


def _tables(changes: list[Change], options: InferOptions | None = None, rules: RunRules | None = None,
            one_table: bool = False):
    inf = SchemaInferrer(options, one_table="t" if one_table else None)
    for ch in changes:
        inf.observe(ch)
    return stored(inf, rules)


def _row(row: dict, table: str | None = "db.a", declared: dict | None = None, **kw) -> Change:
    return Change(UPSERT, table, row, None, declared, None, **kw)


def _ddl(tables) -> dict[str, list[tuple[str, str]]]:
    return {n: [(c.name, c.ddl_type()) for c in t.columns.values()] for n, t in tables.items()}


def test_text_stays_text_and_a_note_says_what_to_declare():
    tables, notes = _tables([_row({"id": 1, "day": "2024-01-01", "at": "2024-01-01 10:00:00", "none": None})])
    assert _ddl(tables) == {"db.a": [("id", "BIGINT"), ("day", "STRING"), ("at", "STRING")]}
    assert any("day: every sampled value reads as DATE" in n for n in notes)
    assert any("none: only nulls" in n for n in notes)


def test_columns_come_in_the_first_row_s_order_then_by_name():
    tables, _ = _tables([_row({"id": 1, "zeta": 1, "alpha": 1}), _row({"id": 2, "b": 1, "a": 1, "Z": 1})])
    assert [n for n, _ in _ddl(tables)["db.a"]] == ["id", "zeta", "alpha", "Z", "a", "b"]


def test_csv_columns_fix_the_order():
    changes = [Change(UPSERT, None, {"b": None, "a": "1"}, None, None, None, text_values=True),
               Change(UPSERT, None, {"b": "x", "a": "2"}, None, None, None, text_values=True)]
    tables, notes = _tables(changes, rules=RunRules(order=["b", "a"]))
    assert _ddl(tables) == {"": [("b", "STRING"), ("a", "STRING")]}
    assert any("a: every sampled value reads as BIGINT" in n for n in notes)


def test_several_source_tables_into_one_table_merge():
    tables, notes = _tables([_row({"id": 1, "x": 1}), _row({"id": 2, "x": 2.5, "y": "q"}, table="db.b")],
                            one_table=True)
    assert _ddl(tables) == {"t": [("id", "BIGINT"), ("x", "DOUBLE"), ("y", "STRING")]}
    assert any("2 source tables" in n for n in notes)


def test_an_envelope_s_columns_and_the_key_fields_only():
    env = {"id": BIGINT, "day": DATE}
    tables, notes = _tables([_row({"k": 7, "id": 1, "day": 19000, "stray": "x"}, declared=env,
                                  declared_source="envelope")], rules=RunRules(key_fields=["k"]))
    assert _ddl(tables) == {"db.a": [("k", "BIGINT"), ("id", "BIGINT"), ("day", "DATE")]}
    assert any("stray: not stored" in n for n in notes)


def test_canal_s_hints_decide_and_a_value_that_does_not_parse_does_not_widen():
    hints = {"id": BIGINT, "at": TIMESTAMP, "gone": BIGINT}
    changes = [_row({"id": "1", "at": "2024-01-01 10:00:00", "extra": "5"}, declared=hints, declared_source="hint",
                    text_values=True),
               _row({"id": "one", "at": "2024-01-01 10:00:01"}, declared=hints, declared_source="hint",
                    text_values=True)]
    tables, notes = _tables(changes)
    assert _ddl(tables) == {"db.a": [("id", "BIGINT"), ("at", "TIMESTAMP"), ("gone", "BIGINT")]}
    assert any("extra: not stored" in n for n in notes)


@pytest.mark.parametrize("ids, rules, want", [
    ([1, 2, "x"], RunRules(primary_key=["id"]), "BIGINT"),  # the key keeps the majority's type
    ([1, "x"], RunRules(primary_key=["id"]), "STRING"),  # no majority: widened
    ([1, 2, 2.5], RunRules(primary_key=["id"]), "BIGINT"),
    ([1, 2, "x"], RunRules(), "STRING"),  # not a key
    ([1, 2, "x"], RunRules(vote_all=True), "BIGINT"),  # on_type_conflict = "dead-letter"
])
def test_a_new_key_column_of_mixed_types_takes_the_majority_s_type(ids, rules, want):
    tables, _ = _tables([_row({"id": i}) for i in ids], rules=rules)
    assert _ddl(tables) == {"db.a": [("id", want)]}


def test_declared_columns_win_and_unseen_ones_come_last():
    options = InferOptions(columns={"ghost": "BIGINT", "day": "DATE", "empty": "DOUBLE"})
    tables, _ = _tables([_row({"empty": None, "id": 1, "day": "2024-01-01"})], options)
    assert _ddl(tables) == {"db.a": [("id", "BIGINT"), ("day", "DATE"), ("ghost", "BIGINT"), ("empty", "DOUBLE")]}


def test_a_name_hudi_cannot_store_is_no_column():
    tables, notes = _tables([Change(DELETE, "db.a", {"id": 1, "a-b": 2, "ID": 3}, None, None, None)])
    assert _ddl(tables) == {"db.a": [("id", "BIGINT")]}
    assert sum("cannot be stored" in n for n in notes) == 2
