"""Why a hop failed: a `WireError` on one layer becomes the exit code, the problem and its fix, probing the
listener again on a fresh connection when that tells more (a TLS listener? a plaintext one? which SASL mechanisms?)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.security import TOKEN_MECHANISMS, Security
from cdcsync.probe import certs, net
from cdcsync.probe.hop import Client, Hop
from cdcsync.probe.lint import ADVERTISED_FIX
from cdcsync.probe.net import WireError
from cdcsync.probe.protocol import Session

if TYPE_CHECKING:
    import ssl

HOSTNAME_CODES = (62, 64)  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH


def classify(hop: Hop, layer: str, e: WireError, t0: float, client: Client, addr: net.Addr | None) -> None:
    """Turn one hop's failure into (exit code, problem, hint), probing the listener again when that tells more."""
    sec, ctx, timeout = client.sec, client.ctx, client.timeout
    k, msg, t = e.kind, e.message, f"{timeout:g}s"
    sniff_deadline = time.monotonic() + min(timeout, 2.0)
    outsider = hop.role != "bootstrap"
    if layer == "dns":
        if k == "nxdomain":
            return hop.fail(layer, t0, ExitCode.DNS, "does not resolve from this host",
                            ADVERTISED_FIX if outsider else "check the host name in bootstrap.servers, or use a "
                            "name or address this host's DNS can resolve", raw=e.facts.get("reason"))
        return hop.fail(layer, t0, ExitCode.DNS, f"could not be resolved: the DNS resolver did not answer in {t}",
                        "check /etc/resolv.conf and that the DNS server is reachable from this host", raw=msg)
    if layer == "tcp":
        if k == "refused":
            return hop.fail(layer, t0, ExitCode.UNREACHABLE, f"refuses connections (nothing listens on port "
                            f"{hop.port} at {', '.join(hop.addresses)})",
                            "the broker advertises a port it does not listen on here: make advertised.listeners "
                            "match listeners (host and port), or fix the port mapping" if outsider else
                            "check the port and that the broker is running; a listener bound to 127.0.0.1 only "
                            "accepts clients on its own host", raw=msg)
        if k == "unreachable":
            return hop.fail(layer, t0, ExitCode.UNREACHABLE, "has no network route from this host",
                            ADVERTISED_FIX if outsider else "check routing/VPN between this host and the cluster",
                            raw=msg)
        return hop.fail(layer, t0, ExitCode.UNREACHABLE, f"does not answer TCP within {t}",
                        "a firewall or security group drops the traffic, or the address is not routable from here; "
                        + (ADVERTISED_FIX if outsider else "open the port to this host"), raw=msg)
    if k == "client_cert":
        given = "the client's certificate" if sec.ssl_certfile or sec.ssl_keystore_pem else "no client certificate"
        return hop.fail(layer, t0, ExitCode.TLS, f"requires mutual TLS and refused {given} "
                        f"({e.facts.get('reason')})",
                        "set ssl.keystore.location (with ssl.keystore.type and its passwords) to a key and certificate "
                        "signed by a CA the broker's ssl.truststore trusts", raw=msg)
    if layer == "tls":
        assert addr is not None  # the layers after "tcp" have its address
        return _classify_tls(hop, e, t0, sec, addr, sniff_deadline)
    if layer == "api-versions":
        assert addr is not None
        if k == "tls_reply" or (k in ("closed", "timeout") and not sec.tls and net.speaks_tls(addr, hop.host,
                                                                                         sniff_deadline)):
            why = ": the reply starts with 0x15 0x03, a TLS alert)" if k == "tls_reply" else ")"
            return hop.fail(layer, t0, ExitCode.TLS, f"is a TLS listener but the client speaks plaintext (protocol "
                            f"mismatch{why}",
                            "set security.protocol = SSL (or SASL_SSL) and ssl.ca.location to the broker's CA, or "
                            "use the broker's plaintext listener port", raw=msg)
        if k == "timeout":
            return hop.fail(layer, t0, ExitCode.TLS, f"accepts TCP but does not answer a Kafka request within {t}",
                            "is this a Kafka broker listener (not a KRaft controller port or another service)?",
                            raw=msg)
        return hop.fail(layer, t0, ExitCode.TLS, f"does not speak the Kafka protocol here ({msg})",
                        "check the port: it should be a broker listener of this cluster", raw=msg)
    if k.startswith("token_"):
        return _classify_token(hop, layer, e, t0, sec)
    if layer == "sasl":
        if k == "not_offered":
            plain = "SSL" if sec.tls else "PLAINTEXT"
            return hop.fail(layer, t0, ExitCode.TLS, f"does not offer SASL but security.protocol is {sec.protocol} "
                            "(protocol mismatch: SASL expected but not offered)",
                            f"set security.protocol = {plain} for this listener, or use the broker's SASL listener "
                            "port", raw=msg)
        if k == "mechanism":
            enabled = e.facts.get("enabled") or []
            return hop.fail(layer, t0, ExitCode.AUTH, f"rejects SASL mechanism {sec.sasl_mechanism} (the listener "
                            f"enables {', '.join(enabled) or 'none'})",
                            f"set sasl.mechanism to one of: {', '.join(enabled) or 'none'}", raw=msg)
        if k == "auth_failed" and sec.sasl_mechanism in TOKEN_MECHANISMS:
            return _token_refused(hop, e, t0, sec)
        if k == "credentials":
            return hop.fail(layer, t0, ExitCode.AUTH, f"cannot be signed in to with AWS_MSK_IAM: {msg}",
                            "give credentials and a region to the profile named by awsProfileName in "
                            "sasl.jaas.config (or to the default chain: AWS_* variables, ~/.aws, the instance's role)",
                            raw=msg)
        if k == "auth_failed":
            where = ("the broker's PLAIN users (user_<name>=\"<password>\" in its JAAS config)"
                     if sec.sasl_mechanism == "PLAIN" else
                     f"the broker's SCRAM credentials (kafka-configs --alter --add-config "
                     f"'{sec.sasl_mechanism}=[password=...]' --entity-type users --entity-name {sec.username})")
            return hop.fail(layer, t0, ExitCode.AUTH, f"rejects SASL authentication for user {sec.username!r} with "
                            f"{sec.sasl_mechanism}", "check the username and password (sasl.jaas.config or "
                            f"--sasl-username/--sasl-password) against {where}", raw=msg)
        return hop.fail(layer, t0, ExitCode.AUTH, f"SASL authentication did not complete ({msg})",
                        "check sasl.mechanism and credentials; the broker log names the reason", raw=msg)
    # metadata
    if k == "closed" and not sec.sasl:
        assert addr is not None
        enabled = _sasl_listener(addr, hop.host, sec, ctx, sniff_deadline)
        if enabled:
            return hop.fail(layer, t0, ExitCode.TLS, f"requires SASL (enabled: {', '.join(enabled)}) but "
                            f"security.protocol is {sec.protocol} (protocol mismatch: SASL offered but not used)",
                            f"set security.protocol = {'SASL_SSL' if sec.tls else 'SASL_PLAINTEXT'}, sasl.mechanism "
                            "and sasl.jaas.config (or --sasl-mechanism/--sasl-username/--sasl-password)", raw=msg)
    if k == "timeout":
        return hop.fail(layer, t0, ExitCode.UNREACHABLE, f"did not answer Metadata within {t}",
                        "the broker is overloaded or stuck: check its log", raw=msg)
    return hop.fail(layer, t0, ExitCode.TLS, f"failed the Metadata request ({msg})",
                    "the broker log names the reason", raw=msg)


