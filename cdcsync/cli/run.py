"""`cdcsync run config.toml [--once] [--json] [--metrics-textfile PATH]`: the sync job."""

from __future__ import annotations

from pathlib import Path

import typer

from cdcsync.cli.app import app


@app.command("run")
def run(
    config: Path = typer.Argument(..., help="Path of config.toml."),
    once: bool = typer.Option(False, "--once", help="Read what is available now, commit, print a summary, exit."),
    json_out: bool = typer.Option(False, "--json", help="Print the end-of-run summary as JSON on stdout."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr."),
    metrics_port: int = typer.Option(None, "--metrics-port", min=0, max=65535,
                                     help="Serve /metrics (Prometheus) and /healthz on this port ([run] "
                                     "metrics_port; 0: any free port)."),
    metrics_textfile: Path = typer.Option(None, "--metrics-textfile", help="With --once: write the run's metrics "
                                          "to this *.prom file at its end (node_exporter's textfile collector), "
                                          "atomically."),
    log_level: str = typer.Option(None, "--log-level", help="Spark, Hudi and Kafka log level: error, warn "
                                  "(default: real problems only), info, debug ([run] log_level)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Everything the JVM logs at INFO (--log-level "
                                                                "info)."),
) -> None:
    """Sync Kafka CDC topics into the Hudi table the config names (continuously, or --once)."""
    from cdcsync.config import load_config

    if metrics_textfile is not None:
        _check_textfile(metrics_textfile, once)
    cfg = load_config(config)  # exits 78 before pyspark is even imported
    from dataclasses import replace

    if metrics_port is not None:
        cfg = replace(cfg, run=replace(cfg.run, metrics_port=metrics_port))
    if verbose or log_level:
        level = "info" if verbose and not log_level else (log_level or "").lower()
        from cdcsync.config.model import LOG_LEVELS

        if level not in LOG_LEVELS:
            from cdcsync.errors import CdcsyncError
            from cdcsync.exit_codes import ExitCode

            raise CdcsyncError(f"--log-level {log_level!r} is not one of {', '.join(LOG_LEVELS)}",
                               hint="see 'cdcsync run --help'", exit_code=ExitCode.USAGE)
        cfg = replace(cfg, run=replace(cfg.run, log_level=level))
    from cdcsync.engine.runner import Runner
    from cdcsync.reporting import emit_json, make_reporter

    reporter = make_reporter(quiet)
    summary = Runner(cfg, reporter, once=once, metrics_textfile=metrics_textfile).run()
    if json_out:
        emit_json(summary.to_dict())
    else:
        t = summary.totals
        reporter.info(
            f"done: {summary.batches} batch(es), read {t['messages']} messages → upserted {t['upserted']}, "
            f"deleted {t['deleted']}, skipped {t['skipped']}, bad {t['bad']} in {summary.seconds:.1f}s; "
            f"table {summary.path}"
        )
    from cdcsync.kafka.offsets import Offsets

    for name, iso in summary.isolated.items():
        at = Offsets.from_json(iso["offsets"]).compact()
        reporter.warn(f"table {name} is set aside at {at} after {iso['attempts']} failed attempt(s): {iso['error']}; "
                      f"the next run tries it again ({iso['path']})")
    if once and summary.isolated:  # the other tables are committed; this one still needs a run that succeeds
        from cdcsync.exit_codes import ExitCode

        raise typer.Exit(int(ExitCode.TABLE_ISOLATED))


def _check_textfile(path: Path, once: bool) -> None:
    """Refuse a textfile that would never be read, or could not be written, before anything starts."""
    import os

    from cdcsync.errors import CdcsyncError
    from cdcsync.exit_codes import ExitCode

    problem, fix = None, None
    if not once:
        problem = "--metrics-textfile needs --once: the file is written when the run ends"
        fix = "a continuous run serves its metrics live: use --metrics-port (or [run] metrics_port) instead"
    elif path.suffix != ".prom":
        problem = f"--metrics-textfile {path}: node_exporter's textfile collector reads only *.prom files"
        fix = f"name it {path.with_suffix('.prom').name}"
    elif not path.parent.is_dir() or not os.access(path.parent, os.W_OK | os.X_OK):
        problem = f"--metrics-textfile {path}: the folder {path.parent} does not exist or is not writable"
        fix = "point it into node_exporter's --collector.textfile.directory, writable by this user"
    if problem:
        raise CdcsyncError(problem, hint=fix, exit_code=ExitCode.USAGE)
