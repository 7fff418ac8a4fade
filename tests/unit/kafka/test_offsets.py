"""Offsets, the one value type for {topic: {partition: offset}}: its text forms round-trip and its arithmetic."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cdcsync.kafka.offsets import Offsets, split_tp, tp_key

offsets = st.dictionaries(st.text("abc._-", min_size=1, max_size=5),
                          st.dictionaries(st.integers(0, 50), st.integers(0, 10**12), min_size=1, max_size=4),
                          max_size=3).map(Offsets)


@given(offsets)
def test_json_form_round_trips_and_has_text_partition_keys(o):
    j = o.to_json()
    assert all(isinstance(p, str) for parts in j.values() for p in parts)
    assert Offsets.from_json(j) == o and Offsets.from_json(__import__("json").dumps(j)) == o
    assert Offsets.from_entries(o.entries()) == o


def test_entries_of_several_partitions_of_one_topic_are_all_kept():
    assert Offsets.from_entries([("t", 0, 1), ("t", 1, 5), ("u", 0, 2)]) == {"t": {0: 1, 1: 5}, "u": {0: 2}}


def test_copy_is_deep():
    a = Offsets({"t": {0: 1}})
    b = a.copy()
    b["t"][0] = 9
    assert a == {"t": {0: 1}}


def test_counts_lag_and_text():
    start, end = Offsets({"t": {0: 10, 1: 0}}), Offsets({"t": {0: 13, 1: 4}})
    assert start.count_to(end) == 7
    assert start.lag_to(end) == {"t/0": 3, "t/1": 4}
    assert start.compact() == "t/0:10;t/1:0"
    assert start.range_text(end) == "t/0: 10..13; t/1: 0..4"


@given(st.from_regex(r"[A-Za-z0-9._-]{1,40}", fullmatch=True), st.integers(0, 10_000))
def test_a_partition_key_reads_back_as_its_topic_and_partition(topic, partition):
    assert split_tp(tp_key(topic, partition)) == (topic, partition)
    assert tp_key("orders.v1", 3) == "orders.v1/3"  # the ledger's, the lag's and the metrics' spelling
