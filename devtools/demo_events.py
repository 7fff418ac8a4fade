"""Sample Debezium MySQL change events for `make demo`, and the table they should leave.

Events are shaped as Debezium 1.9 writes them with the JSON converter's schema envelope (the form of
tests/fixtures/cdc/debezium-1.9-mysql-schema.txt): a snapshot of the rows (`r`), then inserts, updates and
deletes, each delete followed by its tombstone. ACCTBAL is a Connect Decimal (base64 bytes, scale 2) and
UPDATED_AT an io.debezium.time.Timestamp, so the demo shows typed values, not strings. With `--registry`
(`make demo-avro`) the same events go out as Debezium's Avro converter writes them: the real Confluent serializer,
key and value schemas registered under <topic>-key / <topic>-value.

    python -m devtools.demo_events produce --bootstrap localhost:9092 --topic salesdb.salesdb.CUSTOMER
    python -m devtools.demo_events produce --registry http://127.0.0.1:8081/apis/ccompat/v7
    python -m devtools.demo_events show /tmp/cdcsync/lake/customer
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
from decimal import Decimal

SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
NAMES = ["Avery", "Blake", "Casey", "Devon", "Emery", "Finley", "Harper", "Jordan", "Kendall", "Logan",
         "Morgan", "Parker", "Quinn", "Reese", "Rowan", "Sawyer", "Skyler", "Taylor", "Tatum", "Wren"]
T0_MS = 1_763_856_000_000  # 2025-11-23T00:00:00Z: fixed, so every demo run produces the same bytes

_VALUE_FIELDS = [
    {"type": "int32", "optional": False, "field": "CUST_ID"},
    {"type": "string", "optional": False, "field": "NAME"},
    {"type": "string", "optional": True, "field": "MKTSEGMENT"},
    {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
     "parameters": {"scale": "2", "connect.decimal.precision": "12"}, "field": "ACCTBAL"},
    {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "version": 1, "field": "UPDATED_AT"},
]
_VALUE = {"type": "struct", "fields": _VALUE_FIELDS, "optional": True, "name": "salesdb.salesdb.CUSTOMER.Value"}
_SOURCE = {"type": "struct", "optional": False, "name": "io.debezium.connector.mysql.Source", "field": "source",
           "fields": [{"type": "string", "optional": False, "field": f} for f in ("version", "connector", "name")]
           + [{"type": "int64", "optional": False, "field": "ts_ms"},
              {"type": "string", "optional": True, "field": "snapshot"},
              {"type": "string", "optional": False, "field": "db"},
              {"type": "string", "optional": True, "field": "table"},
              {"type": "string", "optional": False, "field": "file"},
              {"type": "int64", "optional": False, "field": "pos"}]}
ENVELOPE_SCHEMA = {
    "type": "struct", "optional": False, "name": "salesdb.salesdb.CUSTOMER.Envelope",
    "fields": [{**_VALUE, "field": "before"}, {**_VALUE, "field": "after"}, _SOURCE,
               {"type": "string", "optional": False, "field": "op"},
               {"type": "int64", "optional": True, "field": "ts_ms"}],
}
KEY_SCHEMA = {"type": "struct", "optional": False, "name": "salesdb.salesdb.CUSTOMER.Key",
              "fields": [{"type": "int32", "optional": False, "field": "CUST_ID"}]}


# The same schemas as Debezium's AvroConverter registers them: Connect types kept in connect.* properties
_DECIMAL = {"type": "bytes", "scale": 2, "precision": 12, "connect.version": 1, "logicalType": "decimal",
            "connect.parameters": {"scale": "2", "connect.decimal.precision": "12"},
            "connect.name": "org.apache.kafka.connect.data.Decimal"}
AVRO_VALUE = {"type": "record", "name": "Value", "namespace": "salesdb.salesdb.CUSTOMER", "fields": [
    {"name": "CUST_ID", "type": "int"}, {"name": "NAME", "type": "string"},
    {"name": "MKTSEGMENT", "type": ["null", "string"], "default": None},
    {"name": "ACCTBAL", "type": ["null", _DECIMAL], "default": None},
    {"name": "UPDATED_AT", "type": ["null", {"type": "long", "connect.version": 1,
                                             "connect.name": "io.debezium.time.Timestamp"}], "default": None}],
    "connect.name": "salesdb.salesdb.CUSTOMER.Value"}
AVRO_ENVELOPE = {"type": "record", "name": "Envelope", "namespace": "salesdb.salesdb.CUSTOMER", "fields": [
    {"name": "before", "type": ["null", AVRO_VALUE], "default": None},
    {"name": "after", "type": ["null", "Value"], "default": None},
    {"name": "source", "type": {"type": "record", "name": "Source", "namespace": "io.debezium.connector.mysql",
                                "fields": [*({"name": f, "type": "string"} for f in ("version", "connector", "name")),
                                           {"name": "ts_ms", "type": "long"},
                                           {"name": "snapshot", "type": ["null", "string"], "default": None},
                                           {"name": "db", "type": "string"},
                                           {"name": "table", "type": ["null", "string"], "default": None},
                                           {"name": "file", "type": "string"}, {"name": "pos", "type": "long"}]}},
    {"name": "op", "type": "string"}, {"name": "ts_ms", "type": ["null", "long"], "default": None}],
    "connect.name": "salesdb.salesdb.CUSTOMER.Envelope"}
AVRO_KEY = {"type": "record", "name": "Key", "namespace": "salesdb.salesdb.CUSTOMER",
            "fields": [{"name": "CUST_ID", "type": "int"}], "connect.name": "salesdb.salesdb.CUSTOMER.Key"}


def _decimal_b64(d: Decimal) -> str:
    unscaled = int(d.scaleb(2))
    return base64.b64encode(unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True)).decode()


def _wire(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {**row, "ACCTBAL": _decimal_b64(row["ACCTBAL"])}


def events(customers: int = 20, updates: int = 25, deletes: int = 3, seed: int = 7):
    """[(key_bytes, value_bytes | None)] in produce order, and the expected final rows keyed by CUST_ID."""
    changes, table = changes_of(customers, updates, deletes, seed)
    out = []
    for key, payload in changes:
        value = None if payload is None else {"schema": ENVELOPE_SCHEMA, "payload": {
            **payload, "before": _wire(payload["before"]), "after": _wire(payload["after"])}}
        out.append((json.dumps({"schema": KEY_SCHEMA, "payload": key}).encode(),
                    None if value is None else json.dumps(value).encode()))
    return out, table


def changes_of(customers: int = 20, updates: int = 25, deletes: int = 3, seed: int = 7):
    """[(key row, Debezium payload | None)] with Python values (ACCTBAL a Decimal), and the final rows."""
    rng = random.Random(seed)
    table: dict[int, dict] = {}
    out: list[tuple[dict, dict | None]] = []
    clock = T0_MS
    pos = 4

    def emit(op: str, before: dict | None, after: dict | None, snapshot: str | None = None):
        nonlocal clock, pos
        clock += rng.randint(500, 5000)
        pos += rng.randint(100, 400)
        cust = (after or before)["CUST_ID"]
        if after is not None:  # the row's own change time is the event's time
            after = {**after, "UPDATED_AT": clock}
        source = {"version": "1.9.7.Final", "connector": "mysql", "name": "salesdb", "ts_ms": clock,
                  "snapshot": snapshot or "false", "db": "salesdb", "table": "CUSTOMER",
                  "file": "mysql-bin.000003", "pos": pos}
        out.append(({"CUST_ID": cust}, {"before": before, "after": after, "source": source, "op": op,
                                         "ts_ms": clock + 40}))
        return after

    def new_row(cust: int) -> dict:
        return {"CUST_ID": cust, "NAME": f"{NAMES[(cust - 1) % len(NAMES)]} #{cust:03d}",
                "MKTSEGMENT": rng.choice(SEGMENTS),
                "ACCTBAL": Decimal(rng.randint(-99_999, 999_999)).scaleb(-2), "UPDATED_AT": None}

    snapshot_rows = customers // 2
    for cust in range(1, customers + 1):
        snap = cust <= snapshot_rows
        table[cust] = emit("r" if snap else "c", None, new_row(cust), "true" if snap else None)
    for _ in range(updates):
        cust = rng.choice(sorted(table))
        before = table[cust]
        after = {**before, "ACCTBAL": before["ACCTBAL"] + Decimal(rng.randint(-5000, 5000)).scaleb(-2),
                 "MKTSEGMENT": rng.choice(SEGMENTS) if rng.random() < 0.3 else before["MKTSEGMENT"]}
        table[cust] = emit("u", before, after)
    for cust in rng.sample(sorted(table), deletes):
        emit("d", table.pop(cust), None)
        out.append((out[-1][0], None))  # Debezium's tombstone, for log compaction
    return out, table


def produce(bootstrap: str, topic: str, partitions: int = 2, registry: str | None = None) -> int:
    """(Re)create `topic` empty, so a second demo run shows the same result, then produce the events (in Avro
    through the Confluent serializer when `registry` is a registry's URL)."""
    import time

    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.delete_topics([topic])
    except UnknownTopicOrPartitionError:
        pass
    for _ in range(50):  # deletion completes asynchronously
        try:
            admin.create_topics([NewTopic(topic, partitions, 1)])
            break
        except TopicAlreadyExistsError:
            time.sleep(0.2)
    admin.close()
    msgs = _avro_messages(topic, registry) if registry else events()[0]
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    for key, value in msgs:
        producer.send(topic, key=key, value=value)
    producer.flush()
    producer.close()
    return len(msgs)


def _avro_messages(topic: str, registry: str) -> list[tuple[bytes, bytes | None]]:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": registry})
    value_ser, key_ser = AvroSerializer(client, json.dumps(AVRO_ENVELOPE)), AvroSerializer(client, json.dumps(AVRO_KEY))
    changes, _ = changes_of()
    return [(key_ser(key, SerializationContext(topic, MessageField.KEY)),
             None if payload is None else value_ser(payload, SerializationContext(topic, MessageField.VALUE)))
            for key, payload in changes]


def show(path: str) -> int:
    """Print the table as hudi-rs (no JVM) reads it, and check it against the expected final state."""
    import pyarrow as pa
    from hudi import HudiTableBuilder
    from rich.console import Console
    from rich.table import Table

    rows = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read()).to_pylist()
    rows.sort(key=lambda r: r["CUST_ID"])
    cols = ("CUST_ID", "NAME", "MKTSEGMENT", "ACCTBAL", "UPDATED_AT", "_hoodie_commit_time")
    view = Table(title=f"{path} (read with hudi-rs, no JVM)")
    for col in cols:
        view.add_column(col, no_wrap=True)
    for r in rows:
        view.add_row(*(str(r.get(c))[:23] for c in cols))
    console = Console(width=max(100, Console().width))
    console.print(view)

    problems = differences(rows)
    if problems:
        console.print(f"[red]the table differs from the source: {'; '.join(problems)}[/]")
        return 1
    console.print(f"[green]{len(rows)} rows: exactly the source table's final state "
                  f"(inserts, updates and deletes applied, decimals and timestamps typed)[/]")
    return 0


