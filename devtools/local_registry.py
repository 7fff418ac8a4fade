"""A real Confluent-compatible schema registry: Apicurio Registry (in-memory storage) from the app bundles/ fetched,
serving the Confluent API at <url> = http://127.0.0.1:PORT/apis/ccompat/v7.

Used by the Avro tests and `make registry-up`. Not part of the cdcsync package: operators bring their own registry.

    python -m devtools.local_registry up [--port 8081] [--dir .local/registry]
    python -m devtools.local_registry down [--dir .local/registry]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from devtools.local_kafka import free_port, java_bin

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "bundles" / "registry" / "app"
CCOMPAT = "/apis/ccompat/v7"


class RegistryError(RuntimeError):
    pass


class LocalRegistry:
    def __init__(self, directory: Path, port: int | None = None, heap: str = "256m"):
        self.directory = directory
        self.port = port or free_port()
        self.heap = heap
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{CCOMPAT}"

    @property
    def log_file(self) -> Path:
        return self.directory / "registry.log"

    def start(self, timeout_s: float = 90) -> LocalRegistry:
        jars = sorted(APP.glob("apicurio-registry-app-*-runner.jar"))
        if not jars:
            raise RegistryError(f"no Apicurio Registry app in {APP}: run 'make bundles'")
        self.directory.mkdir(parents=True, exist_ok=True)
        cmd = [java_bin(), f"-Xmx{self.heap}", f"-Dquarkus.http.port={self.port}", "-Dquarkus.http.host=127.0.0.1",
               "-Dquarkus.log.level=WARN", "-jar", str(jars[-1])]
        self.process = subprocess.Popen(cmd, cwd=self.directory, stdout=self.log_file.open("w"),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        (self.directory / "registry.pid").write_text(str(self.process.pid))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RegistryError(f"Apicurio Registry exited: {self.log_file.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/subjects", timeout=2):
                    return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RegistryError(f"Apicurio Registry did not answer in {timeout_s:.0f} s: "
                            f"{self.log_file.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="local_registry")
    ap.add_argument("action", choices=["up", "down"])
    ap.add_argument("--port", type=int, default=8081)
    ap.add_argument("--dir", type=Path, default=ROOT / ".local" / "registry")
    args = ap.parse_args(argv)
    pid_file = args.dir / "registry.pid"
    if args.action == "down":
        if pid_file.exists():
            try:
                os.killpg(int(pid_file.read_text()), signal.SIGTERM)
            except ProcessLookupError:
                pass
            pid_file.unlink()
        return 0
    reg = LocalRegistry(args.dir, args.port).start()
    print(f"schema registry (Apicurio, Confluent API) at {reg.url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
