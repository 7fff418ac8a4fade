"""`cdcsync probe` (alias `probe-brokers`): which hop between this host and Kafka fails, and how to fix it.

Thin: options → Security → cdcsync.probe.walk → a rich table (or one JSON object) → the exit code. Starts no JVM.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from cdcsync.cli.app import app

if TYPE_CHECKING:
    from cdcsync.config.model import SourceConfig
    from cdcsync.kafka.security import Security
    from cdcsync.probe.report import Check, Report

_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


Opt = typer.Option


@app.command("probe")
def probe(
    bootstrap_servers: Annotated[str | None, Opt("--bootstrap-servers", "-b", metavar="HOST:PORT[,...]", help=(
        "Kafka bootstrap address(es); default: source.bootstrap_servers of --config."))] = None,
    topic: Annotated[list[str] | None, Opt("--topic", "-t", metavar="TOPIC", help=(
        "Check that this topic exists (never created), its partitions and leaders. Repeatable."))] = None,
    group: Annotated[str | None, Opt("--group", "-g", help=(
        "Find this consumer group's coordinator and probe it."))] = None,
    config: Annotated[Path | None, Opt("--config", "-c", help=(
        "config.toml: bootstrap servers and the client security settings in \\[source.properties]."))] = None,
    timeout: Annotated[float, Opt("--timeout", min=0.1, help="Seconds allowed for each endpoint's checks.")] = 5.0,
    json_out: Annotated[bool, Opt("--json", help="Print one JSON object on stdout and nothing else.")] = False,
    security_protocol: Annotated[str | None, Opt("--security-protocol",
                                               help="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.")] = None,
    sasl_mechanism: Annotated[str | None, Opt("--sasl-mechanism",
                                              help="PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.")] = None,
    sasl_username: Annotated[str | None, Opt("--sasl-username")] = None,
    sasl_password: Annotated[str | None, Opt("--sasl-password", help=(
        "Prefer sasl.jaas.config in the config file, with ${ENV}."))] = None,
    ssl_cafile: Annotated[str | None, Opt("--ssl-cafile", help=(
        "PEM file of the CA that signed the brokers' certificates."))] = None,
    ssl_check_hostname: Annotated[bool | None, Opt("--ssl-check-hostname/--no-ssl-check-hostname", help=(
        "Check that the certificate names the host (default: on)."))] = None,
    schema_registry: Annotated[str | None, Opt("--schema-registry", metavar="URL", help=(
        "Also check this Confluent-compatible schema registry: reachable, authenticated, a subject per --topic. "
        "Default: source.schema_registry_url of --config (with its credentials)."))] = None,
) -> NoReturn:
    """Name the failing hop between this host and Kafka: DNS, TCP, TLS, SASL, or the brokers' advertised listeners;
    with a schema registry, also whether it answers, takes the credentials and has each topic's subjects.

    Exit: 0 ok, 1 warnings (a subject not registered), 66 topic missing, 68 DNS, 69 unreachable (a broker or the
    registry), 75 leader/coordinator unavailable, 76 TLS or protocol mismatch, 77 authentication/authorization,
    78 bad config.
    """
    from cdcsync.errors import ConfigError
    from cdcsync.kafka import security as secmod

    secrets: list[str] = [s for s in (sasl_password,) if s]
    try:
        props: dict[str, str] = {}
        src: SourceConfig | None = None
        if config is not None:
            from cdcsync.config import load_config

            cfg = load_config(config)
            src = cfg.source
            props = dict(src.properties)
            bootstrap_servers = bootstrap_servers or src.bootstrap_servers
            secrets += secmod.secret_values(props)
            secrets += [src.schema_registry_user_info.partition(":")[2]] if src.schema_registry_user_info else []
        if not bootstrap_servers:
            _usage_error("give --bootstrap-servers HOST:PORT or --config with source.bootstrap_servers")
        servers = _servers(bootstrap_servers, config)
        sec = secmod.from_properties(props, f"{config} [source.properties]") if props else secmod.Security()
        sec = secmod.check(secmod.with_flags(sec, secmod.Flags(
            security_protocol=security_protocol, sasl_mechanism=sasl_mechanism, sasl_username=sasl_username,
            sasl_password=sasl_password, ssl_cafile=ssl_cafile, ssl_check_hostname=ssl_check_hostname)))
        secrets += sec.secrets()
        report = _run(servers, sec, topic or [], group, timeout)
        report.checks += _registry(schema_registry, src, topic or (src.topics if src else None) or [])
    except ConfigError as e:
        if json_out:
            _emit(_safe({"status": "error", **e.to_dict()}, secrets))
            raise SystemExit(int(e.exit_code)) from None
        e.message, e.hint = _safe(e.message, secrets), _safe(e.hint, secrets)
        raise
    data = _safe(report.to_dict(), secrets)
    if json_out:
        _emit(data)
    else:
        _render(data)
    raise SystemExit(report.exit_code)


app.command("probe-brokers", help="Same as `cdcsync probe`.")(probe)


def _servers(text: str, config: Path | None) -> list[tuple[str, int]]:
    from cdcsync.errors import ConfigError
    from cdcsync.probe.net import parse_servers

    try:
        return parse_servers(text)
    except ValueError as e:
        if config is not None and text:
            raise ConfigError(f"{config}: source.bootstrap_servers: {e}", hint="write it as host:port[,host:port]",
                              key="source.bootstrap_servers") from None
        _usage_error(f"--bootstrap-servers: {e}; write it as host:port[,host:port]")


def _usage_error(message: str) -> NoReturn:
    """Exit 2 like click's usage errors, without relying on how the entry point handles them."""
    import sys

    print(f"Usage: cdcsync probe [OPTIONS]\nTry 'cdcsync probe -h' for help.\n\nError: {message}", file=sys.stderr)
    raise SystemExit(2)


