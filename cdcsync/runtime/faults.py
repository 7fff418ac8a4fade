"""Fault injection for the crash tests: CDCSYNC_FAULT="<point>:<batch>" kills this process with SIGKILL at that
point of that batch, exactly as `kill -9` would; "<point>:<batch>:TERM" sends SIGTERM to its whole process group
instead, as a service manager's stop does; "<point>:<batch>:STALL" hangs there (a stuck loop).
Points: before_write, after_write (Hudi committed, nothing else done), routed_between_tables (one routed table
committed, the next not yet), routed_before_done (every routed table committed, the run-level record not
yet). Unset in production: one dict lookup. (A failed Hudi write needs no injection: the write-retry tests make
Hudi's own lock refuse the commit, tests/integration/engine/test_write_retries.py.)"""

from __future__ import annotations

import os
import signal
import time


def maybe_crash(point: str, batch_id: int) -> None:
    spec = os.environ.get("CDCSYNC_FAULT")
    if spec == f"{point}:{batch_id}":
        os.kill(os.getpid(), signal.SIGKILL)
    elif spec == f"{point}:{batch_id}:TERM":
        os.killpg(os.getpgid(0), signal.SIGTERM)
    elif spec == f"{point}:{batch_id}:STALL":
        time.sleep(3600)
