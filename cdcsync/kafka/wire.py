"""The one adapter over kafka-python 2.x's protocol layer (request/response classes, KafkaProtocol framing, SASL
mechanisms). Each hop (DNS, TCP, TLS, Kafka requests) is a separate call on a socket we own, so the probe can time
and classify it, and nothing ever connects to an address the caller did not name (no KafkaClient/AdminClient).

Failures raise `WireError(kind, message, **facts)`; the caller knows which hop it was on.
"""

from __future__ import annotations

import errno
import logging
import socket
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

from kafka.errors import KafkaError, for_code
from kafka.protocol.api_versions import ApiVersionsRequest
from kafka.protocol.find_coordinator import FindCoordinatorRequest
from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.parser import KafkaProtocol
from kafka.protocol.sasl_authenticate import SaslAuthenticateRequest
from kafka.protocol.sasl_handshake import SaslHandshakeRequest

from cdcsync import __version__
from cdcsync.kafka.security import PASSWORD_MECHANISMS, Security

# kafka.sasl warns "sending password in the clear" through logging's last-resort handler, i.e. onto our stderr.
logging.getLogger("kafka").addHandler(logging.NullHandler())

CLIENT_ID = "cdcsync-probe"
MAX_FRAME = 100 * 1024 * 1024  # the broker's own socket.request.max.bytes default
API_NAMES = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
             10: "FindCoordinator", 11: "JoinGroup", 17: "SaslHandshake", 18: "ApiVersions", 36: "SaslAuthenticate"}
NEEDED_APIS = (1, 2, 3, 8, 9, 10)  # what cdcsync's consumer path uses


class WireError(Exception):
    def __init__(self, kind: str, message: str, **facts: Any):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.facts = facts


def error_name(code: int) -> str:
    return getattr(for_code(code), "message", None) or f"error {code}"


def parse_servers(servers: str) -> list[tuple[str, int]]:
    """'h1:9092,[::1]:9093' -> [('h1', 9092), ('::1', 9093)]; ValueError names the bad entry."""
    out = []
    for item in (s.strip() for s in servers.split(",")):
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        host = host.strip("[]") if host.startswith("[") else host
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{item!r} is not host:port")
        out.append((host, int(port)))
    if not out:
        raise ValueError("no host:port given")
    return out


def endpoint(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise WireError("timeout", "the time budget (--timeout) ran out")
    return left


# ---- DNS ------------------------------------------------------------------------------------------------------

def resolve(host: str, port: int, deadline: float) -> list[tuple[int, tuple]]:
    """All (family, sockaddr) for host, in resolver order. getaddrinfo has no timeout, so it runs in a daemon thread."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["ok"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as e:
            box["err"] = e

    t = threading.Thread(target=run, daemon=True, name=f"dns {host}")
    t.start()
    t.join(remaining(deadline))
    if t.is_alive():
        raise WireError("timeout", f"no answer from the resolver for {host}")
    if "err" in box:
        e = box["err"]
        kind = "temporary" if getattr(e, "errno", None) == socket.EAI_AGAIN else "nxdomain"
        raise WireError(kind, f"{host} does not resolve ({e.strerror or e})", errno=getattr(e, "errno", None),
                        reason=e.strerror or str(e))
    seen, out = set(), []
    for family, _, _, _, sockaddr in box["ok"]:
        if sockaddr[:2] not in seen:
            seen.add(sockaddr[:2])
            out.append((family, sockaddr))
    return out


# ---- TCP ------------------------------------------------------------------------------------------------------

def connect_tcp(addrs: list[tuple[int, tuple]], deadline: float) -> tuple[socket.socket, str, list[str]]:
    """Try each address in order; return the socket, the address used, and what failed before it."""
    failures: list[str] = []
    kinds: list[str] = []
    for family, sockaddr in addrs:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(remaining(deadline))
            sock.connect(sockaddr)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock, sockaddr[0], failures
        except TimeoutError:
            kinds.append("timeout")
            failures.append(f"{sockaddr[0]}: no answer (timed out)")
        except WireError:
            kinds.append("timeout")
            failures.append(f"{sockaddr[0]}: no answer (timed out)")
        except OSError as e:
            kind = {errno.ECONNREFUSED: "refused", errno.EHOSTUNREACH: "unreachable",
                    errno.ENETUNREACH: "unreachable"}.get(e.errno or 0, "error")
            kinds.append(kind)
            failures.append(f"{sockaddr[0]}: {e.strerror or e}")
        sock.close()
        if time.monotonic() >= deadline:
            break
    kind = "refused" if "refused" in kinds else (kinds[0] if kinds else "timeout")
    raise WireError(kind, "; ".join(failures) or "no address to connect to", failures=failures)


# ---- TLS ------------------------------------------------------------------------------------------------------

def tls_context(sec: Security) -> ssl.SSLContext:
    """Like a Java client: verify against the given CA (or the system's), check the hostname unless turned off."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if sec.ssl_cafile or sec.ssl_cadata:
        ctx = ssl.create_default_context(cafile=sec.ssl_cafile, cadata=sec.ssl_cadata)
    if sec.ssl_certfile:
        ctx.load_cert_chain(sec.ssl_certfile, sec.ssl_keyfile, password=sec.ssl_key_password)
    ctx.check_hostname = sec.ssl_check_hostname and sec.ssl_verify
    if not sec.ssl_verify:
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def _unverified_context() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


@dataclass
class TlsInfo:
    version: str
    cipher: str
    cert: dict  # ssl.getpeercert() form: subject, issuer, subjectAltName, notBefore, notAfter


def tls_handshake(sock: socket.socket, ctx: ssl.SSLContext, host: str, deadline: float
                  ) -> tuple[ssl.SSLSocket, TlsInfo]:
    try:
        sock.settimeout(remaining(deadline))
        ssock = ctx.wrap_socket(sock, server_hostname=host.rstrip("."))
    except ssl.SSLCertVerificationError as e:
        raise WireError("verify", e.verify_message or str(e), verify_code=e.verify_code) from None
    except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionError) as e:
        raise WireError("closed", f"the server closed the connection during the TLS handshake ({e})") from None
    except TimeoutError:
        raise WireError("timeout", "no TLS handshake reply (timed out)") from None
    except ssl.SSLError as e:
        kind = "not_tls" if e.reason in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE") else "handshake"
        raise WireError(kind, f"TLS handshake failed: {e.reason or e}") from None
    cert = ssock.getpeercert() or peer_certificate(ssock) or {}
    return ssock, TlsInfo(ssock.version() or "?", (ssock.cipher() or ("?",))[0], cert)


def peer_certificate(ssock: ssl.SSLSocket) -> dict | None:
    """Decode the peer certificate even when it was not verified (for the report); None when not possible."""
    der = ssock.getpeercert(binary_form=True)
    decode = getattr(getattr(ssl, "_ssl", None), "_test_decode_cert", None)  # CPython's own decoder
    if not der or decode is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".pem") as f:
        f.write(ssl.DER_cert_to_PEM_cert(der))
        f.flush()
        try:
            return decode(f.name)
        except (ssl.SSLError, ValueError):
            return None


