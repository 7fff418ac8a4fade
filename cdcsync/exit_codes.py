"""The one table of cdcsync's exit codes. README.md shows it; tests/unit/test_exit_codes.py keeps the two in step.

Numbers follow BSD sysexits where one fits, so service managers and scripts can branch on them.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # everything succeeded
    WARNINGS = 1  # probe: checks passed with warnings only; status: lag or commit age beyond `--max-lag` / `--max-age`
    USAGE = 2  # bad command-line usage (unknown option, missing argument)
    BAD_RECORD = 65  # run: a bad record with on_bad_record = "fail"; nothing of that batch committed
    TOPIC_MISSING = 66  # run / replay: a configured topic does not exist; probe --topic: the topic is missing
    DNS = 68  # a host name does not resolve (bootstrap or advertised listener)
    UNREACHABLE = 69  # nothing answers at host:port (TCP), or the brokers cannot be reached
    INTERNAL = 70  # a bug in cdcsync: please report it with the log
    SINK_WRITE = 74  # the Hudi write or commit failed; the batch was rolled back and will be retried on restart
    LEADER_UNAVAILABLE = 75  # brokers up but a partition leader or the group coordinator is unavailable
    TLS = 76  # TLS failure or a protocol mismatch (plaintext client on a TLS listener, or the reverse)
    AUTH = 77  # SASL authentication or authorization failed
    CONFIG = 78  # the configuration is invalid; nothing was started
    SCHEMA_INCOMPATIBLE = 79  # run: an incompatible schema change with on_incompatible = "fail"
    LEDGER_MISMATCH = 80  # run: consumed != written + dead-lettered + skipped; stopped to avoid losing data
    CONCURRENT_WRITER = 81  # replay: another cdcsync run writes this table and no multi-writer lock is configured
    INTERRUPTED = 130  # stopped by a second SIGINT/SIGTERM before the batch in flight finished


def describe(code: int) -> str:
    """One line for `code`, taken from the comments above (the table documents itself)."""
    import inspect

    src = inspect.getsource(ExitCode)
    for line in src.splitlines():
        line = line.strip()
        name = line.split("=")[0].strip()
        if name in ExitCode.__members__ and ExitCode[name] == code and "#" in line:
            return line.split("#", 1)[1].strip()
    return ""
