"""infer-schema on every CDC file of a corpus: the engine's schemas, the command's output, the JSON Schema round trip,
and the time for 10,000 messages. Here the in-repo files (tests/fixtures/cdc), whose expected schemas come from the
generator's model of each source table (its DDL, and the rows it wrote); tests/conformance/test_schema_fixture_files.py
runs these same tests on the real-tool corpus (tests/corpus.py)."""

from __future__ import annotations

import json
import time
import tomllib

from jsonschema import Draft202012Validator

from cdcsync.formats import Coord, get_decoder
from cdcsync.schema import SchemaInferrer
from cdcsync.schema.render import json_schema
from tests.cli import cdcsync
from tests.corpus import IN_REPO, corpus_fixture, pytest_generate_tests  # noqa: F401 (the fixture and the module hook)

CORPUS = IN_REPO


def infer_file(corpus, name):
    decoder, inf = get_decoder(corpus.format_of(name)), SchemaInferrer()
    for i, (key, value) in enumerate(corpus.records(name)):
        for ch in decoder.parse(value, key):
            inf.observe(ch, Coord(name, 0, i))
    return inf.result()


def rows_of(corpus, name):
    decoder = get_decoder(corpus.format_of(name))
    return [ch.row for key, value in corpus.records(name) for ch in decoder.parse(value, key)
            if ch.op in ("upsert", "delete")]


def run_cli(args) -> tuple[int, str, str]:
    p = cdcsync(*args, timeout=60, jvm_free=True)
    return p.returncode, p.stdout, p.stderr


def test_every_fixture_file_has_an_expected_schema(corpus):
    names = set(corpus.names())
    assert names and all(set(covered) == names for covered in corpus.expectations())


def test_engine_infers_the_expected_schema(corpus, cdc_file):
    table, pk, types, not_null = corpus.expected_schema(cdc_file)
    result = infer_file(corpus, cdc_file)
    assert list(result) == [table]
    t = result[table]
    assert t.types() == types
    assert list(t.types()) == list(types)  # columns in the order the messages carry them
    assert {c.name for c in t.columns.values() if not c.nullable} == not_null
    assert t.primary_key == pk
    assert all(c.samples > 0 and c.coord is not None for c in t.columns.values())


def test_cli_prints_the_expected_schema(corpus, cdc_file, tmp_path):
    table, _, types, not_null = corpus.expected_schema(cdc_file)
    fmt = corpus.format_of(cdc_file)
    path = str(corpus.clean_copy(cdc_file, tmp_path))
    code, out, err = run_cli(["infer-schema", "--from-file", path, "--format", fmt, "-o", "toml"])
    assert code == 0, err
    assert tomllib.loads(out)["schema"]["columns"] == types
    assert "sampled" in err and table in err  # progress on stderr, never on stdout

    code, out, _ = run_cli(["infer-schema", "--from-file", path, "-f", fmt, "-f", "spark-ddl"])
    table_types = corpus.table_types(cdc_file)  # the table run creates: a JSON string stays STRING
    expected_ddl = ", ".join(f"`{c}` {t}{' NOT NULL' if c in not_null else ''}" for c, t in table_types.items())
    assert (code, out.strip()) == (0, expected_ddl)

    code, out, _ = run_cli(["infer-schema", "--from-file", path, "-f", fmt])
    assert code == 0 and table in out and all(c in out for c in types)  # the rich table

    code, out, _ = run_cli(["infer-schema", "--from-file", path, "-f", fmt, "--json"])  # the same view, as data
    (got,) = json.loads(out)["tables"]
    assert code == 0 and got["table"] == table and got["records"] > 0
    as_text = corpus.stored_as_text(cdc_file)
    assert {c["name"]: c["type"] for c in got["columns"]} == {c: "STRING" if c in as_text else t
                                                              for c, t in types.items()}
    assert {c["name"] for c in got["columns"] if not c["nullable"]} == not_null
    assert all(c["samples"] > 0 and c["seen_at"]["offset"] >= 0 for c in got["columns"])


def test_json_schema_output_validates_the_topics_records(corpus, cdc_file, tmp_path):
    path = str(corpus.clean_copy(cdc_file, tmp_path))
    code, out, err = run_cli(["infer-schema", "--from-file", path, "--format", corpus.format_of(cdc_file),
                              "--format", "json-schema"])
    assert code == 0, err
    schema = json.loads(out)  # stdout is the schema and nothing else
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    # a key-only delete image (REPLICA IDENTITY DEFAULT) is not a row: validate_with checks upserts only
    rows = [r for r in rows_of(corpus, cdc_file) if not corpus.key_only(cdc_file, r)]
    assert rows
    for row in rows:
        errors = [e.message for e in validator.iter_errors(row)]
        assert not errors, (row, errors)


def test_json_schema_rejects_records_of_another_shape(corpus, cdc_file, column, bad):
    validator = Draft202012Validator(json_schema(infer_file(corpus, cdc_file)))
    row = dict(rows_of(corpus, cdc_file)[0])
    assert validator.is_valid(row)
    assert not validator.is_valid({**row, column: bad})
    assert not validator.is_valid({**row, "unexpected_column": 1})


def test_ten_thousand_messages_in_under_two_seconds(corpus, record_property):
    # The engine on 10,000 parsed messages, cycling through every fixture message (all formats, all tables).
    names = corpus.names()
    decoders = {f: get_decoder(f) for f in {corpus.format_of(n) for n in names}}
    parsed = [(ch, Coord(n, 0, i)) for n in names for i, (k, v) in enumerate(corpus.records(n))
              for ch in decoders[corpus.format_of(n)].parse(v, k)]
    batch = (parsed * (10_000 // len(parsed) + 1))[:10_000]
    t0 = time.perf_counter()
    inf = SchemaInferrer()
    for ch, coord in batch:
        inf.observe(ch, coord)
    inf.result()
    mixed = time.perf_counter() - t0

    # Worst case: 10,000 copies of the widest row, the all-types row, parsed and inferred end to end.
    raw = corpus.messages(corpus.widest)[0]
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


def test_infer_schema_never_starts_a_jvm(corpus, tmp_path):
    # a fresh interpreter (other tests may import pyspark in this one) that reports what the command imported
    path = corpus.clean_copy(corpus.widest, tmp_path)
    proc = cdcsync("infer-schema", "--from-file", path, "-f", "debezium-json", "-o", "toml", timeout=60,
                   jvm_free=True)
    assert proc.returncode == 0, proc.stderr
    assert "[schema.columns]" in proc.stdout
