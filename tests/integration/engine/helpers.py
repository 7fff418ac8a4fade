"""Shared helpers for engine integration tests: the in-repo CDC files, configs, and reading tables back two ways."""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from cdcsync.reporting import PlainReporter
from tests.fixtures import cdc_cases

# make test writes MERGE_ON_READ; make soak adds COPY_ON_WRITE, the same path with Hudi's other table type
TABLE_TYPES = ["MERGE_ON_READ", pytest.param("COPY_ON_WRITE", marks=pytest.mark.soak)]

HUDI_META = {"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
             "_hoodie_file_name", "_hoodie_is_deleted", "_cdc_order"}


def produce_fixture(produce, topic: str, name: str, partition: int | None = None) -> int:
    """Produce one tests/fixtures/cdc file's records in order (keys, values, tombstones); returns how many."""
    records = cdc_cases.records(name)
    produce(topic, [v for _, v in records], keys=[k for k, _ in records], partition=partition)
    return len(records)


def expected_state(name: str, key: list[str] | None = None) -> dict[tuple, dict]:
    """The source table's final state from the generator's model, in by_key form (typed as the envelope says)."""
    return by_key(list(cdc_cases.final_state(name).values()), key or cdc_cases.key_columns(name))


def write_config(tmp_path: Path, bootstrap: str, topic: str, fmt: str, table_type: str, **extra) -> Path:
    """A config.toml for one topic → one table under tmp_path; `extra` = {"section.key": value}."""
    sections: dict[str, dict] = {
        "source": {"bootstrap_servers": bootstrap, "topics": [topic], "format": fmt,
                   "startup_mode": "earliest-offset"},
        "sink": {"path": str(tmp_path / "table"), "table_name": "t", "table_type": table_type},
        "run": {"on_bad_record": "fail", "checkpoint_dir": str(tmp_path / "ckpt")},
    }
    for dotted, value in extra.items():
        sec, _, key = dotted.partition(".")
        if value is None:
            sections.setdefault(sec, {}).pop(key, None)
        else:
            sections.setdefault(sec, {})[key] = value
    lines = []
    for sec, kv in sections.items():
        lines.append(f"[{sec}]")
        for k, v in kv.items():
            key = f'"{k}"' if "." in k else k
            lines.append(f"{key} = {_toml(v)}")
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def timestamped_topic(make_topic, produce, base_ts: int) -> str:
    """2 partitions × 10 json messages; message i of partition p has id p*100+i and timestamp base_ts + i s."""
    topic = make_topic(partitions=2)
    for p in (0, 1):
        produce(topic, [{"id": p * 100 + i, "i": i} for i in range(10)], partition=p,
                timestamps_ms=[base_ts + i * 1000 for i in range(10)])
    return topic


def _toml(v) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(x)}" for k, x in v.items()) + " }"
    return json.dumps(v)


def norm(v):
    """One comparable form for values from Spark, hudi-rs and the Python decoders."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        return ("ts", v.isoformat())
    if isinstance(v, dt.date):
        return ("date", v.isoformat())
    if isinstance(v, dt.time):
        return v.isoformat(timespec="microseconds")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return ("bytes", base64.b64encode(bytes(v)).decode())
    if isinstance(v, Decimal):
        return ("dec", v)
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return ("num", Decimal(v))
    if isinstance(v, float):
        return ("num", Decimal(repr(v)))
    if isinstance(v, str) and v[:1] in "{[":
        try:
            return ("json", json.dumps(json.loads(v), sort_keys=True))
        except ValueError:
            return v
    return v


def by_key(rows: list[dict], key: list[str]) -> dict[tuple, dict]:
    return {tuple(norm(r[k]) for k in key): {c: norm(v) for c, v in r.items() if c not in HUDI_META
                                             and not c.startswith("_kafka_")} for r in rows}


def spark_rows(spark, path: str) -> list[dict]:
    return [r.asDict() for r in spark.read.format("hudi").load(path).collect()]


def both(spark, path) -> tuple[dict, dict]:
    """The table at `path` by id, as Spark reads it and as hudi-rs reads it."""
    return by_key(spark_rows(spark, str(path)), ["id"]), by_key(hudi_rs_rows(str(path)), ["id"])


def completed_commits(spark, path) -> list[tuple[str, object]]:
    """(instant, HoodieCommitMetadata) of each completed commit of the table at `path`, oldest first; compactions and
    a first load's bulk_insert complete as commits too."""
    from cdcsync.sinks.hudi import _meta_client

    tl = _meta_client(spark, str(path)).getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    return [(i.requestedTime(), tl.readCommitMetadata(i)) for i in tl.getInstants()]


