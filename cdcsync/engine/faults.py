"""Fault injection for the crash tests: CDCSYNC_FAULT="<point>:<batch>" kills this process with SIGKILL at that
point of that batch, exactly as `kill -9` would; "<point>:<batch>:TERM" sends SIGTERM to its whole process group
instead, as a service manager's stop does; "<point>:<batch>:STALL" hangs there (a stuck loop).
Points: before_write, after_write (Hudi committed, nothing else done), routed_between_tables (one routed table
committed, the next not yet), routed_before_done (every routed table committed, the run-level record not
yet). Unset in production: one dict lookup.
"write:<batch>:TRANSIENT<n>" makes the first n Hudi writes of that batch fail as an unreachable object store does
(a HoodieIOException caused by a SocketTimeoutException, thrown in the JVM); "write:<batch>:TERMINAL" fails them
all with a plain HoodieException."""

from __future__ import annotations

import os
import signal
import time

_failed_writes: dict[str, int] = {}


def injected_write_failure(spark, batch_id) -> Exception | None:
    spec = os.environ.get("CDCSYNC_FAULT") or ""
    if not spec.startswith(f"write:{batch_id}:"):
        return None
    from py4j.protocol import Py4JJavaError

    jvm, mode = spark._jvm, spec.rsplit(":", 1)[1]
    if mode == "TERMINAL":
        return Py4JJavaError("injected", jvm.org.apache.hudi.exception.HoodieException("injected terminal failure"))
    _failed_writes[spec] = _failed_writes.get(spec, 0) + 1
    if mode.startswith("TRANSIENT") and _failed_writes[spec] <= int(mode.removeprefix("TRANSIENT") or 1):
        cause = jvm.java.net.SocketTimeoutException("Read timed out (injected)")
        return Py4JJavaError("injected", jvm.org.apache.hudi.exception.HoodieIOException("write failed", cause))
    return None


def maybe_crash(point: str, batch_id: int) -> None:
    spec = os.environ.get("CDCSYNC_FAULT")
    if spec == f"{point}:{batch_id}":
        os.kill(os.getpid(), signal.SIGKILL)
    elif spec == f"{point}:{batch_id}:TERM":
        os.killpg(os.getpgid(0), signal.SIGTERM)
    elif spec == f"{point}:{batch_id}:STALL":
        time.sleep(3600)
