"""One endpoint's ladder on one connection: DNS → TCP → TLS → ApiVersions → (OAUTHBEARER: the token endpoint) → SASL
→ Metadata, each hop timed and checked; the first failure is classified (`failures`) and the hops after it are
skipped."""

from __future__ import annotations

import time
from typing import Any

from cdcsync.kafka.oidc import TokenError, TokenProvider
from cdcsync.kafka.security import Security
from cdcsync.probe import certs, failures, net
from cdcsync.probe.hop import Client, Hop
from cdcsync.probe.net import WireError, endpoint
from cdcsync.probe.protocol import API_NAMES, NEEDED_APIS, Session
from cdcsync.probe.report import OK, WARN


def run_ladder(hop: Hop, client: Client, topics: list[str] | None = None, keep_open: bool = False) -> Hop:
    """DNS → TCP → TLS → ApiVersions → SASL → Metadata against one host:port, on one connection."""
    sec = client.sec
    layers = ["dns", "tcp"] + (["tls"] if sec.tls else []) + ["api-versions"] + (["token"] if client.tokens else [])
    layers += ["sasl"] if sec.sasl else []
    layers.append("metadata")
    deadline = time.monotonic() + client.timeout
    sock = addr = None
    for i, layer in enumerate(layers):
        t0 = time.perf_counter()
        try:
            if layer == "dns":
                addrs = net.resolve(hop.host, hop.port, deadline)
                hop.addresses = [a[1][0] for a in addrs]
                hop.add("dns", OK, _addresses(hop.addresses), t0)
            elif layer == "tcp":
                sock, used, failed = net.connect_tcp(addrs, deadline)
                addr = next(a for a in addrs if a[1][0] == used)
                hop.add("tcp", OK, f"connected to {endpoint(used, hop.port)}"
                        + (f" (before that: {'; '.join(failed)})" if failed else ""), t0)
            elif layer == "tls":
                assert sock is not None and client.ctx is not None  # after "tcp"; a TLS client has a context
                sock, info = net.tls_handshake(sock, client.ctx, hop.host, deadline)
                status, detail, hint = certs.tls_check(info, sec)
                hop.add("tls", status, detail, t0, hint=hint,
                        finding=f"{hop.who}: TLS certificate expires soon" if status == WARN else "")
            elif layer == "api-versions":
                assert sock is not None  # after "tcp"
                session = Session(sock, deadline)
                versions = session.api_versions()
                missing = [API_NAMES[k] for k in NEEDED_APIS if k not in versions]
                hop.add("api-versions", WARN if missing else OK, _versions(versions, missing), t0,
                        hint="cdcsync needs these APIs: is this a Kafka broker (not a KRaft controller)?"
                        if missing else "", finding=f"{hop.who} lacks {', '.join(missing)}" if missing else "")
            elif layer == "token":
                assert client.tokens is not None and sec.oauth is not None  # "token" is a layer for OAUTHBEARER
                hop.add("token", OK, f"{_token(client.tokens)} for client {sec.oauth.client_id} from the token "
                        f"endpoint {sec.oauth.endpoint}", t0)
            elif layer == "sasl":
                assert sec.sasl_mechanism is not None  # sec.sasl: a mechanism is set
                enabled = session.sasl_handshake(sec.sasl_mechanism)
                try:
                    session.sasl_authenticate(sec, hop.host, client.tokens)
                except WireError as e:
                    if e.kind != "unsupported_mechanism":
                        raise
                    hop.add("sasl", WARN, f"{e.message}; the listener enables {', '.join(enabled)}", t0,
                            hint="check this hop with kafka-broker-api-versions --command-config <client.properties>",
                            finding=f"{hop.who}: SASL {sec.sasl_mechanism} not verified by the probe")
                    hop.skip(layers[i + 1:], "SASL (not verified)")
                    session.close()
                    return hop
                hop.add("sasl", OK, f"authenticated as {principal(sec)} with {sec.sasl_mechanism} "
                        f"(listener enables {', '.join(enabled)})", t0)
            elif layer == "metadata":
                hop.metadata = session.metadata(topics if topics is not None else [], False)
                hop.add("metadata", OK, _metadata_detail(hop.metadata, hop.role, topics), t0)
        except WireError as e:
            failures.classify(hop, layer, e, t0, client, addr)
            hop.skip(layers[i + 1:], layer)
            if sock is not None:
                sock.close()
            return hop
    if keep_open:
        hop.session = session
    else:
        session.close()
    return hop


# ---- details for passing checks -------------------------------------------------------------------------------

def principal(sec: Security) -> str:
    """Who the SASL login is, safe to print."""
    if sec.sasl_mechanism == "OAUTHBEARER" and sec.oauth:
        return f"client {sec.oauth.client_id} (OIDC token)"
    if sec.sasl_mechanism == "AWS_MSK_IAM":
        return f"AWS profile {sec.aws_profile}" if sec.aws_profile else "the default AWS credentials"
    return str(sec.username)


def _token(tokens: TokenProvider) -> str:
    """The walk's one token (cached), its lifetime read from its claims."""
    try:
        tokens.token()
    except TokenError as e:
        raise WireError(f"token_{e.kind}", e.message) from None
    left = tokens.expires_at - time.time()
    return f"got a token valid for {left:.0f}s"


def _addresses(addrs: list[str]) -> str:
    return addrs[0] if len(addrs) == 1 else f"{', '.join(addrs)} ({len(addrs)} addresses)"


def _versions(v: dict[int, tuple[int, int]], missing: list[str]) -> str:
    shown = ", ".join(f"{API_NAMES[k]} v{v[k][0]}-{v[k][1]}" for k in (3, 10, 1) if k in v)
    return f"{len(v)} APIs; {shown}" + (f"; missing {', '.join(missing)}" if missing else "")


def _metadata_detail(md: dict[str, Any], role: str, topics: list[str] | None) -> str:
    if role != "bootstrap":
        return f"answers Metadata (cluster {md['cluster_id']})"
    brokers = "; ".join(f"{b['id']} at {endpoint(b['host'], b['port'])}" + (f" rack {b['rack']}" if b["rack"] else "")
                        for b in md["brokers"])
    asked = f"; asked for {', '.join(topics)} with auto-creation off" if topics else ""
    return f"cluster {md['cluster_id']}, controller {md['controller_id']}, brokers: {brokers}{asked}"
