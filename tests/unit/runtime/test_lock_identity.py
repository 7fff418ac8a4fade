"""A stale writer lock whose pid now belongs to another live process is taken over (issue 18)."""

import os
import subprocess
import sys

from cdcsync.runtime.lock import local_holder_alive, process_identity


def test_the_writer_itself_is_alive():
    assert local_holder_alive({"pid": os.getpid(), "process": process_identity(os.getpid())})


def test_a_reused_pid_is_not_the_writer():
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        # the lock was written by an earlier process that had this pid: same pid, other start time
        stale = {"pid": other.pid, "process": process_identity(os.getpid())}
        assert process_identity(other.pid) not in (None, stale["process"])
        assert not local_holder_alive(stale)
        assert local_holder_alive({"pid": other.pid, "process": process_identity(other.pid)})
    finally:
        other.kill()
        other.wait()


def test_a_dead_pid_is_not_alive_and_old_locks_without_identity_follow_the_pid():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert not local_holder_alive({"pid": int(done.stdout), "process": None})
    assert local_holder_alive({"pid": os.getpid()})  # a lock written before identities were recorded
