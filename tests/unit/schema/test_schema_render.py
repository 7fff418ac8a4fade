"""Renderers: JSON Schema (checked by validating rows), Spark DDL, TOML, rich table."""

from __future__ import annotations

import io
import tomllib

from jsonschema import Draft202012Validator
from rich.console import Console

from cdcsync.formats import Change, Coord, get_decoder
from cdcsync.schema import InferOptions, SchemaInferrer
from cdcsync.schema.render import json_schema, rich_tables, spark_ddl, toml_columns
from cdcsync.schema.types import parse_type


def infer(rows, table="t", decoder=None, **options):
    inf = SchemaInferrer(InferOptions(**options))
    for i, row in enumerate(rows):
        changes = decoder.parse(row) if decoder else [Change("upsert", table, row, None, None, None)]
        for ch in changes:
            inf.observe(ch, Coord("topic", 0, i))
    return inf.result()


def validator(tables):
    schema = json_schema(tables)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_json_schema_round_trip_with_mixed_and_nullable_values():
    rows = [{"id": 1, "x": 1, "s": "a", "d": "2024-01-01"}, {"id": 2, "x": 2.5, "s": None, "d": "2024-01-02"},
            {"id": 3, "x": 3, "s": 7, "extra": True, "d": "2024-01-03 10:00:00"}]
    v = validator(infer(rows))
    assert all(v.is_valid(r) for r in rows)
    assert not v.is_valid({"id": "1", "x": 1, "s": "a", "d": "2024-01-01"})
    assert not v.is_valid({"x": 1, "s": "a", "d": "2024-01-01"})  # id is in every record: required
    assert not v.is_valid({"id": 1, "x": 1, "s": "a", "d": "yesterday"})  # TIMESTAMP text has a pattern
    assert v.is_valid({"id": 1, "x": 1, "s": "a", "d": "2024-01-01"})  # "extra" is optional (missing once)


def test_json_schema_describes_flattened_columns_as_the_nested_objects_they_come_from():
    rows = [{"id": 1, "n": {"a": 1, "b": {"c": "x"}}}, {"id": 2, "n": {"a": 2, "b": None}}, {"id": 3, "n": None}]
    tables = infer(rows, flatten_nested_columns=True)
    assert list(tables["t"].columns) == ["id", "n_a", "n_b_c"]
    v = validator(tables)
    assert all(v.is_valid(r) for r in rows)
    assert not v.is_valid({"id": 4, "n": {"a": "text"}})
    assert not v.is_valid({"id": 4, "n": {"a": 1, "zz": 2}})


def test_json_schema_for_primitive_as_string_accepts_what_the_records_hold():
    rows = [{"id": 1, "ok": True}, {"id": 2, "ok": False}]
    tables = infer(rows, primitive_as_string=True)
    assert tables["t"].types() == {"id": "STRING", "ok": "STRING"}
    v = validator(tables)
    assert all(v.is_valid(r) for r in rows)


def test_json_schema_for_text_formats_checks_the_text():
    dec = get_decoder("csv", columns=["id", "amount", "day"])
    rows = [b"1,2.5,2024-01-01", b"2,,2024-01-02"]
    tables = infer(rows, decoder=dec)
    assert tables["topic"].types() == {"id": "BIGINT", "amount": "DOUBLE", "day": "DATE"}
    v = validator(tables)
    assert v.is_valid({"id": "1", "amount": "2.5", "day": "2024-01-01"})
    assert v.is_valid({"id": "2", "amount": None, "day": "2024-01-02"})
    assert not v.is_valid({"id": "x", "amount": "2.5", "day": "2024-01-01"})


def test_json_schema_for_several_tables_accepts_each_tables_rows():
    inf = SchemaInferrer()
    inf.observe(Change("upsert", "db.a", {"x": 1}, None, None, None))
    inf.observe(Change("upsert", "db/b~", {"y": "s"}, None, None, None))
    v = validator(inf.result())
    assert v.is_valid({"x": 1}) and v.is_valid({"y": "s"}) and not v.is_valid({"x": "s"})


def test_spark_ddl_quotes_names_and_marks_not_null():
    tables = infer([{"a.b": 1, "we`ird": "x", "t": "10:00:00", "n": None}])
    assert spark_ddl(tables) == "`a.b` BIGINT NOT NULL, `we``ird` STRING NOT NULL, `t` STRING NOT NULL, `n` STRING"
    inf = SchemaInferrer()
    inf.observe(Change("upsert", "db.a", {"x": 1}, None, None, None))
    inf.observe(Change("upsert", "db.b", {"y": 1.5}, None, None, None))
    assert spark_ddl(inf.result()) == "-- db.a\n`x` BIGINT NOT NULL\n-- db.b\n`y` DOUBLE NOT NULL"


def test_toml_block_parses_back_to_the_same_types():
    tables = infer([{"id": 1, "price": 2**70, "a.b": "2024-01-01T00:00:00Z", "ünï cödé": 1.5, "t": "10:00:00",
                     "only_null": None, "del\x7f": True}])
    text = toml_columns(tables)
    parsed = tomllib.loads(text)["schema"]["columns"]
    assert parsed == {"id": "BIGINT", "price": "DECIMAL(38,0)", "a.b": "TIMESTAMP_LTZ", "ünï cödé": "DOUBLE",
                      "t": "TIME", "del\x7f": "BOOLEAN"}
    assert all(parse_type(t) for t in parsed.values())
    assert "only_null" in text and "only nulls" in text


def test_toml_merges_tables_by_widening():
    inf = SchemaInferrer()
    inf.observe(Change("upsert", "db.a", {"x": 1}, None, None, None))
    inf.observe(Change("upsert", "db.b", {"x": 1.5}, None, None, None))
    assert tomllib.loads(toml_columns(inf.result()))["schema"]["columns"] == {"x": "DOUBLE"}


def test_rich_table_lists_every_column_with_its_facts():
    tables = infer([{"id": 1, "name": "a" * 100, "n": None}])
    out = io.StringIO()
    console = Console(file=out, width=250)
    for t in rich_tables(tables):
        console.print(t)
    text = out.getvalue()
    assert "t (1 records)" in text and "BIGINT" in text and "STRING (only nulls)" in text
    assert "topic[0]@0" in text and "a" * 39 + "…" in text
