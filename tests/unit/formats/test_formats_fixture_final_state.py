"""Each in-repo CDC file (tests/fixtures/cdc), decoded and replayed with final_state, leaves the table its source
history left. The expected table is the generator's model of the source (tests/fixtures/histories.py): snapshot
rows as inserts, updates taking the newest image, deletes applied, every value of the type the envelope states
(a Decimal from base64 with its scale, a date from days since epoch). The tests that take `corpus` run on the
real-tool corpus too, from tests/conformance/test_formats_fixture_final_state.py (tests/corpus.py).
"""

from __future__ import annotations

from collections import Counter

import pytest

from cdcsync.formats import final_state, get_decoder
from tests.corpus import IN_REPO, Corpus, corpus_fixture, pytest_generate_tests  # noqa: F401 (fixture, module hook)
from tests.fixtures import cdc_cases

CORPUS = IN_REPO
NAMES = cdc_cases.names()


def decoded(corpus: Corpus, name: str, **options):
    decoder = get_decoder(corpus.format_of(name), **options)
    return [ch for key, value in corpus.records(name) for ch in decoder.parse(value, key)]


def test_every_fixture_file_has_a_history(corpus):
    names = set(corpus.names())
    assert names and all(set(covered) == names for covered in corpus.expectations())


def test_final_state_matches_the_source_table(corpus, cdc_file):
    options, key_columns, expected = corpus.final_state(cdc_file)
    state = final_state(decoded(corpus, cdc_file, **options), key_columns)
    assert expected, "the history must leave rows"
    assert set(state) == set(expected)
    for key, row in expected.items():
        assert state[key] == row, key
        for col, value in row.items():  # equal AND the same Python type (Decimal vs float, int vs float)
            assert type(state[key][col]) is type(value), (key, col, state[key][col])


@pytest.mark.parametrize("name", NAMES)
def test_untyped_rows_keep_the_message_values(name):
    # without typed=True every value stays as the JSON holds it: Canal's text, Debezium's base64 and epoch numbers
    state = final_state(decoded(CORPUS, name), cdc_cases.key_columns(name))
    assert state == cdc_cases.final_state(name, typed=False)


@pytest.mark.parametrize("name", NAMES)
def test_changes_name_their_table_and_key(name):
    # Debezium from the message key, Canal from pkNames, Maxwell from primary_key_columns
    rows = [ch for ch in decoded(CORPUS, name) if ch.op != "skip"]
    assert rows
    assert {ch.table for ch in rows} == {cdc_cases.table_name(name)}
    assert all(ch.key_columns == cdc_cases.key_columns(name) for ch in rows)


@pytest.mark.parametrize("name", NAMES)
def test_messages_without_rows_are_skipped_with_their_reason(name):
    history = cdc_cases.case(name).table.history
    deletes = sum(e.op == "delete" for t in history for e in t.events)
    ddl = sum(bool(t.ddl) for t in history)
    fmt = cdc_cases.format_of(name)
    want = Counter({"tombstone": deletes} if fmt == "debezium-json" else {"ddl": ddl})
    if fmt == "maxwell-json":  # bootstrap-start and bootstrap-complete around a bootstrapped table
        want["bootstrap_marker"] = 2 * sum(t.snapshot for t in history)
    got = Counter(ch.skip_reason for ch in decoded(CORPUS, name) if ch.op == "skip")
    assert got == +want
    ops = Counter(ch.op for ch in decoded(CORPUS, name))
    assert ops["delete"] == deletes
    assert ops["upsert"] == sum(e.op != "delete" for t in history for e in t.events)
