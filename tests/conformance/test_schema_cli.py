"""tests/unit/schema/test_schema_cli.py's test of a topic with several source tables, on the corpus's Canal file with a
second table added: one schema per source table."""

from tests.conformance.cdc_fixtures import CORPUS  # noqa: F401 (read by the fixture)
from tests.corpus import corpus_fixture  # noqa: F401
from tests.unit.schema.test_schema_cli import cli, test_a_topic_with_several_tables_gets_one_schema_each  # noqa: F401