def _run(servers: list[tuple[str, int]], sec: Security, topics: list[str], group: str | None, timeout: float
         ) -> Report:
    from cdcsync.probe.walk import probe as run_probe

    if sec.tls:
        sec.ssl_context()  # a CA, client certificate or key that cannot be loaded: a config error before connecting
    return run_probe(servers, sec, topics=topics, group=group, timeout=timeout)


def _registry(url: str | None, src: SourceConfig | None, topics: list[str]) -> list[Check]:
    """The registry's checks when one is named (flag, else config); its credentials come from the config."""
    from cdcsync.formats.registry import Registry
    from cdcsync.probe.registry import registry_checks

    url = url or (src.schema_registry_url if src else None)
    if not url:
        return []
    registry = (Registry(url, src.schema_registry_user_info, src.schema_registry_ca_file)
                if src is not None and src.schema_registry_url == url else Registry(url))
    wire = (("value", src.format), ("key", src.key_format)) if src is not None else ()
    sides = tuple(side for side, fmt in wire if fmt == "avro-confluent")
    return registry_checks(registry, topics, sides or ("value",))


def _safe(value: Any, secrets: list[str]) -> Any:
    from cdcsync.kafka.security import scrub

    return scrub(value, secrets)


def _emit(data: dict[str, Any]) -> None:
    from cdcsync.reporting import emit_json

    emit_json(data)


def _render(data: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = 160
    table = Table(title=f"cdcsync probe {', '.join(data['bootstrap_servers'])} "
                        f"({data['security']['security_protocol']})", title_justify="left", expand=False)
    for col, kw in (("layer", {"no_wrap": True}), ("target", {"overflow": "fold"}), ("status", {"no_wrap": True}),
                    ("detail", {"ratio": 3}), ("hint", {"ratio": 2}), ("ms", {"justify": "right", "no_wrap": True})):
        table.add_column(col, **kw)
    for c in data["checks"]:
        who = {"broker": f"broker {c['broker_id']} " if c["broker_id"] is not None else "",
               "coordinator": "coordinator ", "bootstrap": "bootstrap "}.get(c["role"], f"{c['role']} ")
        table.add_row(c["layer"], who + c["target"], Text(c["status"], style=_STYLE[c["status"]]), c["detail"],
                      c["hint"] or "", "" if c["ms"] is None else f"{c['ms']:.1f}")
    console.print(table)
    status = data["status"]
    console.print(Text.assemble(("verdict: ", "bold"), (status.upper(), _STYLE.get(status, "bold red")),
                                f" (exit {data['exit_code']}) — {data['verdict']}"))
