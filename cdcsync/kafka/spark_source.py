"""The bounded batch read of [start, end) per partition with Spark's Kafka source, and its options."""

from __future__ import annotations

import json

from cdcsync.kafka.offsets import Offsets
from cdcsync.kafka.security import java_properties

# Kafka client properties Spark's source manages itself (it rejects some of them outright).
_SPARK_MANAGED = {"auto.offset.reset", "enable.auto.commit", "group.id", "key.deserializer", "value.deserializer",
                  "interceptor.classes"}


def read_options(source, start: Offsets, end: Offsets) -> dict[str, str]:
    opts = {
        "kafka.bootstrap.servers": source.bootstrap_servers,
        "assign": json.dumps({t: sorted(parts) for t, parts in start.items()}),
        "startingOffsets": json.dumps(Offsets(start).to_json()),
        "endingOffsets": json.dumps(Offsets(end).to_json()),
        "failOnDataLoss": "true",
        "includeHeaders": "true",
    }
    for k, v in java_properties(source.properties).items():
        if k not in _SPARK_MANAGED:
            opts[f"kafka.{k}"] = v
    return opts


def read_range(spark, source, start: Offsets, end: Offsets):
    return spark.read.format("kafka").options(**read_options(source, start, end)).load()
