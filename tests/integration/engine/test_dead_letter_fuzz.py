"""Acceptance (issue 6, point 4) for the decoders `run` really uses: the Spark SQL path (envelope → typed columns
→ classification → Hudi commit). Hypothesis feeds arbitrary bytes, envelope-shaped JSON and corrupted real CDC
messages through the batch harness (`sync_rows`); every message must end decoded or reported bad with a known
reason, nothing else.
(tests/unit/formats/test_formats_property.py does the same for the pure-Python decoders.)"""

from __future__ import annotations

import json
import tempfile

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.integration.engine.helpers import kafka_rows, sync_rows, write_config
from tests.unit.formats.test_formats_property import REASONS, envelope_like, fixture_bytes

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# the Python decoders' codes, plus the CSV field count, the opt-in JSON Schema check and column names Hudi cannot
# store (found by this test: a Canal row with a stray non-ASCII column name failed the whole commit), and a key value
# whose type is not the key column's ([schema] on_type_conflict: key columns keep their type)
SPARK_REASONS = REASONS | {"bad_field_count", "schema_validation", "bad_column_name", "incompatible_type"}


def _corrupt(args):
    msg, pos, junk = args
    i = pos % (len(msg) + 1)
    return msg[:i] + junk + msg[i + len(junk):]


messages = st.one_of(
    st.binary(max_size=200),
    envelope_like.map(lambda d: json.dumps(d).encode()),
    fixture_bytes,
    st.tuples(fixture_bytes, st.integers(0, 5000), st.binary(min_size=1, max_size=3)).map(_corrupt),
    fixture_bytes.map(lambda m: m[: len(m) // 2]),
    st.none(),
)


@pytest.mark.parametrize("fmt", ["debezium-json", "canal-json", "maxwell-json", "json", "csv", "raw"])
def test_spark_decoders_decode_or_report(fmt, spark, bootstrap):
    from cdcsync.config import load_config

    # no shrinking: every example is a Spark job and a Hudi commit; the failing batch is printed as is
    @settings(max_examples=2, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.lists(st.tuples(messages, st.binary(max_size=12) | st.none()), min_size=40, max_size=120))
    def check(batch):
        tmp = tempfile.mkdtemp(prefix="dl_fuzz_")
        from pathlib import Path

        extra = {"sink.primary_key": ["id"], "run.on_bad_record": "dead-letter"}
        if fmt == "csv":
            extra["source.csv_columns"] = ["id", "a", "b"]
        cfg = load_config(write_config(Path(tmp), bootstrap, "fuzz", fmt, "COPY_ON_WRITE", **extra))
        raw = kafka_rows(spark, [v for v, _ in batch], [k for _, k in batch], topic="fuzz")
        seen: list = []

        def on_bad(bad_df, _batch_id, _count):
            seen.extend(bad_df.select("_kafka_offset", "_reason", "_reason_detail").collect())
            return []

        result = sync_rows(spark, cfg, raw, on_bad)
        t = result.totals()
        assert t["messages"] == len(batch), (t, fmt)
        assert t["rows"] == t["upserted"] + t["deleted"] + t["skipped"] + t["bad"]
        assert len(seen) == t["bad"]
        assert all(r["_reason"] in SPARK_REASONS and r["_reason_detail"] for r in seen), {r["_reason"] for r in seen}

    check()
