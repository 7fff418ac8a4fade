"""Acceptance (issue 14, point 3): one batch holding two versions of a Debezium schema envelope decodes every
record with its own version's rules: a column added, DATETIME → DATETIME(6) (Timestamp → MicroTimestamp), and a
decimal's scale changed. Values are read back exactly."""

from __future__ import annotations

import base64
import datetime as dt
from decimal import Decimal

import pytest

from tests.integration.engine.helpers import hudi_rs_rows, kafka_rows, spark_rows, sync_rows, write_config

pytestmark = pytest.mark.integration


def _field(name: str, kind: str, logical: str | None = None, **params) -> dict:
    f = {"field": name, "type": kind, "optional": name != "id"}
    if logical:
        f["name"] = logical
    if params:
        f["parameters"] = {k: str(v) for k, v in params.items()}
    return f


def _decimal(value: str, scale: int) -> str:
    unscaled = int(Decimal(value).scaleb(scale))
    return base64.b64encode(unscaled.to_bytes(8, "big", signed=True)).decode()


V1 = [_field("id", "int64"), _field("at", "int64", "io.debezium.time.Timestamp"),
      _field("price", "bytes", "org.apache.kafka.connect.data.Decimal", scale=2, **{"connect.decimal.precision": 10})]
V2 = [*V1[:1], _field("at", "int64", "io.debezium.time.MicroTimestamp"),
      _field("price", "bytes", "org.apache.kafka.connect.data.Decimal", scale=4, **{"connect.decimal.precision": 10}),
      _field("note", "string")]


def _message(fields: list[dict], after: dict) -> dict:
    row = {"type": "struct", "fields": fields, "optional": True, "name": "app.shop.items.Value"}
    schema = {"type": "struct", "name": "app.shop.items.Envelope", "fields": [
        row | {"field": "before"}, row | {"field": "after"},
        {"field": "op", "type": "string"}, {"field": "ts_ms", "type": "int64", "optional": True}]}
    return {"schema": schema, "payload": {"op": "c", "before": None, "after": after, "ts_ms": 1,
                                          "source": {"db": "shop", "table": "items", "ts_ms": 1}}}


AT = dt.datetime(2026, 3, 4, 5, 6, 7, 891234)
EPOCH = dt.datetime(1970, 1, 1)


def _micros(t: dt.datetime) -> int:
    return (t - EPOCH) // dt.timedelta(microseconds=1)


@pytest.mark.parametrize("order", ["old_first", "new_first"])
def test_each_record_decodes_with_its_own_schema_version(spark, tmp_path, order):
    from cdcsync.config import load_config

    old = [_message(V1, {"id": i, "at": _micros(AT) // 1000, "price": _decimal("12.34", 2)}) for i in (1, 2)]
    new = [_message(V2, {"id": i, "at": _micros(AT), "price": _decimal("5.6789", 4), "note": "v2"}) for i in (3, 4)]
    values = [old[0], new[0], old[1], new[1]] if order == "old_first" else [new[0], old[0], new[1], old[1]]
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"]}))
    result = sync_rows(spark, cfg, kafka_rows(spark, values))
    assert result.totals()["upserted"] == 4 and result.totals()["bad"] == 0
    want = {1: (AT.replace(microsecond=891000), Decimal("12.3400"), None),
            2: (AT.replace(microsecond=891000), Decimal("12.3400"), None),
            3: (AT, Decimal("5.6789"), "v2"), 4: (AT, Decimal("5.6789"), "v2")}
    for rows in (spark_rows(spark, cfg.sink.path), hudi_rs_rows(cfg.sink.path)):
        got = {r["id"]: (_naive(r["at"]), r["price"], r["note"]) for r in rows}
        assert got == want


def _naive(t: dt.datetime) -> dt.datetime:
    return t.astimezone(dt.UTC).replace(tzinfo=None) if t.tzinfo else t
