"""`cdcsync probe`: walk every hop a Kafka client takes and name the first one that fails, with its fix.

Bootstrap address(es): DNS → TCP → TLS → ApiVersions → SASL → one Metadata request (auto-creation off). Then the
same ladder against every advertised broker endpoint from that metadata, a lint of the advertised names, the
topics' partitions and the group's coordinator. The result is plain data (`Report`); rendering is the CLI's job.
"""

from __future__ import annotations

import ipaddress
import ssl
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from cdcsync.exit_codes import ExitCode
from cdcsync.kafka import wire
from cdcsync.kafka.security import Security
from cdcsync.kafka.wire import WireError, endpoint

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
CERT_WARN_DAYS = 30
HOSTNAME_CODES = (62, 64)  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH
UNTRUSTED_CODES = (2, 18, 19, 20, 21)  # unknown issuer, self-signed, no local issuer, cannot verify leaf
INTERNAL_SUFFIXES = (".svc.cluster.local", ".cluster.local", ".svc", ".internal", ".local", ".localdomain", ".lan",
                     ".home.arpa")
# RFC 1918, carrier-grade NAT (RFC 6598) and IPv6 unique-local: reachable only inside their own network
PRIVATE_NETS = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
                                                  "fc00::/7")]
ADVERTISED_FIX = "set advertised.listeners to an address clients can reach, or add a listener for external clients"


@dataclass
class Check:
    role: str  # bootstrap | broker | coordinator | cluster | topic | group
    target: str  # host:port, topic or group
    layer: str  # dns | tcp | tls | api-versions | sasl | metadata | listener | topic | group
    status: str  # ok | warn | fail | skip
    detail: str
    hint: str = ""
    ms: float | None = None
    code: int = 0  # the exit code this check implies (0 ok/skip, 1 warn, else its failure class)
    finding: str = ""  # one sentence naming who failed how, for the verdict
    broker_id: int | None = None


@dataclass
class Report:
    bootstrap: list[str]
    security: dict
    checks: list[Check] = field(default_factory=list)
    cluster: dict | None = None
    topics: list[dict] = field(default_factory=list)
    group: dict | None = None
    elapsed_ms: float = 0.0

    @property
    def exit_code(self) -> int:
        for c in self.checks:
            if c.status == FAIL:
                return c.code
        return int(ExitCode.WARNINGS) if any(c.status == WARN for c in self.checks) else int(ExitCode.OK)

    @property
    def status(self) -> str:
        code = self.exit_code
        return OK if code == 0 else WARN if code == ExitCode.WARNINGS else FAIL

    @property
    def verdict(self) -> str:
        for wanted in (FAIL, WARN):
            found = [c for c in self.checks if c.status == wanted]
            if found:
                c = found[0]
                text = f"{c.finding or c.detail}: {c.hint}" if c.hint else (c.finding or c.detail)
                if wanted == WARN:
                    n = len(found)
                    return f"usable, with {n} warning{'s' if n > 1 else ''}; first: {text}"
                return text
        n = len(self.checks)
        return f"all {n} checks passed: this host reaches every broker at its advertised address"

    def to_dict(self) -> dict:
        return {"status": self.status, "exit_code": self.exit_code, "verdict": self.verdict,
                "elapsed_ms": round(self.elapsed_ms, 1), "bootstrap_servers": self.bootstrap,
                "security": self.security, "cluster": self.cluster, "topics": self.topics, "group": self.group,
                "checks": [asdict(c) for c in self.checks]}


# ---- one endpoint's ladder ------------------------------------------------------------------------------------

