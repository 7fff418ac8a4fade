"""The benchmark's memory figure counts shared pages once: a process that forks (as PySpark's daemon does for each
worker) is not counted twice, nor a helper spawned in its parent's address space (a JVM's, until it execs)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from bench import measure

FORKS = ("import os, time\nb = b'x' * (200 * 2**20)\npid = os.fork()\ntime.sleep(2)\n"
         "os._exit(0) if pid == 0 else os.waitpid(pid, 0)\n")


def test_a_forked_child_shares_its_parents_pages():
    m = measure.run([sys.executable, "-c", FORKS], every_s=0.1)
    assert m.returncode == 0, m.stderr
    assert 190 < m.peak_rss_mb < 300, m.peak_rss_mb  # RSS summed over both processes would be above 400


def test_a_process_in_its_parents_address_space_is_told_from_a_forked_one():
    ready, done, tid = threading.Event(), threading.Event(), []
    t = threading.Thread(target=lambda: (tid.append(threading.get_native_id()), ready.set(), done.wait()))
    t.start()
    ready.wait()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:  # a thread stands for a vfork child: one address space, its own id
        assert measure.shares_memory(os.getpid(), tid[0])
        assert not measure.shares_memory(os.getpid(), child.pid)
    finally:
        done.set()
        t.join()
        child.kill()
        child.wait()


def test_a_process_that_exited_while_the_tree_was_read_counts_nothing():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # reaped: its /proc entry is gone, as a helper's is a moment after it was listed
    assert measure._pss(gone.pid) == 0
    assert measure._pss(os.getpid()) > 0


def test_the_cpu_time_is_the_trees_own_not_the_wall_time():
    burn = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time\\nt = time.process_time()\\n"
            "while time.process_time() - t < 1: pass'])\n"
            "time.sleep(1.5)\nchild.wait()\n")
    m = measure.run([sys.executable, "-c", burn], every_s=0.05)
    assert m.returncode == 0, m.stderr
    assert m.seconds >= 1.5 and 0.8 < m.cpu_s < 1.4, (m.seconds, m.cpu_s)  # the child's second, not the sleep


def test_a_process_left_holding_the_output_after_the_command_exited_is_killed_and_told():
    import time

    t0 = time.monotonic()
    m = measure.run(["sh", "-c", "sleep 60 & sleep 0.5; echo done"], every_s=0.05, linger_s=1.0)
    assert m.returncode == 0 and m.stdout.strip() == "done"
    assert m.lingered and m.seconds < 5 and time.monotonic() - t0 < 20
    m = measure.run(["sh", "-c", "sleep 0.3 & wait; echo done"], every_s=0.05, linger_s=1.0)
    assert not m.lingered and m.stdout.strip() == "done"
