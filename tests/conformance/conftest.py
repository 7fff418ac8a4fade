"""The conformance suite (`make conformance`): decoders, infer-schema and the engine against the real CDC messages
kept outside the repository (CDCSYNC_FIXTURES, else ../shared/fixtures/cdc). It fails, never skips, when that folder,
Java, the jars or the broker are missing. `make test` does not run it."""

from __future__ import annotations

# the integration suite's real broker (and the OIDC endpoint it trusts) and SparkSession, one each for the session
from tests.integration.conftest import bootstrap, kafka_broker, make_topic, oidc, produce, spark  # noqa: F401

