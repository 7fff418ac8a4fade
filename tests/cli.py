"""The one way tests run the `cdcsync` command: a real process, as a user or a service manager would, with its exit
code, stdout and stderr. `jvm_free=True` also proves the command never imported pyspark or py4j."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The command run in a fresh interpreter that then reports whether anything imported pyspark or py4j.
_JVM_CHECK = """
import sys
from cdcsync.cli.app import main
sys.argv = ["cdcsync", *sys.argv[1:]]
code = 0
try:
    main()
except SystemExit as e:
    code = e.code
print(f"JVM-CHECK pyspark={'pyspark' in sys.modules} py4j={'py4j' in sys.modules}", file=sys.stderr)
sys.exit(code)
"""
_NO_JVM = "JVM-CHECK pyspark=False py4j=False"
# a log4j line of the JVM ("12:00:00 WARN Utils: …"), a JVM or library warning on stderr, a stack frame
_NOISE = re.compile(r"^\d\d:\d\d:\d\d (WARN|ERROR) |WARNING|^\s+at [\w.$]+\(|Exception")


def _env(extra: dict | None) -> dict:
    full = dict(os.environ)
    for k, v in (extra or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    return full


def cdcsync(*args, env: dict | None = None, timeout: float = 300, python_flags: tuple = (),
            jvm_free: bool = False) -> subprocess.CompletedProcess:
    """Run `cdcsync ARGS…` to completion; `env` adds to (or, with a None value, removes from) the environment."""
    entry = ["-c", _JVM_CHECK] if jvm_free else ["-m", "cdcsync"]
    p = subprocess.run([sys.executable, *python_flags, *entry, *map(str, args)], cwd=ROOT, env=_env(env),
                       capture_output=True, text=True, timeout=timeout)
    if jvm_free:
        assert _NO_JVM in p.stderr, p.stderr[-3000:]
        p.stderr = "".join(line for line in p.stderr.splitlines(keepends=True) if not line.startswith("JVM-CHECK"))
    return p


def infer_schema(*args, timeout: float = 120) -> subprocess.CompletedProcess:
    """`cdcsync infer-schema ARGS…`, which must never start a JVM."""
    return cdcsync("infer-schema", *args, timeout=timeout, jvm_free=True)


def start(*args, env: dict | None = None, own_group: bool = False) -> subprocess.Popen:
    """Start `cdcsync ARGS…` in the background (stdout and stderr piped, text mode); `own_group` gives it a process
    group of its own, as a service manager does, so the group can be signalled without the test."""
    return subprocess.Popen([sys.executable, "-m", "cdcsync", *map(str, args)], cwd=ROOT, env=_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=own_group)


def run_killed(*args, fault: str | None = None, kill_on: str | None = None, delay: float = 0.0,
               timeout: float = 300) -> tuple[int, str]:
    """(exit code, stderr) of `cdcsync ARGS…` run to its end, or SIGKILLed `delay` s after the first stderr line
    holding `kill_on`, with its JVM (its process group: a killed Python parent's JVM would finish the writes in
    flight); `fault`: a CDCSYNC_FAULT crash point (runtime/faults.py)."""
    import signal
    import time

    proc = start(*args, env={"CDCSYNC_FAULT": fault or ""}, own_group=True)
    lines = []
    if kill_on:
        for line in proc.stderr:
            lines.append(line)
            if kill_on in line:
                time.sleep(delay)
                os.killpg(proc.pid, signal.SIGKILL)
                break
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, "".join(lines) + err


def noise(stderr: str) -> list[str]:
    """The lines of a command's stderr that are not cdcsync's own: JVM, Spark, Hudi or library warnings."""
    return [line for line in stderr.splitlines() if _NOISE.search(line)]


def http_get(url: str) -> tuple[int, str]:
    """(status, body) of a GET to a command's endpoint (`run --metrics-port`); (0, "") when nothing answers."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


def metric_series(text: str, name: str) -> dict[tuple, float]:
    """{sorted label pairs: value} of one metric in Prometheus text (`/metrics`)."""
    from prometheus_client.parser import text_string_to_metric_families

    return {tuple(sorted(s.labels.items())): s.value for fam in text_string_to_metric_families(text)
            for s in fam.samples if s.name == name}


def wait_until(what: str, check, timeout: float = 240):
    """Poll `check()` every half second until it returns something true, which is returned."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def jvm_args(pid: int) -> list[str]:
    """The command line of the JVM a running `cdcsync` process started (its child java process)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            args = (stat.parent / "cmdline").read_bytes().decode().split("\0")
        except (OSError, IndexError, ValueError):
            continue  # a process that ended while we looked
        if ppid == pid and args and args[0].endswith("java"):
            return args
    raise AssertionError(f"process {pid} has no java child")
