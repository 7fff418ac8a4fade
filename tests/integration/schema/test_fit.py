"""Known columns (schema/spark/fit.py): a batch whose rows all fit them is typed without inference over all its
records, and that is only allowed when inference would have given the same columns. Property-checked against
Spark's own inference, and end to end: the fitting batches skip inference, a misfit is inferred again."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from cdcsync.schema.spark import fit
from cdcsync.schema.spark.columns import Col, typed_row
from cdcsync.schema.spark.evolution import merge
from cdcsync.schema.spark.infer import infer_batch_columns
from tests.integration.engine.helpers import Events, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

_ENV = ("_op string, _row string, _key_row string, _schema string, _types string, _kafka_topic string, "
        "_kafka_partition int, _kafka_offset long")
_VALUES = st.one_of(
    st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
    st.sampled_from(["5", "-1", "1.0", "NaN", "Infinity", "true", "x", "", "{y", "[z", "é"]),
    st.sampled_from([{"n": 1}, [1, 2], {}, []]),
)
_ROWS = st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), _VALUES, min_size=1, max_size=3),
                 min_size=1, max_size=8)
_TYPES = st.sampled_from(["BIGINT", "DOUBLE", "BOOLEAN", "STRING"])
_COLS = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), _TYPES), min_size=1, max_size=3,
                 unique_by=lambda t: t[0])
_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# values each type's column holds, tricky ones among them (a STRING column's "5" or "NaN" is text); text that opens
# like an object or an array is left out: the fit check counts it a misfit, the safe side (test_each_kind_of_misfit)
_FITTING = {
    "BIGINT": st.integers(-2**63, 2**63 - 1),
    "DOUBLE": st.floats(allow_nan=False, allow_infinity=False),
    "BOOLEAN": st.booleans(),
    "STRING": st.one_of(st.text(max_size=4).filter(lambda t: not t.lstrip(" ").startswith(("{", "["))),
                        st.sampled_from(["5", "-1", "1.0", "NaN", "Infinity", "true", "é"])),
}


def _fitting_rows(table: list[tuple[str, str]]):
    """Rows whose fields are among `table`'s columns and hold values of their types (or null); none when the table
    has no columns."""
    if not table:
        return st.just([])
    fields = {name: st.one_of(st.none(), _FITTING[kind]) for name, kind in table}
    row = st.sets(st.sampled_from(sorted(fields)), min_size=1).flatmap(
        lambda names: st.fixed_dictionaries({n: fields[n] for n in names}))
    return st.lists(row, min_size=1, max_size=8)


def _env(spark, rows: list[dict]):
    data = [("u", json.dumps(r), None, None, None, "t", 0, i) for i, r in enumerate(rows)]
    return spark.createDataFrame(data, _ENV)


def _misfits(env, cols: list[Col]) -> int:
    return fit.with_typed_parse(env, cols).where(fit.misfit(cols)).count()


@settings(_SETTINGS, max_examples=6)  # three Spark jobs an example, each example checked: 12 took ~50 s
@given(table=_COLS, data=st.data())
def test_a_batch_that_fits_its_first_rows_columns_infers_to_exactly_them(spark, table, data):
    first = data.draw(_fitting_rows(table))
    sampled = infer_batch_columns(_env(spark, first), "json").columns
    rest = data.draw(_fitting_rows([(c.name, c.type) for c in sampled if c.type in _FITTING]))
    env = _env(spark, first + rest)
    assume(fit.checkable(sampled) and not _misfits(env, sampled))  # hypothesis fails when too few examples fit
    assert infer_batch_columns(env, "json").columns == sampled


@settings(_SETTINGS, max_examples=10)  # two Spark jobs an example, each example checked: 25 took ~45 s
@given(table=_COLS, data=st.data())
def test_a_batch_that_fits_the_tables_columns_changes_none_of_them(spark, table, data):
    cols = [Col(n, t) for n, t in table]
    env = _env(spark, data.draw(_fitting_rows(table)))
    assert not _misfits(env, cols)
    assert merge(cols, infer_batch_columns(env, "json").columns, {}) == (cols, [])


@_SETTINGS
@given(table=_COLS, data=st.data())
def test_a_fitting_row_is_typed_as_the_full_way_types_it(spark, table, data):
    """Rows of any values beside rows that fit: each row the check lets through is typed as the full way types it."""
    cols = [Col(n, t) for n, t in table]
    fitting = data.draw(_fitting_rows(table))
    env = fit.with_typed_parse(_env(spark, fitting + data.draw(_ROWS)), cols)
    full, cast_bad = typed_row(F.col("_row"), cols)
    got = env.where(~fit.misfit(cols)).select(F.struct(*fit.typed(cols)).alias("kept"), F.struct(*full).alias("full"),
                                              cast_bad.alias("bad"), "_kafka_offset").collect()
    assert set(range(len(fitting))) <= {r["_kafka_offset"] for r in got}
    for r in got:
        assert r["kept"] == r["full"] and r["bad"] == []


# a declared type the sampled one's values read as: itself, text, or a DOUBLE over integers
_DECLARABLE = {"BIGINT": ["BIGINT", "DOUBLE", "STRING"], "DOUBLE": ["DOUBLE", "STRING"],
               "BOOLEAN": ["BOOLEAN", "STRING"], "STRING": ["STRING"]}


@settings(_SETTINGS, max_examples=6)  # three Spark jobs an example, as the test above
@given(table=_COLS, data=st.data())
def test_with_declared_types_a_batch_that_fits_its_first_rows_columns_gets_the_columns_the_full_way_gives(
        spark, table, data):
    """[schema.columns] types win in both ways (merge): rows that fit the sample's columns typed as declared give
    the columns inference over all of them, merged with the same declarations, gives."""
    first = data.draw(_fitting_rows(table))
    sampled = infer_batch_columns(_env(spark, first), "json").columns
    declared = {c.name: data.draw(st.sampled_from(_DECLARABLE[c.type]))
                for c in sampled if c.type in _DECLARABLE and data.draw(st.booleans())}
    kept = merge([], sampled, declared)[0]
    rest = data.draw(_fitting_rows([(c.name, c.type) for c in kept if c.type in _FITTING]))
    env = _env(spark, first + rest)
    assume(fit.checkable(kept) and not _misfits(env, kept))
    assert merge([], infer_batch_columns(env, "json").columns, declared)[0] == kept


@pytest.mark.parametrize("text", [
    '{"id": 1, "qty": "5"}',  # a quoted number in a BIGINT column
    '{"id": 1, "qty": 1.0}',  # a fraction's notation
    '{"id": 1, "qty": 1, "extra": null}',  # a field the columns lack, even when null
    '{"id": 1, "qty": 1, "name": {"first": "a"}}',  # an object in a STRING column
    '{"id": 1, "\\u0071ty": "2"}',  # a name spelt with an escape
    '{"id": 1, "qty": 99999999999999999999}',  # past BIGINT: inferred as a DECIMAL
    '{"id": 1, "score": "NaN"}',  # a DOUBLE reads a quoted NaN, which infers as STRING
    '{"id": 1, "ok": "true"}',  # a quoted boolean
    '{"id": 1, "qty": 2, "qty": "x"}',  # a name twice
])
def test_each_kind_of_misfit_is_caught(spark, text):
    cols = [Col("id", "BIGINT"), Col("qty", "BIGINT"), Col("name", "STRING"), Col("score", "DOUBLE"),
            Col("ok", "BOOLEAN")]
    rows = [("u", text, None, None, None, "t", 0, 0),
            ("u", json.dumps({"id": 1, "qty": -3, "name": "x", "score": 2, "ok": False}), None, None, None, "t", 0, 1)]
    env = spark.createDataFrame(rows, _ENV)
    assert [r["_kafka_offset"] for r in fit.with_typed_parse(env, cols).where(fit.misfit(cols)).collect()] == [0]


def _count_inferences(monkeypatch) -> list[int]:
    from cdcsync.stages import typed

    calls, real = [], typed.shape.batch_columns

    def counted(env, cfg):
        calls.append(1)
        return real(env, cfg)

    monkeypatch.setattr(typed.shape, "batch_columns", counted)
    return calls


def test_batches_that_fit_are_typed_with_the_known_columns(spark, bootstrap, make_topic, produce, tmp_path,
                                                           monkeypatch):
    rows = [{"id": i, "qty": i * 10, "name": f"n{i}"} for i in range(9)] + [{"id": 2, "qty": None, "name": "b"}]
    topic = make_topic()
    produce(topic, rows)
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.max_records_per_batch": 4})
    inferred, events = _count_inferences(monkeypatch), Events()
    summary = run_once(cfg, spark, events)

    assert summary.batches == 3 and inferred == [] and not events.of("columns_inferred")
    want = {i: (i * 10, f"n{i}") for i in range(9)} | {2: (None, "b")}
    for read in (spark_rows(spark, str(tmp_path / "table")), hudi_rs_rows(str(tmp_path / "table"))):
        assert {r["id"]: (r["qty"], r["name"]) for r in read} == want


def test_batches_with_declared_types_that_fit_are_typed_with_the_known_columns(spark, bootstrap, make_topic, produce,
                                                                              tmp_path, monkeypatch):
    """[schema.columns] no longer sends every batch the full way: a declared DOUBLE over integers and a declared
    STRING over numbers are typed as declared by the one typed parse; a declared type it cannot check (DECIMAL)
    still takes the full way, batch by batch."""
    rows = [{"id": i, "qty": i * 10, "code": i + 100, "name": f"n{i}"} for i in range(9)]
    want = {i: (float(i * 10), str(i + 100), f"n{i}") for i in range(9)}
    inferred = _count_inferences(monkeypatch)
    for declared, full_way in (({"qty": "DOUBLE", "code": "STRING"}, False),
                               ({"qty": "DECIMAL(12,2)", "code": "STRING"}, True)):
        folder = tmp_path / ("decimal" if full_way else "checkable")
        folder.mkdir()
        inferred.clear()
        topic = make_topic()
        produce(topic, rows)
        cfg = write_config(folder, bootstrap, topic, "json", "MERGE_ON_READ",
                           **{"sink.primary_key": ["id"], "run.max_records_per_batch": 4, "schema.columns": declared})
        events = Events()
        summary = run_once(cfg, spark, events)

        assert summary.batches == 3 and inferred == ([1, 1, 1] if full_way else [])
        assert not events.of("columns_inferred")
        types = dict(spark.read.format("hudi").load(str(folder / "table")).dtypes)
        assert (types["qty"], types["code"]) == (("decimal(12,2)" if full_way else "double"), "string")
        for read in (spark_rows(spark, str(folder / "table")), hudi_rs_rows(str(folder / "table"))):
            assert {r["id"]: (float(r["qty"]), r["code"], r["name"]) for r in read} == want


def test_a_row_outside_the_sampled_columns_makes_the_batch_inferred_from_all_rows(
        spark, bootstrap, make_topic, produce, tmp_path, monkeypatch):
    monkeypatch.setattr(fit, "SAMPLE_ROWS", 2)
    rows = [{"id": 0, "qty": 1}, {"id": 1, "qty": 2}, {"id": 2, "qty": 2.5, "color": "red"}]
    topic = make_topic()
    produce(topic, rows)
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"]})
    inferred, events = _count_inferences(monkeypatch), Events()
    summary = run_once(cfg, spark, events)

    assert summary.batches == 1 and inferred == [1]
    assert [e["misfits"] for e in events.of("columns_inferred")] == [1]  # the one row with qty 2.5 and color
    df = spark.read.format("hudi").load(str(tmp_path / "table"))
    assert dict(df.dtypes)["qty"] == "double"
    want = {0: (1.0, None), 1: (2.0, None), 2: (2.5, "red")}
    for read in (spark_rows(spark, str(tmp_path / "table")), hudi_rs_rows(str(tmp_path / "table"))):
        assert {r["id"]: (r["qty"], r["color"]) for r in read} == want


def _carrying_schema(op: str, after: dict) -> dict:
    """A Debezium change in JsonConverter's schemas.enable form (BIGINT and STRING columns: checkable ones)."""
    fields = [{"type": "int64", "optional": False, "field": "id"},
              {"type": "string", "optional": True, "field": "name"}]
    image = {"type": "struct", "fields": fields, "optional": True, "name": "db.t.Value"}
    schema = {"type": "struct", "name": "db.t.Envelope", "optional": False,
              "fields": [{**image, "field": "before"}, {**image, "field": "after"},
                         {"type": "string", "optional": False, "field": "op"},
                         {"type": "int64", "optional": True, "field": "ts_ms"}]}
    return {"schema": schema, "payload": {"before": None, "after": after, "op": op, "ts_ms": 1}}


def test_a_table_typed_from_a_carried_schema_is_not_tried_with_its_columns_after_a_restart(
        spark, bootstrap, make_topic, produce, tmp_path, monkeypatch):
    """Its records would not fit (they carry a schema): trying them cost a whole pass in every new process."""
    from cdcsync.engine import batch

    topic = make_topic()
    produce(topic, [_carrying_schema("c", {"id": i, "name": f"n{i}"}) for i in range(3)])
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", "MERGE_ON_READ", **{"sink.primary_key": ["id"]})
    run_once(cfg, spark, Events())
    produce(topic, [_carrying_schema("u", {"id": 1, "name": "b"})])
    tried, real = [], fit.kept_columns
    monkeypatch.setattr(batch.fit, "kept_columns", lambda *a: tried.append(1) or real(*a))
    events = Events()
    summary = run_once(cfg, spark, events)  # a new process's pipeline: the table's state comes from its commit

    assert summary.batches == 1 and tried == [] and not events.of("columns_inferred")
    for read in (spark_rows(spark, str(tmp_path / "table")), hudi_rs_rows(str(tmp_path / "table"))):
        assert {r["id"]: r["name"] for r in read} == {0: "n0", 1: "b", 2: "n2"}