def differences(rows: list[dict]) -> list[str]:
    """What keeps `rows` (as hudi-rs reads them) from being the source table's final state; empty when equal."""
    import datetime as dt

    _, expected = events()
    got = {r["CUST_ID"]: r for r in rows}
    out = [f"{len(rows)} rows for {len(got)} keys"] if len(rows) != len(got) else []
    for cust, want in sorted(expected.items()):
        have = got.get(cust)
        if have is None:
            out.append(f"CUST_ID {cust} missing")
            continue
        ts = dt.datetime.fromtimestamp(want["UPDATED_AT"] / 1000, dt.UTC).replace(tzinfo=None)
        for col, value in (("NAME", want["NAME"]), ("MKTSEGMENT", want["MKTSEGMENT"]), ("ACCTBAL", want["ACCTBAL"]),
                           ("UPDATED_AT", ts)):
            if _naive(have[col]) != value:
                out.append(f"CUST_ID {cust} {col}: {have[col]!r} != {value!r}")
    out += [f"CUST_ID {c} should be deleted" for c in sorted(set(got) - set(expected))]
    return out


def _naive(v):
    import datetime as dt

    return v.astimezone(dt.UTC).replace(tzinfo=None) if getattr(v, "tzinfo", None) else v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="demo_events")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("produce")
    p.add_argument("--bootstrap", default="localhost:9092")
    p.add_argument("--topic", default="salesdb.salesdb.CUSTOMER")
    p.add_argument("--registry", help="a Confluent-compatible registry's URL: produce Avro (Debezium's converter)")
    s = sub.add_parser("show")
    s.add_argument("path")
    args = ap.parse_args(argv)
    if args.cmd == "produce":
        n = produce(args.bootstrap, args.topic, registry=args.registry)
        kind = "Debezium Avro (Confluent wire format)" if args.registry else "Debezium JSON"
        print(f"produced {n} {kind} messages to {args.topic}", file=sys.stderr)
        return 0
    return show(args.path)


if __name__ == "__main__":
    sys.exit(main())
