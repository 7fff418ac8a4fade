"""Where MySQL servers' runs begin in a batch (formats/spark/position.py): switches_from, read from the facts the
batch's one pass aggregates (stages/ledger.py), gives what server_switches' window job gives whenever it gives
anything, and gives way to the window (None) when a partition holds a failover, two connectors, or rows with and
without a server id."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdcsync import columns as C
from cdcsync.formats.spark.position import server_switches, switch_facts, switches_from
from cdcsync.stages import ledger

pytestmark = pytest.mark.integration

_COLUMNS = f"{C.TOPIC} string, {C.PARTITION} int, {C.OFFSET} long, {C.POS} int, {C.TIMESTAMP} timestamp, " \
           f"{C.CLASS} string, {C.POSITION} string, {C.SERVER} long, {C.SOURCE_NAME} string"
_AT = dt.datetime(2026, 1, 1)

# a record: its partition, its binlog position or another kind or none, its server id, its connector
_RECORD = st.tuples(st.integers(0, 2), st.sampled_from(["b0000000007", "b0000000003", "l0042", None]),
                    st.sampled_from([None, 1, 2]), st.sampled_from([None, "app", "other"]))


def _batch(spark, records):
    """Records as a pass sees them: each partition's offsets in order, two rows of one message now and then."""
    rows, offsets = [], {}
    for partition, position, server, source in records:
        offset = offsets[partition] = offsets.get(partition, 10) + 1
        rows.append(("t", partition, offset, 0, _AT, "upserted", position, server, source))
        if offset % 3 == 0:  # a message of two rows (Canal, Maxwell)
            rows.append(("t", partition, offset, 1, _AT, "upserted", position, server, source))
    return spark.createDataFrame(rows, _COLUMNS)


def _both(spark, records):
    df = _batch(spark, records)
    return switches_from(ledger.count_flagged(df, None, facts=switch_facts()).facts), sorted(server_switches(df))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_RECORD, max_size=12))
def test_the_facts_give_what_the_window_gives_whenever_they_give_anything(spark, records):
    fast, window = _both(spark, records)
    assert fast is None or sorted(fast) == window


def test_one_server_per_partition_needs_no_window(spark):
    records = [(0, "b0000000007", 1, "app"), (1, "b0000000003", 2, "app"), (0, "b0000000007", 1, "app"),
               (2, "l0042", None, None), (2, None, None, None)]
    fast, window = _both(spark, records)
    assert fast is not None and sorted(fast) == window == [("t/0/app", 11, 1), ("t/1/app", 11, 2)]
    none, window = _both(spark, [(0, "b0000000007", None, "app"), (0, "b0000000003", None, "app")])
    assert none == window == [("t/0/app", 11, None)]  # a snapshot's rows: a run may begin, with no server


@pytest.mark.parametrize("records", [
    [(0, "b0000000007", 1, "app"), (0, "b0000000003", 2, "app")],  # a failover inside the batch
    [(0, "b0000000007", None, "app"), (0, "b0000000003", 1, "app")],  # a snapshot, then the server's changes
    [(0, "b0000000007", 1, "app"), (0, "b0000000003", 1, "other")],  # two connectors in one partition
], ids=["failover", "snapshot-then-server", "two-connectors"])
def test_a_partition_the_facts_cannot_settle_goes_to_the_window(spark, records):
    fast, window = _both(spark, records)
    assert fast is None and len(window) == 2
