"""The socket hops of a probe: DNS, TCP and TLS, each a separate call on a socket we own, so the probe can time and
classify each one, and nothing ever connects to an address the caller did not name.

Failures raise `WireError(kind, message, **facts)`; the caller knows which hop it was on.
"""

from __future__ import annotations

import errno
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class WireError(Exception):
    def __init__(self, kind: str, message: str, **facts: Any):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.facts = facts


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

# one resolved address as getaddrinfo gives it: (family, (host, port)), for IPv6 (family, (host, port, flow, scope))
Addr = tuple[int, tuple[str, int] | tuple[str, int, int, int]]


def resolve(host: str, port: int, deadline: float) -> list[Addr]:
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

def connect_tcp(addrs: list[Addr], deadline: float) -> tuple[socket.socket, str, list[str]]:
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

def _unverified_context() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


@dataclass
class TlsInfo:
    version: str
    cipher: str
    cert: dict[str, Any]  # ssl.getpeercert() form: subject, issuer, subjectAltName, notBefore, notAfter


# OpenSSL's reason codes for a server that refused the client's certificate (or its absence): mutual TLS
CLIENT_CERT_ALERTS = {"TLSV13_ALERT_CERTIFICATE_REQUIRED", "SSLV3_ALERT_BAD_CERTIFICATE", "TLSV1_ALERT_UNKNOWN_CA",
                      "SSLV3_ALERT_CERTIFICATE_UNKNOWN", "SSLV3_ALERT_CERTIFICATE_EXPIRED",
                      "TLSV1_ALERT_ACCESS_DENIED"}


def client_cert_refused(e: ssl.SSLError) -> WireError:
    return WireError("client_cert", f"the broker refused the client certificate ({e.reason})", reason=e.reason)


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
        if e.reason in CLIENT_CERT_ALERTS:
            raise client_cert_refused(e) from None
        kind = "not_tls" if e.reason in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE") else "handshake"
        raise WireError(kind, f"TLS handshake failed: {e.reason or e}") from None
    cert = ssock.getpeercert() or peer_certificate(ssock) or {}
    return ssock, TlsInfo(ssock.version() or "?", (ssock.cipher() or ("?",))[0], cert)


def peer_certificate(ssock: ssl.SSLSocket) -> dict[str, Any] | None:
    """Decode the peer certificate even when it was not verified (for the report); None when not possible."""
    der = ssock.getpeercert(binary_form=True)
    # CPython's own decoder: a PEM file's certificate in getpeercert()'s form
    decode: Callable[[str], dict[str, Any]] | None = getattr(getattr(ssl, "_ssl", None), "_test_decode_cert", None)
    if not der or decode is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".pem") as f:
        f.write(ssl.DER_cert_to_PEM_cert(der))
        f.flush()
        try:
            return decode(f.name)
        except (ssl.SSLError, ValueError):
            return None


def fetch_certificate(addr: Addr, host: str, deadline: float) -> dict[str, Any] | None:
    """The certificate a TLS listener presents, without verifying it (to explain a verification failure)."""
    try:
        sock, _, _ = connect_tcp([addr], deadline)
        ssock, info = tls_handshake(sock, _unverified_context(), host, deadline)
        ssock.close()
        return info.cert or None
    except (WireError, OSError):
        return None


def speaks_tls(addr: Addr, host: str, deadline: float) -> bool:
    """True when a TLS handshake (any certificate) completes at addr."""
    try:
        sock, _, _ = connect_tcp([addr], deadline)
        ssock, _ = tls_handshake(sock, _unverified_context(), host, deadline)
        ssock.close()
        return True
    except (WireError, OSError):
        return False
