"""Wall time and peak memory of a command and all its descendants (the JVM is a grandchild of `cdcsync`).

Memory is the sum of each process's proportional set size (PSS): a page shared by several processes counts once in
all. Summing RSS would count every PySpark worker forked from its daemon again in full. A JVM's helper (Hadoop's
`chmod`, ~100 per batch on a local disk) is spawned sharing the JVM's address space until it execs, and reports the
JVM's own PSS: such a process is not counted (kcmp(2) tells that two processes share one)."""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")
_KCMP = {"x86_64": 312, "aarch64": 272}.get(platform.machine())  # the kcmp(2) system call's number
_KCMP_VM = 1
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class Measured:
    returncode: int
    seconds: float
    peak_rss_mb: float
    stdout: str
    stderr: str


def tree_rss(root: int) -> int:
    """Proportional resident bytes of `root` and every process below it, read from /proc."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(ppid, []).append(int(d.name))
    total, todo = 0, [(root, None)]
    while todo:
        pid, parent = todo.pop()
        if parent is None or not shares_memory(parent, pid):
            total += _pss(pid)
        todo += [(child, pid) for child in children.get(pid, [])]
    return total


def shares_memory(a: int, b: int) -> bool:
    """Do processes (or threads) `a` and `b` share one address space, as a child spawned with vfork/posix_spawn does
    with its parent until it execs?"""
    return _KCMP is not None and _libc.syscall(_KCMP, a, b, _KCMP_VM, 0, 0) == 0


def _pss(pid: int) -> int:
    """The process's PSS in bytes (smaps_rollup), its RSS where the kernel does not say, 0 once it has exited. Its
    size is read now, never from the listing: a helper listed while in the JVM's address space that exits before
    kcmp looks reported the JVM's whole RSS there, and counted the JVM twice."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return 0


def run(cmd: list[str], env: dict | None = None, timeout: float = 3600, every_s: float = 0.25) -> Measured:
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.wait(every_s):
            peak[0] = max(peak[0], tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate(timeout=timeout)
    seconds = time.monotonic() - t0
    done.set()
    sampler.join()
    return Measured(proc.returncode, round(seconds, 2), round(peak[0] / 2**20, 1), out, err)


def compactions(table: Path) -> int:
    """Compactions completed on a MERGE_ON_READ table (Hudi 1.x timeline: a compaction's plan, then a commit)."""
    timeline = table / ".hoodie" / "timeline"
    done = {p.name.split("_")[0].split(".")[0] for p in timeline.glob("*.commit")}
    return sum(1 for p in timeline.glob("*.compaction.requested") if p.name.split(".")[0] in done)
