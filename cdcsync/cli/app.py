"""The `cdcsync` command. Each command lives in its own thin module; none imports pyspark at module level,
so `cdcsync --help`, `probe` and `infer-schema` never start a JVM."""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn

import typer

from cdcsync import __version__
from cdcsync.errors import CdcsyncError
from cdcsync.exit_codes import ExitCode

app = typer.Typer(
    name="cdcsync",
    help="Land Kafka change-data-capture topics in Apache Hudi tables, exactly once.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion [bash|zsh|fish|powershell]
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Each module registers its command(s) on `app` when imported.
COMMAND_MODULES = ["run", "status", "validate", "probe", "infer_schema", "replay", "dead_letter", "decrypt",
                   "spark_submit_args", "jars"]


def _version(value: bool) -> None:
    if value:
        from cdcsync.toolchain.jars import version_lines

        typer.echo("\n".join(version_lines(__version__)))
        raise typer.Exit()


_debug = {"on": False}  # set by --debug before a command runs; read by the error boundary in main()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the versions of cdcsync, Spark, Hudi and the Kafka client, and where "
                                 "the jars come from."),
    debug: bool = typer.Option(False, "--debug", help="On an error, print the full traceback (with the JVM's cause "
                               "chain) before the message; the exit code stays the same."),
) -> None:
    _debug["on"] = debug


def _register() -> None:
    for name in COMMAND_MODULES:
        qual = f"cdcsync.cli.{name}"
        try:
            importlib.import_module(qual)
        except ModuleNotFoundError as e:
            if e.name != qual:  # a missing dependency is a real error; a command not written yet is not
                raise


_register()


def main() -> None:
    try:
        # returns the code of `raise typer.Exit(n)` instead of raising; a KeyboardInterrupt in a command is 130
        code = app(standalone_mode=False)
    except CdcsyncError as e:
        if _debug["on"]:
            import traceback

            traceback.print_exc()
        print(e.render(), file=sys.stderr)
        sys.exit(int(e.exit_code))
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _interrupted()
    except typer.TyperException as e:  # usage errors: typer's own (vendored) click
        if hasattr(e, "show"):  # a ClickException (every one typer raises today) shows itself
            e.show()
        else:  # the base class has no show(): its message, as click would print it
            print(f"Error: {e.format_message()}", file=sys.stderr)
        sys.exit(e.exit_code)
    except Exception:  # a bug: the traceback helps the report; 70, not Python's 1 (which means "warnings")
        import traceback

        traceback.print_exc()
        print("error: internal error in cdcsync; please report it with the traceback above", file=sys.stderr)
        sys.exit(int(ExitCode.INTERNAL))
    if code == ExitCode.INTERRUPTED:
        _interrupted()
    sys.exit(code or 0)


def _interrupted() -> NoReturn:
    print("interrupted: the batch in flight was abandoned; a restart re-reads what it did not commit",
          file=sys.stderr)
    sys.exit(int(ExitCode.INTERRUPTED))