def fetch_certificate(addr: tuple[int, tuple], host: str, deadline: float) -> dict | None:
    """The certificate a TLS listener presents, without verifying it (to explain a verification failure)."""
    try:
        sock, _, _ = connect_tcp([addr], deadline)
        ssock, info = tls_handshake(sock, _unverified_context(), host, deadline)
        ssock.close()
        return info.cert or None
    except (WireError, OSError):
        return None


def speaks_tls(addr: tuple[int, tuple], host: str, deadline: float) -> bool:
    """True when a TLS handshake (any certificate) completes at addr."""
    try:
        sock, _, _ = connect_tcp([addr], deadline)
        ssock, _ = tls_handshake(sock, _unverified_context(), host, deadline)
        ssock.close()
        return True
    except (WireError, OSError):
        return False


# ---- Kafka requests -------------------------------------------------------------------------------------------

class Session:
    """Framed Kafka requests on one already-connected (and maybe TLS-wrapped) socket."""

    def __init__(self, sock: socket.socket, deadline: float):
        self.sock = sock
        self.deadline = deadline
        self.proto = KafkaProtocol(client_id=CLIENT_ID, max_frame_size=MAX_FRAME)
        self.versions: dict[int, tuple[int, int]] = {}

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def call(self, request):
        self.proto.send_request(request)
        try:
            self.sock.settimeout(remaining(self.deadline))
            self.sock.sendall(self.proto.send_bytes())
        except TimeoutError:
            raise WireError("timeout", "timed out sending the request") from None
        except OSError as e:
            raise WireError("closed", f"the connection was closed ({e.strerror or e})") from None
        head = self._read(4)
        if head[0] == 0x15 and head[1] == 0x03:  # a TLS alert record: the listener speaks TLS
            raise WireError("tls_reply", f"the reply starts with TLS alert bytes {head[:2].hex(' ')}",
                            first_bytes=head.hex(" "))
        size = int.from_bytes(head, "big", signed=True)
        if not 0 <= size <= MAX_FRAME:
            raise WireError("bad_frame", f"the reply is not a Kafka frame (first bytes {head.hex(' ')})",
                            first_bytes=head.hex(" "))
        try:
            ((_, response),) = self.proto.receive_bytes(head + self._read(size))
        except (KafkaError, ValueError) as e:  # undecodable or mismatched reply: not the Kafka we asked
            raise WireError("bad_frame", f"the reply could not be decoded ({e})") from None
        return response

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            try:
                self.sock.settimeout(remaining(self.deadline))
                chunk = self.sock.recv(min(n - len(buf), 1 << 16))
            except TimeoutError:
                raise WireError("timeout", "no reply (timed out)") from None
            except ssl.SSLError as e:
                raise WireError("closed", f"TLS error while reading ({e.reason or e})") from None
            except OSError as e:
                raise WireError("closed", f"the connection was reset ({e.strerror or e})") from None
            if not chunk:
                raise WireError("closed", "the broker closed the connection without replying")
            buf += chunk
        return bytes(buf)

    def _version(self, api_key: int, lo: int, hi: int) -> int:
        """Highest version both sides know, within [lo, hi] (kafka-python's classes stop at hi)."""
        bmin, bmax = self.versions.get(api_key, (lo, hi))
        v = min(hi, bmax)
        if v < max(lo, bmin):
            raise WireError("unsupported_version", f"the broker supports {API_NAMES.get(api_key, api_key)} "
                            f"v{bmin}-v{bmax}, the probe v{lo}-v{hi}")
        return v

    def api_versions(self) -> dict[int, tuple[int, int]]:
        resp = self.call(ApiVersionsRequest[3](client_software_name="cdcsync", client_software_version=__version__,
                                               _tagged_fields={}))
        if resp.error_code == 35:  # UNSUPPORTED_VERSION: the reply (in v0 form) says what the broker speaks
            resp = self.call(ApiVersionsRequest[0]())
        if resp.error_code:
            raise WireError("error", f"ApiVersions failed: {error_name(resp.error_code)}", code=resp.error_code)
        self.versions = {a[0]: (a[1], a[2]) for a in resp.api_versions}
        return self.versions

    def sasl_handshake(self, mechanism: str) -> list[str]:
        """The mechanisms the listener enables; raises not_offered (34) or mechanism (33)."""
        v = self._version(17, 1, 1)
        resp = self.call(SaslHandshakeRequest[v](mechanism))
        enabled = list(resp.enabled_mechanisms or [])
        if resp.error_code == 34:
            raise WireError("not_offered", "the listener does not do SASL (ILLEGAL_SASL_STATE)", enabled=enabled)
        if resp.error_code == 33 or mechanism not in enabled:
            raise WireError("mechanism", f"SASL mechanism {mechanism} is not enabled on this listener "
                            f"(enabled: {', '.join(enabled) or 'none'})", enabled=enabled)
        if resp.error_code:
            raise WireError("error", f"SaslHandshake failed: {error_name(resp.error_code)}", code=resp.error_code)
        return enabled

    def sasl_authenticate(self, sec: Security, host: str) -> None:
        from kafka.sasl import get_sasl_mechanism

        if sec.sasl_mechanism not in PASSWORD_MECHANISMS:
            raise WireError("unsupported_mechanism", f"the probe cannot authenticate with {sec.sasl_mechanism}")
        v = self._version(36, 0, 1)
        mech = get_sasl_mechanism(sec.sasl_mechanism)(
            host=host, security_protocol=sec.protocol, sasl_mechanism=sec.sasl_mechanism,
            sasl_plain_username=sec.username, sasl_plain_password=sec.password)
        while not mech.is_done():
            resp = self.call(SaslAuthenticateRequest[v](mech.auth_bytes()))
            if resp.error_code:
                raise WireError("auth_failed", resp.error_message or error_name(resp.error_code),
                                code=resp.error_code)
            try:
                mech.receive(resp.auth_bytes)
            except ValueError as e:  # SCRAM: the server's proof does not match
                raise WireError("auth_failed", f"the server's SCRAM proof did not verify ({e})") from None
        if not mech.is_authenticated():
            raise WireError("auth_failed", f"authentication with {sec.sasl_mechanism} did not succeed")

    def metadata(self, topics: list[str] | None, allow_auto_topic_creation: bool = False) -> dict:
        """Brokers, cluster id, controller and the named topics (None: all; []: none). Never creates a topic."""
        v = self._version(3, 4, 8)  # v4 is the first with allow_auto_topic_creation
        req_cls = MetadataRequest[v]
        args: list[Any] = [req_cls.ALL_TOPICS if topics is None else list(topics), allow_auto_topic_creation]
        if v >= 8:
            args += [False, False]
        r = self.call(req_cls(*args))
        return {
            "cluster_id": r.cluster_id,
            "controller_id": r.controller_id,
            "brokers": [{"id": b[0], "host": b[1], "port": b[2], "rack": b[3]} for b in r.brokers],
            "topics": [_topic(t, v) for t in r.topics],
        }

    def find_coordinator(self, group: str) -> dict:
        v = self._version(10, 1, 2)
        r = self.call(FindCoordinatorRequest[v](group, 0))
        return {"error_code": r.error_code, "error": error_name(r.error_code) if r.error_code else None,
                "message": r.error_message, "id": r.coordinator_id, "host": r.host, "port": r.port}


def _topic(t, version: int) -> dict:
    error_code, name, is_internal, parts = t[0], t[1], t[2], t[3]
    tail = 3 if version >= 5 else 2  # offline_replicas arrived in Metadata v5
    return {
        "name": name, "error_code": error_code, "error": error_name(error_code) if error_code else None,
        "internal": is_internal,
        "partitions": sorted(({
            "partition": p[1], "error_code": p[0], "leader": p[2], "replicas": list(p[-tail]),
            "isr": list(p[1 - tail]), "offline_replicas": list(p[-1]) if tail == 3 else [],
        } for p in parts), key=lambda p: p["partition"]),
    }