def _classify_token(hop: Hop, layer: str, e: WireError, t0: float, sec: Security) -> None:
    """The token endpoint, not the broker, failed: unreachable, refusing the client, or answering no token."""
    client = sec.oauth.client_id if sec.oauth else "?"
    if e.kind == "token_unreachable":
        return hop.fail(layer, t0, ExitCode.UNREACHABLE, f"cannot get an OAUTHBEARER token: {e.message}",
                        "check sasl.oauthbearer.token.endpoint.url and that this host reaches the identity provider",
                        raw=e.message)
    if e.kind == "token_refused":
        return hop.fail(layer, t0, ExitCode.AUTH, f"cannot get an OAUTHBEARER token for client {client}: the token "
                        f"endpoint refused the request: {e.message}",
                        "check clientId, clientSecret and scope in sasl.jaas.config against the identity provider's "
                        "client (a client-credentials grant)", raw=e.message)
    return hop.fail(layer, t0, ExitCode.AUTH, f"cannot get an OAUTHBEARER token: {e.message}",
                    "check that sasl.oauthbearer.token.endpoint.url is the identity provider's OAuth 2 token endpoint",
                    raw=e.message)


def _token_refused(hop: Hop, e: WireError, t0: float, sec: Security) -> None:
    if sec.sasl_mechanism == "OAUTHBEARER":
        return hop.fail("sasl", t0, ExitCode.AUTH, f"rejects the OAUTHBEARER token of client "
                        f"{sec.oauth.client_id if sec.oauth else '?'} (the token endpoint issued it, the broker "
                        "refused it)", "the broker checks the token's signature against its JWKS "
                        "(sasl.oauthbearer.jwks.endpoint.url) and its aud, iss and scope against "
                        "sasl.oauthbearer.expected.audience/issuer: check them, and the broker's log", raw=e.message)
    return hop.fail("sasl", t0, ExitCode.AUTH, "rejects AWS_MSK_IAM authentication for "
                    + (f"AWS profile {sec.aws_profile}" if sec.aws_profile else "the default AWS credentials"),
                    "check that the credentials' IAM policy allows kafka-cluster:Connect on this cluster, and this "
                    "host's clock (the signature is valid for 15 minutes)", raw=e.message)


