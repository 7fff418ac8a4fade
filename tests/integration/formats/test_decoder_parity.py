"""The two decoders of every format — the JVM-free one (formats/*.py, infer-schema) and the Spark SQL one
(formats/spark/envelope.py, run) — give each record the same verdict: the same class (upserted, deleted, skipped,
bad), the same skip or bad reason code, the same source table and the same row image (or key, for a delete
without a 'before' image). Over every record of every fixture file, and over generated messy records of every
format, each decoded in one Spark job per format."""

from __future__ import annotations

import json
from random import Random

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from cdcsync.formats import FORMATS, KeyedDecoder, get_decoder
from cdcsync.formats import vocabulary as v
from cdcsync.formats.avro import key_reader
from cdcsync.formats.base import BadRecord, load_json
from cdcsync.formats.spark.avro import AvroSchemas, WriterSchemas
from cdcsync.formats.upserts import Upserts
from tests.fixtures import cdc_cases
from tests.fixtures.avro_cases import ENVELOPE, ENVELOPE_V2, KEY, ROW, InMemoryRegistry
from tests.fixtures.drop_events import canal_erase, debezium_drop, maxwell_drop
from tests.integration.engine.helpers import kafka_rows
from tests.integration.formats import messy

pytestmark = pytest.mark.integration

CSV_COLUMNS = ["a", "b"]
_CLASS = {v.UPSERT: "upserted", v.DELETE: "deleted", v.SKIP: "skipped"}
_SPARK_CLASS = {v.SPARK_OP[k]: c for k, c in _CLASS.items()}


def _image(text: str | None):
    """A row image's JSON text as Python values (the lenient reading both decoders share: see base.load_json)."""
    return None if text is None else load_json(text.encode())


AVRO_SCHEMAS = {1: json.dumps(ENVELOPE), 2: json.dumps(ENVELOPE_V2)}  # the registry both decoders see
AVRO_KEYS = {7: json.dumps(KEY)}
# Each variant: a format, and how its keys are read (plain Avro rows and JSON rows take `id`, `k` from the key)
WRITERS = {"avro-confluent": WriterSchemas(AvroSchemas(AVRO_SCHEMAS), AvroSchemas(AVRO_KEYS)),
           "avro": WriterSchemas(AvroSchemas(plain=json.dumps(ROW)), AvroSchemas(plain=json.dumps(KEY)))}
KEY_FIELDS = {"avro": ["id"], "json+key_fields": ["id", "k"], "avro+upserts": ["id"],
              "json+upserts+key_fields": ["id", "k"]}
# Upsert topics: (tombstones, deleted_field) of a variant; others skip tombstones and have no deleted field
UPSERTS = {"json+upserts": ("delete", "__deleted"), "json+upserts+key_fields": ("delete", "__deleted"),
           "json+flattened": ("skip", "__deleted"), "csv+upserts": ("delete", "b"), "avro+upserts": ("delete", None)}


def upserts(variant: str) -> Upserts:
    mode, deleted_field = UPSERTS.get(variant, ("skip", None))
    return Upserts(mode == "delete", deleted_field)


def python_decoder(variant: str):
    fmt, key_fields, rules = variant.split("+")[0], KEY_FIELDS.get(variant), upserts(variant)
    if fmt == "csv":
        dec = get_decoder(fmt, columns=CSV_COLUMNS, field_delimiter="|")
        return KeyedDecoder(dec, None, None, rules) if rules else dec
    if fmt == "avro-confluent":
        registry = InMemoryRegistry(AVRO_SCHEMAS | AVRO_KEYS)
        return KeyedDecoder(get_decoder(fmt, registry=registry), key_reader(fmt, registry=registry))
    if fmt == "avro":
        return KeyedDecoder(get_decoder(fmt, schema=json.dumps(ROW)), key_reader(fmt, json.dumps(KEY)), key_fields,
                            rules)
    return KeyedDecoder(get_decoder(fmt), None, key_fields, rules) if key_fields or rules else get_decoder(fmt)


def python_verdicts(variant: str, records: list) -> list[list[tuple]]:
    dec = python_decoder(variant)
    out = []
    for key, value in records:
        try:
            changes = dec.parse(value, key)
        except BadRecord as e:
            out.append([("bad", e.reason_code, None, None)])
            continue
        out.append([(_CLASS[c.op], c.skip_reason, c.table, _comparable(variant, c.row)) for c in changes])
    return out


def _comparable(variant: str, row: dict | None):
    if row is None:
        return None
    csv = variant.split("+")[0] == "csv"
    return {k: x for k, x in row.items() if x is not None} if csv else row  # Spark's to_json drops nulls


def spark_verdicts(spark, variant: str, records: list) -> list[list[tuple]]:
    from cdcsync.formats.spark.envelope import decode_envelope
    from cdcsync.formats.spark.upserts import with_upserts

    fmt = variant.split("+")[0]
    raw = kafka_rows(spark, [val for _, val in records], keys=[k for k, _ in records])
    env = decode_envelope(raw, fmt, CSV_COLUMNS, "|", WRITERS.get(fmt), KEY_FIELDS.get(variant))
    env = with_upserts(env, upserts(variant), KEY_FIELDS.get(variant))
    rows = env.select("_kafka_offset", "_pos", "_op", "_skip", "_bad", "_table", "_row", "_key_row").collect()
    by_offset: dict[int, list] = {i: [] for i in range(len(records))}
    for r in sorted(rows, key=lambda r: (r["_kafka_offset"], r["_pos"])):
        klass = _SPARK_CLASS.get(r["_op"], "bad")
        if klass == "bad":
            verdict = ("bad", r["_bad"], None, None)
        elif klass == "skipped":
            verdict = (klass, r["_skip"], r["_table"], None)
        else:
            verdict = (klass, None, r["_table"], _image(r["_row"] if r["_row"] is not None else r["_key_row"]))
        by_offset[r["_kafka_offset"]].append(verdict)
    # a message is bad as a whole: the rows of a multi-row message (Canal) all carry its reason
    return [[vs[0]] if vs and all(x == vs[0] and x[0] == "bad" for x in vs) else vs for vs in by_offset.values()]


