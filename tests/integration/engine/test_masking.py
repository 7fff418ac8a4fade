"""Issue 8, point 4: [[mask]] columns never appear in clear in the table files, the dead-letter table or the
run's output; hashes are reproducible from the salt and `cdcsync decrypt` gives encrypted values back."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest

from cdcsync.errors import DecodeError
from cdcsync.stages.masking import MASKED_TEXT
from tests.integration.engine.helpers import run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

SALT = "pepper-123"
KEY = base64.b64encode(bytes(range(32))).decode()
CLEAR = ["123-45-6789", "987-65-4321", "555-12-3456", "ann@example.org", "bob@example.org", "eve@example.org",
         "+1-202-555-0101", "4111111111111111"]


def masked_config(tmp_path, bootstrap, topic, **extra):
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.on_bad_record": "dead-letter",
                          "schema.columns": {"age": "BIGINT"},
                          "sink.options": {"hoodie.parquet.compression.codec": "uncompressed"}, **extra})
    cfg.write_text(cfg.read_text() + """
[[mask]]
column = "ssn"
method = "hash"
salt_env = "T_MASK_SALT"

[[mask]]
column = "email"
method = "encrypt"
key_env = "T_MASK_KEY"

[[mask]]
column = "phone"
method = "redact"

[[mask]]
column = "card"
method = "redact"
value = "XXXX"
""")
    return cfg


def file_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file() and p.suffix != ".toml")


def test_masked_columns_never_in_clear(spark, bootstrap, make_topic, produce, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("T_MASK_SALT", SALT)
    monkeypatch.setenv("T_MASK_KEY", KEY)
    topic = make_topic()
    produce(topic, [
        {"id": 1, "ssn": CLEAR[0], "email": CLEAR[3], "phone": CLEAR[6], "card": CLEAR[7], "age": 30},
        {"id": 2, "ssn": CLEAR[1], "email": CLEAR[4], "phone": None, "card": None, "age": 40},
        {"id": 3, "ssn": CLEAR[2], "email": CLEAR[5], "phone": CLEAR[6], "card": CLEAR[7], "age": "old"},  # bad
        '{"id": 4, "ssn": "' + CLEAR[2] + '", "email": "' + CLEAR[5],  # truncated JSON: bad, clear inside
    ])
    cfg = masked_config(tmp_path, bootstrap, topic)
    summary = run_once(cfg, spark)
    assert summary.totals["upserted"] == 2 and summary.totals["bad"] == 2

    rows = {r["id"]: r for r in spark_rows(spark, str(tmp_path / "table"))}
    assert rows[1]["ssn"] == hashlib.sha256((SALT + CLEAR[0]).encode()).hexdigest()
    assert rows[1]["phone"] is None and rows[1]["card"] == "XXXX" and rows[1]["age"] == 30
    assert rows[2]["card"] is None  # NULL stays NULL
    from tests.cli import cdcsync

    res = cdcsync("decrypt", "--key-env", "T_MASK_KEY", "--json", rows[1]["email"], rows[2]["email"], "bm90IGl0",
                  timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout)["values"] == [{"value": rows[1]["email"], "plaintext": CLEAR[3]},
                                                {"value": rows[2]["email"], "plaintext": CLEAR[4]},
                                                {"value": "bm90IGl0", "plaintext": None}]  # not ours: no plaintext

    # the table files hold the hashes as plain bytes (uncompressed), so a clear value would show the same way
    table_bytes = file_bytes(tmp_path / "table")
    assert rows[1]["ssn"].encode() in table_bytes
    dead = [r.asDict() for r in spark.read.format("hudi").load(summary.dead_letter_path).collect()]
    assert sorted(r["offset"] for r in dead) == [2, 3]
    assert all(MASKED_TEXT in (r["value_text"] or r["value"].decode()) for r in dead)
    dead_text = "\n".join(f"{r}" for r in dead)
    everything = [table_bytes.decode("latin-1"), file_bytes(tmp_path).decode("latin-1"), dead_text,
                  "\n".join(str(r) for r in rows.values()), capfd.readouterr().err]
    for clear in CLEAR:
        places = ("table files", "all files", "dead-letter rows", "table rows", "output")
        for where, text in zip(places, everything, strict=True):
            assert clear not in text, f"{clear!r} in clear in the {where}"

    # the salt and key are literals in the plans: every plan Spark recorded (the UI's SQL tab) has them redacted
    plans = spark._jsparkSession.sharedState().statusStore().executionsList()
    texts = [plans.apply(i).physicalPlanDescription() for i in range(plans.size())]
    assert any("aes_encrypt" in t for t in texts)
    assert not any(SALT in t or KEY in t for t in texts)

    # under on_bad_record = "fail" the error (which quotes the value) is masked too
    produce(topic, [{"id": 5, "ssn": CLEAR[0], "email": CLEAR[3], "age": "x"}])
    fail_cfg = masked_config(tmp_path, bootstrap, topic, **{"run.on_bad_record": "fail"})
    with pytest.raises(DecodeError) as err:
        run_once(fail_cfg, spark)
    assert MASKED_TEXT in str(err.value)
    assert CLEAR[0] not in str(err.value) and CLEAR[3] not in str(err.value)
    assert os.environ["T_MASK_KEY"] not in capfd.readouterr().err  # the key itself is never printed



def test_csv_bad_records_with_masks_keep_no_raw_value(spark, bootstrap, make_topic, produce, tmp_path, monkeypatch):
    monkeypatch.setenv("T_MASK_SALT", SALT)
    topic = make_topic()
    produce(topic, [f"1,{CLEAR[0]}", f"2,{CLEAR[1]},extra-field"])  # the second has a field too many: bad
    cfg = write_config(tmp_path, bootstrap, topic, "csv", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.on_bad_record": "dead-letter",
                          "source.csv_columns": ["id", "ssn"]})
    cfg.write_text(cfg.read_text() + '\n[[mask]]\ncolumn = "ssn"\nmethod = "hash"\nsalt_env = "T_MASK_SALT"\n')
    summary = run_once(cfg, spark)
    assert summary.totals["upserted"] == 1 and summary.totals["bad"] == 1
    (row,) = spark_rows(spark, str(tmp_path / "table"))
    assert row["ssn"] == hashlib.sha256((SALT + CLEAR[0]).encode()).hexdigest()
    (dead,) = [r.asDict() for r in spark.read.format("hudi").load(summary.dead_letter_path).collect()]
    assert dead["reason"] == "bad_field_count" and dead["value"] is None and dead["value_text"] is None
    assert CLEAR[1] not in str(dead)


def test_replay_from_offset_masks_like_run(spark, bootstrap, make_topic, produce, tmp_path, monkeypatch, capfd):
    """A replay goes through the same masks: its side table holds no clear value either."""
    from cdcsync.config import load_config
    from cdcsync.engine.replay import Replayer
    from cdcsync.reporting import PlainReporter

    monkeypatch.setenv("T_MASK_SALT", SALT)
    monkeypatch.setenv("T_MASK_KEY", KEY)
    topic = make_topic()
    produce(topic, [{"id": i, "ssn": CLEAR[i], "email": CLEAR[3 + i], "phone": CLEAR[6], "card": CLEAR[7], "age": i}
                    for i in range(3)])
    cfg = masked_config(tmp_path, bootstrap, topic)
    run_once(cfg, spark)
    side = tmp_path / "side"
    r = Replayer(load_config(cfg), PlainReporter(), "earliest", None, str(side), spark=spark)
    result = r.run(r.plan())
    assert result.summary.totals["upserted"] == 3
    main = {row["id"]: row for row in spark_rows(spark, str(tmp_path / "table"))}
    got = {row["id"]: row for row in spark_rows(spark, str(side))}
    assert {i: (g["ssn"], g["phone"], g["card"]) for i, g in got.items()} == \
        {i: (m["ssn"], m["phone"], m["card"]) for i, m in main.items()}
    assert got[0]["ssn"] == hashlib.sha256((SALT + CLEAR[0]).encode()).hexdigest()
    side_text = file_bytes(side).decode("latin-1")
    assert got[0]["ssn"] in side_text  # uncompressed: a clear value would be visible the same way
    out = capfd.readouterr()
    for clear in CLEAR:
        assert clear not in side_text and clear not in out.out + out.err


def test_a_long_masked_value_in_a_bad_record_is_scrubbed(spark, bootstrap, make_topic, produce, tmp_path,
                                                          monkeypatch):
    """A masked field of 60k characters (escapes and a raw line break inside) in a dead-lettered record: scrubbed
    whole; a regex that recursed per character used to overflow the JVM's stack here."""
    from cdcsync.config import load_config
    from cdcsync.sinks import dead_letter

    monkeypatch.setenv("T_MASK_SALT", SALT)
    monkeypatch.setenv("T_MASK_KEY", KEY)
    topic = make_topic()
    secret = CLEAR[0] + ('ab\\"c' * 10_000) + "\\\n" + CLEAR[3] + "z" * 10_000
    produce(topic, ['{"id": 1, "ssn": "' + secret + '", "age": "not-a-number"}',  # bad_value: dead-lettered
                    {"id": 2, "ssn": CLEAR[1], "age": 3}])
    cfg = masked_config(tmp_path, bootstrap, topic)
    summary = run_once(cfg, spark)
    assert summary.totals["upserted"] == 1 and summary.totals["bad"] == 1
    (dead,) = [r.asDict() for r in dead_letter.read(spark, load_config(cfg)).collect()]
    text = dead["value_text"] or bytes(dead["value"]).decode()
    assert MASKED_TEXT in text and '"age": "not-a-number"' in text
    assert CLEAR[0] not in text and CLEAR[3] not in text and 'ab\\"c' not in text and "zzz" not in text


