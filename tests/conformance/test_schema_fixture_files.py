"""tests/unit/schema/test_schema_fixture_files.py's tests (infer-schema's schemas, output, JSON Schema round trip,
time for 10,000 messages) on every file of the conformance corpus."""

from tests.conformance.cdc_fixtures import CORPUS  # noqa: F401 (read by the fixture and the hook)
from tests.corpus import corpus_fixture, pytest_generate_tests  # noqa: F401
from tests.unit.schema.test_schema_fixture_files import (  # noqa: F401
    test_cli_prints_the_expected_schema,
    test_engine_infers_the_expected_schema,
    test_every_fixture_file_has_an_expected_schema,
    test_infer_schema_never_starts_a_jvm,
    test_json_schema_output_validates_the_topics_records,
    test_json_schema_rejects_records_of_another_shape,
    test_ten_thousand_messages_in_under_two_seconds,
)
