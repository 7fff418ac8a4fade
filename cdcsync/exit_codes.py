"""The one table of cdcsync's exit codes. The docs' exit-code page is generated from it (docs/hooks.py), number, name
and meaning.

Numbers follow BSD sysexits where one fits, so service managers and scripts can branch on them.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    WARNINGS = 1
    USAGE = 2
    BAD_RECORD = 65
    TOPIC_MISSING = 66
    DNS = 68
    UNREACHABLE = 69
    INTERNAL = 70
    SINK_WRITE = 74
    LEADER_UNAVAILABLE = 75
    TLS = 76
    AUTH = 77
    CONFIG = 78
    SCHEMA_INCOMPATIBLE = 79
    LEDGER_MISMATCH = 80
    CONCURRENT_WRITER = 81
    DATA_LOSS = 82
    TABLE_ISOLATED = 83
    INTERRUPTED = 130


MEANING = {
    ExitCode.OK: "everything succeeded",
    ExitCode.WARNINGS: "probe: checks passed with warnings only; status: lag or commit age beyond `--max-lag` / "
                       "`--max-age`",
    ExitCode.USAGE: "bad command-line usage (unknown option, missing argument)",
    ExitCode.BAD_RECORD: 'run, replay-from-offset: a bad record with `on_bad_record = "fail"`, a truncate with '
                         '`on_truncate = "fail"` or a DROP TABLE with `on_drop_table = "fail"` (nothing of that '
                         'batch committed), or more than `max_bad_records`; '
                         "infer-schema: no sampled record decodes",
    ExitCode.TOPIC_MISSING: "run / replay: a configured topic does not exist; probe `--topic`: the topic is missing; "
                            "infer-schema: a topic is missing or empty, or the header filter left nothing",
    ExitCode.DNS: "a host name does not resolve (bootstrap or advertised listener)",
    ExitCode.UNREACHABLE: "nothing answers at host:port (TCP), or the brokers cannot be reached",
    ExitCode.INTERNAL: "a bug in cdcsync: please report it with the log",
    ExitCode.SINK_WRITE: "the Hudi write or commit failed; the batch was rolled back and is retried on restart",
    ExitCode.LEADER_UNAVAILABLE: "brokers up but a partition leader or the group coordinator is unavailable",
    ExitCode.TLS: "TLS failure or a protocol mismatch (plaintext client on a TLS listener, or the reverse)",
    ExitCode.AUTH: "SASL authentication or authorization failed",
    ExitCode.CONFIG: "the configuration is invalid; nothing was started",
    ExitCode.SCHEMA_INCOMPATIBLE: 'run: an incompatible schema change with `on_incompatible = "fail"`; infer-schema: '
                                  "the data contradicts a declared type",
    ExitCode.LEDGER_MISMATCH: "run: consumed ≠ written + dead-lettered + skipped; stopped to avoid losing data",
    ExitCode.CONCURRENT_WRITER: "run, replay-from-offset, dead-letter replay: another cdcsync process writes this "
                                "table and no multi-writer lock is configured",
    ExitCode.DATA_LOSS: "run: offsets the table still needs are gone from the topic (retention, delete-records, a "
                        're-created topic) with `on_data_loss = "fail"`; stopped before reading the batch',
    ExitCode.TABLE_ISOLATED: 'run `--once` with `[[route]]`: a table\'s write failed after its retries and, with '
                             '`on_table_failure = "isolate"`, it was set aside; every other table committed. The '
                             "table keeps its position and the next run tries it again; `status` names it and its "
                             "error",
    ExitCode.INTERRUPTED: "stopped by a second SIGINT/SIGTERM before the batch in flight finished",
}
