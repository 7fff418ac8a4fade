"""`cdcsync spark-submit-args config.toml`: the arguments that run cdcsync on a cluster with spark-submit."""

from __future__ import annotations

from pathlib import Path

import typer

from cdcsync.cli.app import app


@app.command("spark-submit-args")
def spark_submit_args(
    config: Path = typer.Argument(..., help="Path of config.toml."),
    json_out: bool = typer.Option(False, "--json", help="Print the arguments as a JSON list on stdout."),
) -> None:
    """Print spark-submit's arguments for a config, quoted for a shell: its master, the jars (the folder
    `cdcsync --version` names), cdcsync's Spark settings and the config's own, then cdcsync's entry script; append
    cdcsync's command:

      eval spark-submit "$(cdcsync spark-submit-args orders.toml)" run orders.toml --once

    Starts no JVM. Secrets never appear: [storage] credentials are set inside the session."""
    import shlex

    from cdcsync.config import load_config
    from cdcsync.reporting import emit_json
    from cdcsync.runtime.session import submit_args

    args = submit_args(load_config(config))
    if json_out:
        emit_json(args)
    else:
        typer.echo(" ".join(shlex.quote(a) for a in args))