@dataclass
class Hop:
    host: str
    port: int
    role: str
    broker_id: int | None = None
    checks: list[Check] = field(default_factory=list)
    failure: Check | None = None
    session: wire.Session | None = None
    addresses: list[str] = field(default_factory=list)
    metadata: dict | None = None
    lint: str | None = None  # why the advertised name looks unreachable for other clients

    @property
    def target(self) -> str:
        return endpoint(self.host, self.port)

    @property
    def who(self) -> str:
        bid = f" (broker {self.broker_id})" if self.broker_id is not None else ""
        noun = {"bootstrap": "bootstrap server", "broker": "advertised listener",
                "coordinator": "group coordinator"}[self.role]
        return f"{noun} {self.target}{bid}"

    def add(self, layer: str, status: str, detail: str, t0: float | None = None, **kw) -> Check:
        ms = round((time.perf_counter() - t0) * 1000, 1) if t0 is not None else None
        code = kw.pop("code", int(ExitCode.WARNINGS) if status == WARN else 0)
        c = Check(self.role, self.target, layer, status, detail, ms=ms, code=code, broker_id=self.broker_id, **kw)
        self.checks.append(c)
        if status == FAIL and self.failure is None:
            self.failure = c
        return c

    def fail(self, layer: str, t0: float, code: int, problem: str, hint: str, raw: str | None = None) -> None:
        detail = f"{problem}: {raw}" if raw and raw not in problem else problem
        self.add(layer, FAIL, detail, t0, code=int(code), hint=hint, finding=f"{self.who} {problem}")

    def skip(self, layers: list[str], after: str) -> None:
        for layer in layers:
            self.add(layer, SKIP, f"not tried: {after} failed")


def run_ladder(hop: Hop, sec: Security, ctx: ssl.SSLContext | None, timeout: float,
               topics: list[str] | None = None, keep_open: bool = False) -> Hop:
    """DNS → TCP → TLS → ApiVersions → SASL → Metadata against one host:port, on one connection."""
    layers = ["dns", "tcp"] + (["tls"] if sec.tls else []) + ["api-versions"] + (["sasl"] if sec.sasl else [])
    layers.append("metadata")
    deadline = time.monotonic() + timeout
    sock = addr = None
    for i, layer in enumerate(layers):
        t0 = time.perf_counter()
        try:
            if layer == "dns":
                addrs = wire.resolve(hop.host, hop.port, deadline)
                hop.addresses = [a[1][0] for a in addrs]
                hop.add("dns", OK, _addresses(hop.addresses), t0)
            elif layer == "tcp":
                sock, used, failed = wire.connect_tcp(addrs, deadline)
                addr = next(a for a in addrs if a[1][0] == used)
                hop.add("tcp", OK, f"connected to {endpoint(used, hop.port)}"
                        + (f" (before that: {'; '.join(failed)})" if failed else ""), t0)
            elif layer == "tls":
                sock, info = wire.tls_handshake(sock, ctx, hop.host, deadline)
                status, detail, hint = _tls_ok(info, sec)
                hop.add("tls", status, detail, t0, hint=hint,
                        finding=f"{hop.who}: TLS certificate expires soon" if status == WARN else "")
            elif layer == "api-versions":
                session = wire.Session(sock, deadline)
                versions = session.api_versions()
                missing = [wire.API_NAMES[k] for k in wire.NEEDED_APIS if k not in versions]
                hop.add("api-versions", WARN if missing else OK, _versions(versions, missing), t0,
                        hint="cdcsync needs these APIs: is this a Kafka broker (not a KRaft controller)?"
                        if missing else "", finding=f"{hop.who} lacks {', '.join(missing)}" if missing else "")
            elif layer == "sasl":
                enabled = session.sasl_handshake(sec.sasl_mechanism)
                try:
                    session.sasl_authenticate(sec, hop.host)
                except WireError as e:
                    if e.kind != "unsupported_mechanism":
                        raise
                    hop.add("sasl", WARN, f"{e.message}; the listener enables {', '.join(enabled)}", t0,
                            hint="check this hop with kafka-broker-api-versions --command-config <client.properties>",
                            finding=f"{hop.who}: SASL {sec.sasl_mechanism} not verified by the probe")
                    hop.skip(layers[i + 1:], "SASL (not verified)")
                    session.close()
                    return hop
                hop.add("sasl", OK, f"authenticated as {sec.username} with {sec.sasl_mechanism} "
                        f"(listener enables {', '.join(enabled)})", t0)
            elif layer == "metadata":
                hop.metadata = session.metadata(topics if topics is not None else [], False)
                hop.add("metadata", OK, _metadata_detail(hop.metadata, hop.role, topics), t0)
        except WireError as e:
            _classify(hop, layer, e, t0, sec, ctx, addr, timeout)
            hop.skip(layers[i + 1:], layer)
            if sock is not None:
                sock.close()
            return hop
    if keep_open:
        hop.session = session
    else:
        session.close()
    return hop


