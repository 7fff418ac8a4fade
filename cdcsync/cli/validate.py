"""`cdcsync validate config.toml`: only the configuration check that every command runs before it starts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from cdcsync.cli.app import app

if TYPE_CHECKING:
    from cdcsync.config.model import Config, RouteConfig


@app.command("validate")
def validate(
    config: Path = typer.Argument(..., help="Path of config.toml."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Check config.toml against the schema and its Kafka security settings: files, stores and their passwords,
    SASL mechanism and credentials (exit 78 naming file and key when it is wrong). Starts no JVM."""
    from cdcsync.config import load_config
    from cdcsync.errors import ConfigError
    from cdcsync.kafka.security import for_clients
    from cdcsync.reporting import emit_json

    try:
        cfg = load_config(config)
        for_clients(cfg.source.properties, f"{config} [source.properties]")  # files, stores, passwords, mechanism
    except ConfigError as e:
        if json_out:
            emit_json({"valid": False, **e.to_dict()})
            raise typer.Exit(int(e.exit_code)) from None
        raise
    routes = [_route(cfg, r) for r in cfg.routes]
    masks = [{"column": m.column, "method": m.method, "tables": m.tables or ".*"} for m in cfg.masks]  # no secrets
    tombstones = cfg.source.tombstone_mode(cfg.sink.primary_key)  # the format's default resolved, as run reads it
    if json_out:
        emit_json({"valid": True, "file": str(cfg.path), "table": cfg.sink.table_name, "format": cfg.source.format,
                   "deletes": cfg.sink.deletes, "tombstones": tombstones, "deleted_field": cfg.source.deleted_field,
                   "routes": routes, "unrouted": cfg.sink.unrouted if routes else None, "masks": masks})
        return
    if not routes:
        flag = f", rows flagged by {cfg.source.deleted_field} deleted" if cfg.source.deleted_field else ""
        typer.echo(f"{config}: valid ({cfg.source.format} → {cfg.sink.table_type} table '{cfg.sink.table_name}', "
                   f"{cfg.sink.deletes} deletes, tombstones: {tombstones}{flag})")
    else:
        other = (f"'{cfg.sink.table_name}'" if cfg.sink.unrouted == "default" else "skipped (counted)")
        typer.echo(f"{config}: valid ({cfg.source.format} → {len(routes)} route(s); other tables: {other})")
        for r in routes:
            where = (f"at {r['path']}, '<>' being each source table's name" if r["one_table_per_source"]
                     else f"at {r['path']}")
            typer.echo(f"  route {r['source_table']} → {r['sink_table']} ({r['table_type']}, key "
                       f"{', '.join(r['primary_key']) if r['primary_key'] else 'from the messages'}, "
                       f"{r['deletes']} deletes) {where}")
        typer.echo("  (route patterns are Java regular expressions, compiled when the run starts)")
    for m in masks:
        typer.echo(f"  mask {m['column']}: {m['method']} in tables {m['tables']}")


def _route(cfg: Config, r: RouteConfig) -> dict[str, Any]:
    from cdcsync.config.model import routed_path

    return {"source_table": r.source_table, "sink_table": r.sink_table, "table_type": r.table_type or
            cfg.sink.table_type, "primary_key": r.primary_key, "partition_by": list(r.partition_by),
            "deletes": r.deletes or cfg.sink.deletes,
            "path": routed_path(cfg.sink.path, r.sink_table),  # with "<>": one table per source table
            "one_table_per_source": "<>" in r.sink_table}
