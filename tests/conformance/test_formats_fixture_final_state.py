"""Each real fixture file, decoded and replayed with final_state, leaves the table the source database held
(tests/unit/formats/test_formats_fixture_final_state.py's tests, with the tables of expected_states.py)."""

from __future__ import annotations

from cdcsync.formats import final_state, get_decoder
from tests.conformance.cdc_fixtures import CORPUS, messages  # noqa: F401 (CORPUS: read by the fixture and the hook)
from tests.corpus import corpus_fixture, pytest_generate_tests  # noqa: F401
from tests.unit.formats.test_formats_fixture_final_state import (  # noqa: F401
    test_every_fixture_file_has_a_history as test_every_fixture_file_has_expectations,
)
from tests.unit.formats.test_formats_fixture_final_state import test_final_state_matches_the_source_table  # noqa: F401


def test_canal_untyped_rows_keep_the_text_values():
    changes = [ch for m in messages("canal.txt") for ch in get_decoder("canal-json").parse(m)]
    state = final_state(changes)  # Canal carries pkNames: no key_columns needed
    assert state[("101",)] == {"id": "101", "name": "scooter", "description": "Small 2-wheel scooter",
                               "weight": "5.17"}
    assert ("102",) not in state and ("111",) not in state
