"""Spark's Kafka reads of a run's batches (kafka/spark_source.py): a decode plan built for one range is re-pointed
at the next ranges, and reads exactly what a plan built anew for that range reads."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from cdcsync.formats.spark.envelope import decode_envelope
from cdcsync.kafka.offsets import Offsets
from cdcsync.kafka.spark_source import RangeReads, read_range

pytestmark = pytest.mark.integration


def _decode(raw):
    return decode_envelope(raw, "debezium-json", None, ",", None, None)


def _rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.drop("_kafka_headers", "_raw_value", "_kafka_key").collect())


def _changes(partition: int, ids: range) -> list[str]:
    return [json.dumps({"payload": {"op": "u", "ts_ms": i, "after": {"id": i, "part": partition},
                                    "before": None, "source": {"table": "t"}}}) for i in ids]


@pytest.fixture
def topic(make_topic, produce):
    name = make_topic(2)
    for p in (0, 1):
        produce(name, _changes(p, range(p * 100, p * 100 + 30)), partition=p)
    produce(name, ["{not json", '{"payload": {"op": "d", "before": {"id": 7}}}'], partition=1)
    return name


def _range(topic: str, start: int, end: int) -> tuple[Offsets, Offsets]:
    return Offsets({topic: {0: start, 1: start}}), Offsets({topic: {0: end, 1: end + 2 * (end == 30)}})


def test_the_next_range_is_read_by_the_first_ranges_plan_re_pointed(spark, bootstrap, topic):
    source = SimpleNamespace(bootstrap_servers=bootstrap, properties={})
    builds = []

    def build(raw):
        builds.append(raw)
        return _decode(raw).where("_kafka_offset >= 0")  # a filter above the projections: any one-child chain

    reads = RangeReads(spark, source)
    first = reads.read(*_range(topic, 0, 10), build, key=None)
    later = [reads.read(*_range(topic, s, e), build, key=None) for s, e in ((10, 20), (20, 30))]

    assert len(builds) == 1
    assert [len(_rows(df)) for df in (first, *later)] == [20, 20, 22]
    for (s, e), df in zip(((10, 20), (20, 30)), later, strict=True):
        assert _rows(df) == _rows(_decode(read_range(spark, source, *_range(topic, s, e))).where("_kafka_offset >= 0"))
    # the bad and the delete record of the last range keep their verdicts
    verdicts = {r["_kafka_offset"]: (r["_op"], r["_bad"]) for r in later[1].where("_kafka_partition = 1").collect()}
    assert verdicts[30][0] is None and verdicts[30][1] and verdicts[31] == ("d", None)


def test_a_plan_is_built_again_when_its_key_changes_or_it_is_not_one_chain_over_kafka(spark, bootstrap, topic):
    source = SimpleNamespace(bootstrap_servers=bootstrap, properties={})
    builds = []

    def build(raw):
        builds.append(raw)
        return _decode(raw)

    reads = RangeReads(spark, source)
    reads.read(*_range(topic, 0, 10), build, key="v1")
    reads.read(*_range(topic, 10, 20), build, key="v2")  # e.g. another Avro writer schema
    assert len(builds) == 2

    def joined(raw):
        builds.append(raw)
        return _decode(raw).crossJoin(spark.range(1))

    for s, e in ((0, 10), (10, 20)):
        df = reads.read(*_range(topic, s, e), joined, key="joined")
        assert df.count() == 20
    assert len(builds) == 4