def operations(spark, path) -> list[str]:
    """The write operation of each completed commit: a compaction is COMPACT."""
    return [md.getOperationType().toString() for _, md in completed_commits(spark, path)]


def marker_keys(spark, table_path: str) -> set[str]:
    """The keys [sink] deletes = "hard" left delete markers for, beside the table at `table_path`."""
    from cdcsync.stages.deletes import KEY, markers_path

    return {r[0] for r in spark.read.parquet(markers_path(table_path)).select(KEY).collect()}


def hudi_rs_rows(path: str, storage_options: dict | None = None) -> list[dict]:
    """The table as hudi-rs reads it, without a JVM; an object store's table as `s3://…` with its options."""
    import pyarrow as pa
    from hudi import HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(path).with_storage_options(storage_options or {}).build()
    return [row for batch in table.read() for row in pa.Table.from_batches([batch]).to_pylist()]


def run_once(config_path: Path, spark, reporter=None):
    from cdcsync.config import load_config
    from cdcsync.engine.runner import Runner
    from cdcsync.reporting import PlainReporter

    return Runner(load_config(config_path), reporter or PlainReporter(), once=True, spark=spark).run()


# the rows Spark's Kafka source gives, for tests that feed a batch of given rows without a broker
KAFKA_ROW = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
             "timestampType int, headers array<struct<key:string,value:binary>>")


def _encode(v):
    if v is None or isinstance(v, bytes):
        return v
    return (v if isinstance(v, str) else json.dumps(v)).encode()


def kafka_rows(spark, values: list, keys: list | None = None, topic: str = "t", first_offset: int = 0):
    """`values` (bytes, text, or JSON-able) as partition 0 of `topic` from `first_offset` on, shaped like Spark's
    Kafka source."""
    ts = dt.datetime(2026, 1, 1)
    return spark.createDataFrame([(_encode(keys[i]) if keys else None, _encode(v), topic, 0, first_offset + i, ts, 0,
                                   None) for i, v in enumerate(values)], KAFKA_ROW)


def change_rows(spark, changes: list[tuple], first_offset: int):
    """(key, value) changes as Kafka rows from `first_offset` on (kafka_rows)."""
    return kafka_rows(spark, [v for _, v in changes], keys=[k for k, _ in changes], first_offset=first_offset)


def sync_rows(spark, cfg, rows, on_bad=None, expect_messages=None, mode=None):
    """The batch harness: one batch of given Kafka-shaped `rows` through `Pipeline.sync_once`, as run lands a batch
    (no broker; `mode`: CommitMode.REPLAY lands it as a replay does). Returns the BatchResult."""
    from pyspark.sql import functions as F

    from cdcsync.engine.pipeline import Pipeline
    from cdcsync.kafka.offsets import Offsets
    from cdcsync.model.batch import BatchInput, CommitMode
    from cdcsync.reporting import PlainReporter

    spans = rows.groupBy("topic", "partition").agg(F.min("offset"), F.max("offset")).collect()
    start = Offsets.from_entries((t, p, lo) for t, p, lo, _ in spans)
    end = Offsets.from_entries((t, p, hi + 1) for t, p, _, hi in spans)
    pipe = Pipeline(cfg, PlainReporter(quiet=True), mode=mode or CommitMode.PIPELINE, spark=spark, on_bad=on_bad)
    return pipe.sync_once(BatchInput(0, start, end, rows=rows, expect_messages=expect_messages))


class Events(PlainReporter):
    """A quiet reporter that keeps the events it is given."""

    def __init__(self):
        super().__init__(quiet=True)
        self.seen: list[tuple[str, dict]] = []

    def event(self, kind, **fields):
        self.seen.append((kind, fields))

    def of(self, kind: str) -> list[dict]:
        return [f for k, f in self.seen if k == kind]
