"""The probe's OAUTHBEARER and AWS_MSK_IAM hops without a broker: which hop failed (the token endpoint or the broker),
its exit code and fix, and the token hop against a real local token endpoint."""

from __future__ import annotations

import time

import pytest

from cdcsync.kafka.oidc import OidcClient, TokenProvider
from cdcsync.kafka.security import Security
from cdcsync.probe.failures import classify
from cdcsync.probe.hop import Client, Hop
from cdcsync.probe.ladder import principal
from cdcsync.probe.net import WireError
from devtools.oidc import OidcServer

OAUTH = Security(protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER",
                 oauth=OidcClient("https://idp.example/token", "planner", "Client-secret-31", "kafka"))
MSK = Security(protocol="SASL_SSL", sasl_mechanism="AWS_MSK_IAM", aws_profile="lake")


def _classify(layer, err, sec):
    hop = Hop("b-1.example", 9096, "bootstrap")
    classify(hop, layer, err, time.perf_counter(), Client(sec, None, 5.0), None)
    return hop.failure


@pytest.mark.parametrize("kind, code, words, fix", [
    ("token_unreachable", 69, "cannot get an OAUTHBEARER token: the token endpoint", "reaches the identity provider"),
    ("token_refused", 77, "for client planner: the token endpoint refused the request", "clientSecret"),
    ("token_bad_answer", 77, "cannot get an OAUTHBEARER token", "OAuth 2 token endpoint"),
])
def test_a_token_endpoint_failure_is_the_token_hop(kind, code, words, fix):
    msg = "the token endpoint https://idp.example/token answered HTTP 401 invalid_client"
    c = _classify("token", WireError(kind, msg), OAUTH)
    assert (c.layer, c.code) == ("token", code) and words in c.detail and fix in c.hint
    assert "Client-secret-31" not in c.detail + c.hint + c.finding


def test_the_broker_refusing_a_token_is_the_sasl_hop():
    c = _classify("sasl", WireError("auth_failed", '{"status":"invalid_token"}'), OAUTH)
    assert (c.layer, c.code) == ("sasl", 77) and "rejects the OAUTHBEARER token of client planner" in c.detail
    assert "invalid_token" in c.detail and "JWKS" in c.hint


def test_msk_refusals_and_missing_credentials():
    c = _classify("sasl", WireError("auth_failed", "Access denied"), MSK)
    assert c.code == 77 and "AWS profile lake" in c.detail and "kafka-cluster:Connect" in c.hint
    c = _classify("sasl", WireError("credentials", "no AWS credentials from AWS profile lake"), MSK)
    assert c.code == 77 and "awsProfileName" in c.hint
    assert principal(MSK) == "AWS profile lake" and principal(OAUTH) == "client planner (OIDC token)"


def test_the_walk_shares_one_token():
    idp = OidcServer({"planner": "Client-secret-31"}).start()
    try:
        tokens = TokenProvider(OidcClient(idp.token_url, "planner", "Client-secret-31"))
        assert tokens.token() == tokens.token() and idp.issued == 1
        assert tokens.expires_at - time.time() > 3500
    finally:
        idp.stop()
