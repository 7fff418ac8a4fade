"""`cdcsync dead-letter list|show|replay config.toml`: inspect the dead-letter table and re-ingest records."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from cdcsync.cli.app import app
from cdcsync.exit_codes import ExitCode

if TYPE_CHECKING:
    from cdcsync.sinks.dead_letter_view import Selection

dl = typer.Typer(name="dead-letter", no_args_is_help=True,
                 help="Inspect the dead-letter table (reasons, records) and replay records after a fix.")
app.add_typer(dl, name="dead-letter")

_CONFIG = typer.Argument(..., help="Path of config.toml.")
_JSON = typer.Option(False, "--json", help="Print the result as JSON on stdout.")
_REASON = typer.Option(None, "--reason", "-r", help="Only this reason code (repeatable).")
_TOPIC = typer.Option(None, "--topic", help="Only this topic.")
_PARTITION = typer.Option(None, "--partition", "-p", help="Only this partition.")
_FROM = typer.Option(None, "--from-offset", help="Only offsets >= this.")
_TO = typer.Option(None, "--to-offset", help="Only offsets <= this.")


def _selection(reason: list[str] | None, topic: str | None, partition: int | None, from_offset: int | None,
               to_offset: int | None, include_replayed: bool = False) -> Selection:
    from cdcsync.sinks.dead_letter_view import Selection

    return Selection(tuple(reason or ()), topic, partition, from_offset, to_offset, include_replayed)


@dl.command("list")
def list_(config: Path = _CONFIG, json_out: bool = _JSON,
          include_replayed: bool = typer.Option(False, "--include-replayed",
                                                help="Count replayed records too.")) -> None:
    """Reason codes and counts per topic/partition (read without a JVM)."""
    from cdcsync.config import load_config
    from cdcsync.config.model import dead_letter_path as path_for
    from cdcsync.reporting import emit_json
    from cdcsync.sinks.dead_letter_view import reason_counts

    cfg = load_config(config)
    counts = reason_counts(cfg, _selection(None, None, None, None, None, include_replayed))
    if json_out:
        emit_json({"dead_letter_path": path_for(cfg), "reasons": counts, "total": sum(c["count"] for c in counts)})
        return
    typer.echo(f"dead-letter table {path_for(cfg)}: {sum(c['count'] for c in counts)} record(s)"
               f"{'' if include_replayed else ' not yet replayed'}")
    for c in counts:
        typer.echo(f"  {c['topic']}/{c['partition']}  {c['reason']:<18} {c['count']:>8}  offsets "
                   f"{c['min_offset']}..{c['max_offset']}  replayed {c['replayed']}")


@dl.command("show")
def show(config: Path = _CONFIG, reason: list[str] = _REASON, topic: str = _TOPIC, partition: int = _PARTITION,
         from_offset: int = _FROM, to_offset: int = _TO, json_out: bool = _JSON,
         limit: int = typer.Option(20, "--limit", "-n", help="At most this many records (0: all)."),
         include_replayed: bool = typer.Option(False, "--include-replayed", help="Show replayed records too.")) -> None:
    """Records: coordinates, reason, message and a preview of the value (first 200 bytes; read without a JVM)."""
    from cdcsync.config import load_config
    from cdcsync.reporting import emit_json
    from cdcsync.sinks.dead_letter_view import records

    cfg = load_config(config)
    recs = records(cfg, _selection(reason, topic, partition, from_offset, to_offset, include_replayed), limit or None)
    if json_out:
        emit_json(recs)
        return
    for r in recs:
        typer.echo(f"{r['topic']}/{r['partition']}@{r['offset']}#{r['row_index']}  {r['reason']}: {r['error']}"
                   f"{'  (replayed)' if r['replayed'] else ''}\n  value ({r['value_bytes']} bytes): "
                   f"{r['value_preview']!r}")
    typer.echo(f"{len(recs)} record(s)")


@dl.command("replay")
def replay(config: Path = _CONFIG, reason: list[str] = _REASON, topic: str = _TOPIC, partition: int = _PARTITION,
           from_offset: int = _FROM, to_offset: int = _TO, json_out: bool = _JSON,
           all_: bool = typer.Option(False, "--all", help="Replay every record not yet replayed."),
           quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr.")) -> None:
    """Re-ingest chosen records into the table (after fixing the config or the upstream); mark them replayed.
    Refused (exit 81) while a `run` writes the table, unless Hudi multi-writer locking is configured."""
    from cdcsync.engine.dead_letter_replay import replay as do_replay
    from cdcsync.reporting import emit_json, make_reporter

    sel = _selection(reason, topic, partition, from_offset, to_offset)
    if not all_ and sel == _selection(None, None, None, None, None):  # no accidental replay of everything
        typer.echo("error: choose records (--reason, --topic, --partition, --from-offset, --to-offset) or --all",
                   err=True)
        raise typer.Exit(int(ExitCode.USAGE))
    from cdcsync.config import load_config
    from cdcsync.runtime.session import for_config

    cfg = load_config(config)  # exits 78 before Spark starts
    spark = for_config(cfg, "dead-letter")
    reporter = make_reporter(quiet)
    result = do_replay(spark, cfg, sel, reporter)
    if json_out:
        emit_json(result.to_dict())
    else:
        reporter.info(f"replayed {result.replayed} of {result.selected} record(s) ({result.messages} message(s)) "
                      f"into {cfg.sink.path}; {len(result.still_bad)} still bad and left un-replayed"
                      + (f"; commit {result.instant}" if result.instant else ""))
