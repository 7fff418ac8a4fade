"""Java-style client properties → Security, the config errors they can raise, and redaction."""

from __future__ import annotations

import pytest

from cdcsync.errors import ConfigError
from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.security import (
    MASK,
    Flags,
    Security,
    check,
    for_clients,
    from_properties,
    java_properties,
    parse_jaas,
    scrub,
    secret_values,
    with_flags,
)

SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
              'password="p@ss \\"quoted\\" w0rd";')


@pytest.fixture
def ca(tmp_path):
    from devtools.tls import make_ca

    return make_ca(tmp_path / "ca")


@pytest.fixture
def ca_pem(ca):
    return ca.cert_path


def test_defaults_are_plaintext():
    sec = from_properties({})
    assert (sec.protocol, sec.tls, sec.sasl) == ("PLAINTEXT", False, False)
    assert sec.kafka_python_kwargs() == {"security_protocol": "PLAINTEXT"}


def test_jaas_options_are_parsed_with_quotes_and_escapes():
    module, opts = parse_jaas(SCRAM_JAAS)
    assert module == "ScramLoginModule"
    assert opts == {"username": "alice", "password": 'p@ss "quoted" w0rd'}


def test_sasl_scram_from_jaas_maps_to_kafka_python_kwargs():
    sec = from_properties({"security.protocol": "sasl_plaintext", "sasl.mechanism": "SCRAM-SHA-512",
                           "sasl.jaas.config": SCRAM_JAAS})
    assert sec.kafka_python_kwargs() == {
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice", "sasl_plain_password": 'p@ss "quoted" w0rd',
    }


def test_librdkafka_spellings_and_plain_inferred_from_login_module(ca_pem):
    sec = from_properties({"security.protocol": "SASL_SSL", "sasl.username": "bob", "sasl.password": "pw-1",
                           "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;",
                           "ssl.ca.location": str(ca_pem), "ssl.endpoint.identification.algorithm": ""})
    assert (sec.sasl_mechanism, sec.username, sec.password) == ("PLAIN", "bob", "pw-1")
    assert sec.ssl_cafile == str(ca_pem) and sec.ssl_check_hostname is False
    kw = sec.kafka_python_kwargs()
    assert kw["ssl_context"].check_hostname is False and kw["ssl_check_hostname"] is False
    assert len(kw["ssl_context"].get_ca_certs()) == 1  # the given CA only, as a Java client trusts


