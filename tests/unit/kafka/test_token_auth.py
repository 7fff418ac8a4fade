"""OAUTHBEARER (OIDC client credentials) and AWS_MSK_IAM from [source.properties] in Kafka's own names, for both
clients: the Java settings Spark's kafka-clients 3.4.1 gets, the kafka-python settings the planner and probe get (a
token provider against a real local token endpoint; MSK's request signed with a profile's credentials), the config
errors, and that no secret is ever shown."""

from __future__ import annotations

import base64
import json

import pytest

from cdcsync.errors import ConfigError
from cdcsync.exit_codes import ExitCode
from cdcsync.kafka import msk
from cdcsync.kafka.oidc import LOGIN_HANDLER, TokenError, TokenProvider
from cdcsync.kafka.security import for_clients, from_properties, java_properties, scrub, secret_values
from devtools.local_kafka import free_port
from devtools.oidc import OidcServer
from tests.cli import cdcsync

SECRET = "Client-secret-0a8e7f"
OAUTH_JAAS = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="planner" '
              f'clientSecret="{SECRET}" scope="kafka.read";')
MSK_JAAS = 'software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName="lake";'


@pytest.fixture
def idp():
    server = OidcServer({"planner": SECRET}, audience="kafka").start()
    yield server
    server.stop()


