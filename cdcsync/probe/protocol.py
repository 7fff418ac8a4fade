"""The one adapter over kafka-python 2.x's protocol layer (request/response classes, KafkaProtocol framing, SASL
mechanisms): framed Kafka requests on a socket `net` connected, never a KafkaClient/AdminClient that would connect
to addresses of its own choosing.

Failures raise `net.WireError`, like the socket hops.
"""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from kafka.errors import KafkaError, for_code
from kafka.protocol.api_versions import ApiVersionsRequest
from kafka.protocol.find_coordinator import FindCoordinatorRequest
from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.parser import KafkaProtocol
from kafka.protocol.sasl_authenticate import SaslAuthenticateRequest
from kafka.protocol.sasl_handshake import SaslHandshakeRequest

from cdcsync import __version__
from cdcsync.kafka.msk import CredentialsError, available
from cdcsync.kafka.msk import mechanism as msk_mechanism
from cdcsync.kafka.oidc import TokenError, TokenProvider
from cdcsync.kafka.security import Security
from cdcsync.probe.net import CLIENT_CERT_ALERTS, WireError, client_cert_refused, remaining

if TYPE_CHECKING:
    from kafka.protocol.api import Request

# kafka.sasl warns "sending password in the clear" through logging's last-resort handler, i.e. onto our stderr.
logging.getLogger("kafka").addHandler(logging.NullHandler())

CLIENT_ID = "cdcsync-probe"
MAX_FRAME = 100 * 1024 * 1024  # the broker's own socket.request.max.bytes default
API_NAMES = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
             10: "FindCoordinator", 11: "JoinGroup", 17: "SaslHandshake", 18: "ApiVersions", 36: "SaslAuthenticate"}
NEEDED_APIS = (1, 2, 3, 8, 9, 10)  # what cdcsync's consumer path uses


def error_name(code: int) -> str:
    # types-kafka-python leaves for_code unannotated: it returns the error class of a code
    error = cast("Callable[[int], type[KafkaError]]", for_code)(code)
    return getattr(error, "message", None) or f"error {code}"


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

    def call(self, request: Request) -> Any:  # a Response: its fields come from its SCHEMA at run time
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
            except ssl.SSLError as e:  # TLS 1.3 reports a refused client certificate after the handshake
                if e.reason in CLIENT_CERT_ALERTS:
                    raise client_cert_refused(e) from None
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

    def sasl_authenticate(self, sec: Security, host: str, tokens: TokenProvider | None = None) -> None:
        """Log in as kafka-python would, with the walk's OAUTHBEARER `tokens`; raises auth_failed with the broker's
        reason (an OAUTHBEARER refusal's JSON challenge included), or credentials/token_* before anything is sent."""
        v = self._version(36, 0, 1)
        mech = _mechanism(sec, host, tokens)
        challenge = ""
        while not mech.is_done():
            try:
                auth = mech.auth_bytes()
            except (TokenError, CredentialsError) as e:
                raise WireError(f"token_{e.kind}" if isinstance(e, TokenError) else "credentials", e.args[0]) from None
            resp = self.call(SaslAuthenticateRequest[v](auth))
            if resp.error_code:
                reason = resp.error_message or error_name(resp.error_code)
                why = reason if challenge in reason else f"{reason} (the broker's answer to the token: {challenge})"
                raise WireError("auth_failed", why, code=resp.error_code)
            if sec.sasl_mechanism == "OAUTHBEARER" and resp.auth_bytes:  # RFC 7628's error, before the failure
                challenge = bytes(resp.auth_bytes).decode(errors="replace")
            try:
                mech.receive(resp.auth_bytes)
            except ValueError as e:  # SCRAM: the server's proof does not match
                raise WireError("auth_failed", f"the server's SCRAM proof did not verify ({e})") from None
        if not mech.is_authenticated():
            raise WireError("auth_failed", f"authentication with {sec.sasl_mechanism} did not succeed {challenge}"
                            .strip())

    def metadata(self, topics: list[str] | None, allow_auto_topic_creation: bool = False) -> dict[str, Any]:
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

    def find_coordinator(self, group: str) -> dict[str, Any]:
        v = self._version(10, 1, 2)
        r = self.call(FindCoordinatorRequest[v](group, 0))
        return {"error_code": r.error_code, "error": error_name(r.error_code) if r.error_code else None,
                "message": r.error_message, "id": r.coordinator_id, "host": r.host, "port": r.port}


class _Mechanism(Protocol):
    """What the login uses of a kafka-python SASL mechanism (kafka.sasl's stubs leave these methods unannotated)."""

    def auth_bytes(self) -> bytes: ...

    def receive(self, auth_bytes: bytes) -> None: ...

    def is_done(self) -> bool: ...

    def is_authenticated(self) -> bool: ...


def _mechanism(sec: Security, host: str, tokens: TokenProvider | None) -> _Mechanism:
    """kafka-python's SASL mechanism for `sec`, or unsupported_mechanism when the probe cannot log in with it."""
    from kafka.sasl import get_sasl_mechanism

    if not sec.authenticates or (sec.sasl_mechanism == "OAUTHBEARER" and tokens is None):
        raise WireError("unsupported_mechanism", f"the probe cannot authenticate with {sec.sasl_mechanism}"
                        + (" without sasl.oauthbearer.token.endpoint.url" if sec.sasl_mechanism == "OAUTHBEARER"
                           else ""))
    if sec.sasl_mechanism == "AWS_MSK_IAM":
        if not available():
            raise WireError("unsupported_mechanism", "the probe signs AWS_MSK_IAM with botocore, which is not "
                            "installed (pip install 'cdcsync[msk]')")
        return msk_mechanism(sec.aws_profile)(host=host, security_protocol=sec.protocol)
    # unannotated in the stubs: the mechanism's class, registered under its name
    mechanism = cast("Callable[[str | None], Callable[..., _Mechanism]]", get_sasl_mechanism)(sec.sasl_mechanism)
    return mechanism(
        host=host, security_protocol=sec.protocol, sasl_mechanism=sec.sasl_mechanism,
        sasl_plain_username=sec.username, sasl_plain_password=sec.password, sasl_oauth_token_provider=tokens)


def _topic(t: Sequence[Any], version: int) -> dict[str, Any]:
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
