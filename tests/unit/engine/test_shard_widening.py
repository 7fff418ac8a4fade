"""Shards routed to one table: their columns merge on the shared widening lattice (not first-seen wins)."""

from __future__ import annotations

from cdcsync.schema.spark.columns import DBZ_DECIMAL, DBZ_TS_MS, PLAIN, Col
from cdcsync.schema.spark.infer import _widest


def test_shards_widen_to_the_common_type_in_first_seen_order():
    a = [Col("id", "BIGINT"), Col("amount", "DECIMAL(10,2)"), Col("qty", "BIGINT")]
    b = [Col("id", "DECIMAL(20,0)"), Col("amount", "DECIMAL(14,4)"), Col("qty", "DOUBLE"), Col("extra", "STRING")]
    c = [Col("qty", "BIGINT"), Col("amount", "STRING")]
    assert _widest([a, b]) == [Col("id", "DECIMAL(20,0)"), Col("amount", "DECIMAL(14,4)"), Col("qty", "DOUBLE"),
                               Col("extra", "STRING")]
    assert [x.type for x in _widest([a, b, c])] == ["DECIMAL(20,0)", "STRING", "DOUBLE", "STRING"]


def test_wire_encoding_follows_the_shard_whose_type_won():
    a = [Col("ts", "TIMESTAMP", DBZ_TS_MS), Col("d", "DECIMAL(10,2)", DBZ_DECIMAL, 2)]
    b = [Col("ts", "STRING"), Col("d", "DECIMAL(10,2)", DBZ_DECIMAL, 2)]
    out = _widest([a, b])
    assert out[0] == Col("ts", "STRING", PLAIN) and out[1] == a[1]
    # same scale, wider precision: one decoding still fits every shard
    assert _widest([[Col("d", "DECIMAL(10,2)", DBZ_DECIMAL, 2)], [Col("d", "DECIMAL(14,2)", DBZ_DECIMAL, 2)]]) == [
        Col("d", "DECIMAL(14,2)", DBZ_DECIMAL, 2)]


def test_debezium_decimals_of_different_scales_widen_to_hold_both():
    """Each version still decodes its own scale (infer.BatchColumns.versions); the column holds both."""
    out = _widest([[Col("d", "DECIMAL(10,2)", DBZ_DECIMAL, 2)], [Col("d", "DECIMAL(10,4)", DBZ_DECIMAL, 4)]])
    assert out == [Col("d", "DECIMAL(12,4)", DBZ_DECIMAL, 4)]
