"""`cdcsync validate config.toml`: only the configuration check that every command runs before it starts."""

from __future__ import annotations

from pathlib import Path

import typer

from cdcsync.cli.app import app


@app.command("validate")
def validate(
    config: Path = typer.Argument(..., help="Path of config.toml."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
):
    """Check config.toml against the schema (exit 78 naming file and key when it is wrong). Starts no JVM."""
    from cdcsync.config import load_config
    from cdcsync.errors import ConfigError
    from cdcsync.reporting import emit_json

    try:
        cfg = load_config(config)
    except ConfigError as e:
        if json_out:
            emit_json({"valid": False, **e.to_dict()})
            raise typer.Exit(int(e.exit_code)) from None
        raise
    if json_out:
        emit_json({"valid": True, "file": str(cfg.path), "table": cfg.sink.table_name, "format": cfg.source.format})
    else:
        typer.echo(f"{config}: valid ({cfg.source.format} → {cfg.sink.table_type} table '{cfg.sink.table_name}')")
