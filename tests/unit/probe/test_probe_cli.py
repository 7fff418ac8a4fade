"""The probe command's own errors, before any connection: usage (2) and configuration (78), never echoing secrets."""

from __future__ import annotations

import json

import pytest

from tests.cli import cdcsync


def run(*args: str) -> tuple[int, str, str]:
    p = cdcsync("probe", *args, timeout=60, jvm_free=True)
    return p.returncode, p.stdout, p.stderr


def test_without_bootstrap_servers_is_a_usage_error():
    code, out, err = run()
    assert code == 2 and out == "" and "--bootstrap-servers" in err


@pytest.mark.parametrize("value", ["localhost", "host:port", "h:0"])
def test_malformed_bootstrap_is_a_usage_error(value):
    code, _, err = run("-b", value)
    assert code == 2 and "host:port" in err


def test_unknown_option_is_a_usage_error():
    assert run("-b", "h:1", "--no-such-flag")[0] == 2


def test_bad_security_flag_is_a_config_error():
    code, out, err = run("-b", "h:1", "--security-protocol", "TLS")
    assert code == 78 and out == "" and "--security-protocol" in err


def test_sasl_without_password_is_a_config_error_and_json_says_so():
    code, out, _ = run("-b", "h:1", "--security-protocol", "SASL_PLAINTEXT",
                       "--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--json")
    data = json.loads(out)
    assert code == 78 and data["exit_code"] == 78 and data["status"] == "error"
    assert "needs a username and a password" in data["message"]


def test_missing_config_file_is_a_config_error(tmp_path):
    code, _, err = run("--config", str(tmp_path / "nope.toml"))
    assert code == 78 and "does not exist" in err


def test_config_error_never_echoes_the_password(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("""
[source]
bootstrap_servers = "127.0.0.1:9"
format = "json"
topics = ["t"]
[source.properties]
"security.protocol" = "SASL_PLAINTEXT"
"sasl.jaas.config" = 'ScramLoginModule required username="u" password="Zq-9-secret";'
[sink]
path = "/tmp/t"
table_name = "t"
""")
    for extra in ([], ["--json"]):
        code, out, err = run("--config", str(cfg), *extra)
        assert code == 78 and "sasl.mechanism" in out + err
        assert "Zq-9-secret" not in out + err


def test_unreadable_ca_is_a_config_error_before_connecting(tmp_path):
    bad = tmp_path / "ca.pem"
    bad.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    code, out, err = run("-b", "localhost:1", "--security-protocol", "SSL",
                         "--ssl-cafile", str(bad))
    assert code == 78 and out == "" and "cannot load the TLS files" in err
