"""Wall time, peak memory and CPU time of a command and all its descendants (the JVM is a grandchild of `cdcsync`).

Memory is the sum of each process's proportional set size (PSS): a page shared by several processes counts once in
all. Summing RSS would count every PySpark worker forked from its daemon again in full. A JVM's helper (Hadoop's
`chmod`, ~100 per batch on a local disk) is spawned sharing the JVM's address space until it execs, and reports the
JVM's own PSS: such a process is not counted (kcmp(2) tells that two processes share one). CPU time is each process's
user + system time as last sampled (a process's last sampling interval is lost)."""

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
_TICKS = os.sysconf("SC_CLK_TCK")
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
    cpu_s: float = 0.0  # CPU time (user + system) of the tree, each process's as last sampled: less shaken than the
    # wall time by other work on the machine, though not untouched by it (caches, and the JVM's threads)
    lingered: bool = False  # the command exited, but a process it started kept its output open past LINGER_S and
    # was killed (`seconds` is then the command's own); e.g. a JVM whose shutdown hooks never return


def _processes() -> dict[int, tuple[int, int]]:
    """Every process's parent and CPU time so far (user + system, in clock ticks), read from /proc."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            out[int(d.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))  # ppid, utime + stime
        except (OSError, ValueError, IndexError):
            continue
    return out


def tree(root: int, processes: dict[int, tuple[int, int]]) -> list[tuple[int, int | None]]:
    """(pid, its parent's pid) of `root` (parent None) and every process below it."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in processes.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [(root, None)]
    while todo:
        pid, parent = todo.pop()
        out.append((pid, parent))
        todo += [(child, pid) for child in children.get(pid, [])]
    return out


def tree_rss(root: int, processes: dict[int, tuple[int, int]] | None = None) -> int:
    """Proportional resident bytes of `root` and every process below it, read from /proc."""
    total = 0
    for pid, parent in tree(root, _processes() if processes is None else processes):
        if parent is None or not shares_memory(parent, pid):
            total += _pss(pid)
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


LINGER_S = 120.0  # how long a process the command started may hold its output open after the command exited


def run(cmd: list[str], env: dict | None = None, timeout: float = 3600, every_s: float = 0.25,
        linger_s: float = LINGER_S, cwd: Path | None = None) -> Measured:
    """`cmd` run to its end and measured. The end is when its output closes: the last process of its tree that
    holds it (a PySpark job's JVM) has exited too. A process still holding it `linger_s` after the command itself
    exited is killed (Measured.lingered), as is the whole tree past `timeout`."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, cwd=cwd)
    peak = [0]
    cpu: dict[int, int] = {}  # pid -> its CPU ticks when last seen (its last `every_s` before it exits are lost)
    started: dict[int, str] = {}  # pid -> its start time (/proc/<pid>/stat): a pid reused since is not this process
    done = threading.Event()

    def sample():
        while not done.wait(every_s):
            processes = _processes()
            peak[0] = max(peak[0], tree_rss(proc.pid, processes))
            for pid, _ in tree(proc.pid, processes):
                if pid in processes:
                    cpu[pid] = max(cpu.get(pid, 0), processes[pid][1])
                    started.setdefault(pid, _start_time(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    exited, lingered = None, False
    while True:
        try:
            out, err = proc.communicate(timeout=min(5.0, linger_s))
            break
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if exited is None and proc.poll() is not None:
                exited = now
            if (exited is not None and now - exited > linger_s) or now - t0 > timeout:
                lingered = exited is not None
                _kill(started, proc)
    seconds = (exited if lingered else time.monotonic()) - t0
    done.set()
    sampler.join()
    return Measured(proc.returncode, round(seconds, 2), round(peak[0] / 2**20, 1), out, err,
                    round(sum(cpu.values()) / _TICKS, 1), lingered)


def _start_time(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _kill(started: dict[int, str], proc: subprocess.Popen) -> None:
    """Every process of the tree seen (the command's and those it started, wherever they were re-parented to) that
    is still the same process, SIGKILLed."""
    import signal

    if proc.poll() is None:
        proc.kill()
    for pid, when in started.items():
        if pid != proc.pid and when and _start_time(pid) == when:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def compactions(table: Path) -> int:
    """Compactions completed on a MERGE_ON_READ table (Hudi 1.x timeline: a compaction's plan, then a commit)."""
    timeline = table / ".hoodie" / "timeline"
    done = {p.name.split("_")[0].split(".")[0] for p in timeline.glob("*.commit")}
    return sum(1 for p in timeline.glob("*.compaction.requested") if p.name.split(".")[0] in done)
