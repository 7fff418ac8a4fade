"""Acceptance (issue 48, point 2): OAUTHBEARER with OIDC client credentials against the session broker's OAUTH
listener, which checks RS256 JWTs against the JWKS of a real local token endpoint (devtools/oidc.py). `run --once`
lands an exact table (the planner's kafka-python token provider and Spark's Java OIDC login handler both log in);
a wrong client secret exits 77 before Spark, naming the token endpoint's answer and never the secret; `probe` names
the failing hop (token endpoint unreachable, refusing the client, or the broker refusing the token)."""

from __future__ import annotations

import json

import pytest

from devtools.local_kafka import free_port
from devtools.oidc import OidcServer
from tests.cli import cdcsync, noise
from tests.integration.conftest import OIDC_CLIENT, OIDC_SECRET
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

WRONG_SECRET = "not-the-Oidc-secret-5d1e"


def _props(token_url: str, secret: str = OIDC_SECRET) -> dict:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.token.endpoint.url": token_url,
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                                f'clientId="{OIDC_CLIENT}" clientSecret="{secret}" scope="kafka.read";'}


def _config(tmp_path, secured, topic, **props):
    return write_config(tmp_path, secured.at("OAUTH"), topic, "json", "MERGE_ON_READ",
                        **{"sink.primary_key": ["id"], "source.group_id": "g-oauth",
                           "source.properties": _props(**{"token_url": secured.oidc.token_url, **props})})


def _probe(config) -> tuple[int, dict]:
    p = cdcsync("probe", "--config", config, "--json", jvm_free=True)
    assert OIDC_SECRET not in p.stdout + p.stderr and WRONG_SECRET not in p.stdout + p.stderr
    return p.returncode, json.loads(p.stdout)


def test_run_lands_an_exact_table_through_the_oauthbearer_listener(secured, spark, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    rows = [{"id": i, "v": f"v{i}"} for i in range(20)] + [{"id": i, "v": f"w{i}"} for i in range(0, 20, 4)]
    produce(topic, rows, keys=[str(r["id"]) for r in rows])
    want = by_key(list({r["id"]: r for r in rows}.values()), ["id"])
    config = _config(tmp_path, secured, topic)
    v = cdcsync("validate", config, jvm_free=True)  # offline: no token asked for, no JVM
    assert v.returncode == 0, v.stderr
    issued = secured.oidc.issued
    summary = run_once(config, spark)
    assert summary.totals["upserted"] == 25
    table = str(tmp_path / "table")
    assert by_key(spark_rows(spark, table), ["id"]) == want
    assert by_key(hudi_rs_rows(table), ["id"]) == want
    assert secured.oidc.issued > issued  # the tokens came from the endpoint (planner's and Spark's clients)


def test_probe_passes_with_the_right_secret(secured, make_topic, tmp_path):
    code, data = _probe(_config(tmp_path, secured, make_topic()))
    assert code == 0, data
    boot = [c for c in data["checks"] if c["role"] == "bootstrap"]
    assert [c["layer"] for c in boot] == ["dns", "tcp", "api-versions", "token", "sasl", "metadata"]
    assert f"authenticated as client {OIDC_CLIENT}" in boot[4]["detail"]
    assert data["security"]["sasl_oauthbearer_client_secret"] == "****"


def test_wrong_secret_exits_77_before_spark_naming_the_endpoints_answer(secured, make_topic, tmp_path):
    config = _config(tmp_path, secured, make_topic(), secret=WRONG_SECRET)
    code, data = _probe(config)
    failed = next(c for c in data["checks"] if c["status"] == "fail")
    assert (code, failed["layer"]) == (77, "token"), failed
    assert "HTTP 401 invalid_client" in failed["detail"] and secured.oidc.token_url in failed["detail"]
    assert "clientSecret" in failed["hint"]
    run = cdcsync("run", "--once", config)
    assert run.returncode == 77, run.stderr
    assert f"error: {failed['finding']}" in run.stderr and failed["hint"] in run.stderr
    assert not noise(run.stderr) and "Spark" not in run.stderr, run.stderr  # refused before Spark started
    for out in (run.stdout, run.stderr):
        assert WRONG_SECRET not in out and OIDC_SECRET not in out
    v = cdcsync("validate", config, jvm_free=True)  # validate is offline: it cannot know the secret is wrong
    assert v.returncode == 0 and WRONG_SECRET not in v.stdout + v.stderr


def test_probe_names_an_unreachable_token_endpoint(secured, make_topic, tmp_path):
    url = f"http://127.0.0.1:{free_port()}/token"  # nothing listens there
    code, data = _probe(_config(tmp_path, secured, make_topic(), token_url=url))
    failed = next(c for c in data["checks"] if c["status"] == "fail")
    assert (code, failed["layer"]) == (69, "token"), failed
    assert "unreachable" in failed["detail"] and url in failed["detail"]


def test_probe_names_the_broker_refusing_a_token_it_cannot_verify(secured, make_topic, tmp_path):
    rogue = OidcServer({OIDC_CLIENT: OIDC_SECRET}, audience=secured.oidc.audience).start()  # a key the JWKS lacks
    try:
        code, data = _probe(_config(tmp_path, secured, make_topic(), token_url=rogue.token_url))
    finally:
        rogue.stop()
    failed = next(c for c in data["checks"] if c["status"] == "fail")
    assert (code, failed["layer"]) == (77, "sasl"), failed
    assert "rejects the OAUTHBEARER token" in failed["detail"] and "JWKS" in failed["hint"]
    assert [c["status"] for c in data["checks"] if c["layer"] == "token"][0] == "ok"
