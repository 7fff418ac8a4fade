"""[schema] on_type_conflict / on_incompatible: which columns keep their type, decided without a JVM; and the
flattening names run shares with infer-schema."""

from __future__ import annotations

import pytest

from cdcsync.errors import SchemaError
from cdcsync.schema.spark.columns import DBZ_TS_MS, Col
from cdcsync.schema.spark.shape import _check_collisions, _expand
from cdcsync.stages.type_conflicts import Policy, decide, majority_type


def policy(key=("id",), declared=(), incompatible="fail", conflict="widen") -> Policy:
    return Policy(frozenset(key), frozenset(declared), incompatible, conflict)


def test_a_key_column_keeps_its_type_when_schemaless_data_would_widen_it():
    cols, pins, vote = decide([Col("id", "BIGINT")], [Col("id", "STRING")], policy(), rows_typed=True)
    assert cols == [Col("id", "BIGINT")] and vote == []
    assert [(p.column, p.kept, p.seen) for p in pins] == [("id", "BIGINT", "STRING")]
    assert "key columns keep their type" in pins[0].describe()


def test_other_columns_widen_unless_on_type_conflict_is_dead_letter():
    table, batch = [Col("id", "BIGINT"), Col("qty", "BIGINT")], [Col("id", "BIGINT"), Col("qty", "STRING")]
    cols, pins, _ = decide(table, batch, policy(), rows_typed=True)
    assert cols == batch and pins == []
    cols, pins, _ = decide(table, batch, policy(conflict="dead-letter"), rows_typed=True)
    assert cols == table and [p.why for p in pins] == ['on_type_conflict = "dead-letter"']


def test_types_an_envelope_states_are_not_outliers():
    cols, pins, vote = decide([Col("id", "BIGINT")], [Col("id", "STRING")], policy(), rows_typed=False)
    assert cols == [Col("id", "STRING")] and pins == [] and vote == []


def test_on_incompatible_dead_letter_keeps_the_column_and_its_encoding_for_every_format():
    table = [Col("ts", "TIMESTAMP", DBZ_TS_MS)]
    cols, pins, _ = decide(table, [Col("ts", "BOOLEAN")], policy(incompatible="dead-letter"), rows_typed=False)
    assert cols == table and pins[0].why == 'on_incompatible = "dead-letter"'
    cols, pins, _ = decide(table, [Col("ts", "BOOLEAN")], policy(), rows_typed=False)
    assert cols == [Col("ts", "BOOLEAN")] and pins == []  # left to merge, which stops the run (exit 79)


def test_declared_and_narrower_columns_are_left_alone():
    table = [Col("id", "DOUBLE"), Col("p", "BIGINT")]
    cols, pins, vote = decide(table, [Col("id", "BIGINT"), Col("p", "STRING")], policy(declared=("p",)), True)
    assert cols == [Col("id", "BIGINT"), Col("p", "STRING")] and pins == [] and vote == []


def test_new_key_columns_wider_than_a_narrower_type_go_to_the_vote():
    _, _, vote = decide([], [Col("id", "STRING"), Col("name", "STRING"), Col("n", "BIGINT")], policy(), True)
    assert vote == [Col("id", "STRING")]


def test_majority_type_is_the_narrowest_type_most_values_have():
    assert majority_type({"BIGINT": 4000, "DOUBLE": 4000}, 4050, ("BIGINT", "DOUBLE", "BOOLEAN")) == "BIGINT"
    assert majority_type({"BIGINT": 10, "DOUBLE": 3000}, 4050, ("BIGINT", "DOUBLE", "BOOLEAN")) == "DOUBLE"
    assert majority_type({"BIGINT": 50}, 4050, ("BIGINT", "DOUBLE", "BOOLEAN")) is None
    assert majority_type({"BIGINT": 2}, 4, ("BIGINT",)) is None  # a tie is no majority


def test_flattened_names_join_the_path_with_underscores_and_collisions_name_both_paths():
    _check_collisions([("a", "b"), ("c",)])
    with pytest.raises(SchemaError) as e:
        _check_collisions([("a_b",), ("a", "b")])
    assert "'a_b'" in e.value.message and "'a' → 'b'" in e.value.message and e.value.exit_code == 79


def test_an_envelope_object_column_is_replaced_by_its_leaves():
    cols = [Col("id", "BIGINT"), Col("geo", "STRING", "json_text"), Col("x", "STRING")]
    leaves = {"geo": [Col("geo_wkb", "STRING"), Col("geo_srid", "BIGINT")]}
    assert _expand(cols, leaves) == [Col("id", "BIGINT"), Col("geo_wkb", "STRING"), Col("geo_srid", "BIGINT"),
                                     Col("x", "STRING")]


def test_on_type_conflict_is_a_schema_key(tmp_path):
    from cdcsync.config import load_config
    from cdcsync.errors import ConfigError

    path = tmp_path / "c.toml"
    base = '[source]\nbootstrap_servers = "k:9092"\ntopics = ["t"]\nformat = "json"\n[sink]\npath = "/t"\n' \
           'table_name = "t"\n[schema]\n'
    path.write_text(base + 'on_type_conflict = "dead-letter"\n')
    assert load_config(path).schema.on_type_conflict == "dead-letter"
    path.write_text(base + 'on_type_conflict = "drop"\n')
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert "schema.on_type_conflict" in e.value.message and e.value.exit_code == 78
