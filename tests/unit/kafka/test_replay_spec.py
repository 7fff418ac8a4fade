"""replay-from-offset --from/--to specs: parsing, partition lists, range checks (no broker, no JVM)."""

from __future__ import annotations

import pytest

from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.replay_spec import Extent, ReplaySpecError, parse_replay_spec, replay_range, resolve_replay_spec


@pytest.mark.parametrize("text,kind", [("earliest", "earliest"), ("LATEST", "latest"), (" committed ", "committed")])
def test_keywords(text, kind):
    assert parse_replay_spec(text).kind == kind


def test_epoch_and_iso_times():
    assert parse_replay_spec("timestamp:1700000000000").ts_ms == 1_700_000_000_000
    assert parse_replay_spec("2023-11-14T22:13:20Z").ts_ms == 1_700_000_000_000
    assert parse_replay_spec("2023-11-14T23:13:20+01:00").ts_ms == 1_700_000_000_000
    assert parse_replay_spec("2023-11-14T22:13:20.5").ts_ms == 1_700_000_000_500  # a bare time is UTC
    assert parse_replay_spec("timestamp:2023-11-14T22:13:20Z").ts_ms == 1_700_000_000_000


def test_partition_lists_with_and_without_topics():
    spec = parse_replay_spec("partition:0,offset:42; partition:1 , offset:300")
    assert spec.kind == "offsets" and spec.offsets == ((None, 0, 42), (None, 1, 300))
    spec = parse_replay_spec("topic:orders.v1,partition:0,offset:1;topic:items,partition:2,offset:5")
    assert spec.offsets == (("orders.v1", 0, 1), ("items", 2, 5))


@pytest.mark.parametrize("text", ["yesterday", "partition:0", "partition:x,offset:1", "timestamp:soon", ""])
def test_unreadable_specs_are_usage_errors(text):
    with pytest.raises(ReplaySpecError) as err:
        parse_replay_spec(text, "--to")
    assert err.value.exit_code == ExitCode.USAGE and "--to" in err.value.message


E = {"a": {0: 5, 1: 0}, "b": {0: 0}}
L = {"a": {0: 10, 1: 7}, "b": {0: 3}}


def test_resolve_keywords_and_lists_without_a_broker():
    assert resolve_replay_spec(parse_replay_spec("earliest"), None, Extent(["a", "b"], E, L)) == E
    assert resolve_replay_spec(parse_replay_spec("latest"), None, Extent(["a"], E, L)) == {"a": L["a"]}
    spec = parse_replay_spec("topic:a,partition:1,offset:4")
    assert resolve_replay_spec(spec, None, Extent(["a", "b"], E, L)) == {"a": {1: 4}}


def test_committed_fills_unrecorded_partitions_with_earliest_and_needs_a_commit():
    got = resolve_replay_spec(parse_replay_spec("committed"), None, Extent(["a"], E, L),
                              committed=lambda: {"a": {0: 8}})
    assert got == {"a": {0: 8, 1: 0}}
    with pytest.raises(ReplaySpecError, match="no commit with recorded offsets"):
        resolve_replay_spec(parse_replay_spec("committed"), None, Extent(["a"], E, L), committed=lambda: None)


def test_list_errors_name_topics_and_partitions():
    with pytest.raises(ReplaySpecError, match="reads 2 topics"):
        resolve_replay_spec(parse_replay_spec("partition:0,offset:1"), None, Extent(["a", "b"], E, L))
    with pytest.raises(ReplaySpecError) as err:
        resolve_replay_spec(parse_replay_spec("partition:9,offset:1"), None, Extent(["b"], E, L))
    assert "no partition 9" in err.value.message and "[0]" in err.value.hint
    with pytest.raises(ReplaySpecError, match="not one the config reads"):
        resolve_replay_spec(parse_replay_spec("topic:c,partition:0,offset:1"), None, Extent(["a", "b"], E, L))


def test_out_of_range_names_partition_and_valid_range():
    with pytest.raises(ReplaySpecError) as err:
        replay_range({"a": {0: 2}}, {"a": {0: 9}}, E, L)
    assert "a/0" in err.value.message and "[5, 10]" in err.value.message and "retention" in err.value.message
    assert err.value.facts["earliest"] == 5 and err.value.facts["latest"] == 10
    with pytest.raises(ReplaySpecError, match=r"--to: offset 11 for a/0 is beyond the latest offset.*\[5, 10\]"):
        replay_range({"a": {0: 5}}, {"a": {0: 11}}, E, L)


def test_from_after_to_is_an_error():
    with pytest.raises(ReplaySpecError, match=r"--from is after --to on a/1: 6 > 2"):
        replay_range({"a": {1: 6}}, {"a": {1: 2}}, E, L)


def test_an_empty_range_and_a_whole_partition_are_accepted():
    """replay_range only raises: returning is its acceptance."""
    replay_range({"a": {0: 7, 1: 0}}, {"a": {0: 7, 1: 7}}, E, L)


def _plan(start, end, budget):
    from cdcsync.engine.replay import Plan

    return Plan("t", "/x", False, "earliest", "latest", "id", "/ck/replay-id", start, end, start, end, budget)


@pytest.mark.parametrize("budget", [None, 1, 3, 5, 7, 100])
def test_planned_batches_are_the_batches_the_replay_loop_runs(budget):
    from cdcsync.engine.planning import plan_end

    start, end = {"a": {0: 3, 1: 0, 2: 9}}, {"a": {0: 10, 1: 5, 2: 9}}
    plan, done, batches = _plan(start, end, budget), start, 0
    while (nxt := plan_end(done, end, budget)) != done:  # the loop Replayer.run drives
        done, batches = nxt, batches + 1
    assert done == end and plan.batches == batches and plan.messages == 12


def test_plan_json_and_table_name_every_partition():
    plan = _plan({"a": {0: 3, 1: 0}}, {"a": {0: 10, 1: 5}}, 5)
    d = plan.to_dict()
    assert [(r["partition"], r["from"], r["to"], r["messages"]) for r in d["partitions"]] == [(0, 3, 10, 7),
                                                                                           (1, 0, 5, 5)]
    assert d["messages"] == 12 and d["batches"] == 3
    text = plan.render()
    assert "a/0" in text and "a/1" in text and "total 12 message(s) in 3 batch(es)" in text
