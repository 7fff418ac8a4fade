"""`cdcsync probe`: walk every hop a Kafka client takes and name the first one that fails, with its fix.

Bootstrap address(es): DNS → TCP → TLS → ApiVersions → SASL → one Metadata request (auto-creation off). Then the
same ladder against every advertised broker endpoint from that metadata, a lint of the advertised names, the
topics' partitions and the group's coordinator. The result is plain data (`Report`); rendering is the CLI's job.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.security import Security
from cdcsync.probe.group import find_coordinator, group_checks
from cdcsync.probe.hop import Client, Hop
from cdcsync.probe.ladder import run_ladder
from cdcsync.probe.lint import ADVERTISED_FIX, host_classes, lint_advertised
from cdcsync.probe.net import WireError, endpoint
from cdcsync.probe.report import FAIL, SKIP, WARN, Check, Report
from cdcsync.probe.topics import topic_checks


@dataclass
class _Walk:
    """One probe's shared state: the report being filled, how to connect, what was asked, the ladders' threads."""
    report: Report
    client: Client
    topics: list[str]
    group: str | None
    pool: ThreadPoolExecutor


def probe(bootstrap: list[tuple[str, int]], sec: Security, *, topics: list[str] | None = None,
          group: str | None = None, timeout: float = 5.0) -> Report:
    started = time.perf_counter()
    topics = list(dict.fromkeys(topics or []))
    report = Report([endpoint(h, p) for h, p in bootstrap], sec.describe())
    client = Client(sec, sec.ssl_context() if sec.tls else None, timeout, sec.token_provider())
    with ThreadPoolExecutor(max_workers=16, thread_name_prefix="probe") as pool:
        boots = list(pool.map(lambda hp: run_ladder(Hop(hp[0], hp[1], "bootstrap"), client, topics, keep_open=True),
                              bootstrap))
        primary = next((b for b in boots if b.metadata is not None), None)
        for b in boots:
            if primary is not None and b.failure is not None:  # clients skip a dead bootstrap entry if another works
                for c in b.checks:
                    if c.status == FAIL:
                        c.status, c.code = WARN, int(ExitCode.WARNINGS)
                        c.detail += " (another bootstrap server answered, so clients still start)"
            report.checks += b.checks
        try:
            if primary is None:
                _skip_rest(report, topics, group, "no bootstrap server answered Metadata")
                return report
            _after_bootstrap(_Walk(report, client, topics, group, pool), primary, boots)
        finally:
            for b in boots:
                if b.session:
                    b.session.close()
            report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


def _after_bootstrap(w: _Walk, primary: Hop, boots: list[Hop]) -> None:
    report = w.report
    md = primary.metadata
    assert md is not None  # `primary`: the bootstrap server that answered Metadata
    boot_classes = set().union(*(host_classes(b.host, b.addresses) for b in boots))
    endpoints: dict[tuple[str, int], Hop] = {}
    for b in sorted(md["brokers"], key=lambda b: b["id"]):
        endpoints.setdefault((b["host"], b["port"]), Hop(b["host"], b["port"], "broker", broker_id=b["id"]))
    hops = list(w.pool.map(lambda h: run_ladder(h, w.client), endpoints.values()))
    reach = {b["id"]: endpoints[(b["host"], b["port"])] for b in md["brokers"]}
    if md["controller_id"] is None or md["controller_id"] < 0:
        report.checks.append(Check("cluster", md["cluster_id"] or "?", "metadata", WARN, "no active controller "
                                   "reported (controller_id -1)", hint="check the KRaft quorum "
                                   "(kafka-metadata-quorum describe --status)", code=int(ExitCode.WARNINGS),
                                   finding="the cluster reports no active controller"))
    for hop in hops:
        if hop.metadata and hop.metadata["cluster_id"] != md["cluster_id"]:  # a port mapping to another cluster
            hop.add("metadata", FAIL, f"answers for cluster {hop.metadata['cluster_id']}, not {md['cluster_id']}",
                    code=int(ExitCode.UNREACHABLE), hint=f"it reaches another Kafka cluster: {ADVERTISED_FIX}",
                    finding=f"{hop.who} leads to a different Kafka cluster")
        hop.lint = lint_advertised(hop.host, hop.addresses, boot_classes)
        if hop.lint and hop.failure is not None:  # the failure hint should say why the name is suspicious
            hop.failure.hint += f" ({hop.host} {hop.lint})"
        report.checks += hop.checks
        if hop.lint:
            state = "from here it resolves and answers" if hop.failure is None else \
                f"from here it fails at {hop.failure.layer}"
            report.checks.append(Check("broker", hop.target, "listener", WARN, f"advertised host {hop.host} "
                                       f"{hop.lint}; {state}", hint=ADVERTISED_FIX, code=int(ExitCode.WARNINGS),
                                       finding=f"advertised listener {hop.target} (broker {hop.broker_id}) "
                                       f"{hop.lint}", broker_id=hop.broker_id))
    report.cluster = {
        "id": md["cluster_id"], "controller_id": md["controller_id"], "bootstrap": primary.target,
        "brokers": [{**b, "advertised": endpoint(b["host"], b["port"]), "reachable": reach[b["id"]].failure is None,
                     "lint": reach[b["id"]].lint} for b in md["brokers"]],
    }
    if w.topics:
        checks, report.topics = topic_checks(md, w.topics, reach)
        report.checks += checks
    if w.group:
        _group(w, w.group, primary, endpoints)


def _group(w: _Walk, group: str, primary: Hop, endpoints: dict[tuple[str, int], Hop]) -> None:
    report = w.report
    assert primary.session is not None  # the bootstrap ladders keep their connection open (keep_open)
    try:
        r, ms = find_coordinator(primary.session, group, w.client.timeout)
    except WireError as e:
        report.checks.append(Check("group", group, "group", FAIL, f"FindCoordinator failed: {e.message}",
                                   hint="retry; the brokers' logs name the reason", code=int(ExitCode.UNREACHABLE),
                                   finding=f"group {group}: FindCoordinator failed"))
        return
    report.group = {"name": group, **r}
    report.checks += group_checks(r, group, ms)
    if r["error_code"]:
        return
    key = (r["host"], r["port"])
    hop = endpoints.get(key)
    if hop is None:  # a coordinator endpoint the metadata did not list: probe it the same way
        hop = run_ladder(Hop(r["host"], r["port"], "coordinator", broker_id=r["id"]), w.client)
        report.checks += hop.checks
    report.group["reachable"] = hop.failure is None
    if hop.failure is not None:
        report.checks.append(Check("group", group, "group", FAIL, f"coordinator broker {r['id']} at {hop.target} "
                                   "is not reachable from here", hint=hop.failure.hint,
                                   code=int(ExitCode.LEADER_UNAVAILABLE),
                                   finding=f"group {group}: its coordinator {hop.target} is not reachable"))


def _skip_rest(report: Report, topics: list[str], group: str | None, why: str) -> None:
    report.checks.append(Check("broker", "advertised listeners", "metadata", SKIP, f"not tried: {why}"))
    for t in topics:
        report.checks.append(Check("topic", t, "topic", SKIP, f"not checked: {why}"))
    if group:
        report.checks.append(Check("group", group, "group", SKIP, f"not checked: {why}"))
