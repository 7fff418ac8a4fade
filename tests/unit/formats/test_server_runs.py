"""Where MySQL servers' runs begin (formats/spark/position.py merge_runs): the same record gets the same run start
in a batch, after a restart and in a replay of any range."""

from __future__ import annotations

from cdcsync.formats.spark.position import merge_runs

S = "t/0/app"


def test_a_stream_first_server_begins_a_run_and_a_failover_another():
    runs, batch = merge_runs({}, [(S, 3, None), (S, 5, 1), (S, 9, 2)])
    assert runs == batch == {S: [[5, 1], [9, 2]]}


def test_the_next_batch_continues_the_run_it_found():
    runs, _ = merge_runs({S: [[5, 1]]}, [(S, 20, 1)])  # the batch's first change: its server is the run's
    assert runs == {S: [[5, 1]]}
    runs, _ = merge_runs(runs, [(S, 30, 2)])  # failover at a batch's first change
    assert runs == {S: [[5, 1], [30, 2]]}


def test_a_replay_of_a_known_range_adds_nothing():
    known = {S: [[5, 1], [30, 2], [40, 1]]}
    for found in ([(S, 5, 1), (S, 30, 2)], [(S, 10, 1), (S, 30, 2), (S, 40, 1)], [(S, 31, 2)], [(S, 2, None)]):
        assert merge_runs(known, found)[0] == known, found


def test_a_replay_before_the_known_runs_keeps_them():
    """A range before the table's first change (it started at latest-offset): its run begins earlier, and every
    run already known keeps its start, so values written before do not change."""
    runs, batch = merge_runs({S: [[50, 1]]}, [(S, 10, 1)])
    assert runs == batch == {S: [[10, 1], [50, 1]]}


def test_given_rows_far_apart_do_not_split_a_known_run():
    """Dead letters of old offsets: a change whose server the known run before it has is no switch."""
    known = {S: [[0, 1], [100, 2]]}
    assert merge_runs(known, [(S, 50, 1), (S, 150, 2)])[0] == known


def test_streams_are_apart_and_the_batch_names_only_its_own():
    other = "t/1/app"
    runs, batch = merge_runs({other: [[7, 4]], S: [[1, 1]]}, [(S, 2, 1)])
    assert runs == {other: [[7, 4]], S: [[1, 1]]}
    assert batch == {S: [[1, 1]]}