def _oauth(url: str, **more) -> dict:
    return {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.token.endpoint.url": url, "sasl.jaas.config": OAUTH_JAAS, **more}


def _msk(**more) -> dict:
    return {"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM", "sasl.jaas.config": MSK_JAAS, **more}


# ---- OAUTHBEARER -----------------------------------------------------------------------------------------------

def test_oauthbearer_reads_kafkas_names_and_hides_the_secret():
    sec = from_properties(_oauth("https://idp.example/oauth2/token"))
    assert (sec.oauth.token_url, sec.oauth.client_id, sec.oauth.scope) == \
        ("https://idp.example/oauth2/token", "planner", "kafka.read")
    assert sec.secrets() == [SECRET] and SECRET not in repr(sec) and SECRET not in json.dumps(sec.describe())
    assert sec.describe()["sasl_oauthbearer_client_secret"] == "****"


def test_spark_gets_kafka_3_4s_oidc_login_handler_and_the_jaas_line_as_given():
    java = java_properties(_oauth("https://idp.example/token"))
    assert java["sasl.login.callback.handler.class"] == LOGIN_HANDLER == \
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
    assert java["sasl.jaas.config"] == OAUTH_JAAS and java["sasl.mechanism"] == "OAUTHBEARER"
    assert java["sasl.oauthbearer.token.endpoint.url"] == "https://idp.example/token"
    alias = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"  # 3.4's old name
    assert java_properties(_oauth("https://i/t", **{"sasl.login.callback.handler.class": alias}))[
        "sasl.login.callback.handler.class"] == alias


@pytest.mark.parametrize("props, key, words", [
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "sasl.oauthbearer.token.endpoint.url",
     "client credentials only"),
    (_oauth("https://i/t", **{"sasl.jaas.config": OAUTH_JAAS.replace(f' clientSecret="{SECRET}"', "")}),
     "sasl.jaas.config", "needs clientId and clientSecret"),
    (_oauth("file:///tmp/token.jwt"), "sasl.oauthbearer.token.endpoint.url", "http(s) URL"),
    (_oauth("https://i/t", **{"sasl.login.callback.handler.class": "com.example.MyHandler"}),
     "sasl.login.callback.handler.class", "not as this class"),
])
def test_oauthbearer_settings_one_client_cannot_honour_are_refused(props, key, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")) as e:
        for_clients(props)
    assert e.value.facts["key"] == key and e.value.exit_code == ExitCode.CONFIG
    assert SECRET not in e.value.message + (e.value.hint or "")


def test_the_planners_token_provider_asks_the_endpoint_once_and_caches(idp):
    sec, _ = for_clients(_oauth(idp.token_url))
    kw = sec.kafka_python_kwargs()
    assert kw["sasl_mechanism"] == "OAUTHBEARER" and isinstance(kw["sasl_oauth_token_provider"], TokenProvider)
    provider = kw["sasl_oauth_token_provider"]
    token = provider.token()
    assert provider.token() == token and idp.issued == 1  # fetched by kafka_python_kwargs, then cached
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert (claims["sub"], claims["aud"], claims["scope"]) == ("planner", "kafka", "kafka.read")


def test_a_refused_client_names_the_endpoints_answer_never_the_secret(idp):
    sec, _ = for_clients(_oauth(idp.token_url, **{"sasl.jaas.config": OAUTH_JAAS.replace(SECRET, "wrong-0bb1")}))
    with pytest.raises(TokenError) as e:
        sec.kafka_python_kwargs()
    assert e.value.kind == "refused"
    assert e.value.message == f"the token endpoint {idp.token_url} answered HTTP 401 invalid_client: client " \
                              "authentication failed"


def test_an_unreachable_endpoint_is_named(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/token"
    with pytest.raises(TokenError) as e:
        TokenProvider(from_properties(_oauth(url)).oauth, timeout=2).token()
    assert e.value.kind == "unreachable" and url in e.value.message


def test_a_token_urls_user_info_is_its_only_secret():
    props = _oauth("https://svc:Url-pw-77@idp.example/token")
    assert set(secret_values(props)) >= {SECRET, "svc:Url-pw-77"}
    assert scrub("asked https://idp.example/token", secret_values(_oauth("https://idp.example/token"))) == \
        "asked https://idp.example/token"
    assert from_properties(props).oauth.endpoint == "https://idp.example/token"


# ---- AWS_MSK_IAM -----------------------------------------------------------------------------------------------

@pytest.fixture
def aws_profile(tmp_path, monkeypatch):
    """A real botocore profile `lake` in private files; the default chain sees no other credentials."""
    (tmp_path / "credentials").write_text("[lake]\naws_access_key_id = AKIALAKE\naws_secret_access_key = "
                                          "Aws-secret-1f\n")
    (tmp_path / "config").write_text("[profile lake]\nregion = eu-west-1\n")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION",
              "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    from kafka.sasl import SASL_MECHANISMS

    kept = SASL_MECHANISMS["AWS_MSK_IAM"]
    yield "lake"
    SASL_MECHANISMS["AWS_MSK_IAM"] = kept


def test_msk_iam_gives_spark_amazons_settings():
    java = java_properties(_msk())
    assert java["sasl.mechanism"] == "AWS_MSK_IAM" and java["sasl.jaas.config"] == MSK_JAAS
    assert java["sasl.client.callback.handler.class"] == "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
    bare = java_properties({"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM"})
    assert bare["sasl.jaas.config"] == "software.amazon.msk.auth.iam.IAMLoginModule required;"


def test_msk_iam_planner_signs_with_the_profiles_credentials(aws_profile):
    from kafka.sasl import get_sasl_mechanism

    sec, _ = for_clients(_msk())
    assert sec.aws_profile == "lake" and sec.describe()["aws_profile"] == "lake"
    assert sec.kafka_python_kwargs()["sasl_mechanism"] == "AWS_MSK_IAM"
    mech = get_sasl_mechanism("AWS_MSK_IAM")(host="b-1.lake.kafka.eu-west-1.amazonaws.com",
                                             security_protocol="SASL_SSL")
    payload = json.loads(mech.auth_bytes())
    assert payload["x-amz-credential"].startswith("AKIALAKE/") and "/eu-west-1/kafka-cluster/" in \
        payload["x-amz-credential"]
    assert payload["host"] == "b-1.lake.kafka.eu-west-1.amazonaws.com" and "Aws-secret-1f" not in json.dumps(payload)


def test_msk_iam_default_chain_without_credentials_is_named(aws_profile, monkeypatch):
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    mech = msk.mechanism(None)(host="b-1", security_protocol="SASL_SSL")
    with pytest.raises(msk.CredentialsError, match="no AWS credentials from the default AWS credential chain"):
        mech.auth_bytes()


@pytest.mark.parametrize("props, key, words", [
    (_msk(**{"security.protocol": "SASL_PLAINTEXT"}), "security.protocol", "needs security.protocol = SASL_SSL"),
    (_msk(**{"sasl.jaas.config": 'software.amazon.msk.auth.iam.IAMLoginModule required awsRoleArn="arn:aws:iam::1:'
                                 'role/r";'}), "sasl.jaas.config", "sets awsRoleArn"),
    (_msk(**{"sasl.client.callback.handler.class": "com.example.Other"}), "sasl.client.callback.handler.class",
     "com.example.Other"),
])
def test_msk_iam_settings_the_planner_cannot_mirror_are_refused(props, key, words):
    with pytest.raises(ConfigError, match=words) as e:
        for_clients(props)
    assert e.value.facts["key"] == key


def test_msk_iam_without_botocore_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(msk, "available", lambda: False)
    with pytest.raises(ConfigError, match="botocore") as e:
        for_clients(_msk())
    assert "cdcsync[msk]" in e.value.hint


@pytest.mark.parametrize("props", [_msk(), _oauth("https://idp.example/oauth2/token")], ids=["msk-iam", "oauthbearer"])
def test_validate_accepts_both_without_a_jvm_or_a_network(props, tmp_path):
    from tests.integration.engine.helpers import write_config

    config = write_config(tmp_path, "b-1.example:9098", "orders", "json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"], "source.properties": props})
    v = cdcsync("validate", config, jvm_free=True)
    assert v.returncode == 0, v.stderr
    assert SECRET not in v.stdout + v.stderr