def _classify_tls(hop: Hop, e: WireError, t0: float, sec: Security, addr: net.Addr, sniff_deadline: float) -> None:
    code = e.facts.get("verify_code")
    if e.kind == "verify":
        cert = net.fetch_certificate(addr, hop.host, sniff_deadline) or {}
        names = certs.sans(cert) or "none"
        if code in HOSTNAME_CODES:
            return hop.fail("tls", t0, ExitCode.TLS, f"presents a TLS certificate that does not match the host "
                            f"name {hop.host}: certificate verification failed (it names {names})",
                            f"connect with a name the certificate lists, or reissue it with {hop.host} in its "
                            "subjectAltName (--no-ssl-check-hostname only to test)",
                            raw=e.message)
        if code == 10:
            return hop.fail("tls", t0, ExitCode.TLS, f"presents an expired TLS certificate (notAfter "
                            f"{cert.get('notAfter', '?')})", "renew the broker certificate",
                            raw=e.message)
        if code == 9:
            return hop.fail("tls", t0, ExitCode.TLS, "presents a TLS certificate that is not valid yet",
                            "check the clock of this host and of the CA that issued it",
                            raw=e.message)
        issuer = certs.name(cert.get("issuer", ())) or "?"
        trust = sec.ssl_cafile or ("the configured trust store" if sec.ssl_cadata else "the system CAs")
        return hop.fail("tls", t0, ExitCode.TLS, f"presents a TLS certificate (issuer {issuer}) that "
                        f"{trust} does not trust: certificate verification failed",
                        "set ssl.truststore.location or ssl.ca.location (or --ssl-cafile) to the CA that signed "
                        "the broker certificate", raw=f"{e.message} (code {code})")
    if e.kind in ("closed", "not_tls") and _plaintext_listener(addr, sniff_deadline):
        return hop.fail("tls", t0, ExitCode.TLS, "is a plaintext listener but the client speaks TLS (protocol "
                        "mismatch)", f"set security.protocol = {'SASL_PLAINTEXT' if sec.sasl else 'PLAINTEXT'} for "
                        "this listener, or use the broker's SSL listener port", raw=e.message)
    return hop.fail("tls", t0, ExitCode.TLS, f"TLS handshake failed ({e.message})",
                    "check the listener's protocol, TLS versions and ciphers; the broker log names the reason",
                    raw=e.message)


def _plaintext_listener(addr: net.Addr, deadline: float) -> bool:
    """A fresh connection answers a clear ApiVersions: the listener is plaintext."""
    try:
        sock, _, _ = net.connect_tcp([addr], deadline)
        s = Session(sock, deadline)
        try:
            return bool(s.api_versions())
        finally:
            s.close()
    except (WireError, OSError):
        return False


def _sasl_listener(addr: net.Addr, host: str, sec: Security, ctx: ssl.SSLContext | None, deadline: float
                   ) -> list[str]:
    """The SASL mechanisms a listener enables (empty when it does not do SASL), on a fresh connection."""
    try:
        sock, _, _ = net.connect_tcp([addr], deadline)
        if sec.tls:
            assert ctx is not None  # a TLS client has a context (walk.probe)
            sock, _ = net.tls_handshake(sock, ctx, host, deadline)
        s = Session(sock, deadline)
        try:
            s.api_versions()
            return s.sasl_handshake("PLAIN")
        except WireError as e:
            return list(e.facts.get("enabled") or [])
        finally:
            s.close()
    except (WireError, OSError):
        return []
