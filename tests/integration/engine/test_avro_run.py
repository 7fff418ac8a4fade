"""Issue 16: Debezium change events written by the real Confluent serializer (confluent-kafka's AvroSerializer,
key and value registered in a real registry: Apicurio's Confluent API) land exact MOR and COW tables — inserts,
updates, deletes, tombstones, Decimal / Date / MicroTimestamp / ZonedTimestamp columns — read by Spark and hudi-rs;
a second schema version registered mid-stream (a column added, a type widened) lands inside one batch and across
batches, recorded in the commit; bad bytes are dead-lettered with their reason; a registry that does not answer
stops the run naming its URL; infer-schema reads the topic through the registry without a JVM."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from cdcsync.exit_codes import ExitCode
from tests import cli
from tests.fixtures.avro_cases import ENVELOPE, ENVELOPE_V2, KEY, change
from tests.integration.engine.helpers import TABLE_TYPES, by_key, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

EPOCH = dt.datetime(1970, 1, 1)


def row(i: int, price: str, v2: bool = False, note: str | None = None) -> dict:
    at = dt.datetime(2024, 5, 6, 7, 8, 9, 123456) + dt.timedelta(hours=i)
    out = {"id": i, "price": Decimal(price), "day": 19000 + i, "at": (at - EPOCH) // dt.timedelta(microseconds=1),
           "zoned": f"2024-05-06T0{i % 10}:00:00Z", "small": i, "stamp": 1_700_000_000_123 + i}
    return out | ({"small": 2**40 + i, "note": note} if v2 else {})


def typed(r: dict) -> dict:
    """The row as the table holds it: a DECIMAL, a DATE, a TIMESTAMP (µs), a TIMESTAMP with time zone."""
    return {"id": r["id"], "price": r["price"], "day": dt.date(1970, 1, 1) + dt.timedelta(days=r["day"]),
            "at": EPOCH + dt.timedelta(microseconds=r["at"]),
            "zoned": dt.datetime.fromisoformat(r["zoned"].replace("Z", "+00:00")), "small": r["small"],
            "stamp": EPOCH + dt.timedelta(milliseconds=r["stamp"]),
            **({"note": r["note"]} if "note" in r else {})}


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_debezium_avro_topic_lands_exactly(table_type, spark, bootstrap, registry, make_topic, produce_avro,
                                             produce, tmp_path):
    topic = make_topic()
    r1, r2, r3, r6 = row(1, "12.34"), row(2, "0.50"), row(3, "99.99"), row(6, "6.00")
    values = [change("c", None, r1, 1), change("c", None, r2, 2), change("c", None, r3, 3),
              change("u", r1, {**r1, "price": Decimal("13.00")}, 4), change("d", r2, None, 5), None,
              change("c", None, r6, 6), change("d", None, None, 7)]  # the last: a delete known by its key alone
    produce_avro(topic, ENVELOPE, values, KEY, [{"id": k} for k in (1, 2, 3, 1, 2, 2, 6, 6)])
    cfg = write_config(tmp_path, bootstrap, topic, "avro-confluent", table_type, **{
        "source.key_format": "avro-confluent", "source.schema_registry_url": registry.url,
        "run.on_bad_record": "dead-letter"})
    first = run_once(cfg, spark)
    assert first.totals == {"messages": 8, "rows": 8, "upserted": 5, "deleted": 2, "skipped": 1, "bad": 0}
    want = {1: typed({**r1, "price": Decimal("13.00")}), 3: typed(r3)}
    check(spark, tmp_path, want)

    # version 2 registered mid-stream: one batch holds both versions; a later batch only the new one
    r4 = row(4, "1.25", v2=True, note="v2")
    produce_avro(topic, ENVELOPE, [change("u", r3, {**r3, "price": Decimal("98.00")}, 8)], KEY, [{"id": 3}])
    produce_avro(topic, ENVELOPE_V2, [change("c", None, r4, 9)], KEY, [{"id": 4}])
    v2_id = registry_id(registry.url, f"{topic}-value", 2)
    produce(topic, [b"\x07not-avro", b"\x00\x00\x00\x27\x10\x02", b"\x00" + v2_id.to_bytes(4, "big") + b"\x02"],
            partition=0)  # a wrong magic byte, an id the registry does not have, a body cut short
    second = run_once(cfg, spark)
    assert second.totals["bad"] == 3 and second.totals["upserted"] == 2
    assert any("note" in c for c in second.schema_changes) and any("price" in c for c in second.schema_changes)
    want |= {3: {**typed({**r3, "price": Decimal("98.00")}), "note": None}, 4: typed(r4)}
    want[1] |= {"note": None}
    check(spark, tmp_path, want)
    dead = spark.read.format("hudi").load(str(tmp_path / "table_dead_letter")).select("reason").collect()
    assert sorted(r["reason"] for r in dead) == ["avro_decode_failed", "not_avro_wire_format", "unknown_schema_id"]

    r5 = row(5, "7.00", v2=True, note="later")
    produce_avro(topic, ENVELOPE_V2, [change("c", None, r5, 10), change("d", r4, None, 11)], KEY,
                 [{"id": 5}, {"id": 4}])
    third = run_once(cfg, spark)
    assert third.totals["upserted"] == 1 and third.totals["deleted"] == 1
    check(spark, tmp_path, {k: v for k, v in (want | {5: typed(r5)}).items() if k != 4})


def registry_id(url: str, subject: str, version: int) -> int:
    import urllib.request

    with urllib.request.urlopen(f"{url}/subjects/{subject}/versions/{version}") as r:
        return json.load(r)["id"]


def check(spark, tmp_path, want: dict[int, dict]) -> None:
    expected = by_key(list(want.values()), ["id"])
    assert by_key(spark_rows(spark, str(tmp_path / "table")), ["id"]) == expected
    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == expected


def test_a_registry_that_does_not_answer_stops_the_run_naming_it(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [b"\x00\x00\x00\x00\x01\x02"])
    url = "http://127.0.0.1:9/apis/ccompat/v7"  # the discard port: nothing listens
    cfg = write_config(tmp_path, bootstrap, topic, "avro-confluent", "MERGE_ON_READ",
                       **{"source.schema_registry_url": url})
    p = cli.cdcsync("run", cfg, "--once", timeout=300)
    assert p.returncode == ExitCode.UNREACHABLE, p.stderr[-3000:]
    assert f"the schema registry at {url} cannot be reached" in p.stderr and not (tmp_path / "table").exists()


def test_infer_schema_reads_an_avro_topic_through_the_registry(bootstrap, registry, make_topic, produce_avro,
                                                               tmp_path):
    topic = make_topic()
    produce_avro(topic, ENVELOPE, [change("c", None, row(1, "12.34"), 1)], KEY, [{"id": 1}])
    produce_avro(topic, ENVELOPE_V2, [change("c", None, row(2, "0.50", v2=True, note="n"), 2)], KEY, [{"id": 2}])
    cfg = write_config(tmp_path, bootstrap, topic, "avro-confluent", "MERGE_ON_READ", **{
        "source.key_format": "avro-confluent", "source.schema_registry_url": registry.url})
    p = cli.cdcsync("infer-schema", cfg, "--json", jvm_free=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    (table,) = json.loads(p.stdout)["tables"]
    types = {c["name"]: c["type"] for c in table["columns"]}
    assert types == {"id": "BIGINT", "price": "DECIMAL(12,4)", "day": "DATE", "at": "TIMESTAMP",
                     "zoned": "TIMESTAMP_LTZ", "small": "BIGINT", "stamp": "TIMESTAMP", "note": "STRING"}, types


FLAGS = {"type": "record", "name": "Flag", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "flag", "type": ["null", "boolean"], "default": None}]}
FLAGS_TEXT = {**FLAGS, "fields": [FLAGS["fields"][0], {"name": "flag", "type": ["null", "string"], "default": None}]}


def test_plain_avro_rows_and_an_incompatible_version_follow_on_incompatible(spark, bootstrap, registry, make_topic,
                                                                            produce_avro, tmp_path):
    from cdcsync.errors import SchemaError

    topic = make_topic()
    produce_avro(topic, FLAGS, [{"id": i, "flag": i % 2 == 0} for i in range(4)])
    produce_avro(topic, FLAGS_TEXT, [{"id": 9, "flag": "maybe"}])  # BOOLEAN cannot widen to this STRING
    base = {"sink.primary_key": ["id"], "source.schema_registry_url": registry.url, "run.on_bad_record": "dead-letter",
            "run.max_records_per_batch": 4}  # the first batch makes `flag` BOOLEAN; the second brings the STRING
    (tmp_path / "fail").mkdir()
    failing = write_config(tmp_path / "fail", bootstrap, topic, "avro-confluent", "COPY_ON_WRITE", **base)
    with pytest.raises(SchemaError, match="flag"):
        run_once(failing, spark)
    assert sorted(r["id"] for r in spark_rows(spark, str(tmp_path / "fail" / "table"))) == [0, 1, 2, 3]
    (tmp_path / "dl").mkdir()
    lenient = write_config(tmp_path / "dl", bootstrap, topic, "avro-confluent", "COPY_ON_WRITE",
                           **base, **{"schema.on_incompatible": "dead-letter"})
    summary = run_once(lenient, spark)
    assert (summary.totals["upserted"], summary.totals["bad"]) == (4, 1)
    rows = by_key(spark_rows(spark, str(tmp_path / "dl" / "table")), ["id"])
    assert rows == by_key([{"id": i, "flag": i % 2 == 0} for i in range(4)], ["id"])  # a plain record is a row
    dead = spark.read.format("hudi").load(str(tmp_path / "dl" / "table_dead_letter")).collect()
    assert [r["reason"] for r in dead] == ["incompatible_type"]


def test_probe_checks_the_registry_and_each_topics_subjects(bootstrap, registry, make_topic, produce_avro, tmp_path):
    topic, unregistered = make_topic(), make_topic()
    produce_avro(topic, ENVELOPE, [change("c", None, row(1, "1.00"), 1)], KEY, [{"id": 1}])
    cfg = write_config(tmp_path, bootstrap, topic, "avro-confluent", "MERGE_ON_READ", **{
        "source.key_format": "avro-confluent", "source.schema_registry_url": registry.url})

    def registry_checks(*args) -> tuple[int, list, str]:
        p = cli.cdcsync("probe", *args, "--json", jvm_free=True, timeout=120)
        data = json.loads(p.stdout)
        return p.returncode, [(c["target"], c["status"]) for c in data["checks"] if c["role"] == "registry"], \
            data["verdict"]

    code, checks, _ = registry_checks("--config", cfg)
    assert code == 0 and checks == [(registry.url, "ok"), (f"{topic}-value", "ok"), (f"{topic}-key", "ok")]
    code, checks, verdict = registry_checks("-b", bootstrap, "-t", unregistered, "--schema-registry", registry.url)
    assert code == ExitCode.WARNINGS and checks[1] == (f"{unregistered}-value", "warn"), verdict
    assert f"subject {unregistered}-value is not registered" in verdict
    down = "http://127.0.0.1:9/apis/ccompat/v7"
    code, checks, verdict = registry_checks("-b", bootstrap, "--schema-registry", down)
    assert code == ExitCode.UNREACHABLE and checks == [(down, "fail")] and down in verdict


def test_the_avro_demo_lands_the_demo_table(spark, bootstrap, registry, make_topic, tmp_path):
    """`make demo-avro`'s path: the demo's events through the Confluent serializer, examples/avro-confluent.toml
    pointed at this registry, the table equal to the source's final state by hudi-rs."""
    from devtools.demo_events import changes_of, differences, produce
    from tests.integration.test_examples import local_copy

    topic = make_topic(partitions=1)
    n = produce(bootstrap, topic, partitions=2, registry=registry.url)
    config = local_copy("avro-confluent.toml", tmp_path, bootstrap, topic)
    config.write_text(config.read_text().replace('schema_registry_url = "http://localhost:8081"',
                                                 f'schema_registry_url = "{registry.url}"'))
    result = run_once(config, spark)
    changes, final = changes_of()
    deletes, tombstones = sum(1 for _, c in changes if c and c["op"] == "d"), sum(1 for _, c in changes if not c)
    assert result.totals == {"messages": n, "rows": n, "upserted": n - deletes - tombstones, "deleted": deletes,
                             "skipped": tombstones, "bad": 0}
    rows = hudi_rs_rows(str(tmp_path / "table"))
    assert len(rows) == len(final) and differences(rows) == []
