"""[run] on_data_loss (issue 44, point 5): offsets the table still needs that the brokers no longer hold are found
before a batch is read, at start and between batches; "fail" names them (exit 82), "skip" goes on from the
earliest offset and carries the gap in every commit, the metrics and the log."""

from types import SimpleNamespace

import pytest

from cdcsync.config.model import RunConfig
from cdcsync.engine.runner import KafkaBatches
from cdcsync.engine.sync import Summary
from cdcsync.errors import SourceError
from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.offsets import ABOVE_END, BELOW_EARLIEST, Gap, Offsets, lost_ranges
from cdcsync.kafka.view import lost, resolve_start
from cdcsync.runtime.metrics import RunMetrics
from cdcsync.sinks import hudi, timeline


def test_a_next_offset_below_the_earliest_is_a_gap_up_to_it():
    (gap,) = lost_ranges(Offsets({"t": {0: 10, 1: 5}}), Offsets({"t": {0: 40, 1: 0}}), Offsets({"t": {0: 60, 1: 9}}))
    assert gap == Gap("t", 0, 10, 40, BELOW_EARLIEST) and gap.records == 30


def test_a_next_offset_past_the_end_is_a_recreated_topic_read_again_from_its_earliest():
    (gap,) = lost_ranges(Offsets({"t": {0: 500}}), Offsets({"t": {0: 0}}), Offsets({"t": {0: 12}}))
    assert gap == Gap("t", 0, 500, 0, ABOVE_END) and gap.records == 0
    assert "past the partition's end" in gap.describe()


def test_offsets_inside_the_range_and_unknown_partitions_are_no_gap():
    start = Offsets({"t": {0: 40, 1: 60, 2: 7}})  # partition 2: not listed by the brokers
    assert lost_ranges(start, Offsets({"t": {0: 40, 1: 0}}), Offsets({"t": {0: 60, 1: 60}})) == []


def test_a_gap_round_trips_through_its_json_form():
    gap = Gap("t", 3, 10, 40, BELOW_EARLIEST, batch_id=7)
    assert gap.to_json() == {"topic": "t", "partition": 3, "from": 10, "to": 40, "reason": BELOW_EARLIEST,
                             "batch_id": 7}
    assert Gap.from_json(gap.to_json()) == gap


def test_the_failure_names_topic_partition_range_and_both_ways_out():
    e = lost([Gap("orders", 0, 10, 40, BELOW_EARLIEST)], "/etc/orders.toml")
    assert e.exit_code == ExitCode.DATA_LOSS == 82
    assert "orders/0: offsets 10..39 (30 message(s)) are gone; the earliest offset is now 40" in e.message
    assert 'on_data_loss = "skip"' in e.hint and "/etc/orders.toml" in e.hint and "new table" in e.hint
    assert e.to_dict()["lost_from"] == 10 and e.to_dict()["lost_to"] == 40


def test_recorded_offsets_behind_retention_are_left_to_the_runner_to_judge():
    view = SimpleNamespace(earliest=lambda topics: Offsets({"t": {0: 40}}),
                           latest=lambda topics: Offsets({"t": {0: 60}}))
    start, how = resolve_start(SimpleNamespace(), view, ["t"], Offsets({"t": {0: 10}}))
    assert start == {"t": {0: 10}} and how.startswith("offsets recorded")


def test_commit_metadata_carries_the_gaps_only_when_there_are_some():
    assert hudi.data_loss_metadata(()) == {}
    assert hudi.data_loss_metadata((Gap("t", 0, 10, 40, BELOW_EARLIEST, 3),)) == {hudi.META_DATA_LOSS: [
        {"topic": "t", "partition": 0, "from": 10, "to": 40, "reason": BELOW_EARLIEST, "batch_id": 3}]}


def test_status_reads_the_gaps_a_commit_carries():
    import json

    instant = timeline.Instant("20250101000000000", "commit", "20250101000001000", "x")
    gap = Gap("t", 0, 10, 40, BELOW_EARLIEST, 3)
    commit = timeline.Commit(instant, {hudi.META_DATA_LOSS: json.dumps([gap.to_json()])}, {})
    assert commit.data_loss == [gap] and timeline.Commit(instant, {}, {}).data_loss == []


class _Retention:
    """A partition whose earliest offset jumps to `deleted_to` once the first batch has been planned."""

    def __init__(self, deleted_to: int):
        self.end, self.first, self.deleted_to, self.planned = 20, 0, deleted_to, 0

    def latest(self, topics):
        self.planned += 1
        if self.planned == 2:  # between the batches: records appended, then deleted by retention
            self.end, self.first = 60, self.deleted_to
        return Offsets({"t": {0: self.end}})

    def earliest(self, topics):
        return Offsets({"t": {0: self.first}})


class _Reporter:
    def __init__(self):
        self.lines, self.events = [], []

    def warn(self, text):
        self.lines.append(text)

    info = warn

    def event(self, kind, **fields):
        self.events.append((kind, fields))


def _source(policy: str, view) -> KafkaBatches:
    run = RunConfig(checkpoint_dir="/tmp/unused", trigger_interval="0s", on_data_loss=policy)
    pipe = SimpleNamespace(cfg=SimpleNamespace(run=run, source=SimpleNamespace(topic_pattern=None), routes=[],
                                               path="/etc/t.toml"), heartbeat=lambda: None, reporter=_Reporter())
    source = KafkaBatches(pipe, view, once=False, metrics=RunMetrics("t", stuck_after_s=60))
    source.topics, source.stop_at, source.redo_end, source.batch_id = ["t"], None, None, 0
    source.next_start, source.summary = Offsets({"t": {0: 0}}), Summary("t", "/tmp/t", "test")
    return source


def _second_batch(source: KafkaBatches):
    batches = source.batches()
    first = next(batches)
    assert first.end == {"t": {0: 20}} and first.data_loss == ()
    source.next_start, source.batch_id = first.end.copy(), 1
    return next(batches)


def test_offsets_deleted_mid_run_stop_the_run_before_the_next_batch_is_read():
    source = _source("fail", _Retention(deleted_to=45))
    with pytest.raises(SourceError) as e:
        _second_batch(source)
    assert e.value.exit_code == ExitCode.DATA_LOSS and "t/0: offsets 20..44 (25 message(s)) are gone" in str(e.value)


def test_skip_goes_on_from_the_earliest_and_every_later_batch_carries_the_gap():
    source = _source("skip", _Retention(deleted_to=45))
    second = _second_batch(source)
    gap = Gap("t", 0, 20, 45, BELOW_EARLIEST, batch_id=1)
    assert second.start == {"t": {0: 45}} and second.end == {"t": {0: 60}} and second.data_loss == (gap,)
    reporter, registry = source.pipe.reporter, source.metrics.registry
    assert 'on_data_loss = "skip"' in reporter.lines[0] and "20..44" in reporter.lines[0]
    assert reporter.events == [("data_loss", {"batch": 1, "topic": "t", "partition": 0, "lost_from": 20,
                                              "lost_to": 45, "records": 25, "reason": BELOW_EARLIEST})]
    labels = {"topic": "t", "partition": "0"}
    assert registry.get_sample_value("cdcsync_data_loss_records_total", labels) == 25
    assert registry.get_sample_value("cdcsync_data_loss_gaps_total", labels) == 1
