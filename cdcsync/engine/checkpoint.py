"""What a run keeps beside the table in [run] checkpoint_dir. The Hudi commits are the source of truth for
offsets; this folder only remembers where a run *decided* to start before its first commit (so a `--once`
run that found nothing to read does not re-resolve `latest-offset` next time and skip what arrived since)."""

from __future__ import annotations

import json

from cdcsync.kafka.offsets import Offsets

START_FILE = "start-offsets.json"


def _fs_path(spark, directory: str, name: str):
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(directory.rstrip("/") + "/" + name)
    return path.getFileSystem(spark._jsc.hadoopConfiguration()), path


def read_start(spark, directory: str) -> tuple[Offsets, str] | None:
    fs, path = _fs_path(spark, directory, START_FILE)
    if not fs.exists(path):
        return None
    stream = fs.open(path)
    try:
        data = json.loads(spark._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()
    offsets = {t: {int(p): o for p, o in parts.items()} for t, parts in data["offsets"].items()}
    return offsets, data.get("decided_by", "start-offsets.json")


def write_start(spark, directory: str, offsets: Offsets, decided_by: str) -> None:
    fs, path = _fs_path(spark, directory, START_FILE)
    body = json.dumps({"offsets": {t: {str(p): o for p, o in parts.items()} for t, parts in offsets.items()},
                       "decided_by": decided_by}, sort_keys=True)
    out = fs.create(path, True)
    try:
        out.write(bytearray(body.encode()))
    finally:
        out.close()