def _classify(hop: Hop, layer: str, e: WireError, t0: float, sec: Security, ctx, addr, timeout: float) -> None:
    """Turn one hop's failure into (exit code, problem, hint), probing the listener again when that tells more."""
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
    if layer == "tls":
        return _classify_tls(hop, e, t0, sec, addr, sniff_deadline)
    if layer == "api-versions":
        if k == "tls_reply" or (k in ("closed", "timeout") and not sec.tls and wire.speaks_tls(addr, hop.host,
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


def _classify_tls(hop: Hop, e: WireError, t0: float, sec: Security, addr, sniff_deadline: float) -> None:
    code = e.facts.get("verify_code")
    if e.kind == "verify":
        cert = wire.fetch_certificate(addr, hop.host, sniff_deadline) or {}
        names = _sans(cert) or "none"
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
        issuer = _name(cert.get("issuer", ())) or "?"
        trust = sec.ssl_cafile or ("inline PEM" if sec.ssl_cadata else "the system CAs")
        return hop.fail("tls", t0, ExitCode.TLS, f"presents a TLS certificate (issuer {issuer}) that "
                        f"{trust} does not trust: certificate verification failed",
                        "set ssl.ca.location (or --ssl-cafile) to the PEM of the CA that signed the broker "
                        "certificate", raw=f"{e.message} (code {code})")
    if e.kind in ("closed", "not_tls") and _plaintext_listener(addr, sniff_deadline):
        return hop.fail("tls", t0, ExitCode.TLS, "is a plaintext listener but the client speaks TLS (protocol "
                        "mismatch)", f"set security.protocol = {'SASL_PLAINTEXT' if sec.sasl else 'PLAINTEXT'} for "
                        "this listener, or use the broker's SSL listener port", raw=e.message)
    return hop.fail("tls", t0, ExitCode.TLS, f"TLS handshake failed ({e.message})",
                    "check the listener's protocol, TLS versions and ciphers; the broker log names the reason",
                    raw=e.message)


def _plaintext_listener(addr, deadline: float) -> bool:
    """A fresh connection answers a clear ApiVersions: the listener is plaintext."""
    try:
        sock, _, _ = wire.connect_tcp([addr], deadline)
        s = wire.Session(sock, deadline)
        try:
            return bool(s.api_versions())
        finally:
            s.close()
    except (WireError, OSError):
        return False


def _sasl_listener(addr, host: str, sec: Security, ctx, deadline: float) -> list[str]:
    """The SASL mechanisms a listener enables (empty when it does not do SASL), on a fresh connection."""
    try:
        sock, _, _ = wire.connect_tcp([addr], deadline)
        if sec.tls:
            sock, _ = wire.tls_handshake(sock, ctx, host, deadline)
        s = wire.Session(sock, deadline)
        try:
            s.api_versions()
            return s.sasl_handshake("PLAIN")
        except WireError as e:
            return list(e.facts.get("enabled") or [])
        finally:
            s.close()
    except (WireError, OSError):
        return []


# ---- details for passing checks -------------------------------------------------------------------------------

def _addresses(addrs: list[str]) -> str:
    return addrs[0] if len(addrs) == 1 else f"{', '.join(addrs)} ({len(addrs)} addresses)"


def _versions(v: dict[int, tuple[int, int]], missing: list[str]) -> str:
    shown = ", ".join(f"{wire.API_NAMES[k]} v{v[k][0]}-{v[k][1]}" for k in (3, 10, 1) if k in v)
    return f"{len(v)} APIs; {shown}" + (f"; missing {', '.join(missing)}" if missing else "")


def _name(rdns) -> str:
    return ",".join(f"{'CN' if k == 'commonName' else k}={v}" for rdn in rdns for k, v in rdn)


def _sans(cert: dict) -> str:
    return ", ".join(f"{'IP' if t.startswith('IP') else t}:{v}" for t, v in cert.get("subjectAltName", ()))


def _tls_ok(info: wire.TlsInfo, sec: Security) -> tuple[str, str, str]:
    cert = info.cert
    parts = [f"{info.version} {info.cipher}"]
    if cert:
        parts.append(f"subject {_name(cert.get('subject', ())) or '-'}; SANs {_sans(cert) or '-'}; "
                     f"issuer {_name(cert.get('issuer', ())) or '-'}")
    days = None
    if cert.get("notAfter"):
        expires = ssl.cert_time_to_seconds(cert["notAfter"])
        days = int((expires - time.time()) // 86400)
        parts.append(f"expires {time.strftime('%Y-%m-%d', time.gmtime(expires))} ({days} days)")
    parts.append("certificate not verified (verification off)" if not sec.ssl_verify else
                 "hostname check ok" if sec.ssl_check_hostname else "hostname check off")
    if days is not None and days < CERT_WARN_DAYS:
        return WARN, "; ".join(parts), f"renew the broker certificate within {max(days, 0)} days"
    return OK, "; ".join(parts), ""


def _metadata_detail(md: dict, role: str, topics: list[str] | None) -> str:
    if role != "bootstrap":
        return f"answers Metadata (cluster {md['cluster_id']})"
    brokers = "; ".join(f"{b['id']} at {endpoint(b['host'], b['port'])}" + (f" rack {b['rack']}" if b["rack"] else "")
                        for b in md["brokers"])
    asked = f"; asked for {', '.join(topics)} with auto-creation off" if topics else ""
    return f"cluster {md['cluster_id']}, controller {md['controller_id']}, brokers: {brokers}{asked}"


# ---- advertised-name lint -------------------------------------------------------------------------------------

def host_classes(host: str, addresses: list[str] = ()) -> set[str]:
    """Which reach classes a host belongs to: unspecified, loopback, link-local, private, single-label, internal."""
    out: set[str] = set()
    name = host.lower().rstrip(".")
    try:
        literal = [ipaddress.ip_address(name.strip("[]"))]
    except ValueError:
        literal = []
        if name == "localhost" or name.endswith(".localhost"):
            out.add("loopback")
        elif "." not in name:
            out.add("single-label")
        if any(name.endswith(s) for s in INTERNAL_SUFFIXES):
            out.add("internal")
    for ip in literal + [ipaddress.ip_address(a.split("%")[0]) for a in addresses]:
        if ip.is_unspecified:
            out.add("unspecified")
        elif ip.is_loopback:
            out.add("loopback")
        elif ip.is_link_local:
            out.add("link-local")
        elif any(ip.version == n.version and ip in n for n in PRIVATE_NETS):
            out.add("private")
    return out


_LINT_TEXT = {
    "unspecified": "is a bind-all address (0.0.0.0/::), not one clients can connect to",
    "loopback": "is a loopback address: it reaches the broker only from the broker's own host",
    "link-local": "is a link-local address: it reaches the broker only from its own network segment",
    "single-label": "is a single-label name: it resolves only inside the broker's own network (Docker, a search "
                    "domain)",
    "internal": "is a cluster-internal name: it resolves only inside that cluster or VPC",
    "private": "is a private address while the bootstrap address is not: it is reachable only inside that network",
}


def lint_advertised(host: str, addresses: list[str], bootstrap_classes: set[str]) -> str | None:
    """Why `host` looks unreachable for clients that could reach the bootstrap address; None if it looks fine."""
    classes = host_classes(host, addresses)
    suspicious = [c for c in _LINT_TEXT if c in classes and (c == "unspecified" or c not in bootstrap_classes)]
    return _LINT_TEXT[suspicious[0]] if suspicious else None


# ---- topics and group -----------------------------------------------------------------------------------------

def topic_checks(md: dict, topics: list[str], reach: dict[int, Hop]) -> tuple[list[Check], list[dict]]:
    """Existence, partitions and leaders of each asked-for topic; `reach` maps broker id to its probed endpoint."""
    checks, out = [], []
    by_name = {t["name"]: t for t in md["topics"]}
    for name in topics:
        t = by_name.get(name) or {"name": name, "error_code": 3, "error": "UNKNOWN_TOPIC_OR_PARTITION",
                                  "partitions": []}
        out.append({"name": name, "exists": t["error_code"] not in (3, 17), "error": t["error"],
                    "partitions": t["partitions"]})

        def add(status, detail, code=0, hint="", finding="", _name=name):
            checks.append(Check("topic", _name, "topic", status, detail, hint=hint, code=int(code),
                                finding=finding or f"topic {_name}: {detail}"))

        err = t["error_code"]
        if err == 3:
            add(FAIL, f"topic {name} does not exist (checked with auto-creation off; the probe created nothing)",
                ExitCode.TOPIC_MISSING, f"create it (kafka-topics --create --topic {name} ...) or fix the topic name",
                f"topic {name} does not exist")
            continue
        if err == 29:
            add(FAIL, f"not authorized to describe topic {name} (TOPIC_AUTHORIZATION_FAILED)", ExitCode.AUTH,
                f"grant DESCRIBE and READ on topic {name} to this principal (kafka-acls --add --operation Describe "
                f"--operation Read --topic {name} --allow-principal User:<user>)")
            continue
        if err == 17:
            add(FAIL, f"{name!r} is not a valid topic name", ExitCode.USAGE, "topic names use [a-zA-Z0-9._-]")
            continue
        if err:
            add(FAIL, f"topic {name}: {t['error']}", ExitCode.LEADER_UNAVAILABLE,
                "retry in a moment; if it persists, check the brokers' logs")
            continue
        checks.extend(_partition_checks(name, t["partitions"], reach))
    return checks, out


def _partition_checks(name: str, parts: list[dict], reach: dict[int, Hop]) -> list[Check]:
    def mk(status, detail, code=0, hint=""):
        return Check("topic", name, "topic", status, detail, hint=hint, code=int(code), finding=f"topic {detail}")

    def nums(ps):
        ids = [str(p["partition"]) for p in ps]
        return ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")

    leaderless = [p for p in parts if p["leader"] < 0 or p["error_code"] == 5]
    no_listener = [p for p in parts if p["error_code"] == 72]
    unreachable = [p for p in parts if p["leader"] >= 0 and p["leader"] in reach and reach[p["leader"]].failure]
    offline = [p for p in parts if p["offline_replicas"]]
    under = [p for p in parts if len(p["isr"]) < len(p["replicas"])]
    out = []
    if leaderless:
        down = sorted({r for p in leaderless for r in p["offline_replicas"]})
        out.append(mk(FAIL, f"{name} partitions {nums(leaderless)} have no leader (leader -1)",
                      ExitCode.LEADER_UNAVAILABLE, "bring back a broker holding an in-sync replica"
                      + (f" (offline: brokers {', '.join(map(str, down))})" if down else "")
                      + "; Kafka waits for it while unclean.leader.election.enable=false"))
    if no_listener:
        out.append(mk(FAIL, f"{name} partitions {nums(no_listener)}: the leader has no listener with the name this "
                      "client used (LISTENER_NOT_FOUND)", ExitCode.LEADER_UNAVAILABLE,
                      "define the same listener names on every broker"))
    if unreachable:
        bad = sorted({p["leader"] for p in unreachable})
        where = ", ".join(f"broker {b} at {reach[b].target}" for b in bad)
        out.append(mk(FAIL, f"{name} partitions {nums(unreachable)} are led by {where}, which this host cannot "
                      "reach", ExitCode.LEADER_UNAVAILABLE, reach[bad[0]].failure.hint))
    if offline:
        out.append(mk(WARN, f"{name} partitions {nums(offline)} have offline replicas", ExitCode.WARNINGS,
                      "restart or replace the brokers holding them"))
    elif under:
        out.append(mk(WARN, f"{name} partitions {nums(under)} are under-replicated (ISR smaller than replicas)",
                      ExitCode.WARNINGS, "check the followers' brokers and replica lag"))
    if not out:
        leaders = sorted({p["leader"] for p in parts})
        out.append(mk(OK, f"{len(parts)} partition{'s' if len(parts) != 1 else ''}, leaders on broker"
                      f"{'s' if len(leaders) > 1 else ''} {', '.join(map(str, leaders))}, all replicas in sync"))
    return out


def find_coordinator(session: wire.Session, group: str, timeout: float) -> tuple[dict, float]:
    """FindCoordinator, retried while the broker is still creating __consumer_offsets (error 14/15)."""
    t0 = time.perf_counter()
    deadline = time.monotonic() + timeout
    session.deadline = deadline
    while True:
        r = session.find_coordinator(group)
        if r["error_code"] not in (14, 15) or time.monotonic() + 0.2 >= deadline:
            return r, round((time.perf_counter() - t0) * 1000, 1)
        time.sleep(0.2)


def group_checks(r: dict, group: str, ms: float) -> list[Check]:
    def mk(status, detail, code=0, hint=""):
        return Check("group", group, "group", status, detail, hint=hint, ms=ms, code=int(code),
                     finding=f"group {group}: {detail}")

    err = r["error_code"]
    if err == 0:
        return [mk(OK, f"coordinator is broker {r['id']} at {endpoint(r['host'], r['port'])}")]
    if err in (14, 15):
        return [mk(FAIL, f"no coordinator available ({r['error']})", ExitCode.LEADER_UNAVAILABLE,
                   "the __consumer_offsets topic cannot be created or has no leader: offsets.topic.replication.factor "
                   "must not exceed the number of live brokers; check the brokers' logs")]
    if err == 30:
        return [mk(FAIL, f"not authorized for consumer group {group} (GROUP_AUTHORIZATION_FAILED)", ExitCode.AUTH,
                   f"grant READ on group {group} to this principal (kafka-acls --add --operation Read --group "
                   f"{group} --allow-principal User:<user>)")]
    if err == 24:
        return [mk(FAIL, f"{group!r} is not a valid group id", ExitCode.USAGE, "pass a non-empty group id")]
    return [mk(FAIL, f"FindCoordinator failed ({r['error']}: {r['message'] or ''})", ExitCode.LEADER_UNAVAILABLE,
               "the brokers' logs name the reason")]


# ---- the whole probe ------------------------------------------------------------------------------------------

def probe(bootstrap: list[tuple[str, int]], sec: Security, *, topics: list[str] | None = None,
          group: str | None = None, timeout: float = 5.0) -> Report:
    started = time.perf_counter()
    topics = list(dict.fromkeys(topics or []))
    report = Report([endpoint(h, p) for h, p in bootstrap], sec.describe())
    ctx = wire.tls_context(sec) if sec.tls else None
    with ThreadPoolExecutor(max_workers=16, thread_name_prefix="probe") as pool:
        boots = list(pool.map(lambda hp: run_ladder(Hop(hp[0], hp[1], "bootstrap"), sec, ctx, timeout, topics,
                                                     keep_open=True), bootstrap))
        primary = next((b for b in boots if b.metadata is not None), None)
        for b in boots:
            if primary is not None and b.failure is not None:  # clients skip a dead bootstrap entry if another works
                for c in b.checks:
                    if c.status == FAIL:
                        c.status, c.code = WARN, int(ExitCode.WARNINGS)
                        c.detail += " (another bootstrap server answered, so clients still start)"
            report.checks += b.checks
        try:
            if primary is None:
                _skip_rest(report, topics, group, "no bootstrap server answered Metadata")
                return report
            _after_bootstrap(report, primary, boots, sec, ctx, timeout, topics, group, pool)
        finally:
            for b in boots:
                if b.session:
                    b.session.close()
            report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


def _after_bootstrap(report: Report, primary: Hop, boots: list[Hop], sec: Security, ctx, timeout: float,
                     topics: list[str], group: str | None, pool: ThreadPoolExecutor) -> None:
    md = primary.metadata
    boot_classes = set().union(*(host_classes(b.host, b.addresses) for b in boots))
    endpoints: dict[tuple[str, int], Hop] = {}
    for b in sorted(md["brokers"], key=lambda b: b["id"]):
        endpoints.setdefault((b["host"], b["port"]), Hop(b["host"], b["port"], "broker", broker_id=b["id"]))
    hops = list(pool.map(lambda h: run_ladder(h, sec, ctx, timeout), endpoints.values()))
    reach = {b["id"]: endpoints[(b["host"], b["port"])] for b in md["brokers"]}
    if md["controller_id"] is None or md["controller_id"] < 0:
        report.checks.append(Check("cluster", md["cluster_id"] or "?", "metadata", WARN, "no active controller "
                                   "reported (controller_id -1)", hint="check the KRaft quorum "
                                   "(kafka-metadata-quorum describe --status)", code=int(ExitCode.WARNINGS),
                                   finding="the cluster reports no active controller"))
    for hop in hops:
        if hop.metadata and hop.metadata["cluster_id"] != md["cluster_id"]:  # a port mapping to another cluster
            hop.add("metadata", FAIL, f"answers for cluster {hop.metadata['cluster_id']}, not {md['cluster_id']}",
                    code=int(ExitCode.UNREACHABLE), hint=f"it reaches another Kafka cluster: {ADVERTISED_FIX}",
                    finding=f"{hop.who} leads to a different Kafka cluster")
        hop.lint = lint_advertised(hop.host, hop.addresses, boot_classes)
        if hop.lint and hop.failure is not None:  # the failure hint should say why the name is suspicious
            hop.failure.hint += f" ({hop.host} {hop.lint})"
        report.checks += hop.checks
        if hop.lint:
            state = "from here it resolves and answers" if hop.failure is None else \
                f"from here it fails at {hop.failure.layer}"
            report.checks.append(Check("broker", hop.target, "listener", WARN, f"advertised host {hop.host} "
                                       f"{hop.lint}; {state}", hint=ADVERTISED_FIX, code=int(ExitCode.WARNINGS),
                                       finding=f"advertised listener {hop.target} (broker {hop.broker_id}) "
                                       f"{hop.lint}", broker_id=hop.broker_id))
    report.cluster = {
        "id": md["cluster_id"], "controller_id": md["controller_id"], "bootstrap": primary.target,
        "brokers": [{**b, "advertised": endpoint(b["host"], b["port"]), "reachable": reach[b["id"]].failure is None,
                     "lint": reach[b["id"]].lint} for b in md["brokers"]],
    }
    if topics:
        checks, report.topics = topic_checks(md, topics, reach)
        report.checks += checks
    if group:
        _group(report, primary, group, sec, ctx, timeout, endpoints)


def _group(report: Report, primary: Hop, group: str, sec: Security, ctx, timeout: float,
           endpoints: dict[tuple[str, int], Hop]) -> None:
    try:
        r, ms = find_coordinator(primary.session, group, timeout)
    except WireError as e:
        report.checks.append(Check("group", group, "group", FAIL, f"FindCoordinator failed: {e.message}",
                                   hint="retry; the brokers' logs name the reason", code=int(ExitCode.UNREACHABLE),
                                   finding=f"group {group}: FindCoordinator failed"))
        return
    report.group = {"name": group, **r}
    report.checks += group_checks(r, group, ms)
    if r["error_code"]:
        return
    key = (r["host"], r["port"])
    hop = endpoints.get(key)
    if hop is None:  # a coordinator endpoint the metadata did not list: probe it the same way
        hop = run_ladder(Hop(r["host"], r["port"], "coordinator", broker_id=r["id"]), sec, ctx, timeout)
        report.checks += hop.checks
    report.group["reachable"] = hop.failure is None
    if hop.failure is not None:
        report.checks.append(Check("group", group, "group", FAIL, f"coordinator broker {r['id']} at {hop.target} "
                                   "is not reachable from here", hint=hop.failure.hint,
                                   code=int(ExitCode.LEADER_UNAVAILABLE),
                                   finding=f"group {group}: its coordinator {hop.target} is not reachable"))


def _skip_rest(report: Report, topics: list[str], group: str | None, why: str) -> None:
    report.checks.append(Check("broker", "advertised listeners", "metadata", SKIP, f"not tried: {why}"))
    for t in topics:
        report.checks.append(Check("topic", t, "topic", SKIP, f"not checked: {why}"))
    if group:
        report.checks.append(Check("group", group, "group", SKIP, f"not checked: {why}"))
