"""One writer per table: a lock file in [run] checkpoint_dir holding the writer's host, pid and a heartbeat.

`run` holds it for its whole life; `replay-from-offset` checks it. Hudi's own multi-writer locking
(hoodie.write.concurrency.mode = optimistic_concurrency_control) lifts the rule.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import TYPE_CHECKING, Any, TypedDict, cast

from cdcsync import storage
from cdcsync.errors import CdcsyncError, ConfigError
from cdcsync.exit_codes import ExitCode

if TYPE_CHECKING:
    from typing import Unpack

    from botocore.exceptions import ClientError
    from pyspark.sql import SparkSession

    from cdcsync.config.model import StorageConfig

LOCK_FILE = "writer.lock"
STALE_AFTER_S = 120.0  # a lock from another host with no heartbeat for this long is abandoned


class ConcurrentWriterError(CdcsyncError):
    exit_code = ExitCode.CONCURRENT_WRITER


def multi_writer_configured(sink_options: dict[str, str]) -> bool:
    mode = sink_options.get("hoodie.write.concurrency.mode", "").lower()
    return mode == "optimistic_concurrency_control" and bool(sink_options.get("hoodie.write.lock.provider"))


class WriterLock:
    """Taken by writing the lock file only where none lives: on s3a:// with S3's conditional writes (a create that
    fails when the object exists, a replace that fails when it changed), elsewhere through Hadoop's file system."""

    def __init__(self, spark: SparkSession, directory: str, what: str,
                 settings: StorageConfig | None = None) -> None:
        """`settings`: the config's [storage], for a lock on s3a://."""
        path = directory.rstrip("/") + "/" + LOCK_FILE
        self._file = _S3Object(path, settings) if storage.is_s3(path) else _HadoopFile(spark, path)
        self.what = what
        self.held = False
        self._last_beat = 0.0

    def holder(self) -> dict[str, Any] | None:
        """The live holder of the lock, or None (no lock, a dead local pid, or a stale remote heartbeat)."""
        info = self._read()
        return info if info and holder_alive(info) else None

    def acquire(self, table: str) -> None:
        self._started = time.time()
        if self._file.create(self._body()):
            self._taken()
            return
        other = self._read()
        if other and holder_alive(other) and not _is_me(other):
            raise ConcurrentWriterError(
                f"table {table} is being written by {other.get('what')} (pid {other.get('pid')} on "
                f"{other.get('host')}, since {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(other['started']))} "
                "UTC)",
                hint="stop that process first, or configure Hudi multi-writer locking in [sink.options] "
                "(hoodie.write.concurrency.mode = \"optimistic_concurrency_control\" and "
                "hoodie.write.lock.provider)", holder=other,
            )
        if not self._file.replace(self._body()):  # another process took the abandoned lock first
            raise ConcurrentWriterError(f"table {table}: another writer took its abandoned lock at the same time",
                                        hint="stop the other process first")
        self._taken()

    def heartbeat(self, every_s: float = 10.0) -> None:
        if self.held and time.monotonic() - self._last_beat >= every_s:
            if not self._file.replace(self._body()):
                self.held = False
                raise ConcurrentWriterError("the writer lock was taken over by another process (this one missed "
                                            f"heartbeats for over {STALE_AFTER_S:.0f} s)",
                                            hint="run one writer per table; restart this one once the other stops")
            self._last_beat = time.monotonic()

    def release(self) -> None:
        if self.held:
            self._file.delete()
            self.held = False

    def _taken(self) -> None:
        self.held = True
        self._last_beat = time.monotonic()

    def _read(self) -> dict[str, Any] | None:
        raw = self._file.read()
        try:
            return json.loads(raw) if raw is not None else None
        except ValueError:
            return None

    def _body(self) -> bytes:
        return json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "process": process_identity(os.getpid()),
                           "what": self.what, "started": self._started, "heartbeat": time.time()}).encode()


def _is_me(info: dict[str, Any]) -> bool:
    return info.get("host") == socket.gethostname() and info.get("pid") == os.getpid()


