"""infer-schema on every in-repo CDC file (tests/fixtures/cdc): the engine's schemas, the command's output, the JSON
Schema round trip, and the time for 10,000 messages. Expected schemas come from the generator's model of each source
table (its DDL, and the rows it wrote); the real-corpus version is tests/conformance/test_schema_fixture_files.py."""

from __future__ import annotations

import json
import time
import tomllib

import pytest
from jsonschema import Draft202012Validator

from cdcsync.formats import Coord, get_decoder
from cdcsync.schema import SchemaInferrer
from cdcsync.schema.render import json_schema
from tests.cli import cdcsync
from tests.fixtures import cdc_cases
from tests.fixtures.histories import cases

NAMES = cdc_cases.names()
ALL_TYPES = "debezium-2.7-mysql-all-types-schema.txt"


def infer_file(name):
    decoder, inf = get_decoder(cdc_cases.format_of(name)), SchemaInferrer()
    for i, (key, value) in enumerate(cdc_cases.records(name)):
        for ch in decoder.parse(value, key):
            inf.observe(ch, Coord(name, 0, i))
    return inf.result()


def rows_of(name):
    decoder = get_decoder(cdc_cases.format_of(name))
    return [ch.row for key, value in cdc_cases.records(name) for ch in decoder.parse(value, key)
            if ch.op in ("upsert", "delete")]


def run_cli(args) -> tuple[int, str, str]:
    p = cdcsync(*args, timeout=60, jvm_free=True)
    return p.returncode, p.stdout, p.stderr


def test_every_fixture_file_has_an_expected_schema():
    assert NAMES and set(NAMES) == set(cases())


@pytest.mark.parametrize("name", NAMES)
def test_engine_infers_the_expected_schema(name):
    table, pk, types, not_null = cdc_cases.expected_schema(name)
    result = infer_file(name)
    assert list(result) == [table]
    t = result[table]
    assert t.types() == types
    assert list(t.types()) == list(types)  # columns in the order the messages carry them
    assert {c.name for c in t.columns.values() if not c.nullable} == not_null
    assert t.primary_key == pk
    assert all(c.samples > 0 and c.coord is not None for c in t.columns.values())


@pytest.mark.parametrize("name", NAMES)
def test_cli_prints_the_expected_schema(name, tmp_path):
    table, _, types, not_null = cdc_cases.expected_schema(name)
    fmt = cdc_cases.format_of(name)
    path = str(cdc_cases.clean_copy(name, tmp_path))
    code, out, err = run_cli(["infer-schema", "--from-file", path, "--format", fmt, "-o", "toml"])
    assert code == 0, err
    assert tomllib.loads(out)["schema"]["columns"] == types
    assert "sampled" in err and table in err  # progress on stderr, never on stdout

    code, out, _ = run_cli(["infer-schema", "--from-file", path, "-f", fmt, "-f", "spark-ddl"])
    spark = {"TIME": "STRING", "TIMESTAMP_LTZ": "TIMESTAMP"}  # Spark 3.5 has neither
    expected_ddl = ", ".join(f"`{c}` {spark.get(t, t)}{' NOT NULL' if c in not_null else ''}"
                             for c, t in types.items())
    assert (code, out.strip()) == (0, expected_ddl)

    code, out, _ = run_cli(["infer-schema", "--from-file", path, "-f", fmt])
    assert code == 0 and table in out and all(c in out for c in types)  # the rich table

    code, out, _ = run_cli(["infer-schema", "--from-file", path, "-f", fmt, "--json"])  # the same view, as data
    (got,) = json.loads(out)["tables"]
    assert code == 0 and got["table"] == table and got["records"] > 0
    assert {c["name"]: c["type"] for c in got["columns"]} == types
    assert {c["name"] for c in got["columns"] if not c["nullable"]} == not_null
    assert all(c["samples"] > 0 and c["seen_at"]["offset"] >= 0 for c in got["columns"])


