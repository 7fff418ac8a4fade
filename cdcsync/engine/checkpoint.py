"""What cdcsync keeps beside the table in [run] checkpoint_dir, as small JSON records on any Hadoop path (written
atomically). The Hudi commits are the source of truth for offsets; these records only remember where a run
*decided* to start before its first commit (so a `--once` run that found nothing to read does not re-resolve
`latest-offset` next time and skip what arrived since), the routed batch in flight, and a replay's progress."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from cdcsync.kafka.offsets import Offsets

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

START_FILE = "start-offsets.json"
ROUTES_PROGRESS_FILE = "routes-progress.json"  # a routed run's batch in flight (engine.routing)


def _fs_path(spark: SparkSession, directory: str, name: str) -> tuple[Any, Any]:
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    path = jvm.org.apache.hadoop.fs.Path(directory.rstrip("/") + "/" + name)
    return path.getFileSystem(spark._jsc.hadoopConfiguration()), path


def read_json(spark: SparkSession, directory: str, name: str) -> dict[str, Any] | None:
    """A record written by `write_json`, or None; any Hadoop path (file:, s3a:, hdfs:)."""
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    fs, path = _fs_path(spark, directory, name)
    if not fs.exists(path):  # a crash between delete and rename leaves only the new record
        path = jvm.org.apache.hadoop.fs.Path(path.toString() + ".tmp")
        if not fs.exists(path):
            return None
    stream = fs.open(path)
    try:
        return cast("dict[str, Any]", json.loads(jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")))
    finally:
        stream.close()


def write_json(spark: SparkSession, directory: str, name: str, data: dict[str, Any]) -> None:
    """Written to a temporary file and renamed, so a crash never leaves half a record."""
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    fs, path = _fs_path(spark, directory, name)
    tmp = jvm.org.apache.hadoop.fs.Path(path.toString() + ".tmp")
    out = fs.create(tmp, True)
    try:
        out.write(bytearray(json.dumps(data, sort_keys=True).encode()))
    finally:
        out.close()
    fs.delete(path, False)
    fs.rename(tmp, path)


def read_start(spark: SparkSession, directory: str) -> tuple[Offsets, str] | None:
    data = read_json(spark, directory, START_FILE)
    if data is None:
        return None
    return Offsets.from_json(data["offsets"]), data.get("decided_by", START_FILE)


def write_start(spark: SparkSession, directory: str, offsets: Offsets, decided_by: str) -> None:
    write_json(spark, directory, START_FILE, {"offsets": Offsets(offsets).to_json(), "decided_by": decided_by})
