"""Acceptance (issue 2, point 3): the broker launcher behind `make kafka-up` / `make kafka-down` starts one KRaft
broker that a Kafka client lists, and `down` leaves no process behind."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from devtools.local_kafka import free_port

pytestmark = pytest.mark.integration


def launcher(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "devtools.local_kafka", *args], capture_output=True, text=True,
                          timeout=120)


def test_up_lists_one_broker_and_down_leaves_no_process(tmp_path):
    from kafka import KafkaAdminClient

    port, data = free_port(), str(tmp_path / "kafka")
    up = launcher("up", "--port", str(port), "--dir", data)
    assert up.returncode == 0, up.stderr
    pid = int((tmp_path / "kafka" / "broker.pid").read_text())
    try:
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}")
        brokers = admin.describe_cluster()["brokers"]
        admin.close()
        assert [(b["host"], b["port"]) for b in brokers] == [("127.0.0.1", port)]
        again = launcher("up", "--port", str(port), "--dir", data)
        assert again.returncode == 1 and "already running" in again.stderr
    finally:
        down = launcher("down", "--dir", data)
    assert down.returncode == 0 and f"stopped the broker (pid {pid})" in down.stderr
    assert _state(pid) in (None, "Z"), f"broker pid {pid} is still running ({_state(pid)})"  # Z: dead, unreaped
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert not (tmp_path / "kafka" / "broker.pid").exists()


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None
