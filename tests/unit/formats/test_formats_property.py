"""Whatever bytes arrive, a decoder returns Changes or raises BadRecord, nothing else."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdcsync.formats import FORMATS, BadRecord, Change, KeyedDecoder, get_decoder
from cdcsync.formats.avro import key_reader
from tests.fixtures import cdc_cases
from tests.fixtures.avro_cases import ENVELOPE, ENVELOPE_V2, KEY, ROW, InMemoryRegistry

REGISTRY = InMemoryRegistry({1: ENVELOPE, 2: ENVELOPE_V2, 7: KEY})


def _options(fmt: str) -> dict:
    if fmt == "csv":
        return {"columns": ["a", "b"]}
    if fmt == "avro-confluent":  # schema ids 1, 2 and 7 known; random bytes name others, or do not decode
        return {"registry": REGISTRY}
    if fmt == "avro":
        return {"schema": json.dumps(ROW)}
    return {}


DECODERS = [get_decoder(f, **_options(f)) for f in FORMATS] + [
    get_decoder("debezium-json", typed=True), get_decoder("canal-json", typed=True),
    get_decoder("avro-confluent", typed=True, **_options("avro-confluent"))] + [
    get_decoder(f, max_bytes=64, **_options(f)) for f in FORMATS] + [
    KeyedDecoder(get_decoder("avro-confluent", registry=REGISTRY), key_reader("avro-confluent", registry=REGISTRY)),
    KeyedDecoder(get_decoder("avro", schema=json.dumps(ROW)), key_reader("avro", json.dumps(KEY)), ["id"]),
    KeyedDecoder(get_decoder("json"), None, ["id", "k"])]
# The stable reason codes (dead-letter table, metrics): a decoder may report only these.
REASONS = {"invalid_json", "invalid_utf8", "not_an_object", "missing_field", "missing_key", "bad_op", "bad_value",
           "oversized", "invalid_csv", "bad_field_count", "not_avro_wire_format", "unknown_schema_id",
           "avro_decode_failed"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=25,
)
# Objects shaped like the envelopes, with wrong-typed or missing parts: reaches deeper than random bytes.
envelope_like = st.fixed_dictionaries({}, optional={
    "op": st.sampled_from(["c", "r", "u", "d", "t", "x"]) | json_values,
    "before": json_values, "after": json_values, "source": json_values, "payload": json_values,
    "schema": json_values, "type": st.sampled_from(["INSERT", "UPDATE", "DELETE", "insert", "delete", "CREATE"])
    | json_values, "data": json_values, "isDdl": json_values, "mysqlType": json_values, "pkNames": json_values,
    "primary_key_columns": json_values, "ts": json_values, "status": json_values,
})
fixture_bytes = st.sampled_from([m for n in cdc_cases.names() for m in cdc_cases.messages(n)])


def _check(value, key=None):
    for dec in DECODERS:
        try:
            out = dec.parse(value, key)
        except BadRecord as e:
            assert e.reason_code in REASONS, e
            assert isinstance(e.message, str) and e.message
            continue
        assert isinstance(out, list) and all(isinstance(c, Change) for c in out)
        assert all(c.op in ("upsert", "delete", "skip") for c in out)
        assert all(c.row is None if c.op == "skip" else isinstance(c.row, dict) for c in out)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300) | st.none(), st.binary(max_size=30) | st.none())
def test_arbitrary_bytes(value, key):
    _check(value, key)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(envelope_like, st.none() | st.dictionaries(st.text(max_size=5), json_values, max_size=3))
def test_envelope_shaped_json(doc, key):
    _check(json.dumps(doc).encode(), None if key is None else json.dumps(key).encode())


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(fixture_bytes, st.integers(min_value=0, max_value=20000), st.binary(min_size=1, max_size=3))
def test_corrupted_fixture_messages(msg, pos, junk):
    i = pos % (len(msg) + 1)
    _check(msg[:i] + junk + msg[i + len(junk):])


def test_the_fixture_formats_are_the_decoders_under_test():
    assert {cdc_cases.format_of(n) for n in cdc_cases.names()} <= set(FORMATS)


field_schemas = st.fixed_dictionaries({"field": st.sampled_from(["a", "b"])}, optional={
    "type": st.sampled_from(["int32", "int64", "bytes", "string", "struct", "double"]) | json_values,
    "name": st.sampled_from(["org.apache.kafka.connect.data.Decimal", "io.debezium.time.Date",
                             "io.debezium.time.ZonedTimestamp", "io.debezium.time.MicroTime",
                             "io.debezium.data.VariableScaleDecimal", "io.debezium.time.Timestamp"]) | json_values,
    "parameters": st.fixed_dictionaries({}, optional={"scale": json_values,
                                                      "connect.decimal.precision": json_values}) | json_values,
    "optional": json_values,
})


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(field_schemas, max_size=3), st.dictionaries(st.sampled_from(["a", "b"]), json_values, max_size=2),
       st.sampled_from(["c", "d"]))
def test_debezium_schema_envelopes_with_junk_schemas(fields, after, op):
    struct = {"type": "struct", "fields": fields}
    schema = {"type": "struct", "fields": [{**struct, "field": "before"}, {**struct, "field": "after"}]}
    payload = {"op": op, "before": after if op == "d" else None, "after": after, "source": {"table": "t"}}
    _check(json.dumps({"schema": schema, "payload": payload}).encode())


@given(st.floats() | st.integers())
def test_maxwell_any_numeric_ts(ts):
    msg = json.dumps({"type": "insert", "ts": ts, "data": {"id": 1}, "database": "d", "table": "t"}).encode()
    _check(msg)


JSON_FIXTURES = [(cdc_cases.format_of(n), m) for n in cdc_cases.names() for m in cdc_cases.messages(n)]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(JSON_FIXTURES), st.data())
def test_the_malformed_kinds_are_reported_with_their_reason(fixture, data):
    """Truncated JSON, invalid UTF-8 inside a valid message, and an oversized message are always reported bad,
    with the reason the dead-letter table will carry (never decoded, never another exception)."""
    fmt, msg = fixture
    msg = msg.strip()
    cut = data.draw(st.integers(min_value=1, max_value=len(msg) - 1))
    bad_byte = data.draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]))
    at = data.draw(st.integers(min_value=0, max_value=len(msg)))
    cut_reason = "invalid_json" if _is_utf8(msg[:cut]) else "invalid_utf8"  # a cut may split a character
    cases = [(get_decoder(fmt), msg[:cut], cut_reason),
             (get_decoder(fmt), msg[:at] + bad_byte + msg[at:], "invalid_utf8"),
             (get_decoder(fmt, max_bytes=len(msg) - 1), msg, "oversized")]
    for dec, value, reason in cases:
        try:
            out = dec.parse(value)
        except BadRecord as e:
            assert e.reason_code == reason, (value[:80], e)
        else:
            raise AssertionError(f"{fmt}: {value[:80]!r} decoded as {out!r}, expected {reason}")


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