def assert_parity(spark, fmt: str, records: list) -> None:
    want = python_verdicts(fmt, records)
    for vs in want:  # every reason is one of the vocabulary's
        assert all(r is None if c in ("upserted", "deleted") else r in v.SKIP_REASONS if c == "skipped"
                   else r in v.BAD_REASONS for c, r, _, _ in vs), vs
    got = spark_verdicts(spark, fmt, records)
    diffs = [(key, value, w, g) for (key, value), w, g in zip(records, want, got, strict=True) if w != g]
    assert not diffs, f"{fmt}: {len(diffs)} of {len(records)} records differ; first ones:\n" + "\n".join(
        f"  key={k!r} value={(val or b'')[:300]!r}\n    python={w}\n    spark ={g}" for k, val, w, g in diffs[:6])


FIXTURES = cdc_cases.names()


@pytest.mark.parametrize("fmt", sorted({cdc_cases.format_of(n) for n in FIXTURES}))
def test_every_fixture_record_gets_one_verdict_from_both_decoders(spark, fmt):
    records = [r for n in FIXTURES if cdc_cases.format_of(n) == fmt for r in cdc_cases.records(n)]
    assert records
    assert_parity(spark, fmt, records)


GENERATORS = {"debezium-json": messy.debezium, "canal-json": messy.canal, "maxwell-json": messy.maxwell,
              "json": messy.plain_json, "csv": lambda rnd: messy.csv(rnd, "|"), "raw": messy.raw,
              "avro-confluent": messy.avro, "avro": messy.plain_avro, "json+key_fields": messy.keyed_json,
              "json+upserts": messy.flattened_json, "json+upserts+key_fields": messy.flattened_json,
              "json+flattened": messy.flattened_json, "avro+upserts": messy.plain_avro}
RECORDS_PER_EXAMPLE = 400


def test_the_generators_cover_every_format():
    assert {variant.split("+")[0] for variant in GENERATORS} == set(FORMATS)


@pytest.mark.parametrize("fmt", sorted(GENERATORS))
def test_messy_records_get_one_verdict_from_both_decoders(spark, fmt):
    # few examples of many records each, drawn in Python from a seed hypothesis picks: one Spark job decodes a
    # whole example (hypothesis' own draws cap an example's size far below that); no shrinking (a job per step)
    @settings(max_examples=2, deadline=None, phases=[Phase.explicit, Phase.generate], database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2**32))
    def check(seed):
        rnd = Random(seed)
        assert_parity(spark, fmt, [GENERATORS[fmt](rnd) for _ in range(RECORDS_PER_EXAMPLE)])

    check()


DROPS = {"debezium-json": [*debezium_drop("app", ["a", "b"], 570), *debezium_drop("app", ["a"], 1, snapshot="true"),
                           *debezium_drop("app", ["a"], 2, alter=True)],
         "canal-json": [canal_erase("shop", "users", 1589373566000)],
         "maxwell-json": [maxwell_drop("test", "e", 1477053308000, 804398)]}


@pytest.mark.parametrize("fmt", sorted(DROPS))
def test_drop_table_events_get_one_verdict_from_both_decoders(spark, fmt):
    records = [(None if k is None else k.encode(), val.encode()) for k, val in DROPS[fmt]]
    assert any(c == "skipped" and r == v.DROP_TABLE for vs in python_verdicts(fmt, records) for c, r, _, _ in vs)
    assert_parity(spark, fmt, records)


_KEY = json.dumps({"id": 7}).encode()
FLAGGED = [{"id": 7, "v": "x", "__deleted": flag} for flag in ("true", True, "false", False, None)] + [
    {"id": 7, "v": "x"}, {"__deleted": "true", "id": 7}, {"id": 7, "__deleted": "true", "v": 1}]


@pytest.mark.parametrize("variant, records, want", [
    # a flattened stream: "true" and true delete (the field not in the image), anything else upserts without it
    ("json+flattened", [(_KEY, json.dumps(r).encode()) for r in FLAGGED] + [(_KEY, None)],
     ["deleted", "deleted", "upserted", "upserted", "upserted", "upserted", "deleted", "deleted", "skipped"]),
    # an upsert topic: a tombstone deletes the key's row; one without a key (or with one that names no row) is bad
    ("json+upserts", [(_KEY, None), (None, None), (b'"7"', None), (b"{}", None), (b'{"payload": {"id": 8}}', None)],
     ["deleted", "bad", "bad", "bad", "deleted"]),
    ("json+upserts+key_fields", [(b'{"id": 7, "other": 1}', None), (b'{"other": 1}', None)], ["deleted", "bad"]),
    ("csv+upserts", [(_KEY, b"1|true"), (_KEY, b"1|false"), (_KEY, b'"1"|"true"'), (_KEY, b"1|"), (_KEY, b"1|TRUE"),
                     (_KEY, None)], ["deleted", "upserted", "deleted", "upserted", "upserted", "deleted"]),
])
def test_upsert_topics_get_one_verdict_from_both_decoders(spark, variant, records, want):
    got = python_verdicts(variant, records)
    assert [vs[0][0] for vs in got] == want, got
    assert all(vs[0][3] is None or "__deleted" not in vs[0][3] and "b" not in vs[0][3] for vs in got), got
    assert_parity(spark, variant, records)
