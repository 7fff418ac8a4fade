"""The probe's result as plain data: one `Check` per hop, layer or finding, and the `Report` whose first failure
(else first warning) is the verdict and the exit code. Rendering it is the CLI's job."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from cdcsync.exit_codes import ExitCode

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"


@dataclass
class Check:
    role: str  # bootstrap | broker | coordinator | cluster | topic | group
    target: str  # host:port, topic or group
    layer: str  # dns | tcp | tls | api-versions | token (OAUTHBEARER) | sasl | metadata | listener | topic | group
    status: str  # ok | warn | fail | skip
    detail: str
    hint: str = ""
    ms: float | None = None
    code: int = 0  # the exit code this check implies (0 ok/skip, 1 warn, else its failure class)
    finding: str = ""  # one sentence naming who failed how, for the verdict
    broker_id: int | None = None


@dataclass
class Report:
    bootstrap: list[str]
    security: dict[str, Any]
    checks: list[Check] = field(default_factory=list)
    cluster: dict[str, Any] | None = None
    topics: list[dict[str, Any]] = field(default_factory=list)
    group: dict[str, Any] | None = None
    elapsed_ms: float = 0.0

    @property
    def exit_code(self) -> int:
        for c in self.checks:
            if c.status == FAIL:
                return c.code
        return int(ExitCode.WARNINGS) if any(c.status == WARN for c in self.checks) else int(ExitCode.OK)

    @property
    def status(self) -> str:
        code = self.exit_code
        return OK if code == 0 else WARN if code == ExitCode.WARNINGS else FAIL

    @property
    def verdict(self) -> str:
        for wanted in (FAIL, WARN):
            found = [c for c in self.checks if c.status == wanted]
            if found:
                c = found[0]
                text = f"{c.finding or c.detail}: {c.hint}" if c.hint else (c.finding or c.detail)
                if wanted == WARN:
                    n = len(found)
                    return f"usable, with {n} warning{'s' if n > 1 else ''}; first: {text}"
                return text
        n = len(self.checks)
        return f"all {n} checks passed: this host reaches every broker at its advertised address"

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "exit_code": self.exit_code, "verdict": self.verdict,
                "elapsed_ms": round(self.elapsed_ms, 1), "bootstrap_servers": self.bootstrap,
                "security": self.security, "cluster": self.cluster, "topics": self.topics, "group": self.group,
                "checks": [asdict(c) for c in self.checks]}
