"""infer-schema against the real Kafka broker on every real fixture file: tests/integration/test_infer_schema_cli.py's
tests that take `corpus`, on the conformance corpus."""

import pytest

from tests.conformance.cdc_fixtures import CORPUS  # noqa: F401 (read by the fixture and the hook)
from tests.corpus import corpus_fixture, pytest_generate_tests  # noqa: F401
from tests.integration.test_infer_schema_cli import (  # noqa: F401
    test_infers_each_fixture_topic,
    test_json_schema_validates_every_record_on_the_topic,
)

pytestmark = pytest.mark.integration
