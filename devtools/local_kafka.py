"""A real single-node Apache Kafka broker in KRaft mode, run from the jars that bundles/ fetched.

Used by `make kafka-up`/`kafka-down`, `make demo` and the integration tests. Not part of the cdcsync package:
operators bring their own Kafka.

    python -m devtools.local_kafka up [--port 9092] [--dir .local/kafka] [--advertise HOST:PORT]
    python -m devtools.local_kafka down [--dir .local/kafka]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KAFKA_JARS = ROOT / "bundles" / "kafka" / "jars"


class BrokerError(RuntimeError):
    pass


@dataclass
class Listener:
    """One client listener. `advertise` may differ from the bind address (the probe tests need a wrong one)."""

    name: str
    port: int
    protocol: str = "PLAINTEXT"  # PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
    advertise: str | None = None  # host:port clients are told to use; default 127.0.0.1:port


@dataclass
class BrokerSpec:
    data_dir: Path
    listeners: list[Listener]
    extra_props: dict[str, str] = field(default_factory=dict)
    scram_users: list[tuple[str, str, str]] = field(default_factory=list)  # (mechanism, user, password)
    # JVM system properties, e.g. org.apache.kafka.sasl.oauthbearer.allowed.urls, which Kafka 4 needs for a JWKS URL
    jvm_props: dict[str, str] = field(default_factory=dict)
    heap: str = "512m"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def java_bin() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise BrokerError("java not found: install Java 17 (Debian: apt-get install openjdk-17-jre-headless)")
    return found


def classpath() -> str:
    jars = sorted(KAFKA_JARS.glob("*.jar"))
    if not any(j.name.startswith("kafka_2.13-") for j in jars):
        raise BrokerError(f"Kafka broker jars missing in {KAFKA_JARS}: run 'make bundles'")
    return os.pathsep.join(str(j) for j in jars)


class LocalBroker:
    """Start, wait for, and stop one KRaft broker+controller process."""

    def __init__(self, spec: BrokerSpec):
        self.spec = spec
        self.controller_port = free_port()
        self.internal_port = free_port()  # inter-broker traffic never depends on what clients are told
        self.proc: subprocess.Popen | None = None

    @property
    def bootstrap(self) -> str:
        first = self.spec.listeners[0]
        return f"127.0.0.1:{first.port}"

    @property
    def pid_file(self) -> Path:
        return self.spec.data_dir / "broker.pid"

    @property
    def log_file(self) -> Path:
        return self.spec.data_dir / "broker.log"

    def _properties(self) -> str:
        ls = self.spec.listeners
        listeners = [f"{item.name}://127.0.0.1:{item.port}" for item in ls]
        listeners += [f"INTERNAL://127.0.0.1:{self.internal_port}", f"CONTROLLER://127.0.0.1:{self.controller_port}"]
        advertised = [f"{item.name}://{item.advertise or f'127.0.0.1:{item.port}'}" for item in ls]
        advertised.append(f"INTERNAL://127.0.0.1:{self.internal_port}")
        protomap = [f"{item.name}:{item.protocol}" for item in ls] + ["INTERNAL:PLAINTEXT", "CONTROLLER:PLAINTEXT"]
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "INTERNAL",
            "listeners": ",".join(listeners),
            "advertised.listeners": ",".join(advertised),
            "listener.security.protocol.map": ",".join(protomap),
            "log.dirs": str(self.spec.data_dir / "logs"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "log.flush.interval.messages": "1000000",
        }
        props.update(self.spec.extra_props)
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def _java(self, main: str, *args: str) -> list[str]:
        log4j = self.spec.data_dir / "log4j2.properties"
        log4j.write_text(
            "rootLogger.level=WARN\nrootLogger.appenderRef.f.ref=F\n"
            "appender.f.type=File\nappender.f.name=F\n"
            f"appender.f.fileName={self.log_file}\n"
            "appender.f.layout.type=PatternLayout\nappender.f.layout.pattern=%d %p %c: %m%n\n"
            "logger.kafka.name=kafka.server.KafkaServer\nlogger.kafka.level=INFO\n"
        )
        return [
            java_bin(), f"-Xmx{self.spec.heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            f"-Dlog4j2.configurationFile={log4j}", "-Djava.awt.headless=true",
            *(f"-D{k}={v}" for k, v in self.spec.jvm_props.items()), "-cp", classpath(), main, *args,
        ]

    def start(self, timeout: float = 60.0) -> LocalBroker:
        d = self.spec.data_dir
        if self.pid_file.exists() and _alive(int(self.pid_file.read_text())):
            raise BrokerError(f"a broker is already running from {d} (pid {self.pid_file.read_text().strip()})")
        shutil.rmtree(d / "logs", ignore_errors=True)
        d.mkdir(parents=True, exist_ok=True)
        props = d / "server.properties"
        props.write_text(self._properties())
        fmt = format_args(props, _cluster_id(), self.spec.scram_users)
        res = subprocess.run(self._java("kafka.tools.StorageTool", *fmt), capture_output=True, text=True)
        if res.returncode != 0:
            raise BrokerError(f"formatting KRaft storage failed: {res.stdout}{res.stderr}")
        return self._launch(timeout)

    def resume(self, timeout: float = 60.0) -> LocalBroker:
        """Start again after `stop()`, same port, same data: the end of an outage, not a new broker."""
        return self._launch(timeout)

    def _launch(self, timeout: float) -> LocalBroker:
        d = self.spec.data_dir
        out = open(d / "broker.stdout", "ab")
        self.proc = subprocess.Popen(
            self._java("kafka.Kafka", str(d / "server.properties")), stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        self.pid_file.write_text(str(self.proc.pid))
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc and self.proc.poll() is not None:
                tail = (self.spec.data_dir / "broker.stdout").read_text(errors="replace")[-2000:]
                raise BrokerError(f"broker exited with {self.proc.returncode}:\n{tail}")
            if answers_metadata(self.internal_port):
                return
            time.sleep(0.3)
        self.stop()
        raise BrokerError(f"broker did not answer a Metadata request within {timeout:.0f}s; see {self.log_file}")

    def stop(self, timeout: float = 30.0) -> None:
        pid = self.proc.pid if self.proc else _read_pid(self.pid_file)
        if pid:
            stop_pid(pid, timeout)
        if self.proc:
            self.proc.wait(timeout=5)
        self.pid_file.unlink(missing_ok=True)


def format_args(props: Path, cluster_id: str, scram_users=()) -> list[str]:
    """kafka-storage format's arguments; '--cluster-id=ID' keeps the id one token whatever it starts with."""
    fmt = ["format", f"--cluster-id={cluster_id}", "-c", str(props)]
    for mech, user, password in scram_users:
        fmt += ["--add-scram", f"{mech}=[name={user},password={password}]"]
    return fmt