class _HadoopFile:
    """The lock file on a Hadoop file system (local, HDFS): a check then a write; replace overwrites."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        jvm: Any = spark._jvm  # py4j's view: set once a session exists
        self._path = jvm.org.apache.hadoop.fs.Path(path)
        self._fs = self._path.getFileSystem(spark._jsc.hadoopConfiguration())
        self._io = jvm.org.apache.commons.io.IOUtils

    def read(self) -> str | None:
        if not self._fs.exists(self._path):
            return None
        stream = self._fs.open(self._path)
        try:
            return str(self._io.toString(stream, "UTF-8"))  # py4j hands a java.lang.String over as str
        finally:
            stream.close()

    def create(self, body: bytes) -> bool:
        return not self._fs.exists(self._path) and self.replace(body)

    def replace(self, body: bytes) -> bool:
        out = self._fs.create(self._path, True)
        try:
            out.write(bytearray(body))
        finally:
            out.close()
        return True

    def delete(self) -> None:
        self._fs.delete(self._path, False)


class _Condition(TypedDict, total=False):
    """A conditional write's precondition: the one S3 header given."""

    IfNoneMatch: str
    IfMatch: str


class _S3Object:
    """The lock object on S3: created with If-None-Match: *, replaced and deleted with If-Match on the ETag last
    seen, so two writers can never both believe they hold it (S3 rename is a copy; a check then a write races)."""

    def __init__(self, path: str, settings: StorageConfig | None) -> None:
        self._bucket, self._key = storage.split(path)
        self._s3 = storage.client(settings)
        self._etag: str | None = None

    def read(self) -> str | None:
        try:
            obj = self._s3.get_object(Bucket=self._bucket, Key=self._key)
        except self._s3.exceptions.NoSuchKey:
            self._etag = None
            return None
        self._etag = obj["ETag"]
        return obj["Body"].read().decode()

    def create(self, body: bytes) -> bool:
        if not self._put(body, IfNoneMatch="*"):
            return False
        if self._put(body, IfNoneMatch="*"):  # a store that ignores the condition would let two writers in
            raise ConfigError(f"s3a://{self._bucket}: the object store ignores conditional writes (If-None-Match), "
                              "which the writer lock needs", hint="use a store that supports them (AWS S3, "
                              "MinIO, Ceph RGW ≥ 19), or configure Hudi multi-writer locking in [sink.options]")
        return True

    def replace(self, body: bytes) -> bool:
        return self._etag is not None and self._put(body, IfMatch=self._etag)

    def delete(self) -> None:
        from botocore.exceptions import ClientError

        try:
            # cast: held, so the create or replace that took it set the ETag
            self._s3.delete_object(Bucket=self._bucket, Key=self._key, IfMatch=cast(str, self._etag))
        except ClientError as e:
            if _status(e) not in (404, 412):  # gone already, or taken over: not ours to delete
                raise

    def _put(self, body: bytes, **condition: Unpack[_Condition]) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._etag = self._s3.put_object(Bucket=self._bucket, Key=self._key, Body=body, **condition)["ETag"]
            return True
        except ClientError as e:
            if _status(e) in (409, 412):  # 409: a concurrent conditional write to the same key
                return False
            raise


def _status(e: ClientError) -> int:
    return e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)


def read_holder(directory: str, files: storage.Files) -> dict[str, Any] | None:
    """The live holder of the lock in `directory`, read without a JVM (`status`), or None."""
    try:
        info = json.loads(files.read(f"{directory.rstrip('/')}/{LOCK_FILE}") or b"")
    except ValueError:
        return None
    return info if holder_alive(info) else None


def holder_alive(info: dict[str, Any]) -> bool:
    """A lock written on this host lives while its process does; one from another host while it heartbeats."""
    if info.get("host") == socket.gethostname():
        return local_holder_alive(info)
    return time.time() - float(info.get("heartbeat", 0)) < STALE_AFTER_S


def local_holder_alive(info: dict[str, Any]) -> bool:
    """The lock's pid is running and is still the process that wrote it (a reused pid is not)."""
    pid = int(info.get("pid", -1))
    if not _pid_alive(pid):
        return False
    recorded, now = info.get("process"), process_identity(pid)
    return recorded is None or now is None or recorded == now


def process_identity(pid: int) -> str | None:
    """Boot id and start time of `pid` (Linux /proc), which a later process reusing the pid cannot share."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            started = f.read().rsplit(")", 1)[1].split()[19]  # field 22, starttime, after the command name
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f"{f.read().strip()}:{started}"
    except (OSError, IndexError):
        return None


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
