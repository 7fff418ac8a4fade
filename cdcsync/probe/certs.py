"""What a broker's TLS certificate says, in the words of the report."""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from typing import Any

from cdcsync.kafka.security import Security
from cdcsync.probe.net import TlsInfo
from cdcsync.probe.report import OK, WARN

CERT_WARN_DAYS = 30


def name(rdns: Iterable[Iterable[tuple[str, str]]]) -> str:
    return ",".join(f"{'CN' if k == 'commonName' else k}={v}" for rdn in rdns for k, v in rdn)


def sans(cert: dict[str, Any]) -> str:
    return ", ".join(f"{'IP' if t.startswith('IP') else t}:{v}" for t, v in cert.get("subjectAltName", ()))


def tls_check(info: TlsInfo, sec: Security) -> tuple[str, str, str]:
    """(status, detail, hint) of the TLS hop that succeeded: version, cipher, names, expiry, what was verified."""
    cert = info.cert
    parts = [f"{info.version} {info.cipher}"]
    if cert:
        parts.append(f"subject {name(cert.get('subject', ())) or '-'}; SANs {sans(cert) or '-'}; "
                     f"issuer {name(cert.get('issuer', ())) or '-'}")
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
