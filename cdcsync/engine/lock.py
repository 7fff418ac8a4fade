"""One writer per table: a lock file in [run] checkpoint_dir holding the writer's host, pid and a heartbeat.

`run` holds it for its whole life; `replay-from-offset` checks it. Hudi's own multi-writer locking
(hoodie.write.concurrency.mode = optimistic_concurrency_control) lifts the rule.
"""

from __future__ import annotations

import json
import os
import socket
import time

from cdcsync.errors import CdcsyncError
from cdcsync.exit_codes import ExitCode
from cdcsync.sinks import timeline

LOCK_FILE = "writer.lock"
STALE_AFTER_S = 120.0  # a lock from another host with no heartbeat for this long is abandoned


class ConcurrentWriterError(CdcsyncError):
    exit_code = ExitCode.CONCURRENT_WRITER


def multi_writer_configured(sink_options: dict[str, str]) -> bool:
    mode = sink_options.get("hoodie.write.concurrency.mode", "").lower()
    return mode == "optimistic_concurrency_control" and bool(sink_options.get("hoodie.write.lock.provider"))


class WriterLock:
    def __init__(self, spark, directory: str, what: str):
        jvm = spark._jvm
        self._path = jvm.org.apache.hadoop.fs.Path(directory.rstrip("/") + "/" + LOCK_FILE)
        self._fs = self._path.getFileSystem(spark._jsc.hadoopConfiguration())
        self._spark = spark
        self.what = what
        self.held = False
        self._last_beat = 0.0

    def holder(self) -> dict | None:
        """The live holder of the lock, or None (no lock, a dead local pid, or a stale remote heartbeat)."""
        if not self._fs.exists(self._path):
            return None
        stream = self._fs.open(self._path)
        try:
            info = json.loads(self._spark._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        except ValueError:
            return None
        finally:
            stream.close()
        return info if holder_alive(info) else None

    def acquire(self, table: str) -> None:
        other = self.holder()
        if other and not (other.get("host") == socket.gethostname() and other.get("pid") == os.getpid()):
            raise ConcurrentWriterError(
                f"table {table} is being written by {other.get('what')} (pid {other.get('pid')} on "
                f"{other.get('host')}, since {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(other['started']))} "
                "UTC)",
                hint="stop that process first, or configure Hudi multi-writer locking in [sink.options] "
                "(hoodie.write.concurrency.mode = \"optimistic_concurrency_control\" and "
                "hoodie.write.lock.provider)", holder=other,
            )
        self._started = time.time()
        self._write()
        self.held = True

    def heartbeat(self, every_s: float = 10.0) -> None:
        if self.held and time.monotonic() - self._last_beat >= every_s:
            self._write()

    def release(self) -> None:
        if self.held:
            self._fs.delete(self._path, False)
            self.held = False

    def _write(self) -> None:
        body = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "process": process_identity(os.getpid()),
                           "what": self.what, "started": self._started, "heartbeat": time.time()})
        out = self._fs.create(self._path, True)
        try:
            out.write(bytearray(body.encode()))
        finally:
            out.close()
        self._last_beat = time.monotonic()


def read_local(directory: str) -> dict | None:
    """The live holder of the lock in a local `directory`, read without a JVM (`status`), or None."""
    path = timeline.local_path(directory) / LOCK_FILE
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return info if holder_alive(info) else None


def holder_alive(info: dict) -> bool:
    """A lock written on this host lives while its process does; one from another host while it heartbeats."""
    if info.get("host") == socket.gethostname():
        return local_holder_alive(info)
    return time.time() - float(info.get("heartbeat", 0)) < STALE_AFTER_S


def local_holder_alive(info: dict) -> bool:
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
