"""One rule for secret keys: every key the config loader or the Kafka client redaction used to hide is secret."""

from __future__ import annotations

import pytest

from cdcsync.secrets import is_secret_key


@pytest.mark.parametrize("key", [
    # both old rules
    "sasl.password", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password", "sasl.jaas.config",
    "sasl.oauthbearer.token.endpoint.url", "basic.auth.credentials.source", "client.secret",
    "ssl.keystore.key", "ssl.key.pem", "SASL.PASSWORD",
    # only the config loader's ("ssl.key")
    "ssl.keystore.certificate.chain",
    # only the Kafka client redaction's ("private")
    "ssl.private.key", "private.key",
])
def test_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize("key", [
    "bootstrap.servers", "security.protocol", "sasl.mechanism", "sasl.username", "ssl.ca.location",
    "ssl.certificate.location", "ssl.endpoint.identification.algorithm",
    # a path or a store type names where a secret is, and appears in plain output (the loader used to hide these)
    "ssl.key.location", "ssl.keystore.location", "ssl.keystore.type",
])
def test_keys_that_are_not_secret(key):
    assert not is_secret_key(key)
