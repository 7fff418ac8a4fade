"""One endpoint's ladder in progress (`Hop`: the checks so far, its first failure, what it learnt) and the client
settings every ladder uses (`Client`)."""

from __future__ import annotations

import ssl
import time
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.oidc import TokenProvider
from cdcsync.kafka.security import Security
from cdcsync.probe.net import endpoint
from cdcsync.probe.protocol import Session
from cdcsync.probe.report import FAIL, SKIP, WARN, Check


class CheckText(TypedDict, total=False):
    """What a check may say besides its detail (`Check`'s fields of the same names)."""
    hint: str
    finding: str


@dataclass(frozen=True)
class Client:
    """How this host connects: the security settings, their TLS context, the time allowed for each endpoint, and
    the OAUTHBEARER token provider every ladder shares (one token for the whole walk)."""
    sec: Security
    ctx: ssl.SSLContext | None
    timeout: float
    tokens: TokenProvider | None = None


@dataclass
class Hop:
    host: str
    port: int
    role: str
    broker_id: int | None = None
    checks: list[Check] = field(default_factory=list)
    failure: Check | None = None
    session: Session | None = None
    addresses: list[str] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
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

    def add(self, layer: str, status: str, detail: str, t0: float | None = None, *, code: int | None = None,
            **kw: Unpack[CheckText]) -> Check:
        ms = round((time.perf_counter() - t0) * 1000, 1) if t0 is not None else None
        code = (int(ExitCode.WARNINGS) if status == WARN else 0) if code is None else code
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
