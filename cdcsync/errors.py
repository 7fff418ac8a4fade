"""One root error, one subclass per stage. Each carries its facts, its fix, and the exit code it maps to."""

from __future__ import annotations

from typing import Any

from cdcsync.exit_codes import ExitCode


class CdcsyncError(Exception):
    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, *, hint: str | None = None, exit_code: ExitCode | None = None,
                 **facts: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.facts = facts
        if exit_code is not None:
            self.exit_code = exit_code

    def render(self) -> str:
        text = f"error: {self.message}"
        if self.hint:
            text += f"\n  fix: {self.hint}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": type(self).__name__,
            "message": self.message,
            "hint": self.hint,
            "exit_code": int(self.exit_code),
            **{k: v for k, v in self.facts.items() if _jsonable(v)},
        }


def _jsonable(v: object) -> bool:
    return isinstance(v, (str, int, float, bool, type(None), list, dict))


class ConfigError(CdcsyncError):
    """The configuration is invalid. Names the file, the key, and a close valid key where there is one."""

    exit_code = ExitCode.CONFIG


class SourceError(CdcsyncError):
    """Kafka could not be read: unreachable broker, missing topic, offsets out of range."""

    exit_code = ExitCode.UNREACHABLE


class TopicMissingError(SourceError):
    exit_code = ExitCode.TOPIC_MISSING


class DecodeError(CdcsyncError):
    """A record that is not valid for its format (terminal only under on_bad_record = "fail")."""

    exit_code = ExitCode.BAD_RECORD


class SchemaError(CdcsyncError):
    """Inference or evolution found a change that cannot be applied."""

    exit_code = ExitCode.SCHEMA_INCOMPATIBLE


class SinkError(CdcsyncError):
    """The Hudi write or commit failed."""

    exit_code = ExitCode.SINK_WRITE


class LedgerError(CdcsyncError):
    """Consumed offsets do not balance against what was written, dead-lettered and skipped."""

    exit_code = ExitCode.LEDGER_MISMATCH


class ToolchainError(CdcsyncError):
    """Java, the bundles/ jars, or Spark are missing or do not start."""

    exit_code = ExitCode.INTERNAL
