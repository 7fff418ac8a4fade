"""Lint of advertised listeners: a broker name of narrower reach than the bootstrap address (loopback, bind-all,
link-local, private, single-label, cluster-internal) works for the broker's neighbours but not for this client."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

INTERNAL_SUFFIXES = (".svc.cluster.local", ".cluster.local", ".svc", ".internal", ".local", ".localdomain", ".lan",
                     ".home.arpa")
# RFC 1918, carrier-grade NAT (RFC 6598) and IPv6 unique-local: reachable only inside their own network
PRIVATE_NETS = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
                                                  "fc00::/7")]
ADVERTISED_FIX = "set advertised.listeners to an address clients can reach, or add a listener for external clients"


def host_classes(host: str, addresses: Sequence[str] = ()) -> set[str]:
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
