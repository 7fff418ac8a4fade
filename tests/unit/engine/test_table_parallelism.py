"""Issue 46: [run] table_parallelism. The routed tables of a batch are written by a bounded pool of threads
(engine/routing.py `bounded`): never more at once than the setting, results in table order whoever finishes first,
a failure stops what has not started and lets the running commits end; the reporter and the dead-letter handler
are called one thread at a time (engine/pipeline.py `one_at_a_time`). Spark-free: the pieces, with plain callables."""

from __future__ import annotations

import copy
import signal
import threading
import time

import pytest

from cdcsync.config import load_config
from cdcsync.engine.pipeline import one_at_a_time
from cdcsync.engine.routing import MOST_BY_DEFAULT, bounded, table_parallelism
from cdcsync.errors import ConfigError
from tests.configs import minimal, write

ROUTE = "\n[[route]]\nsource_table = 'shop\\.public\\..*'\nsink_table = \"<>\"\n"


@pytest.mark.parametrize("cores, width", [(1, 2), (2, 4), (3, 6), (4, 8), (64, MOST_BY_DEFAULT)])
def test_unset_it_is_twice_the_cores_at_most_eight(cores, width):
    assert table_parallelism(None, cores) == width


def test_a_setting_wins_over_the_machine():
    assert table_parallelism(1, 16) == 1 and table_parallelism(12, 1) == 12
    assert 2 <= table_parallelism(None) <= MOST_BY_DEFAULT  # this machine's own cores


class _Gauge:
    """How many jobs run at once, at most."""

    def __init__(self):
        self.now = self.most = 0
        self.started: list[int] = []
        self._lock = threading.Lock()

    def job(self, i: int, seconds: float, fail: bool = False):
        def run():
            with self._lock:
                self.started.append(i)
                self.now += 1
                self.most = max(self.most, self.now)
            try:
                time.sleep(seconds)
                if fail:
                    raise ValueError(f"job {i} failed")
                return i
            finally:
                with self._lock:
                    self.now -= 1

        return run


def test_results_come_in_job_order_whichever_ends_first_and_never_more_than_the_width_run():
    g = _Gauge()
    jobs = [g.job(i, 0.02 * (8 - i)) for i in range(8)]  # the last job ends first
    assert bounded(jobs, 3) == list(range(8))
    assert g.most == 3 and sorted(g.started) == list(range(8))


def test_a_failure_stops_the_jobs_not_started_lets_the_running_end_and_is_raised():
    g = _Gauge()
    ended = []

    def slow_ok():
        time.sleep(0.3)
        ended.append("slow")
        return "slow"

    jobs = [g.job(0, 0.01, fail=True), slow_ok, *[g.job(i, 0.01) for i in range(2, 20)]]
    with pytest.raises(ValueError, match="job 0 failed"):
        bounded(jobs, 2)
    assert ended == ["slow"]  # running when the other failed: ended, not cut short
    assert len(g.started) < 19  # most of the rest never started


def test_the_first_failure_in_job_order_is_the_one_raised():
    g = _Gauge()
    jobs = [g.job(0, 0.01), g.job(1, 0.2, fail=True), g.job(2, 0.01, fail=True)]  # job 2 fails first
    with pytest.raises(ValueError, match="job 1 failed"):
        bounded(jobs, 3)


def test_an_interrupt_of_the_waiting_thread_aborts_at_once():
    aborted, release = [], threading.Event()
    g = _Gauge()

    def held():
        release.wait(10)
        return "held"

    # a second stop signal: SIGINT to the thread that waits for the tables (the main thread, as in `run`), raised
    # as run's handler raises it, whatever handler an earlier test in this process left (PySpark's, a runner's)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            bounded([held, *[g.job(i, 0.01) for i in range(1, 6)]], 1, on_abort=lambda: aborted.append(True))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert aborted == [True] and time.monotonic() - t0 < 5  # not after the held job: at once
    release.set()
    time.sleep(0.2)
    assert g.started == []  # queued behind the held job: dropped, never started


class _Handler:
    policy = "dead-letter"

    def __init__(self):
        self.rows, self.now, self.most = [], 0, 0

    def __call__(self, rows, batch_id, count):
        self.now += 1
        self.most = max(self.most, self.now)
        time.sleep(0.01)
        self.rows.append(batch_id)
        self.now -= 1
        return [{"batch": batch_id}]

    def warn(self, message):
        self.__call__(None, message, 0)


def test_the_dead_letter_handler_and_the_reporter_are_called_one_thread_at_a_time():
    inner = _Handler()
    handler = one_at_a_time(inner)
    threads = [threading.Thread(target=handler, args=(None, i, 1)) for i in range(6)]
    threads += [threading.Thread(target=handler.warn, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inner.most == 1 and len(inner.rows) == 12
    # what the pipeline reads of the handler reads through: its policy, a replay's rows
    assert handler.policy == "dead-letter" and handler.rows is inner.rows
    assert one_at_a_time(handler) is handler  # wrapped once
    assert copy.copy(handler).policy == "dead-letter"  # Pipeline.writing_to copies the pipeline


def test_the_setting_loads_and_is_refused_where_no_route_reads_it(tmp_path):
    routed = load_config(write(tmp_path, minimal() + ROUTE + "\n[run]\ntable_parallelism = 3\n"))
    assert routed.run.table_parallelism == 3
    assert load_config(write(tmp_path, minimal() + ROUTE)).run.table_parallelism is None  # sized to the machine
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, minimal() + "\n[run]\ntable_parallelism = 3\n"))
    assert "'run.table_parallelism' says how many [[route]] tables" in err.value.render()
    for bad in (0, 65, '"4"'):
        with pytest.raises(ConfigError) as err:
            load_config(write(tmp_path, minimal() + ROUTE + f"\n[run]\ntable_parallelism = {bad}\n"))
        assert "run.table_parallelism" in err.value.render()
