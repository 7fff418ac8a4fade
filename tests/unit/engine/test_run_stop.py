"""run's batch source and a stop signal (issue 18): a SIGTERM during the wait between batches plans no new batch."""

import threading
import time
from types import SimpleNamespace

import pytest
from kafka.errors import KafkaTimeoutError

from cdcsync.config.model import RunConfig
from cdcsync.engine.runner import KafkaBatches
from cdcsync.engine.sync import Summary
from cdcsync.errors import SourceError
from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.offsets import Offsets
from cdcsync.runtime.metrics import RunMetrics


class _GrowingTopic:
    """A topic that always has ten more records than the last batch read."""

    def __init__(self):
        self.end = 10

    def latest(self, topics):
        self.end += 10
        return Offsets({"t": {0: self.end}})

    def earliest(self, topics):
        return Offsets({"t": {0: 0}})


class _Lines:
    def __init__(self):
        self.lines = []

    def warn(self, text):
        self.lines.append(text)

    info = warn


class _Outage(_GrowingTopic):
    """Brokers that time out `failures` times (kafka-python's KafkaTimeoutError), then answer again."""

    bootstrap_servers = "kafka:9092"

    def __init__(self, failures: int):
        super().__init__()
        self.failures = failures

    def latest(self, topics):
        if self.failures:
            self.failures -= 1
            raise KafkaTimeoutError("Failed to get offsets by times in 15000 ms")
        return super().latest(topics)


def _source(trigger: str, view=None, outage_bound: str = "5min") -> KafkaBatches:
    run = RunConfig(checkpoint_dir="/tmp/unused", trigger_interval=trigger, source_unavailable_timeout=outage_bound)
    pipe = SimpleNamespace(cfg=SimpleNamespace(run=run, source=SimpleNamespace(topic_pattern=None), routes=[]),
                           heartbeat=lambda: None, reporter=_Lines())
    source = KafkaBatches(pipe, view or _GrowingTopic(), once=False, metrics=RunMetrics("t", stuck_after_s=60))
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


def test_brokers_away_mid_run_are_waited_for_and_the_run_goes_on():
    view = _Outage(failures=2)
    source = _source("0s", view)
    first = next(source.batches())
    assert first.end["t"][0] == 20 and view.failures == 0
    registry = source.metrics.registry
    assert registry.get_sample_value("cdcsync_source_outages_total") == 1
    assert registry.get_sample_value("cdcsync_source_available") == 1
    assert "not answering" in source.pipe.reporter.lines[0] and "answering again" in source.pipe.reporter.lines[1]


def test_brokers_away_longer_than_the_bound_exit_69_naming_them():
    source = _source("0s", _Outage(failures=1000), outage_bound="1s")
    with pytest.raises(SourceError) as e:
        next(source.batches())
    assert e.value.exit_code == ExitCode.UNREACHABLE and "kafka:9092" in str(e.value)
    assert "source_unavailable_timeout" in str(e.value)
