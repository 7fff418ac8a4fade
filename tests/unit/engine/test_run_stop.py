"""run's batch source and a stop signal (issue 18): a SIGTERM during the wait between batches plans no new batch."""

import threading
import time
from types import SimpleNamespace

from cdcsync.engine.metrics import RunMetrics
from cdcsync.engine.runner import KafkaBatches
from cdcsync.engine.sync import Summary
from cdcsync.kafka.offsets import Offsets


class _GrowingTopic:
    """A topic that always has ten more records than the last batch read."""

    def __init__(self):
        self.end = 10

    def latest(self, topics):
        self.end += 10
        return Offsets({"t": {0: self.end}})

    def earliest(self, topics):
        return Offsets({"t": {0: 0}})


def _source(trigger: str) -> KafkaBatches:
    run = SimpleNamespace(trigger_interval=trigger, max_records_per_batch=None, max_records_per_second=None)
    pipe = SimpleNamespace(cfg=SimpleNamespace(run=run, source=SimpleNamespace(topic_pattern=None)),
                           heartbeat=lambda: None)
    source = KafkaBatches(pipe, _GrowingTopic(), once=False, metrics=RunMetrics("t", stuck_after_s=60))
    source.topics, source.stop_at, source.redo_end, source.batch_id = ["t"], None, None, 0
    source.next_start, source.summary = Offsets({"t": {0: 0}}), Summary("t", "/tmp/t", "test")
    return source


def test_a_signal_during_the_trigger_wait_plans_no_new_batch():
    source = _source("30s")
    batches = source.batches()
    first = next(batches)
    source.next_start = first.end
    threading.Timer(0.3, lambda: setattr(source, "stop", True)).start()  # the handler, mid-wait
    t0 = time.monotonic()
    assert list(batches) == []  # the topic has grown, yet nothing more is planned
    assert time.monotonic() - t0 < 2 and source.summary.stopped_by == "signal"


def test_a_signal_before_the_first_batch_plans_none():
    source = _source("1s")
    source.stop = True  # arrived while Spark was starting
    assert list(source.batches()) == [] and source.summary.stopped_by == "signal"


def test_without_a_signal_batches_keep_coming():
    source = _source("0s")
    batches = source.batches()
    ends = []
    for b in batches:
        ends.append(b.end["t"][0])
        source.next_start = b.end
        if len(ends) == 3:
            break
    assert ends == [20, 30, 40]
