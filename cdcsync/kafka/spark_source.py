"""The bounded batch read of [start, end) per partition with Spark's Kafka source, and its options."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from cdcsync.kafka.offsets import Offsets
from cdcsync.kafka.security import java_properties

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.config.model import SourceConfig

# read by the start planner (group-offsets) and refused by Spark's source, which starts where it is told; the other
# names Spark manages are refused with the config (kafka/client_keys.py)
_SPARK_MANAGED = {"auto.offset.reset"}


def read_options(source: SourceConfig, start: Offsets, end: Offsets) -> dict[str, str]:
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


def read_range(spark: SparkSession, source: SourceConfig, start: Offsets, end: Offsets) -> DataFrame:
    return spark.read.format("kafka").options(**read_options(source, start, end)).load()


class RangeReads:
    """Batches of one source, each a Kafka range read by a plan `build` makes of Spark's Kafka read. The plan built
    for one range serves the next ranges, with only its Kafka relation swapped, while the `key` it was built with
    (whatever else went into it) is the same: building and analysing a decode plan again cost ~0.2 s of a batch's
    driver time (hundreds of py4j round trips, and `load` instantiates every registered data source to find Kafka's),
    swapping its relation ~0.03 s (docs/benchmarks.md)."""

    def __init__(self, spark: SparkSession, source: SourceConfig) -> None:
        self._spark, self._source = spark, source
        self._last: tuple[object, list[Any]] | None = None  # (key, the last plan's nodes) when it can be re-pointed

    def read(self, start: Offsets, end: Offsets, build: Callable[[DataFrame], DataFrame], key: object) -> DataFrame:
        if self._last is not None and self._last[0] == key:
            df = self._repointed(self._last[1], start, end)
            if df is not None:
                return df
        df = build(read_range(self._spark, self._source, start, end))
        nodes = _kafka_chain(df)
        self._last = (key, nodes) if nodes else None
        return df

    def _repointed(self, nodes: list[Any], start: Offsets, end: Offsets) -> DataFrame | None:
        """The plan of `nodes` over the Kafka relation of [start, end): the new leaf keeps the old one's output
        attributes, so every expression above it still refers to them; the plan is analysed again."""
        jvm: Any = self._spark._jvm  # py4j's view: set once a session exists
        session = self._spark._jsparkSession
        options = jvm.java.util.HashMap()
        for k, v in read_options(self._source, start, end).items():
            options.put(k, v)
        # the provider itself: DataFrameReader.load would look it up among every registered data source
        relation = jvm.org.apache.spark.sql.kafka010.KafkaSourceProvider().createRelation(
            session.sqlContext(), jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(options))
        leaf = nodes[-1]
        if not relation.schema().equals(leaf.relation().schema()):
            return None
        plan = leaf.copy(relation, leaf.output(), leaf.catalogTable(), leaf.isStreaming())
        for node in reversed(nodes[:-1]):
            plan = node.withNewChildren(jvm.org.apache.spark.api.python.PythonUtils.toSeq(jvm.java.util.List.of(plan)))
        return DataFrame(jvm.org.apache.spark.sql.Dataset.ofRows(session, plan), self._spark)


def _kafka_chain(df: DataFrame) -> list[Any] | None:
    """The analysed plan's nodes from the top down to its one leaf, a Kafka relation; None for any other shape (a
    join, a union), which is built again for every batch."""
    nodes = [df._jdf.queryExecution().analyzed()]
    while nodes[-1].children().size() == 1:
        nodes.append(nodes[-1].children().head())
    leaf = nodes[-1]
    if leaf.children().size() or leaf.nodeName() != "LogicalRelation" \
            or leaf.relation().getClass().getSimpleName() != "KafkaRelation":
        return None
    return nodes
