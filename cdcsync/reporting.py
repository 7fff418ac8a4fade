"""How the engine and the commands talk to the operator. The engine sees only `Reporter`; rich stays here.

Data goes to stdout (`emit`), progress and logs to stderr: rich when stderr is a terminal, plain lines when not.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Protocol, TextIO


class Reporter(Protocol):
    def info(self, message: str) -> None: ...
    def warn(self, message: str) -> None: ...
    def event(self, kind: str, **fields: Any) -> None: ...


class PlainReporter:
    """One line per event on stderr: greppable, and what a service manager's journal wants."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet

    def _line(self, text: str) -> None:
        if not self.quiet:
            print(f"{time.strftime('%H:%M:%S')} {text}", file=self.stream, flush=True)

    def info(self, message: str) -> None:
        self._line(message)

    def warn(self, message: str) -> None:
        self._line(f"warning: {message}")

    def event(self, kind: str, **fields: Any) -> None:
        self._line(f"{kind} " + " ".join(f"{k}={_fmt(v)}" for k, v in fields.items()))


class RichReporter(PlainReporter):
    """Coloured lines on a terminal; same events as PlainReporter."""

    def __init__(self, quiet: bool = False) -> None:
        super().__init__(quiet=quiet)
        from rich.console import Console

        self.console = Console(stderr=True)

    def _line(self, text: str) -> None:
        if not self.quiet:
            self.console.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {text}", highlight=False)

    def warn(self, message: str) -> None:
        self._line(f"[yellow]warning:[/] {message}")

    def event(self, kind: str, **fields: Any) -> None:
        body = " ".join(f"[cyan]{k}[/]={_fmt(v)}" for k, v in fields.items())
        self._line(f"[bold]{kind}[/] {body}")


def _fmt(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"), default=str)
    return str(v)


def make_reporter(quiet: bool = False) -> Reporter:
    return RichReporter(quiet) if sys.stderr.isatty() else PlainReporter(quiet=quiet)


def emit_json(obj: Any) -> None:
    """The only way commands write data to stdout."""
    print(json.dumps(obj, indent=2, default=str, sort_keys=False))