def test_librdkafka_spellings_become_java_properties_for_spark(ca_pem):
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bob",
             "sasl.password": 'pw "1"', "ssl.ca.location": str(ca_pem)}
    sec, java = for_clients(props)
    assert java == {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                        'username="bob" password="pw \\"1\\"";',
                    "ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca_pem)}
    assert parse_jaas(java["sasl.jaas.config"])[1]["password"] == sec.password == 'pw "1"'
    # a JAAS line without credentials beside them (the planner takes sasl.username/password): Java gets them too
    java = java_properties({**props, "sasl.mechanism": "PLAIN", "sasl.jaas.config":
                            "org.apache.kafka.common.security.plain.PlainLoginModule required;"})
    assert java["sasl.jaas.config"] == 'org.apache.kafka.common.security.plain.PlainLoginModule required ' \
                                      'username="bob" password="pw \\"1\\"";'
    with pytest.raises(ConfigError, match="different credentials"):
        java_properties({**props, "sasl.jaas.config": 'x.PlainLoginModule required username="eve";'})


@pytest.mark.parametrize("props, key", [
    ({"ssl.certificate.location": "c.pem", "ssl.key.location": "k.pem"}, "ssl.certificate.location"),
    ({"enable.ssl.certificate.verification": "false"}, "enable.ssl.certificate.verification"),
])
def test_librdkafka_settings_a_java_client_cannot_honour_are_refused(props, key):
    with pytest.raises(ConfigError) as e:
        java_properties({"security.protocol": "SSL", **props})
    assert e.value.facts["key"] == key and e.value.hint


def test_a_mechanism_the_offset_planner_cannot_use_is_refused():
    with pytest.raises(ConfigError, match="offset planner") as e:
        for_clients({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"})  # OAUTHBEARER: test_token_auth
    assert e.value.facts["key"] == "sasl.mechanism"


def test_pem_truststore_location_is_the_ca_file(ca_pem):
    sec = from_properties({"security.protocol": "SSL", "ssl.truststore.location": str(ca_pem),
                           "ssl.truststore.type": "PEM", "ssl.endpoint.identification.algorithm": "https"})
    assert sec.ssl_cafile == str(ca_pem) and sec.ssl_check_hostname is True


def test_a_store_that_cannot_be_read_is_a_config_error_naming_key_and_fix(tmp_path, ca_pem):
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02\x00\x00\x00\x01 truncated")
    with pytest.raises(ConfigError, match="truncated") as e:
        from_properties({"security.protocol": "SSL", "ssl.truststore.location": str(jks)})
    assert e.value.exit_code == ExitCode.CONFIG and e.value.facts["key"] == "ssl.truststore.location"
    with pytest.raises(ConfigError, match="PEM file but ssl.truststore.type is JKS") as e:  # Kafka's default type
        from_properties({"security.protocol": "SSL", "ssl.truststore.location": str(ca_pem)})
    assert e.value.hint == "set ssl.truststore.type = PEM"


def test_pkcs12_key_and_trust_stores_are_read_like_a_java_client(tmp_path, ca):
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

    from devtools.tls import make_server_cert

    client = make_server_cert(ca, tmp_path / "client", client=True)
    store = tmp_path / "client.p12"
    store.write_bytes(pkcs12.serialize_key_and_certificates(b"c", client.key, client.cert, [ca.cert],
                                                            BestAvailableEncryption(b"Store-pw-9")))
    props = {"security.protocol": "SSL", "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(store),
             "ssl.keystore.password": "Store-pw-9", "ssl.truststore.type": "PEM", "ssl.truststore.location":
             str(ca.cert_path)}
    sec = from_properties(props)
    assert "PRIVATE KEY" in sec.ssl_keystore_pem and "Store-pw-9" not in repr(sec)
    sec.ssl_context()  # key and chain load
    with pytest.raises(ConfigError, match="password") as e:
        from_properties({**props, "ssl.keystore.password": "wrong"})
    assert e.value.facts["key"] == "ssl.keystore.location"


def test_missing_ca_file_is_a_config_error():
    with pytest.raises(ConfigError, match="ssl.ca.location"):
        from_properties({"security.protocol": "SSL", "ssl.ca.location": "/nonexistent/ca.pem"})


def test_unknown_security_protocol_is_a_config_error():
    with pytest.raises(ConfigError, match="PLAINTXT") as e:
        from_properties({"security.protocol": "PLAINTXT"})
    assert e.value.exit_code == 78


def test_scram_login_module_without_mechanism_is_a_config_error():
    with pytest.raises(ConfigError, match="sasl.mechanism is not set"):
        from_properties({"security.protocol": "SASL_SSL", "sasl.jaas.config": SCRAM_JAAS})


def test_password_mechanism_without_credentials_fails_check():
    sec = from_properties({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"})
    with pytest.raises(ConfigError, match="needs a username and a password"):
        check(sec)


def test_sasl_flags_without_a_sasl_protocol_fail_check_but_config_sasl_keys_are_ignored_like_java():
    with pytest.raises(ConfigError, match="clients ignore them"):
        check(with_flags(Security(), Flags(sasl_mechanism="PLAIN", sasl_username="u", sasl_password="p")))
    sec = check(from_properties({"sasl.mechanism": "PLAIN", "sasl.jaas.config": SCRAM_JAAS}))
    assert (sec.protocol, sec.sasl_mechanism, sec.username, sec.password) == ("PLAINTEXT", None, None, None)


def test_flags_override_the_config_one_setting_at_a_time(ca_pem):
    base = from_properties({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                            "sasl.jaas.config": SCRAM_JAAS.replace("Scram", "Plain")}, "cfg.toml")
    sec = with_flags(base, Flags(sasl_password="from-flag", ssl_check_hostname=False))
    assert (sec.username, sec.password, sec.protocol) == ("alice", "from-flag", "SASL_PLAINTEXT")
    assert sec.origin == "cfg.toml and command line" and sec.ssl_check_hostname is False
    assert with_flags(base, Flags()) is base
    tls = with_flags(Security(), Flags(security_protocol="ssl", ssl_cafile=str(ca_pem)))
    assert (tls.protocol, tls.ssl_cafile, tls.origin) == ("SSL", str(ca_pem), "command line")
    with pytest.raises(ConfigError):
        with_flags(Security(), Flags(security_protocol="TLS"))


def test_secrets_stay_out_of_repr_and_describe():
    sec = from_properties({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
                           "sasl.jaas.config": SCRAM_JAAS, "ssl.key.password": "key-secret"})
    text = repr(sec) + str(sec.describe())
    assert "w0rd" not in text and "key-secret" not in text
    assert sec.describe()["sasl_password"] == MASK and sec.describe()["sasl_username"] == "alice"
    assert set(sec.secrets()) == {'p@ss "quoted" w0rd', "key-secret"}


def test_scrub_replaces_secrets_anywhere_in_nested_data():
    data = {"a": ["the password is hunter2!", {"b": "hunter2"}], "n": 3, "ok": "nothing here"}
    assert scrub(data, ["hunter2", ""]) == {"a": [f"the password is {MASK}!", {"b": MASK}], "n": 3,
                                            "ok": "nothing here"}
    assert scrub("x", []) == "x"


def test_secret_values_include_the_password_inside_a_jaas_line():
    found = secret_values({"sasl.jaas.config": SCRAM_JAAS, "ssl.key.password": "kp", "bootstrap": "x"})
    assert set(found) == {SCRAM_JAAS, 'p@ss "quoted" w0rd', "kp"}