def test_a_masked_field_holding_an_object_drops_the_raw_text(spark, bootstrap, make_topic, produce, tmp_path,
                                                             monkeypatch):
    """A regex cannot find where an object or array value ends: the dead-letter row keeps no raw text at all."""
    from cdcsync.config import load_config
    from cdcsync.sinks import dead_letter

    monkeypatch.setenv("T_MASK_SALT", SALT)
    monkeypatch.setenv("T_MASK_KEY", KEY)
    topic = make_topic()
    produce(topic, ['{"id": 1, "ssn": {"a": 1, "v": "' + CLEAR[0] + '"}, "age": "x"}',
                    '{"id": 2, "email": [ "' + CLEAR[3] + '"], "age": "y"}'])
    cfg = masked_config(tmp_path, bootstrap, topic)
    assert run_once(cfg, spark).totals["bad"] == 2
    dead = [r.asDict() for r in dead_letter.read(spark, load_config(cfg)).collect()]
    assert len(dead) == 2 and all(r["value"] is None and r["value_text"] is None for r in dead)
    assert CLEAR[0] not in str(dead) and CLEAR[3] not in str(dead)


IDS = [73519001, 73519002, 73519003]  # distinctive enough to grep for in every file


def test_a_masked_key_and_the_key_and_headers_columns_keep_no_clear_value(spark, bootstrap, make_topic, produce,
                                                                          tmp_path, monkeypatch, capfd):
    """Issue 14, point 6: the primary key "id" is masked (hash), "email" sits in the Kafka key JSON and in a header,
    "ssn" inside a JSON header; metadata_columns copies key and headers into the table. Nothing of them is left in
    clear in the table files, the dead-letter table or the output."""
    monkeypatch.setenv("T_MASK_SALT", SALT)
    monkeypatch.setenv("T_MASK_KEY", KEY)
    topic = make_topic()
    keys = [json.dumps({"id": IDS[0], "email": CLEAR[3]}), json.dumps({"id": IDS[1], "email": CLEAR[4]}),
            CLEAR[5]]  # the last key is not a JSON object: it could be the masked value itself
    headers = [[("email", CLEAR[3].encode()), ("ctx", b'{"ssn": "%s", "x": 1}' % CLEAR[0].encode()),
                ("trace", b"t-1")],
               [("email", CLEAR[4].encode()), ("trace", b"t-2")], []]
    produce(topic, [{"id": IDS[0], "ssn": CLEAR[0], "email": CLEAR[3], "age": 30},
                    {"id": IDS[1], "ssn": CLEAR[1], "email": CLEAR[4], "age": "old"},  # bad: dead-lettered
                    {"id": IDS[2], "ssn": CLEAR[2], "email": CLEAR[5], "age": 3}], keys=keys, headers=headers)
    cfg = masked_config(tmp_path, bootstrap, topic,
                        **{"source.metadata_columns": ["topic", "partition", "offset", "key", "headers"]})
    cfg.write_text(cfg.read_text() + '\n[[mask]]\ncolumn = "id"\nmethod = "hash"\nsalt_env = "T_MASK_SALT"\n')
    summary = run_once(cfg, spark)
    assert summary.totals["upserted"] == 2 and summary.totals["bad"] == 1

    def hashed(v) -> str:
        return hashlib.sha256((SALT + str(v)).encode()).hexdigest()

    rows = {r["id"]: r for r in spark_rows(spark, str(tmp_path / "table"))}
    assert set(rows) == {hashed(IDS[0]), hashed(IDS[2])}
    first = rows[hashed(IDS[0])]
    assert bytes(first["_kafka_key"]).decode() == f'{{"id": "{MASKED_TEXT}", "email": "{MASKED_TEXT}"}}'
    assert {h["key"]: bytes(h["value"]).decode() for h in first["_kafka_headers"]} == {
        "email": MASKED_TEXT, "ctx": f'{{"ssn": "{MASKED_TEXT}", "x": 1}}', "trace": "t-1"}
    assert rows[hashed(IDS[2])]["_kafka_key"] is None  # a key that is not a JSON object is dropped

    (dead,) = [r.asDict() for r in spark.read.format("hudi").load(summary.dead_letter_path).collect()]
    assert bytes(dead["key"]).decode() == f'{{"id": "{MASKED_TEXT}", "email": "{MASKED_TEXT}"}}'
    assert {h["key"]: bytes(h["value"]).decode() for h in dead["headers"]} == {"email": MASKED_TEXT, "trace": "t-2"}
    assert f'"id": "{MASKED_TEXT}"' in dead["value_text"]

    everything = {"all files": file_bytes(tmp_path).decode("latin-1"), "dead-letter rows": str(dead),
                  "table rows": str(rows), "output": capfd.readouterr().err}
    for clear in [*CLEAR[:6], *map(str, IDS)]:
        for where, text in everything.items():
            assert clear not in text, f"{clear!r} in clear in the {where}"


def test_a_json_schema_failure_does_not_quote_a_masked_value(spark, bootstrap, make_topic, produce, tmp_path,
                                                             monkeypatch):
    """jsonschema's messages quote the failing value: with masks, the dead letter keeps only where it failed."""
    monkeypatch.setenv("T_MASK_SALT", SALT)
    monkeypatch.setenv("T_MASK_KEY", KEY)
    topic = make_topic()
    produce(topic, [{"id": 1, "ssn": CLEAR[0], "age": 3}])
    (tmp_path / "row.json").write_text('{"properties": {"ssn": {"pattern": "^[0-9]{3}$"}}}')
    cfg = masked_config(tmp_path, bootstrap, topic, **{"schema.validate_with": "row.json"})
    assert run_once(cfg, spark).totals["bad"] == 1
    from cdcsync.config import load_config
    from cdcsync.sinks import dead_letter

    (dead,) = [r.asDict() for r in dead_letter.read(spark, load_config(cfg)).collect()]
    assert dead["reason"] == "schema_validation" and dead["error"].startswith("JSON Schema: ssn: ")
    assert CLEAR[0] not in str(dead)
