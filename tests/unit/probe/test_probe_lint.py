"""Which advertised names are suspicious: only those of narrower reach than the bootstrap address."""

from __future__ import annotations

import pytest

from cdcsync.probe.lint import host_classes, lint_advertised


@pytest.mark.parametrize("host, addresses, expected", [
    ("127.0.0.1", [], {"loopback"}),
    ("localhost", ["127.0.0.1"], {"loopback"}),
    ("::1", [], {"loopback"}),
    ("0.0.0.0", [], {"unspecified"}),
    ("kafka", [], {"single-label"}),
    ("kafka-0.kafka-headless.prod.svc.cluster.local", [], {"internal"}),
    ("ip-10-0-1-5.ec2.internal", ["10.0.1.5"], {"internal", "private"}),
    ("broker.example.com", ["10.1.2.3"], {"private"}),
    ("broker.example.com", ["100.64.0.7"], {"private"}),
    ("192.168.1.20", [], {"private"}),
    ("169.254.0.9", [], {"link-local"}),
    ("broker.example.com", ["93.184.216.34"], set()),
])
def test_host_classes(host, addresses, expected):
    assert host_classes(host, addresses) == expected


def test_loopback_is_fine_when_the_bootstrap_is_loopback_too():
    boot = host_classes("127.0.0.1")
    assert lint_advertised("127.0.0.1", ["127.0.0.1"], boot) is None
    assert lint_advertised("localhost", ["127.0.0.1"], boot) is None


def test_loopback_is_flagged_when_the_bootstrap_is_not():
    boot = host_classes("kafka.example.com", ["203.0.113.10"])
    assert "loopback" in lint_advertised("localhost", ["127.0.0.1"], boot)


def test_bind_all_address_is_always_flagged():
    assert "bind-all" in lint_advertised("0.0.0.0", ["0.0.0.0"], host_classes("0.0.0.0"))


def test_private_address_is_flagged_only_behind_a_public_bootstrap():
    public = host_classes("kafka.example.com", ["203.0.113.10"])
    private = host_classes("10.0.0.5")
    assert "private" in lint_advertised("10.0.0.7", ["10.0.0.7"], public)
    assert lint_advertised("10.0.0.7", ["10.0.0.7"], private) is None


def test_single_label_and_cluster_internal_names_are_flagged():
    boot = host_classes("kafka.example.com", ["203.0.113.10"])
    assert "single-label" in lint_advertised("kafka", [], boot)
    assert "cluster-internal" in lint_advertised("kafka-0.kafka.ns.svc.cluster.local", [], boot)
    # inside the same Docker network the bootstrap is single-label too: nothing to flag
    assert lint_advertised("kafka", ["172.18.0.2"], host_classes("kafka", ["172.18.0.2"])) is None


def test_public_names_are_not_flagged():
    boot = host_classes("kafka.example.com", ["203.0.113.10"])
    assert lint_advertised("b1.kafka.example.com", ["203.0.113.11"], boot) is None
