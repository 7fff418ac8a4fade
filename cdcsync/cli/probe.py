"""`cdcsync probe` (alias `probe-brokers`): which hop between this host and Kafka fails, and how to fix it.

Thin: options → Security → cdcsync.kafka.probe → a rich table (or one JSON object) → the exit code. Starts no JVM.
"""

from __future__ import annotations

from pathlib import Path

import typer

from cdcsync.cli.app import app

_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


@app.command("probe")
def probe(
    bootstrap_servers: str = typer.Option(None, "--bootstrap-servers", "-b", metavar="HOST:PORT[,...]",
                                          help="Kafka bootstrap address(es); default: source.bootstrap_servers of "
                                               "--config."),
    topic: list[str] = typer.Option(None, "--topic", "-t", help="Check that this topic exists (never created), "
                                    "its partitions and leaders. Repeatable."),
    group: str = typer.Option(None, "--group", "-g", help="Find this consumer group's coordinator and probe it."),
    config: Path = typer.Option(None, "--config", "-c", help="config.toml: bootstrap servers and the client "
                                "security settings in [source.properties]."),
    timeout: float = typer.Option(5.0, "--timeout", min=0.1, help="Seconds allowed for each endpoint's checks."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object on stdout and nothing else."),
    security_protocol: str = typer.Option(None, "--security-protocol",
                                          help="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."),
    sasl_mechanism: str = typer.Option(None, "--sasl-mechanism", help="PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."),
    sasl_username: str = typer.Option(None, "--sasl-username"),
    sasl_password: str = typer.Option(None, "--sasl-password", help="Prefer [source.properties] with ${ENV}."),
    ssl_cafile: str = typer.Option(None, "--ssl-cafile", help="PEM file of the CA that signed the brokers' certs."),
    ssl_check_hostname: bool = typer.Option(None, "--ssl-check-hostname/--no-ssl-check-hostname",
                                            help="Check the certificate names the host (default: on)."),
):
    """Name the failing hop between this host and Kafka: DNS, TCP, TLS, SASL, or the brokers' advertised listeners.

    Exit: 0 ok, 1 warnings, 68 DNS, 69 unreachable, 75 leader/coordinator unavailable, 76 TLS or protocol
    mismatch, 77 authentication/authorization, 78 bad config, 66 topic missing.
    """
    from cdcsync.errors import ConfigError
    from cdcsync.kafka import security as secmod

    secrets: list[str] = [s for s in (sasl_password,) if s]
    try:
        props: dict = {}
        if config is not None:
            from cdcsync.config import load_config

            cfg = load_config(config)
            props = dict(cfg.source.properties)
            bootstrap_servers = bootstrap_servers or cfg.source.bootstrap_servers
            secrets += [str(v) for k, v in props.items() if secmod.is_secret_key(k) and v]
        if not bootstrap_servers:
            raise typer.BadParameter("give --bootstrap-servers HOST:PORT or --config with source.bootstrap_servers",
                                     param_hint="--bootstrap-servers")
        servers = _servers(bootstrap_servers, config)
        sec = secmod.from_properties(props, f"{config} [source.properties]") if props else secmod.Security()
        sec = secmod.check(secmod.with_flags(
            sec, security_protocol=security_protocol, sasl_mechanism=sasl_mechanism, sasl_username=sasl_username,
            sasl_password=sasl_password, ssl_cafile=ssl_cafile, ssl_check_hostname=ssl_check_hostname))
        secrets += sec.secrets()
        report = _run(servers, sec, topic or [], group, timeout)
    except ConfigError as e:
        if json_out:
            _emit(_safe({"status": "error", **e.to_dict()}, secrets))
            raise typer.Exit(int(e.exit_code)) from None
        e.message, e.hint = _safe(e.message, secrets), _safe(e.hint, secrets)
        raise
    data = _safe(report.to_dict(), secrets)
    if json_out:
        _emit(data)
    else:
        _render(data)
    raise typer.Exit(report.exit_code)


app.command("probe-brokers", help="Same as `cdcsync probe`.")(probe)


def _servers(text: str, config: Path | None) -> list[tuple[str, int]]:
    from cdcsync.errors import ConfigError
    from cdcsync.kafka.wire import parse_servers

    try:
        return parse_servers(text)
    except ValueError as e:
        if config is not None and text:
            raise ConfigError(f"{config}: source.bootstrap_servers: {e}", hint="write it as host:port[,host:port]",
                              key="source.bootstrap_servers") from None
        raise typer.BadParameter(f"{e}; write it as host:port[,host:port]", param_hint="--bootstrap-servers") from None


def _run(servers, sec, topics, group, timeout):
    import ssl

    from cdcsync.errors import ConfigError
    from cdcsync.kafka.probe import probe as run_probe

    try:
        return run_probe(servers, sec, topics=topics, group=group, timeout=timeout)
    except ssl.SSLError as e:  # a client certificate/key that cannot be loaded
        raise ConfigError(f"{sec.origin}: cannot load the TLS client certificate or key: {e.reason or e}",
                          hint="check ssl.keystore.location / ssl.certificate.location, ssl.key.location and "
                               "ssl.key.password") from None


def _safe(value, secrets: list[str]):
    from cdcsync.kafka.security import scrub

    return scrub(value, secrets)


def _emit(data: dict) -> None:
    from cdcsync.reporting import emit_json

    emit_json(data)


def _render(data: dict) -> None:
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
        who = {"broker": f"broker {c['broker_id']} ", "coordinator": "coordinator ",
               "bootstrap": "bootstrap "}.get(c["role"], f"{c['role']} ")
        table.add_row(c["layer"], who + c["target"], Text(c["status"], style=_STYLE[c["status"]]), c["detail"],
                      c["hint"] or "", "" if c["ms"] is None else f"{c['ms']:.1f}")
    console.print(table)
    status = data["status"]
    console.print(Text.assemble(("verdict: ", "bold"), (status.upper(), _STYLE.get(status, "bold red")),
                                f" (exit {data['exit_code']}) — {data['verdict']}"))
