"""The asked-for topics from the bootstrap Metadata: existence (never created), partitions, leaders, replicas."""

from __future__ import annotations

from typing import Any

from cdcsync.exit_codes import ExitCode
from cdcsync.probe.hop import Hop
from cdcsync.probe.report import FAIL, OK, WARN, Check


def topic_checks(md: dict[str, Any], topics: list[str], reach: dict[int, Hop]
                 ) -> tuple[list[Check], list[dict[str, Any]]]:
    """Existence, partitions and leaders of each asked-for topic; `reach` maps broker id to its probed endpoint."""
    checks, out = [], []
    by_name = {t["name"]: t for t in md["topics"]}
    for name in topics:
        t = by_name.get(name) or {"name": name, "error_code": 3, "error": "UNKNOWN_TOPIC_OR_PARTITION",
                                  "partitions": []}
        out.append({"name": name, "exists": t["error_code"] not in (3, 17), "error": t["error"],
                    "partitions": t["partitions"]})

        def add(status: str, detail: str, code: int = 0, hint: str = "", finding: str = "", _name: str = name
                ) -> None:
            checks.append(Check("topic", _name, "topic", status, detail, hint=hint, code=int(code),
                                finding=finding or f"topic {_name}: {detail}"))

        err = t["error_code"]
        if err == 3:
            add(FAIL, f"topic {name} does not exist (checked with auto-creation off; the probe created nothing)",
                ExitCode.TOPIC_MISSING, f"create it (kafka-topics --create --topic {name} ...) or fix the topic name",
                f"topic {name} does not exist")
            continue
        if err == 29:
            add(FAIL, f"not authorized to describe topic {name} (TOPIC_AUTHORIZATION_FAILED)", ExitCode.AUTH,
                f"grant DESCRIBE and READ on topic {name} to this principal (kafka-acls --add --operation Describe "
                f"--operation Read --topic {name} --allow-principal User:<user>)")
            continue
        if err == 17:
            add(FAIL, f"{name!r} is not a valid topic name", ExitCode.USAGE, "topic names use [a-zA-Z0-9._-]")
            continue
        if err:
            add(FAIL, f"topic {name}: {t['error']}", ExitCode.LEADER_UNAVAILABLE,
                "retry in a moment; if it persists, check the brokers' logs")
            continue
        checks.extend(_partition_checks(name, t["partitions"], reach))
    return checks, out


def _partition_checks(name: str, parts: list[dict[str, Any]], reach: dict[int, Hop]) -> list[Check]:
    def mk(status: str, detail: str, code: int = 0, hint: str = "") -> Check:
        return Check("topic", name, "topic", status, detail, hint=hint, code=int(code), finding=f"topic {detail}")

    def nums(ps: list[dict[str, Any]]) -> str:
        ids = [str(p["partition"]) for p in ps]
        return ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")

    leaderless = [p for p in parts if p["leader"] < 0 or p["error_code"] == 5]
    no_listener = [p for p in parts if p["error_code"] == 72]
    unreachable = [p for p in parts if p["leader"] >= 0 and p["leader"] in reach and reach[p["leader"]].failure]
    offline = [p for p in parts if p["offline_replicas"]]
    under = [p for p in parts if len(p["isr"]) < len(p["replicas"])]
    out = []
    if leaderless:
        down = sorted({r for p in leaderless for r in p["offline_replicas"]})
        out.append(mk(FAIL, f"{name} partitions {nums(leaderless)} have no leader (leader -1)",
                      ExitCode.LEADER_UNAVAILABLE, "bring back a broker holding an in-sync replica"
                      + (f" (offline: brokers {', '.join(map(str, down))})" if down else "")
                      + "; Kafka waits for it while unclean.leader.election.enable=false"))
    if no_listener:
        out.append(mk(FAIL, f"{name} partitions {nums(no_listener)}: the leader has no listener with the name this "
                      "client used (LISTENER_NOT_FOUND)", ExitCode.LEADER_UNAVAILABLE,
                      "define the same listener names on every broker"))
    if unreachable:
        bad = sorted({p["leader"] for p in unreachable})
        where = ", ".join(f"broker {b} at {reach[b].target}" for b in bad)
        failure = reach[bad[0]].failure
        assert failure is not None  # `unreachable`: the partitions whose leader's ladder failed
        out.append(mk(FAIL, f"{name} partitions {nums(unreachable)} are led by {where}, which this host cannot "
                      "reach", ExitCode.LEADER_UNAVAILABLE, failure.hint))
    if offline:
        out.append(mk(WARN, f"{name} partitions {nums(offline)} have offline replicas", ExitCode.WARNINGS,
                      "restart or replace the brokers holding them"))
    elif under:
        out.append(mk(WARN, f"{name} partitions {nums(under)} are under-replicated (ISR smaller than replicas)",
                      ExitCode.WARNINGS, "check the followers' brokers and replica lag"))
    if not out:
        leaders = sorted({p["leader"] for p in parts})
        out.append(mk(OK, f"{len(parts)} partition{'s' if len(parts) != 1 else ''}, leaders on broker"
                      f"{'s' if len(leaders) > 1 else ''} {', '.join(map(str, leaders))}, all replicas in sync"))
    return out