def _cluster_id() -> str:
    """A KRaft cluster id; like Kafka's Uuid.randomUuid, never one starting with '-' (read as an option)."""
    import base64

    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def stop_pid(pid: int, timeout: float = 30.0) -> None:
    """SIGTERM the broker's process group (a clean shutdown), SIGKILL if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + (timeout if sig == signal.SIGTERM else 5)
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.2)


def answers_metadata(port: int, host: str = "127.0.0.1", timeout: float = 2.0) -> bool:
    """True when the listener answers a Metadata request on this very connection (no advertised hop)."""
    import selectors

    from kafka.conn import BrokerConnection
    from kafka.protocol.metadata import MetadataRequest

    conn = BrokerConnection(host, port, socket.AF_INET, request_timeout_ms=int(timeout * 1000))
    try:
        if not conn.connect_blocking(timeout=timeout):
            return False
        fut = conn.send(MetadataRequest[1](topics=MetadataRequest[1].NO_TOPICS))
        sel = selectors.DefaultSelector()
        sel.register(conn._sock, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while not fut.is_done and time.monotonic() < deadline:
            sel.select(0.2)
            for resp, f in conn.recv():
                f.success(resp)
        return fut.is_done and fut.succeeded() and len(fut.value.brokers) > 0
    except Exception:
        return False
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="local_kafka")
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up")
    up.add_argument("--port", type=int, default=9092)
    up.add_argument("--dir", default=str(ROOT / ".local" / "kafka"))
    up.add_argument("--advertise", default=None, help="host:port advertised to clients (default: the bind address)")
    down = sub.add_parser("down")
    down.add_argument("--dir", default=str(ROOT / ".local" / "kafka"))
    a = ap.parse_args(argv)
    d = Path(a.dir).resolve()
    if a.cmd == "up":
        spec = BrokerSpec(d, [Listener("PLAINTEXT", a.port, advertise=a.advertise)])
        try:
            b = LocalBroker(spec)
            b.start()
        except BrokerError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"Kafka {_kafka_version()} (KRaft) is up at {b.bootstrap}; data and logs in {d}", file=sys.stderr)
        return 0
    pid = _read_pid(d / "broker.pid")
    if pid and _alive(pid):
        stop_pid(pid)
        print(f"stopped the broker (pid {pid})", file=sys.stderr)
    else:
        print("no broker was running", file=sys.stderr)
    (d / "broker.pid").unlink(missing_ok=True)
    return 0


def _kafka_version() -> str:
    for j in KAFKA_JARS.glob("kafka_2.13-*.jar"):
        return j.stem.removeprefix("kafka_2.13-")
    return "?"


if __name__ == "__main__":
    sys.exit(main())
