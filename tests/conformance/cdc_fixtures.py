"""The real CDC messages of the conformance corpus (README.md there says where each came from): the folder named by
CDCSYNC_FIXTURES, else ../shared/fixtures/cdc beside the repository. Missing, it fails the run, never skips.

CORPUS is this folder as a tests.corpus.Corpus: the unit and integration tests that read the in-repo CDC files run on
it unchanged (the test modules here import them); the expectations were written by reading the files."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conformance import expected_schemas, expected_states
from tests.corpus import Corpus

FIXTURES = Path(os.environ.get("CDCSYNC_FIXTURES", Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "cdc"))

FORMAT_OF = {
    "canal.txt": "canal-json",
    "maxwell.txt": "maxwell-json",
    "debezium-mysql-with-schema.txt": "debezium-json",
    "debezium-mysql-no-schema.txt": "debezium-json",
    "debezium-postgres-no-schema.txt": "debezium-json",
    "debezium-mysql-all-types-with-schema.txt": "debezium-json",
}

ALL_TYPES = "debezium-mysql-all-types-with-schema.txt"
LANDED_KEYS = {ALL_TYPES: ["_id"]}  # sink.primary_key of the engine run; every other file's is id

_LICENSE = re.compile(r"\A\s*/\*.*?\*/", re.S)  # the Paimon file opens with an Apache license comment


def require_corpus() -> Path:
    """The corpus folder; a missing one fails (at collection too), naming where it was looked for."""
    if not FIXTURES.is_dir():
        pytest.fail(f"conformance corpus not found at {FIXTURES}: set CDCSYNC_FIXTURES to the folder of real CDC "
                    "messages (make conformance needs it; make test does not)", pytrace=False)
    return FIXTURES


def messages(name: str) -> list[bytes]:
    """The file's messages as Kafka values: license block stripped, one message per non-blank line."""
    text = _LICENSE.sub("", (require_corpus() / name).read_text(encoding="utf-8"))
    return [line.encode("utf-8") for line in text.splitlines() if line.strip()]


class Conformance(Corpus):
    min_files = 6
    widest = ALL_TYPES
    with_schema = "debezium-mysql-with-schema.txt"
    bad_values = [("maxwell.txt", "weight", "heavy"), ("maxwell.txt", "id", 1.5), ("canal.txt", "id", "one-oh-one"),
                  ("debezium-mysql-with-schema.txt", "name", None), (ALL_TYPES, "_date", "2023-03-23")]

    def names(self):
        require_corpus()
        return sorted(p.name for p in FIXTURES.iterdir() if p.is_file() and p.name != "README.md")

    def expectations(self):
        return [FORMAT_OF, expected_schemas.EXPECTED, expected_states.EXPECTED]

    def format_of(self, name):
        return FORMAT_OF[name]

    def records(self, name):
        return [(None, m) for m in messages(name)]  # values only: no keys, no tombstones

    def expected_schema(self, name):
        return expected_schemas.EXPECTED[name]

    def final_state(self, name):
        return expected_states.EXPECTED[name]

    def rows_decide_types(self, name):
        return FORMAT_OF[name] == "maxwell-json" or "no-schema" in name

    def landed(self, name):
        """The expectation is the pure-Python decoders' final state, an implementation independent of the Spark SQL
        path under test."""
        from cdcsync.formats import final_state, get_decoder

        key = LANDED_KEYS.get(name, ["id"])
        decoder = get_decoder(FORMAT_OF[name], typed=True)
        return key, list(final_state([c for m in messages(name) for c in decoder.parse(m)], key).values())


CORPUS = Conformance()
