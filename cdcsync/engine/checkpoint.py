"""What cdcsync keeps beside the table in [run] checkpoint_dir, as small JSON records on any Hadoop path (written
atomically). The Hudi commits are the source of truth for offsets; these records only remember where a run
*decided* to start before its first commit (so a `--once` run that found nothing to read does not re-resolve
`latest-offset` next time and skip what arrived since), the routed batch in flight, and a replay's progress."""

from __future__ import annotations

import json

from cdcsync.kafka.offsets import Offsets

START_FILE = "start-offsets.json"
ROUTES_PROGRESS_FILE = "routes-progress.json"  # a routed run's batch in flight (engine.routing)


def _fs_path(spark, directory: str, name: str):
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(directory.rstrip("/") + "/" + name)
    return path.getFileSystem(spark._jsc.hadoopConfiguration()), path


def read_json(spark, directory: str, name: str) -> dict | None:
    """A record written by `write_json`, or None; any Hadoop path (file:, s3a:, hdfs:)."""
    fs, path = _fs_path(spark, directory, name)
    if not fs.exists(path):  # a crash between delete and rename leaves only the new record
        path = spark._jvm.org.apache.hadoop.fs.Path(path.toString() + ".tmp")
        if not fs.exists(path):
            return None
    stream = fs.open(path)
    try:
        return json.loads(spark._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def write_json(spark, directory: str, name: str, data: dict) -> None:
    """Written to a temporary file and renamed, so a crash never leaves half a record."""
    fs, path = _fs_path(spark, directory, name)
    tmp = spark._jvm.org.apache.hadoop.fs.Path(path.toString() + ".tmp")
    out = fs.create(tmp, True)
    try:
        out.write(bytearray(json.dumps(data, sort_keys=True).encode()))
    finally:
        out.close()
    fs.delete(path, False)
    fs.rename(tmp, path)


def read_start(spark, directory: str) -> tuple[Offsets, str] | None:
    data = read_json(spark, directory, START_FILE)
    if data is None:
        return None
    return Offsets.from_json(data["offsets"]), data.get("decided_by", START_FILE)


def write_start(spark, directory: str, offsets: Offsets, decided_by: str) -> None:
    write_json(spark, directory, START_FILE, {"offsets": Offsets(offsets).to_json(), "decided_by": decided_by})
