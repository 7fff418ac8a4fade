"""The consumer group: FindCoordinator and what its answer means."""

from __future__ import annotations

import time
from typing import Any

from cdcsync.exit_codes import ExitCode
from cdcsync.probe.net import endpoint
from cdcsync.probe.protocol import Session
from cdcsync.probe.report import FAIL, OK, Check


def find_coordinator(session: Session, group: str, timeout: float) -> tuple[dict[str, Any], float]:
    """FindCoordinator, retried while the broker is still creating __consumer_offsets (error 14/15)."""
    t0 = time.perf_counter()
    deadline = time.monotonic() + timeout
    session.deadline = deadline
    while True:
        r = session.find_coordinator(group)
        if r["error_code"] not in (14, 15) or time.monotonic() + 0.2 >= deadline:
            return r, round((time.perf_counter() - t0) * 1000, 1)
        time.sleep(0.2)


def group_checks(r: dict[str, Any], group: str, ms: float) -> list[Check]:
    def mk(status: str, detail: str, code: int = 0, hint: str = "") -> Check:
        return Check("group", group, "group", status, detail, hint=hint, ms=ms, code=int(code),
                     finding=f"group {group}: {detail}")

    err = r["error_code"]
    if err == 0:
        return [mk(OK, f"coordinator is broker {r['id']} at {endpoint(r['host'], r['port'])}")]
    if err in (14, 15):
        return [mk(FAIL, f"no coordinator available ({r['error']})", ExitCode.LEADER_UNAVAILABLE,
                   "the __consumer_offsets topic cannot be created or has no leader: offsets.topic.replication.factor "
                   "must not exceed the number of live brokers; check the brokers' logs")]
    if err == 30:
        return [mk(FAIL, f"not authorized for consumer group {group} (GROUP_AUTHORIZATION_FAILED)", ExitCode.AUTH,
                   f"grant READ on group {group} to this principal (kafka-acls --add --operation Read --group "
                   f"{group} --allow-principal User:<user>)")]
    if err == 24:
        return [mk(FAIL, f"{group!r} is not a valid group id", ExitCode.USAGE, "pass a non-empty group id")]
    return [mk(FAIL, f"FindCoordinator failed ({r['error']}: {r['message'] or ''})", ExitCode.LEADER_UNAVAILABLE,
               "the brokers' logs name the reason")]
