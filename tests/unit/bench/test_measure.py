"""The benchmark's memory figure counts shared pages once: a process that forks (as a JVM does for a helper before
exec, and PySpark's daemon for each worker) is not counted twice."""

from __future__ import annotations

import sys

from bench import measure

FORKS = ("import os, time\nb = b'x' * (200 * 2**20)\npid = os.fork()\ntime.sleep(2)\n"
         "os._exit(0) if pid == 0 else os.waitpid(pid, 0)\n")


def test_a_forked_child_shares_its_parents_pages():
    m = measure.run([sys.executable, "-c", FORKS], every_s=0.1)
    assert m.returncode == 0, m.stderr
    assert 190 < m.peak_rss_mb < 300, m.peak_rss_mb  # RSS summed over both processes would be above 400
