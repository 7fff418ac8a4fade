"""The inference rules, one at a time."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from cdcsync.errors import ConfigError, SchemaError
from cdcsync.formats import Change, Coord, get_decoder
from cdcsync.schema import InferOptions, SchemaInferrer
from cdcsync.schema.types import (
    BIGINT,
    BINARY,
    DATE,
    DOUBLE,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    ColumnType,
)
from cdcsync.schema.values import classify, classify_string, classify_text

D = ColumnType.decimal


def infer(rows, *, op="upsert", table="t", text=False, declared=None, source=None, not_null=frozenset(), **options):
    inf = SchemaInferrer(InferOptions(**options))
    for i, row in enumerate(rows):
        inf.observe(Change(op, table, row, None, declared, None, declared_source=source, not_null=not_null,
                           text_values=text), Coord("topic", 0, i))
    return inf


def types(rows, **kw):
    return {n: (str(c.type) if c.type else None) for n, c in infer(rows, **kw).result()["t"].columns.items()}


def test_json_primitives():
    assert types([{"b": True, "i": 1, "f": 1.5, "s": "x", "n": None}]) == {
        "b": "BOOLEAN", "i": "BIGINT", "f": "DOUBLE", "s": "STRING", "n": None}


@pytest.mark.parametrize("value, expected", [
    (2**63 - 1, BIGINT), (-(2**63), BIGINT),
    (2**63, D(38, 0)), (-(2**63) - 1, D(38, 0)),
    (10**38 - 1, D(38, 0)),  # 38 digits
    (10**38, STRING),  # 39 digits: beyond any DECIMAL
])
def test_big_integers(value, expected):
    assert classify(value) == expected


def test_integers_merge_with_fractions_to_double():
    assert types([{"x": 1}, {"x": 2.5}]) == {"x": "DOUBLE"}
    assert types([{"x": 2**64}, {"x": 1}]) == {"x": "DECIMAL(38,0)"}
    assert types([{"x": 2**64}, {"x": 0.5}]) == {"x": "DOUBLE"}
    assert types([{"x": 1}, {"x": "one"}]) == {"x": "STRING"}
    assert types([{"x": 1}, {"x": True}]) == {"x": "STRING"}


@pytest.mark.parametrize("text, expected", [
    ("2024-02-29", DATE), ("2023-02-29", STRING), ("2024-13-01", STRING), ("2024-1-01", STRING),
    ("2024-02-29 10:00:00", TIMESTAMP), ("2024-02-29T10:00:00.123456789", TIMESTAMP), ("2024-02-29T10:00", TIMESTAMP),
    ("2024-02-29T25:00:00", STRING),
    ("2024-02-29T10:00:00Z", TIMESTAMP_LTZ), ("2024-02-29 10:00:00.5+02:00", TIMESTAMP_LTZ),
    ("2024-02-29T10:00:00-0530", TIMESTAMP_LTZ),
    ("10:00:00", TIME), ("23:59:59.999", TIME), ("24:00:00", STRING), ("10:00", STRING),
    ("20240229", STRING), ("2024-02-29x", STRING), ("", STRING), ("hello world", STRING),
])
def test_date_time_detection(text, expected):
    assert classify_string(text) == expected


def test_string_columns_are_temporal_only_when_every_sample_parses():
    assert types([{"d": "2024-01-01"}, {"d": "2024-01-02"}]) == {"d": "DATE"}
    assert types([{"d": "2024-01-01"}, {"d": "2024-01-02 10:00:00"}]) == {"d": "TIMESTAMP"}  # DATE ⊂ TIMESTAMP
    assert types([{"d": "2024-01-01"}, {"d": "soon"}]) == {"d": "STRING"}
    assert types([{"d": "2024-01-01T00:00:00Z"}, {"d": "2024-01-01 00:00:00"}]) == {"d": "STRING"}
    assert types([{"t": "10:00:00"}, {"t": None}]) == {"t": "TIME"}


def test_nulls_never_decide_a_type_but_make_a_column_nullable():
    inf = infer([{"a": None, "b": 1}, {"a": 5, "b": 2}, {"a": None, "b": 3}])
    cols = inf.result()["t"].columns
    assert (cols["a"].type, cols["a"].nullable, cols["a"].samples, cols["a"].nulls) == (BIGINT, True, 1, 2)
    assert (cols["b"].type, cols["b"].nullable, cols["b"].samples) == (BIGINT, False, 3)
    only_nulls = infer([{"z": None}]).result()["t"].columns["z"]
    assert only_nulls.type is None and only_nulls.effective_type == STRING


def test_a_column_missing_from_some_rows_is_nullable():
    cols = infer([{"a": 1}, {"a": 2, "late": "x"}]).result()["t"].columns
    assert cols["late"].nullable and not cols["a"].nullable


def test_example_and_coordinate_are_the_first_non_null_value():
    col = infer([{"a": None}, {"a": 7}, {"a": 8}]).result()["t"].columns["a"]
    assert (col.example, col.coord) == (7, Coord("topic", 0, 1))


def test_nested_values_are_json_text_unless_flattened():
    rows = [{"id": 1, "n": {"a": 1, "b": {"c": "2024-01-01"}}, "arr": [1, 2]}]
    assert types(rows) == {"id": "BIGINT", "n": "STRING", "arr": "STRING"}
    flat = infer(rows, flatten_nested_columns=True).result()["t"].columns
    assert {n: str(c.type) for n, c in flat.items()} == {"id": "BIGINT", "n_a": "BIGINT", "n_b_c": "DATE",
                                                         "arr": "STRING"}
    assert flat["n_b_c"].path == ("n", "b", "c")


def test_flattening_a_null_object_keeps_only_the_leaves():
    cols = infer([{"n": None}, {"n": {"a": 1}}], flatten_nested_columns=True).result()["t"].columns
    assert list(cols) == ["n_a"] and cols["n_a"].nullable


def test_flattening_collision_names_both_paths():
    with pytest.raises(SchemaError) as e:
        infer([{"a_b": 1, "a": {"b": 2}}], flatten_nested_columns=True)
    assert "'a_b'" in e.value.message and "'a' → 'b'" in e.value.message
    assert e.value.facts["paths"] == [["a_b"], ["a", "b"]]
    assert e.value.exit_code == 79
    with pytest.raises(SchemaError):  # across records too
        infer([{"a": {"b": 2}}, {"a_b": 1}], flatten_nested_columns=True)


def test_primitive_as_string():
    assert types([{"i": 1, "b": True, "f": 1.5, "d": "2024-01-01", "n": None}], primitive_as_string=True) == {
        "i": "STRING", "b": "STRING", "f": "STRING", "d": "STRING", "n": None}


def test_text_values_parse_numbers_and_booleans():
    assert types([{"i": "1", "f": "1.5", "b": "true", "z": "007", "d": "2024-01-01", "s": "x"}], text=True) == {
        "i": "BIGINT", "f": "DOUBLE", "b": "BOOLEAN", "z": "STRING", "d": "DATE", "s": "STRING"}
    assert classify_text("-12") == BIGINT and classify_text("1e5") == DOUBLE and classify_text("NaN") == DOUBLE


def test_decoded_python_values():
    row = {"d": Decimal("12.30"), "dt": dt.datetime(2024, 1, 1), "tz": dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
           "day": dt.date(2024, 1, 1), "t": dt.time(1, 2), "b": b"\x00"}
    assert types([row]) == {"d": "DECIMAL(3,1)", "dt": "TIMESTAMP", "tz": "TIMESTAMP_LTZ", "day": "DATE",
                            "t": "TIME", "b": "BINARY"}


# -- declared types (schema.columns) -------------------------------------------------------------------------------

def test_declared_type_wider_than_the_data_wins():
    inf = infer([{"price": 12.34}, {"price": 5}, {"price": "7.5"}, {"price": None}],
                columns={"price": "DECIMAL(18,2)"})
    col = inf.result()["t"].columns["price"]
    assert (col.type, col.origin, col.nullable) == (D(18, 2), "declared", True)


@pytest.mark.parametrize("declared, value, seen", [
    ("DECIMAL(4,2)", 123.45, "DECIMAL(5,2)"),  # too many integer digits
    ("DECIMAL(18,2)", 1.234, "DECIMAL(4,3)"),  # too many fractional digits
    ("BIGINT", 1.5, "DOUBLE"),
    ("BIGINT", "abc", "STRING"),
    ("DATE", "2024-01-01 10:00:00", "TIMESTAMP"),
    ("BOOLEAN", 3, "BIGINT"),
])
def test_declared_type_narrower_than_the_data_is_an_error_naming_everything(declared, value, seen):
    with pytest.raises(SchemaError) as e:
        infer([{"x": None}, {"x": value}], columns={"x": declared})
    err = e.value
    assert (err.facts["column"], err.facts["declared"], err.facts["seen"]) == ("x", declared, seen)
    assert (err.facts["topic"], err.facts["partition"], err.facts["offset"]) == ("topic", 0, 1)
    assert "'x'" in err.message and declared in err.message and seen in err.message and "offset 1" in err.message


def test_a_declared_type_that_is_not_a_type_is_a_config_error():
    with pytest.raises(ConfigError) as e:
        InferOptions(columns={"price": "DECIMALS(18,2)"})
    assert e.value.facts["key"] == "schema.columns.price"


def test_declared_type_against_an_envelope_type():
    env = {"price": D(10, 2)}
    inf = infer([{"price": "AMs="}], declared=env, source="envelope", columns={"price": "DECIMAL(18,2)"})
    assert inf.result()["t"].columns["price"].type == D(18, 2)  # wider: fine, encoded values are not re-checked
    with pytest.raises(SchemaError) as e:
        infer([{"price": "AMs="}], declared=env, source="envelope", columns={"price": "DECIMAL(8,2)"})
    assert e.value.facts["seen"] == "DECIMAL(10,2)"


# -- envelope and hints --------------------------------------------------------------------------------------------

def test_envelope_types_are_authoritative_and_state_nullability():
    declared = {"id": BIGINT, "day": DATE, "amount": D(10, 2), "blob": BINARY}
    rows = [{"id": 1, "day": 19000, "amount": "AMs=", "blob": "AAE="}]  # wire encodings, not the types' JSON forms
    cols = infer(rows, declared=declared, source="envelope", not_null=frozenset({"id"})).result()["t"].columns
    assert {n: c.type for n, c in cols.items()} == declared
    assert {n: c.nullable for n, c in cols.items()} == {"id": False, "day": True, "amount": True, "blob": True}
    assert {c.origin for c in cols.values()} == {"envelope"}


def test_envelope_columns_exist_even_when_a_record_lacks_them():
    cols = infer([{"id": 1}], declared={"id": BIGINT, "note": STRING}, source="envelope").result()["t"].columns
    assert list(cols) == ["id", "note"] and cols["note"].samples == 0


def test_envelope_type_change_between_messages_widens():
    inf = SchemaInferrer()
    inf.observe(Change("upsert", "t", {"a": 1}, None, {"a": BIGINT}, None, declared_source="envelope"))
    inf.observe(Change("upsert", "t", {"a": "AQ=="}, None, {"a": D(20, 0)}, None, declared_source="envelope"))
    assert inf.result()["t"].columns["a"].type == D(20, 0)


def test_canal_hints_type_text_values_and_data_that_does_not_parse_widens_them():
    cols = infer([{"id": "1", "w": "3.14", "d": "2024-01-01 10:00:00"}], text=True, source="hint",
                 declared={"id": BIGINT, "w": DOUBLE, "d": TIMESTAMP}).result()["t"].columns
    assert {n: c.type for n, c in cols.items()} == {"id": BIGINT, "w": DOUBLE, "d": TIMESTAMP}
    assert {c.origin for c in cols.values()} == {"hint"}
    inf = infer([{"id": "1"}, {"id": "n/a"}], text=True, source="hint", declared={"id": BIGINT})
    assert inf.result()["t"].columns["id"].type == STRING
    assert "n/a" in inf.warnings[0] and "offset 1" in inf.warnings[0]


def test_hints_are_hints_primitive_as_string_overrides_them_but_not_the_envelope():
    assert types([{"id": "1"}], text=True, source="hint", declared={"id": BIGINT}, primitive_as_string=True) == {
        "id": "STRING"}
    assert types([{"id": 1}], source="envelope", declared={"id": BIGINT}, primitive_as_string=True) == {
        "id": "BIGINT"}


# -- tables, keys, skips -------------------------------------------------------------------------------------------

def test_one_schema_per_source_table_and_the_topic_when_the_format_has_no_table():
    inf = SchemaInferrer()
    inf.observe(Change("upsert", "db.a", {"x": 1}, ["x"], None, None), Coord("topic", 0, 0))
    inf.observe(Change("upsert", "db.b", {"y": "s"}, None, None, None), Coord("topic", 0, 1))
    inf.observe(Change("upsert", None, {"z": 1.5}, None, None, None), Coord("topic", 0, 2))
    inf.observe(Change("skip", None, None, None, None, None, skip_reason="ddl"), Coord("topic", 0, 3))
    res = inf.result()
    assert list(res) == ["db.a", "db.b", "topic"]
    assert res["db.a"].primary_key == ["x"] and res["db.b"].primary_key is None
    assert res["db.b"].types() == {"y": "STRING"} and res["topic"].types() == {"z": "DOUBLE"}
    assert inf.skipped == {"ddl": 1}


def test_deletes_contribute_values_but_do_not_make_columns_nullable():
    inf = SchemaInferrer()
    inf.observe(Change("upsert", "t", {"id": 1, "v": "a"}, ["id"], None, None))
    inf.observe(Change("delete", "t", {"id": 1}, ["id"], None, None))  # a key-only delete (Debezium Kafka key)
    cols = inf.result()["t"].columns
    assert not cols["v"].nullable and cols["id"].samples == 2


def test_inference_on_real_canal_messages_with_a_declared_decimal():
    canal = get_decoder("canal-json")
    msg = (b'{"data":[{"id":"1","weight":"5.17"}],"database":"d","table":"t","type":"INSERT",'
           b'"mysqlType":{"id":"int","weight":"float"},"pkNames":["id"]}')
    inf = SchemaInferrer(InferOptions(columns={"weight": "DECIMAL(6,2)"}))
    for ch in canal.parse(msg):
        inf.observe(ch, Coord("c", 0, 0))
    assert inf.result()["d.t"].types() == {"id": "BIGINT", "weight": "DECIMAL(6,2)"}
    assert inf.unseen_declared() == []
    assert SchemaInferrer(InferOptions(columns={"ghost": "BIGINT"})).unseen_declared() == ["ghost"]
