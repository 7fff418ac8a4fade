"""One body per test, two CDC corpora: the tests that read CDC files take a Corpus (a folder's files, what each must
infer to, decode to and land as) and run unchanged on the in-repo files (IN_REPO, tests/fixtures/cdc: `make
test`) and on the real-tool corpus (tests/conformance/cdc_fixtures.py: `make conformance`).

A test module names its corpus in a global `CORPUS` and imports `corpus_fixture` (the fixture `corpus`) and
`pytest_generate_tests` (the module hook) from here; tests/conformance/ imports the same test functions into modules
whose CORPUS is the conformance corpus. Arguments the hook fills from the module's CORPUS:

- `cdc_file`: once per file;
- `cdc_file, table_type`: once per file, the files taking MERGE_ON_READ and COPY_ON_WRITE in turn;
- `cdc_file, column, bad`: once per (file, column, value) of `bad_values`.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest

from tests.fixtures import cdc_cases
from tests.fixtures.histories import cases

TABLE_TYPES = ("MERGE_ON_READ", "COPY_ON_WRITE")


class Corpus:
    """A folder of CDC record files and the expectations for each; subclasses say where both come from."""

    min_files: int  # at least this many files (a glob that finds none must not pass for "every file")
    widest: str  # the file whose rows have the most columns (the all-types row)
    with_schema: str  # a Debezium file with the schema envelope
    # (file, column, a value the inferred JSON Schema must reject), in order: a Maxwell number given a word, a Maxwell
    # integer id given a fraction, a Canal id given text that is no integer (Canal ids are text, but integer text),
    # None for a column the Debezium envelope says is NOT NULL, a Debezium Date as text (it travels as days)
    bad_values: list[tuple[str, str, object]]

    def names(self) -> list[str]:
        """Every record file in the folder: tests parametrised over this fail when a file lacks expectations."""
        raise NotImplementedError

    def expectations(self) -> list[Collection[str]]:
        """The file names each table of expectations covers (each must be exactly names())."""
        raise NotImplementedError

    def format_of(self, name: str) -> str:
        raise NotImplementedError

    def records(self, name: str) -> list[tuple[bytes | None, bytes | None]]:
        """(key, value) per Kafka record in produce order; None for a missing key or a tombstone."""
        raise NotImplementedError

    def expected_schema(self, name: str) -> tuple[str, list[str] | None, dict[str, str], set[str]]:
        """(table, primary key, {column: type} in message order, NOT NULL columns) that infer-schema must report."""
        raise NotImplementedError

    def final_state(self, name: str) -> tuple[dict, list[str] | None, dict[tuple, dict]]:
        """(decoder options, key columns for final_state, {key: row}) the decoded file must replay to."""
        raise NotImplementedError

    def landed(self, name: str) -> tuple[list[str], list[dict]]:
        """(sink.primary_key, the rows) the table must hold after `run --once` over the file's topic."""
        raise NotImplementedError

    def typed_by_envelope(self, name: str) -> bool:
        """The landed columns must have the Spark types of expected_schema (the file's schema envelope states them)."""
        return False

    def rows_decide_types(self, name: str) -> bool:
        """The file's column types come from its row images' JSON values (no schema envelope, no mysqlType)."""
        fmt = self.format_of(name)
        return fmt in ("maxwell-json", "json") or fmt == "debezium-json" and not self.typed_by_envelope(name)

    def table_types(self, name: str) -> dict[str, str]:
        """{column: Spark DDL type} of the table `run` creates from the file (and infer-schema's table view,
        --json and spark-ddl show): expected_schema's types, except that where the row images decide, a JSON
        string is STRING whatever it reads as (schema/stored.py); Spark 3.5 has no TIME and one TIMESTAMP."""
        text = self.stored_as_text(name)
        spark = {"TIME": "STRING", "TIMESTAMP_LTZ": "TIMESTAMP"}
        return {c: "STRING" if c in text else spark.get(t, t) for c, t in self.expected_schema(name)[2].items()}

    def stored_as_text(self, name: str) -> set[str]:
        """The columns infer-schema reads as dates or times that the table stores as text (rows_decide_types)."""
        temporal = ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "TIME")
        types = self.expected_schema(name)[2]
        return {c for c, t in types.items() if t in temporal} if self.rows_decide_types(name) else set()

    def key_only(self, name: str, row: dict) -> bool:
        """A delete image holding only the key (Postgres REPLICA IDENTITY DEFAULT): not a row of the table."""
        return False

    def messages(self, name: str) -> list[bytes]:
        """The values that are messages (tombstones left out)."""
        return [v for _, v in self.records(name) if v is not None]

    def produce(self, produce, topic: str, name: str) -> int:
        """Produce the file's records in order (keys, values, tombstones) with the `produce` fixture; how many."""
        records = self.records(name)
        produce(topic, [v for _, v in records], keys=[k for k, _ in records])
        return len(records)

    def clean_copy(self, name: str, directory: Path) -> Path:
        """The file's messages one per line, as `infer-schema --from-file` reads them (no keys, no tombstones)."""
        out = directory / name
        out.write_bytes(b"\n".join(self.messages(name)) + b"\n")
        return out


class InRepo(Corpus):
    """tests/fixtures/cdc: every expectation from the generator's model of the source table (cdc_cases)."""

    min_files = 8
    widest = "debezium-2.7-mysql-all-types-schema.txt"
    with_schema = "debezium-1.9-mysql-schema.txt"
    bad_values = [("maxwell-1.x-mysql.txt", "qty", "plenty"), ("maxwell-1.x-mysql.txt", "id", 1.5),
                  ("canal-1.1-mysql.txt", "id", "one"), ("debezium-1.9-mysql-schema.txt", "customer", None),
                  (widest, "c_date", "2024-02-29")]

    def names(self):
        return cdc_cases.names()

    def expectations(self):
        return [cases()]

    def format_of(self, name):
        return cdc_cases.format_of(name)

    def records(self, name):
        return cdc_cases.records(name)

    def expected_schema(self, name):
        return cdc_cases.expected_schema(name)

    def final_state(self, name):
        return cdc_cases.decoder_options(name), cdc_cases.key_columns(name), cdc_cases.final_state(name)

    def landed(self, name):
        return cdc_cases.key_columns(name), list(cdc_cases.final_state(name).values())

    def typed_by_envelope(self, name):
        return cdc_cases.case(name).envelope_nullability

    def key_only(self, name, row):
        return cdc_cases.case(name).key_only_deletes and set(row) == set(cdc_cases.key_columns(name))


IN_REPO = InRepo()


@pytest.fixture(name="corpus")
def corpus_fixture(request) -> Corpus:
    """`corpus`: the test module's CORPUS."""
    return request.module.CORPUS


def pytest_generate_tests(metafunc):
    """Module hook: fills `cdc_file` (with `table_type`, or `column` and `bad`) from the module's CORPUS."""
    if "cdc_file" not in metafunc.fixturenames:
        return
    corpus = metafunc.module.CORPUS
    if "bad" in metafunc.fixturenames:
        metafunc.parametrize("cdc_file, column, bad", corpus.bad_values)
    elif "table_type" in metafunc.fixturenames:
        runs = [(n, TABLE_TYPES[i % 2]) for i, n in enumerate(corpus.names())]
        metafunc.parametrize("cdc_file, table_type", runs, ids=[f"{n}-{t}" for n, t in runs])
    else:
        metafunc.parametrize("cdc_file", corpus.names())
