"""The session cdcsync builds: PySpark's functions resolved once per gateway (runtime/session.py)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


@pytest.fixture
def round_trips(spark):
    import py4j.clientserver as cs

    count, send = [0], cs.ClientServerConnection.send_command

    def counted(self, command):
        count[0] += 1
        return send(self, command)

    cs.ClientServerConnection.send_command = counted
    try:
        yield count
    finally:
        cs.ClientServerConnection.send_command = send


def test_a_function_call_is_one_round_trip_and_gives_what_spark_gives(spark, round_trips):
    from pyspark.sql import functions as F

    F.upper(F.col("a"))  # resolves both functions once
    round_trips[0] = 0
    upper = F.upper(F.col("a"))
    assert round_trips[0] == 2, "PySpark's own look-up takes 3 round trips per call: 6"
    assert str(upper) == "Column<'upper(a)'>"
    rows = spark.range(3).select((F.col("id") + F.lit(10)).alias("x"), F.lit("t").alias("t"),
                                 F.when(F.col("id") > 1, "big").alias("w")).collect()
    assert [tuple(r) for r in rows] == [(10, "t", None), (11, "t", None), (12, "t", "big")]