def _key_only(name, row) -> bool:
    """A Postgres REPLICA IDENTITY DEFAULT delete image: the key and nothing else."""
    return cdc_cases.case(name).key_only_deletes and set(row) == set(cdc_cases.key_columns(name))


@pytest.mark.parametrize("name", NAMES)
def test_json_schema_output_validates_the_topics_records(name, tmp_path):
    path = str(cdc_cases.clean_copy(name, tmp_path))
    code, out, err = run_cli(["infer-schema", "--from-file", path, "--format", cdc_cases.format_of(name),
                              "--format", "json-schema"])
    assert code == 0, err
    schema = json.loads(out)  # stdout is the schema and nothing else
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    # a key-only delete image (REPLICA IDENTITY DEFAULT) is not a row: validate_with checks upserts only
    rows = [r for r in rows_of(name) if not _key_only(name, r)]
    assert rows
    for row in rows:
        errors = [e.message for e in validator.iter_errors(row)]
        assert not errors, (row, errors)


@pytest.mark.parametrize("name, column, bad", [
    ("maxwell-1.x-mysql.txt", "qty", "plenty"),
    ("maxwell-1.x-mysql.txt", "id", 1.5),
    ("canal-1.1-mysql.txt", "id", "one"),  # Canal ids are text, but integer text
    ("debezium-1.9-mysql-schema.txt", "customer", None),  # NOT NULL in the envelope
    (ALL_TYPES, "c_date", "2024-02-29"),  # Debezium Date travels as days
])
def test_json_schema_rejects_records_of_another_shape(name, column, bad):
    validator = Draft202012Validator(json_schema(infer_file(name)))
    row = dict(rows_of(name)[0])
    assert validator.is_valid(row)
    assert not validator.is_valid({**row, column: bad})
    assert not validator.is_valid({**row, "unexpected_column": 1})


def test_ten_thousand_messages_in_under_two_seconds(record_property):
    # The engine on 10,000 parsed messages, cycling through every fixture message (all formats, all tables).
    decoders = {f: get_decoder(f) for f in {cdc_cases.format_of(n) for n in NAMES}}
    parsed = [(ch, Coord(n, 0, i)) for n in NAMES for i, (k, v) in enumerate(cdc_cases.records(n))
              for ch in decoders[cdc_cases.format_of(n)].parse(v, k)]
    batch = (parsed * (10_000 // len(parsed) + 1))[:10_000]
    t0 = time.perf_counter()
    inf = SchemaInferrer()
    for ch, coord in batch:
        inf.observe(ch, coord)
    inf.result()
    mixed = time.perf_counter() - t0

    # Worst case here: 10,000 copies of the widest row, the all-types snapshot row, parsed and inferred end to end.
    raw = cdc_cases.messages(ALL_TYPES)[0]
    dec = get_decoder("debezium-json")
    changes = [dec.parse(raw)[0] for _ in range(10_000)]
    t0 = time.perf_counter()
    inf = SchemaInferrer()
    for i, ch in enumerate(changes):
        inf.observe(ch, Coord("t", 0, i))
    inf.result()
    wide = time.perf_counter() - t0
    record_property("engine_10k_mixed_s", round(mixed, 3))
    record_property("engine_10k_wide_s", round(wide, 3))
    print(f"engine, 10,000 messages: mixed fixtures {mixed:.3f}s, {len(changes[0].row)}-column rows {wide:.3f}s")
    assert mixed < 2.0 and wide < 2.0


def test_infer_schema_never_starts_a_jvm(tmp_path):
    # a fresh interpreter (other tests may import pyspark in this one) that reports what the command imported
    path = cdc_cases.clean_copy(ALL_TYPES, tmp_path)
    proc = cdcsync("infer-schema", "--from-file", path, "-f", "debezium-json", "-o", "toml", timeout=60,
                   jvm_free=True)
    assert proc.returncode == 0, proc.stderr
    assert "[schema.columns]" in proc.stdout
